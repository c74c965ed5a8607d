//! `spec.planner`: the pools it sizes are worker pools of the spec without `autoscaling`, each
//! with `min` not above `max`; the rest are the schema's ranges.

use super::{
    Errors,
    limits::{
        MAX_PLANNER_COOLDOWN_SECONDS, MAX_PLANNER_INTERVAL_SECONDS, MAX_REFERENCE_LENGTH,
        MAX_REPLICAS, MAX_SERVICES, MIN_PLANNER_INTERVAL_SECONDS,
    },
    rules::{PLANNER_AND_AUTOSCALING, PLANNER_MIN_ABOVE_MAX, PLANNER_NOT_A_POOL},
    syntax::{check_length, check_range, check_replica_bounds, check_slo},
};
use crate::{
    planner::{PlannedPool, Planner},
    types::{ComponentType, InferaDeploymentSpec, PlannerMode},
};

/// Default `intervalSeconds`.
pub const DEFAULT_INTERVAL_SECONDS: i32 = 30;
/// Default `cooldownSeconds`.
pub const DEFAULT_COOLDOWN_SECONDS: i32 = 300;

/// Checks `spec.planner` and resolves it; `None` when absent or `Off`.
pub(super) fn planner(errors: &mut Errors, spec: &InferaDeploymentSpec) -> Option<Planner> {
    let planner = spec.planner.as_ref()?;
    let slo_ok = check_slo(errors, "spec.planner.slo", &planner.slo);
    let interval = planner.interval_seconds.unwrap_or(DEFAULT_INTERVAL_SECONDS);
    check_range(
        errors,
        "spec.planner.intervalSeconds",
        interval,
        MIN_PLANNER_INTERVAL_SECONDS..=MAX_PLANNER_INTERVAL_SECONDS,
        &format!("must be {MIN_PLANNER_INTERVAL_SECONDS} or more; set how often the planner looks"),
    );
    let cooldown = planner.cooldown_seconds.unwrap_or(DEFAULT_COOLDOWN_SECONDS);
    check_range(
        errors,
        "spec.planner.cooldownSeconds",
        cooldown,
        0..=MAX_PLANNER_COOLDOWN_SECONDS,
        "must be 0 or more; set how long after a change the planner waits to lower a pool",
    );
    let max_step = planner.max_step.unwrap_or(1);
    check_range(
        errors,
        "spec.planner.maxStep",
        max_step,
        1..=MAX_REPLICAS,
        "must be 1 or more; set how many replicas one decision may add or remove",
    );
    if planner.pools.len() > MAX_SERVICES {
        errors.push(
            "spec.planner.pools",
            format!(
                "must name at most {MAX_SERVICES} pools (now {}); a deployment has no more services",
                planner.pools.len()
            ),
        );
    }
    if let Some(url) = &planner.prometheus {
        check_length(errors, "spec.planner.prometheus", url, MAX_REFERENCE_LENGTH);
        let scheme = url.strip_prefix("http://").or(url.strip_prefix("https://"));
        if !url.is_empty() && (scheme.is_none_or(str::is_empty) || url.contains(' ')) {
            errors.push(
                "spec.planner.prometheus",
                format!("{url:?} is not an HTTP URL; write Prometheus's address as the operator reaches it, e.g. http://prometheus-operated.monitoring:9090"),
            );
        }
    }
    if planner.pools.is_empty() {
        errors.push(
            "spec.planner.pools",
            "must name at least one worker pool; add one, e.g. {decode: {min: 1, max: 4}}",
        );
    }
    let mut pools = Vec::new();
    for (name, bounds) in &planner.pools {
        let path = format!("spec.planner.pools.{name}");
        check_replica_bounds(
            errors,
            (&format!("{path}.min"), bounds.min),
            (&format!("{path}.max"), bounds.max),
            PLANNER_MIN_ABOVE_MAX,
        );
        match spec.services.get(name) {
            Some(service) if service.component_type == ComponentType::Worker => {
                if service.autoscaling.is_some() {
                    errors.push(path, PLANNER_AND_AUTOSCALING);
                } else {
                    pools.push(PlannedPool {
                        name: name.clone(),
                        role: service.role.unwrap_or_default(),
                        min: bounds.min,
                        max: bounds.max,
                    });
                }
            }
            _ => errors.push(path, PLANNER_NOT_A_POOL),
        }
    }
    (planner.mode() != PlannerMode::Off && slo_ok).then(|| Planner {
        acts: planner.mode() == PlannerMode::Act,
        ttft_p95: planner.slo.ttft_p95_seconds(),
        itl_p95: planner.slo.itl_p95_seconds(),
        interval_seconds: i64::from(interval),
        cooldown_seconds: i64::from(cooldown),
        max_step,
        pools,
        prometheus: planner.prometheus.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{planner::PlannedPool, types::Role, validate::found};

    fn spec(planner: serde_json::Value) -> InferaDeploymentSpec {
        serde_json::from_value(json!({
            "services": {
                "server": {"componentType": "server"},
                "prefill": {"componentType": "worker", "role": "prefill", "replicas": 2},
                "decode": {"componentType": "worker", "role": "decode",
                           "autoscaling": {"maxReplicas": 4, "metrics": []}},
            },
            "planner": planner,
        }))
        .expect("a spec")
    }

    fn resolved(planner: serde_json::Value) -> (Option<Planner>, Vec<String>) {
        let spec = spec(planner);
        let mut out = None;
        let errors = found(|errors| out = super::planner(errors, &spec));
        (out, errors)
    }

    #[test]
    fn a_planner_resolves_with_its_defaults_and_the_pools_roles() {
        let (planner, errors) = resolved(json!({
            "mode": "Advise",
            "slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40},
            "pools": {"prefill": {"min": 1, "max": 3}},
        }));
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(
            planner,
            Some(Planner {
                acts: false,
                ttft_p95: 0.8,
                itl_p95: 0.04,
                interval_seconds: 30,
                cooldown_seconds: 300,
                max_step: 1,
                pools: vec![PlannedPool {
                    name: "prefill".into(),
                    role: Role::Prefill,
                    min: 1,
                    max: 3
                }],
                prometheus: None,
            })
        );
    }

    #[test]
    fn prometheus_is_an_http_url() {
        let with = |url: &str| {
            resolved(json!({
                "mode": "Advise",
                "slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40},
                "pools": {"prefill": {"min": 1, "max": 3}},
                "prometheus": url,
            }))
        };
        let (planner, errors) = with("http://prometheus-operated.monitoring:9090");
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(
            planner.and_then(|p| p.prometheus).as_deref(),
            Some("http://prometheus-operated.monitoring:9090")
        );
        assert_eq!(with("https://prom.example.com/x").1, Vec::<String>::new());
        for wrong in ["prometheus:9090", "http://", "http://a b"] {
            assert_eq!(
                with(wrong).1,
                [format!(
                    "spec.planner.prometheus: {wrong:?} is not an HTTP URL; write Prometheus's address as the operator reaches it, e.g. http://prometheus-operated.monitoring:9090"
                )],
                "{wrong}"
            );
        }
        assert_eq!(
            with("").1,
            ["spec.planner.prometheus: must not be empty; set a value or remove the field"]
        );
    }

    #[test]
    fn off_is_checked_but_resolves_to_none() {
        let (planner, errors) = resolved(json!({
            "slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40},
            "pools": {"prefill": {"min": 3, "max": 1}},
        }));
        assert_eq!(planner, None);
        assert_eq!(
            errors,
            [format!(
                "spec.planner.pools.prefill.min: {PLANNER_MIN_ABOVE_MAX}"
            )]
        );
    }

    #[test]
    fn pools_must_be_worker_pools_without_autoscaling() {
        let (_, errors) = resolved(json!({
            "mode": "Act",
            "slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40},
            "pools": {"decode": {"min": 1, "max": 2}, "server": {"min": 1, "max": 2},
                      "nope": {"min": 1, "max": 2}},
        }));
        assert_eq!(
            errors,
            [
                format!("spec.planner.pools.decode: {PLANNER_AND_AUTOSCALING}"),
                format!("spec.planner.pools.nope: {PLANNER_NOT_A_POOL}"),
                format!("spec.planner.pools.server: {PLANNER_NOT_A_POOL}"),
            ]
        );
    }

    #[test]
    fn ranges_name_the_field() {
        let (planner, errors) = resolved(json!({
            "mode": "Act",
            "slo": {"ttftP95Milliseconds": 0, "itlP95Milliseconds": 40},
            "intervalSeconds": 1, "cooldownSeconds": -1, "maxStep": 0,
            "pools": {},
        }));
        assert_eq!(planner, None);
        assert_eq!(
            errors,
            [
                "spec.planner.slo.ttftP95Milliseconds: must be 1 or more; set the latency target in milliseconds",
                "spec.planner.intervalSeconds: must be 5 or more; set how often the planner looks",
                "spec.planner.cooldownSeconds: must be 0 or more; set how long after a change the planner waits to lower a pool",
                "spec.planner.maxStep: must be 1 or more; set how many replicas one decision may add or remove",
                "spec.planner.pools: must name at least one worker pool; add one, e.g. {decode: {min: 1, max: 4}}",
            ]
        );
    }
}
