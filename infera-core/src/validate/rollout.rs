//! `spec.rollout` and the pools' `rollout`: how the worker pools roll out to a new revision
//! (see [`crate::lockstep`] for what the operator does with it).

use super::rules::{
    CANNOT_PROGRESS, DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, LOCKSTEP_WITHOUT_PD,
    SERVER_ROLLOUT,
};
use super::{
    Errors,
    limits::{MAX_PROGRESS_DEADLINE_SECONDS, MAX_REPLICAS, MAX_REVISION_HISTORY_LIMIT},
    syntax::check_range,
};
use crate::types::{
    ComponentType, InferaDeploymentSpec, PoolRolloutSpec, Role, RolloutSpec, RolloutStrategy,
};

/// `spec.revisionHistoryLimit` when unset: a Deployment's and a StatefulSet's default.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
/// `progressDeadlineSeconds` when unset: ten minutes, a Deployment's default.
pub const DEFAULT_PROGRESS_DEADLINE_SECONDS: i32 = 600;

/// The graph's rollout, checked, with defaults resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rollout {
    /// `Lockstep` or `Independent`, resolved from the graph when unset.
    pub strategy: RolloutStrategy,
    /// Existing worker pools are held at the revision they run.
    pub paused: bool,
    /// Seconds before a rollout that has not finished is reported.
    pub progress_deadline_seconds: i32,
    /// Revisions kept beyond those pods run (`spec.revisionHistoryLimit`).
    pub revision_history_limit: i32,
}

/// A pool's rollout bounds, in replicas (groups, for a multi-node pool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolBounds {
    /// Replicas above desired while rolling out, when a free GPU allows it.
    pub max_surge: i32,
    /// Replicas below desired while rolling out.
    pub max_unavailable: i32,
}

/// `spec.rollout`, checked.
pub(super) fn graph(errors: &mut Errors, spec: &InferaDeploymentSpec) -> Rollout {
    let rollout = spec.rollout.clone().unwrap_or_default();
    let has = |role| {
        spec.services
            .values()
            .any(|svc| svc.component_type == ComponentType::Worker && svc.role == Some(role))
    };
    let disaggregated = has(Role::Prefill) && has(Role::Decode);
    let strategy = match rollout.strategy {
        Some(RolloutStrategy::Lockstep) if !disaggregated => {
            errors.push("spec.rollout.strategy", LOCKSTEP_WITHOUT_PD);
            RolloutStrategy::Lockstep
        }
        Some(strategy) => strategy,
        None if disaggregated => RolloutStrategy::Lockstep,
        None => RolloutStrategy::Independent,
    };
    bounds_in_range(
        errors,
        "spec.rollout",
        rollout.max_surge,
        rollout.max_unavailable,
    );
    let deadline = rollout
        .progress_deadline_seconds
        .unwrap_or(DEFAULT_PROGRESS_DEADLINE_SECONDS);
    check_range(
        errors,
        "spec.rollout.progressDeadlineSeconds",
        deadline,
        1..=MAX_PROGRESS_DEADLINE_SECONDS,
        "must be at least 1; set the seconds a rollout may take",
    );
    let revision_history_limit = spec
        .revision_history_limit
        .unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT);
    check_range(
        errors,
        "spec.revisionHistoryLimit",
        revision_history_limit,
        0..=MAX_REVISION_HISTORY_LIMIT,
        "must be at least 0; set how many earlier revisions to keep",
    );
    Rollout {
        strategy,
        paused: rollout.paused,
        progress_deadline_seconds: deadline,
        revision_history_limit,
    }
}

/// The bounds of the pool at `path` (`spec.services.X`), its own over the graph's.
pub(super) fn pool(
    errors: &mut Errors,
    path: &str,
    own: Option<&PoolRolloutSpec>,
    graph: Option<&RolloutSpec>,
) -> PoolBounds {
    let own = own.cloned().unwrap_or_default();
    let in_range = bounds_in_range(
        errors,
        &format!("{path}.rollout"),
        own.max_surge,
        own.max_unavailable,
    );
    let bounds = PoolBounds {
        max_surge: own
            .max_surge
            .or(graph.and_then(|g| g.max_surge))
            .unwrap_or(DEFAULT_MAX_SURGE),
        max_unavailable: own
            .max_unavailable
            .or(graph.and_then(|g| g.max_unavailable))
            .unwrap_or(DEFAULT_MAX_UNAVAILABLE),
    };
    if in_range && bounds.max_surge == 0 && bounds.max_unavailable == 0 {
        errors.push(format!("{path}.rollout"), CANNOT_PROGRESS);
    }
    bounds
}

/// The server has no `rollout` of its own.
pub(super) fn server(errors: &mut Errors, path: &str, own: Option<&PoolRolloutSpec>) {
    if own.is_some() {
        errors.push(format!("{path}.rollout"), SERVER_ROLLOUT);
    }
}

