//! `services.X.autoscaling`: an autoscaler owns the replica count between two bounds — a
//! HorizontalPodAutoscaler on `metrics`, or a KEDA ScaledObject on `triggers`.

use std::collections::BTreeSet;

use k8s_openapi::api::autoscaling::v2::MetricSpec;

use super::rules::{
    METRICS_WITH_KEDA, MIN_ABOVE_MAX, NO_METRIC, NO_TRIGGER, REPLICAS_AND_AUTOSCALING,
    TRIGGERS_WITHOUT_KEDA,
};
use super::{
    Errors,
    limits::{MAX_METRICS, MAX_TRIGGER_METADATA, MAX_TRIGGER_TYPE_LENGTH, MAX_TRIGGERS},
    syntax::{check_length, check_max_length, check_replica_bounds},
};
use crate::naming::MAX_DNS_SUBDOMAIN;
use crate::types::{AutoscalingProvider, AutoscalingSpec, KedaTrigger};

/// A service's autoscaling, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Autoscaling {
    /// Fewest replicas (groups, for a multi-node pool).
    pub min_replicas: i32,
    /// Most replicas (groups, for a multi-node pool).
    pub max_replicas: i32,
    /// Who scales, on what.
    pub scaler: Scaler,
}

/// The autoscaler of a service and what it scales on, as the user wrote it.
#[derive(Clone, Debug, PartialEq)]
pub enum Scaler {
    /// A HorizontalPodAutoscaler on these metrics.
    Hpa(Vec<MetricSpec>),
    /// A KEDA ScaledObject on these triggers.
    Keda(Vec<KedaTrigger>),
}

/// The autoscaling of the service at `path` (`spec.services.X`), if any; `replicas` is the
/// service's own `replicas`, which autoscaling excludes.
pub(super) fn settings(
    errors: &mut Errors,
    path: &str,
    replicas: Option<i32>,
    spec: Option<&AutoscalingSpec>,
) -> Option<Autoscaling> {
    let spec = spec?;
    let path_of = |field: &str| format!("{path}.autoscaling.{field}");
    if replicas.is_some() {
        errors.push(format!("{path}.replicas"), REPLICAS_AND_AUTOSCALING);
    }
    let (min, max) = (spec.min_replicas.unwrap_or(1), spec.max_replicas);
    check_replica_bounds(
        errors,
        (&path_of("minReplicas"), min),
        (&path_of("maxReplicas"), max),
        MIN_ABOVE_MAX,
    );
    // Present means written, as admission's `has()` reads it: `metrics: []` with KEDA is refused.
    let metrics = spec.metrics.as_deref();
    let triggers = spec.triggers.as_deref();
    let scaler = match spec.provider.unwrap_or_default() {
        AutoscalingProvider::Hpa => {
            if triggers.is_some() {
                errors.push(path_of("triggers"), TRIGGERS_WITHOUT_KEDA);
            }
            let metrics = metrics.unwrap_or_default();
            if metrics.is_empty() {
                errors.push(path_of("metrics"), NO_METRIC);
            }
            errors.at_most(&path_of("metrics"), "metrics", metrics.len(), MAX_METRICS);
            Scaler::Hpa(metrics.to_vec())
        }
        AutoscalingProvider::Keda => {
            if metrics.is_some() {
                errors.push(path_of("metrics"), METRICS_WITH_KEDA);
            }
            let triggers = triggers.unwrap_or_default();
            if triggers.is_empty() {
                errors.push(path_of("triggers"), NO_TRIGGER);
            }
            errors.at_most(
                &path_of("triggers"),
                "triggers",
                triggers.len(),
                MAX_TRIGGERS,
            );
            check_triggers(errors, &path_of("triggers"), triggers);
            Scaler::Keda(triggers.to_vec())
        }
    };
    Some(Autoscaling {
        min_replicas: min,
        max_replicas: max,
        scaler,
    })
}

