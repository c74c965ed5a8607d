//! `spec.monitoring`: whether the graph gets a PodMonitor, how often it scrapes, its labels, and
//! the latency objectives of its PrometheusRule.

use std::collections::BTreeMap;

use super::{
    Errors,
    limits::MAX_SCRAPE_INTERVAL_SECONDS,
    overlay::check_labels,
    rules::scrape_interval_out_of_range,
    syntax::{check_duration, check_slo},
};
use crate::types::{LatencySlo, MonitoringSpec};

/// The graph's PodMonitor, resolved: present once `monitoring` is set, unless `enabled: false`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Monitoring {
    /// How often each pod is scraped; `None` leaves it to the Prometheus.
    pub interval: Option<String>,
    /// The PodMonitor's and PrometheusRule's own labels, besides the operator's.
    pub labels: BTreeMap<String, String>,
    /// The latency objectives the PrometheusRule alerts on; `None`: no PrometheusRule.
    pub slo: Option<LatencySlo>,
}

/// Checks `spec.monitoring` and resolves it; `None` when absent or turned off.
pub(super) fn monitoring(errors: &mut Errors, spec: Option<&MonitoringSpec>) -> Option<Monitoring> {
    let spec = spec.filter(|m| m.is_enabled())?;
    if let Some(interval) = &spec.interval {
        check_duration(
            errors,
            "spec.monitoring.interval",
            interval,
            1..=MAX_SCRAPE_INTERVAL_SECONDS,
            &scrape_interval_out_of_range(),
        );
    }
    check_labels(errors, "spec.monitoring.labels", &spec.labels);
    if let Some(slo) = &spec.slo {
        check_slo(errors, "spec.monitoring.slo", slo);
    }
    Some(Monitoring {
        interval: spec.interval.clone(),
        labels: spec.labels.clone(),
        slo: spec.slo.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::found;

    fn resolved(spec: serde_json::Value) -> (Option<Monitoring>, Vec<String>) {
        let spec: MonitoringSpec = serde_json::from_value(spec).expect("a monitoring spec");
        let mut out = None;
        let errors = found(|errors| out = monitoring(errors, Some(&spec)));
        (out, errors)
    }

    #[test]
    fn monitoring_is_on_once_set_and_off_with_enabled_false() {
        assert_eq!(resolved(json!({})), (Some(Monitoring::default()), vec![]));
        assert_eq!(
            resolved(json!({"enabled": false, "interval": "0s"})),
            (None, vec![])
        );
        let mut errors = Errors::default();
        assert_eq!(monitoring(&mut errors, None), None);
    }

    #[test]
    fn the_interval_is_a_duration_from_1s_to_1h() {
        let (on, errors) = resolved(json!({"interval": "15s", "labels": {"release": "kps"}}));
        assert!(errors.is_empty(), "{errors:?}");
        let on = on.expect("on");
        assert_eq!(on.interval.as_deref(), Some("15s"));
        assert_eq!(on.labels["release"], "kps");
        let range = "spec.monitoring.interval: must be from 1s to 1h; set how often Prometheus scrapes each pod, e.g. 15s or 1m";
        assert_eq!(resolved(json!({"interval": "0s"})).1, [range]);
        assert_eq!(resolved(json!({"interval": "61m"})).1, [range]);
        assert_eq!(
            resolved(json!({"interval": "1m30s"})).1,
            [
                "spec.monitoring.interval: \"1m30s\" is not a duration; write a whole number of seconds, minutes or hours such as 90s, 30m or 2h"
            ]
        );
    }

    #[test]
    fn the_objectives_are_latencies_in_milliseconds() {
        let (on, errors) =
            resolved(json!({"slo": {"ttftP95Milliseconds": 500, "itlP95Milliseconds": 50}}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            on.and_then(|m| m.slo),
            Some(LatencySlo {
                ttft_p95_milliseconds: 500,
                itl_p95_milliseconds: 50
            })
        );
        assert_eq!(
            resolved(json!({"slo": {"ttftP95Milliseconds": 0, "itlP95Milliseconds": 600_001}})).1,
            [
                "spec.monitoring.slo.ttftP95Milliseconds: must be 1 or more; set the latency target in milliseconds",
                "spec.monitoring.slo.itlP95Milliseconds: must be at most 600000 (now 600001); lower it",
            ]
        );
    }

    #[test]
    fn the_labels_are_not_the_operators() {
        let (_, errors) = resolved(json!({"labels": {"infera.amd.com/x": "a", "team": "b"}}));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with("spec.monitoring.labels: app.kubernetes.io/name, instance"),
            "{errors:?}"
        );
    }
}