/// `maxSurge` and `maxUnavailable` of the rollout at `path`, where set, are within the schema's
/// range; true when both are.
fn bounds_in_range(
    errors: &mut Errors,
    path: &str,
    max_surge: Option<i32>,
    max_unavailable: Option<i32>,
) -> bool {
    let mut ok = true;
    for (field, value) in [("maxSurge", max_surge), ("maxUnavailable", max_unavailable)] {
        if let Some(value) = value {
            ok &= check_range(
                errors,
                &format!("{path}.{field}"),
                value,
                0..=MAX_REPLICAS,
                "must be 0 or more; set a number of replicas",
            );
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn spec(patch: serde_json::Value) -> InferaDeploymentSpec {
        let mut value = json!({"backendFramework": "sglang", "image": "i", "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "prefill": {"componentType": "worker", "role": "prefill", "resources": {"gpu": 1}},
            "decode": {"componentType": "worker", "role": "decode", "resources": {"gpu": 1}},
        }});
        merge(&mut value, patch);
        serde_json::from_value(value).expect("a spec")
    }

    /// JSON merge patch (RFC 7386): `null` removes.
    fn merge(target: &mut serde_json::Value, patch: serde_json::Value) {
        match (target, patch) {
            (serde_json::Value::Object(target), serde_json::Value::Object(patch)) => {
                for (key, value) in patch {
                    if value.is_null() {
                        target.remove(&key);
                    } else {
                        merge(target.entry(key).or_insert(json!({})), value);
                    }
                }
            }
            (target, patch) => *target = patch,
        }
    }

    #[test]
    fn lockstep_is_the_default_of_a_prefill_decode_graph_only() {
        let mut errors = Errors::default();
        let pd = graph(&mut errors, &spec(json!({})));
        assert_eq!(
            pd,
            Rollout {
                strategy: RolloutStrategy::Lockstep,
                paused: false,
                progress_deadline_seconds: 600,
                revision_history_limit: 10,
            }
        );
        let mixed = spec(json!({"services": {"prefill": null, "decode": {"role": null}}}));
        assert_eq!(
            graph(&mut errors, &mixed).strategy,
            RolloutStrategy::Independent
        );
        assert!(errors.0.is_empty());
    }

    #[test]
    fn lockstep_needs_prefill_and_decode_pools() {
        let mixed = spec(json!({"rollout": {"strategy": "Lockstep"},
            "services": {"prefill": null, "decode": {"role": null}}}));
        assert_eq!(
            found(|e| {
                graph(e, &mixed);
            }),
            [format!("spec.rollout.strategy: {LOCKSTEP_WITHOUT_PD}")]
        );
    }

    #[test]
    fn a_pool_takes_its_own_bounds_over_the_graphs_and_needs_one_above_zero() {
        let graph_bounds: RolloutSpec =
            serde_json::from_value(json!({"maxSurge": 0, "maxUnavailable": 2})).expect("rollout");
        let own: PoolRolloutSpec =
            serde_json::from_value(json!({"maxUnavailable": 0})).expect("rollout");
        let mut errors = Errors::default();
        assert_eq!(
            pool(&mut errors, "p", None, Some(&graph_bounds)),
            PoolBounds {
                max_surge: 0,
                max_unavailable: 2
            }
        );
        assert_eq!(
            pool(&mut errors, "p", None, None),
            PoolBounds {
                max_surge: 1,
                max_unavailable: 0
            }
        );
        assert!(errors.0.is_empty());
        assert_eq!(
            found(|e| {
                pool(e, "spec.services.decode", Some(&own), Some(&graph_bounds));
            }),
            [format!("spec.services.decode.rollout: {CANNOT_PROGRESS}")]
        );
        let negative: PoolRolloutSpec =
            serde_json::from_value(json!({"maxSurge": -1, "maxUnavailable": 0})).expect("rollout");
        assert_eq!(
            found(|e| {
                pool(e, "spec.services.decode", Some(&negative), None);
            }),
            ["spec.services.decode.rollout.maxSurge: must be 0 or more; set a number of replicas"]
        );
    }

    #[test]
    fn the_deadline_is_at_least_a_second_and_at_most_a_day() {
        let rollout = |seconds: i32| spec(json!({"rollout": {"progressDeadlineSeconds": seconds}}));
        assert_eq!(
            found(|e| {
                graph(e, &rollout(0));
            }),
            [
                "spec.rollout.progressDeadlineSeconds: must be at least 1; set the seconds a rollout may take"
            ]
        );
        assert_eq!(
            found(|e| {
                graph(e, &rollout(86_401));
            }),
            ["spec.rollout.progressDeadlineSeconds: must be at most 86400 (now 86401); lower it"]
        );
    }
}