/// The schema's limits on each trigger, and the rules KEDA itself checks before it scales
/// (kedacore/keda v2.20.2, `apis/keda/v1alpha1/scaletriggers_types.go`, `ValidateTriggers`; the
/// CRD's `minLength: 1` on `type`): a scaler is named, trigger names are unique, and
/// `useCachedMetrics` is not set on the `cpu`, `memory` and `cron` scalers. A ScaledObject KEDA
/// refuses would leave the pool unscaled with nothing said here.
fn check_triggers(errors: &mut Errors, path: &str, triggers: &[KedaTrigger]) {
    let mut names = BTreeSet::new();
    for (i, trigger) in triggers.iter().enumerate() {
        let at = |field: &str| format!("{path}[{i}].{field}");
        if trigger.scaler.is_empty() {
            errors.push(at("type"), "must name a KEDA scaler, e.g. prometheus");
        }
        check_max_length(
            errors,
            &at("type"),
            &trigger.scaler,
            MAX_TRIGGER_TYPE_LENGTH,
        );
        if trigger.metadata.len() > MAX_TRIGGER_METADATA {
            errors.push(
                at("metadata"),
                format!(
                    "at most {MAX_TRIGGER_METADATA} settings are allowed (now {}); remove some",
                    trigger.metadata.len()
                ),
            );
        }
        if let Some(reference) = &trigger.authentication_ref {
            check_length(
                errors,
                &at("authenticationRef.name"),
                &reference.name,
                MAX_DNS_SUBDOMAIN,
            );
        }
        if let Some(name) = &trigger.name {
            check_max_length(errors, &at("name"), name, MAX_TRIGGER_TYPE_LENGTH);
            if !names.insert(name.as_str()) {
                errors.push(
                    at("name"),
                    format!("{name:?} names another trigger too; trigger names must be unique"),
                );
            }
        }
        if trigger.use_cached_metrics == Some(true)
            && matches!(trigger.scaler.as_str(), "cpu" | "memory" | "cron")
        {
            errors.push(
                at("useCachedMetrics"),
                format!(
                    "KEDA does not cache the {} scaler's metric; remove useCachedMetrics",
                    trigger.scaler
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::found;

    fn spec(json: serde_json::Value) -> AutoscalingSpec {
        serde_json::from_value(json).expect("an autoscaling spec")
    }

    fn metric() -> serde_json::Value {
        serde_json::json!({"type": "Pods", "pods": {
            "metric": {"name": "sglang_num_queue_reqs"},
            "target": {"type": "AverageValue", "averageValue": "4"},
        }})
    }

    #[test]
    fn bounds_and_metrics_are_kept_with_a_floor_of_one() {
        let mut errors = Errors::default();
        let autoscaling = settings(
            &mut errors,
            "spec.services.decode",
            None,
            Some(&spec(
                serde_json::json!({"maxReplicas": 4, "metrics": [metric()]}),
            )),
        );
        assert!(errors.0.is_empty());
        let autoscaling = autoscaling.expect("autoscaling");
        assert_eq!((autoscaling.min_replicas, autoscaling.max_replicas), (1, 4));
        assert!(matches!(autoscaling.scaler, Scaler::Hpa(metrics) if metrics.len() == 1));
    }

    #[test]
    fn every_broken_rule_names_its_field() {
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                Some(2),
                Some(&spec(serde_json::json!({
                    "minReplicas": 5, "maxReplicas": 4, "metrics": [],
                    "triggers": [{"type": "cpu", "metadata": {"value": "60"}}],
                }))),
            );
        });
        assert_eq!(
            errors,
            [
                format!("spec.services.decode.replicas: {REPLICAS_AND_AUTOSCALING}"),
                format!("spec.services.decode.autoscaling.minReplicas: {MIN_ABOVE_MAX}"),
                format!("spec.services.decode.autoscaling.triggers: {TRIGGERS_WITHOUT_KEDA}"),
                format!("spec.services.decode.autoscaling.metrics: {NO_METRIC}"),
            ]
        );
    }

    #[test]
    fn bounds_out_of_range_are_reported_once() {
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                None,
                Some(&spec(serde_json::json!({
                    "minReplicas": 0, "maxReplicas": 1001, "metrics": [metric()],
                }))),
            );
        });
        assert_eq!(
            errors,
            [
                "spec.services.decode.autoscaling.minReplicas: must be 1 or more; set the fewest replicas to keep",
                "spec.services.decode.autoscaling.maxReplicas: must be at most 1000 (now 1001); lower it",
            ]
        );
    }

    #[test]
    fn keda_keeps_the_triggers_as_written() {
        let mut errors = Errors::default();
        let trigger = serde_json::json!({
            "type": "prometheus", "name": "queue",
            "metadata": {"serverAddress": "http://prometheus:9090", "query": "sum(q)", "threshold": "4"},
        });
        let autoscaling = settings(
            &mut errors,
            "spec.services.decode",
            None,
            Some(&spec(serde_json::json!({
                "provider": "keda", "minReplicas": 2, "maxReplicas": 6, "triggers": [trigger.clone()],
            }))),
        );
        assert!(errors.0.is_empty());
        let autoscaling = autoscaling.expect("autoscaling");
        assert_eq!((autoscaling.min_replicas, autoscaling.max_replicas), (2, 6));
        assert_eq!(
            autoscaling.scaler,
            Scaler::Keda(vec![serde_json::from_value(trigger).expect("a trigger")])
        );
    }

    #[test]
    fn keda_refuses_what_keda_would_refuse() {
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                None,
                Some(&spec(serde_json::json!({
                    "provider": "keda", "maxReplicas": 4, "metrics": [metric()],
                    "triggers": [
                        {"type": "", "metadata": {}},
                        {"type": "cpu", "name": "load", "useCachedMetrics": true, "metadata": {"value": "60"}},
                        {"type": "cron", "name": "load", "useCachedMetrics": false, "metadata": {}},
                    ],
                }))),
            );
        });
        assert_eq!(
            errors,
            [
                format!("spec.services.decode.autoscaling.metrics: {METRICS_WITH_KEDA}"),
                "spec.services.decode.autoscaling.triggers[0].type: must name a KEDA scaler, e.g. prometheus".into(),
                "spec.services.decode.autoscaling.triggers[1].useCachedMetrics: KEDA does not cache the cpu scaler's metric; remove useCachedMetrics".into(),
                "spec.services.decode.autoscaling.triggers[2].name: \"load\" names another trigger too; trigger names must be unique".into(),
            ]
        );
    }

    /// Admission reads an empty list as written (`has()`, `minItems: 1`), so the rules here do:
    /// `metrics: []` beside KEDA's triggers and `triggers: []` beside an HPA's metrics are refused
    /// (found by `layers_agree`, seed 2, where an empty list passed as absent).
    #[test]
    fn an_empty_list_of_the_other_provider_is_written_and_refused() {
        let trigger = serde_json::json!({"type": "cpu", "metadata": {"value": "60"}});
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                None,
                Some(&spec(serde_json::json!({
                    "provider": "keda", "maxReplicas": 4, "metrics": [], "triggers": [trigger],
                }))),
            );
        });
        assert_eq!(
            errors,
            [format!(
                "spec.services.decode.autoscaling.metrics: {METRICS_WITH_KEDA}"
            )]
        );
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                None,
                Some(&spec(serde_json::json!({
                    "maxReplicas": 4, "metrics": [metric()], "triggers": [],
                }))),
            );
        });
        assert_eq!(
            errors,
            [format!(
                "spec.services.decode.autoscaling.triggers: {TRIGGERS_WITHOUT_KEDA}"
            )]
        );
    }

    #[test]
    fn keda_without_triggers_and_too_many_are_refused() {
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                None,
                Some(&spec(
                    serde_json::json!({"provider": "keda", "maxReplicas": 4}),
                )),
            );
        });
        assert_eq!(
            errors,
            [format!(
                "spec.services.decode.autoscaling.triggers: {NO_TRIGGER}"
            )]
        );
        let nine: Vec<_> = (0..9)
            .map(|i| serde_json::json!({"type": "cpu", "name": format!("t{i}"), "metadata": {"value": "60"}}))
            .collect();
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                None,
                Some(&spec(
                    serde_json::json!({"provider": "keda", "maxReplicas": 4, "triggers": nine}),
                )),
            );
        });
        assert_eq!(
            errors,
            [
                "spec.services.decode.autoscaling.triggers: at most 8 triggers are allowed (now 9); remove some"
            ]
        );
    }
}
