//! `services.X.autoscaling`: an autoscaler owns the replica count between two bounds.

use k8s_openapi::api::autoscaling::v2::MetricSpec;

use super::{
    Errors,
    limits::{MAX_METRICS, MAX_REPLICAS, check_range},
};
use crate::types::{AutoscalingProvider, AutoscalingSpec};

/// `replicas` beside `autoscaling`.
pub(super) const REPLICAS_AND_AUTOSCALING: &str = "replicas and autoscaling both set the replica count; remove replicas (autoscaling.minReplicas is the floor)";
/// `minReplicas` above `maxReplicas`.
pub(super) const MIN_ABOVE_MAX: &str =
    "must not be above maxReplicas; lower minReplicas or raise maxReplicas";
/// `provider: keda`.
pub(super) const KEDA_UNSUPPORTED: &str = "keda is not supported yet; use provider: hpa (the default), or leave autoscaling out and point your own ScaledObject at the pool (the operator leaves replicas alone only with autoscaling set)";
/// No metric.
pub(super) const NO_METRIC: &str = "needs at least one metric (the HorizontalPodAutoscaler's default, 80% CPU, says nothing about a GPU engine's load); add one, e.g. a Pods metric of the engine's queue length";

/// A service's autoscaling, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Autoscaling {
    /// Fewest replicas (groups, for a multi-node pool).
    pub min_replicas: i32,
    /// Most replicas (groups, for a multi-node pool).
    pub max_replicas: i32,
    /// The HorizontalPodAutoscaler's metrics, as the user wrote them.
    pub metrics: Vec<MetricSpec>,
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
    if spec.provider == Some(AutoscalingProvider::Keda) {
        errors.push(path_of("provider"), KEDA_UNSUPPORTED);
    }
    let min = spec.min_replicas.unwrap_or(1);
    let below = "must be 1 or more; set the fewest replicas to keep";
    let min_ok = check_range(
        errors,
        &path_of("minReplicas"),
        min,
        1..=MAX_REPLICAS,
        below,
    );
    let max = spec.max_replicas;
    let max_ok = check_range(
        errors,
        &path_of("maxReplicas"),
        max,
        1..=MAX_REPLICAS,
        below,
    );
    if min_ok && max_ok && min > max {
        errors.push(path_of("minReplicas"), MIN_ABOVE_MAX);
    }
    if spec.metrics.is_empty() {
        errors.push(path_of("metrics"), NO_METRIC);
    } else if spec.metrics.len() > MAX_METRICS {
        errors.push(
            path_of("metrics"),
            format!(
                "at most {MAX_METRICS} metrics are allowed (now {}); remove some",
                spec.metrics.len()
            ),
        );
    }
    Some(Autoscaling {
        min_replicas: min,
        max_replicas: max,
        metrics: spec.metrics.clone(),
    })
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
        assert_eq!(autoscaling.metrics.len(), 1);
    }

    #[test]
    fn every_broken_rule_names_its_field() {
        let errors = found(|errors| {
            settings(
                errors,
                "spec.services.decode",
                Some(2),
                Some(&spec(serde_json::json!({
                    "provider": "keda", "minReplicas": 5, "maxReplicas": 4, "metrics": [],
                }))),
            );
        });
        assert_eq!(
            errors,
            [
                format!("spec.services.decode.replicas: {REPLICAS_AND_AUTOSCALING}"),
                format!("spec.services.decode.autoscaling.provider: {KEDA_UNSUPPORTED}"),
                format!("spec.services.decode.autoscaling.minReplicas: {MIN_ABOVE_MAX}"),
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
}
