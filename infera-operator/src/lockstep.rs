//! The rollout's next step, put into the rendered worker workloads: what
//! [`infera_core::lockstep::plan`] decides from the pods in the cache becomes each pool's
//! [`WorkerRollout`] — a Deployment's `paused` and bounds, a LeaderWorkerSet's bounds and
//! `partition` (which holds groups at the old revision) — which the render's
//! [`Child::set_rollout`] writes. The apply then writes only what changed.

use std::sync::Arc;

use infera_core::{
    Child, Role,
    lockstep::{self, Pool, Side, Step},
    naming::{LABEL_REVISION, LABEL_SERVICE, LWS_LABEL_GROUP_INDEX, LWS_LABEL_WORKER_INDEX},
    render::{WorkerRollout, Workload},
    validate::ValidDeployment,
};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;

use crate::observe::Snapshot;

/// What [`step`] decided beyond the workloads themselves.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Stepped {
    /// Why pools that cannot move are blocked.
    pub blocked: Vec<String>,
    /// Pools a paused rollout holds part-way, as `service (n/m updated)`.
    pub paused: Vec<String>,
}

/// Puts the next rollout step of every worker pool of `valid` into `children` (as rendered for
/// it, `workloads` read of them), from what `snapshot` holds. With `spec.rollout.paused`, a pool
/// part-way through its rollout is held where it is.
pub fn step(
    valid: &ValidDeployment,
    snapshot: &Snapshot,
    children: &mut [Child],
    workloads: &[Workload],
) -> Stepped {
    let observed: Vec<Observed> = valid
        .workers
        .iter()
        .filter_map(|worker| {
            let workload = workloads
                .iter()
                .find(|w| w.service == worker.pod.service && w.revision.is_some())?;
            let revision = workload.revision.as_deref()?;
            let desired = workload
                .replicas
                .or_else(|| snapshot.live_replicas(workload))
                .unwrap_or(0);
            let side = match worker.role {
                Role::Prefill => Side::Prefill,
                Role::Decode => Side::Decode,
                Role::Mixed => Side::Mixed,
            };
            let (pool, surge) = observe(
                &snapshot.pods,
                &worker.pod.service,
                revision,
                worker.multi_node().then_some(desired),
            );
            let live_surge = snapshot
                .children
                .get(&(workload.kind, workload.name.clone()))
                .and_then(|live| live.state()?.max_surge);
            Some(Observed {
                workload: workload.name.clone(),
                pool: Pool {
                    name: worker.pod.service.clone(),
                    side,
                    desired,
                    bounds: worker.rollout,
                    ..pool
                },
                surge,
                live_surge,
            })
        })
        .collect();
    let with_surge: Vec<Pool> = observed.iter().map(Observed::with_surge).collect();
    let steady_surge = lockstep::steady_surge(valid.rollout.strategy, &with_surge);
    let gpus_short = with_surge.iter().any(|pool| pool.waiting_for_gpu);
    let replaces: Vec<bool> = observed
        .iter()
        .zip(&steady_surge)
        .map(|(pool, steady)| pool.replaces(*steady, gpus_short))
        .collect();
    let pools: Vec<Pool> = observed
        .iter()
        .zip(&replaces)
        .map(|(pool, replaces)| pool.planned(*replaces))
        .collect();
    let mut plan = lockstep::plan(valid.rollout.strategy, &pools);
    let mut paused = Vec::new();
    if valid.rollout.paused {
        for (pool, step) in pools.iter().zip(plan.steps.iter_mut()) {
            if pool.old > 0 {
                *step = lockstep::hold(pool);
                // One that has not started is reported by the apply, which holds its template.
                if pool.updated > 0 {
                    paused.push(format!(
                        "{} ({}/{} updated)",
                        pool.name, pool.updated, pool.desired
                    ));
                }
            }
        }
    }
    for (((observed, pool), step), (steady, replaces)) in observed
        .iter()
        .zip(&pools)
        .zip(&plan.steps)
        .zip(steady_surge.into_iter().zip(replaces))
    {
        if let Some(child) = children.iter_mut().find(|c| c.name() == observed.workload) {
            let surge = if replaces {
                Surge::Replaced
            } else {
                Surge::Steady {
                    groups: observed.surge.groups,
                    max_surge: steady,
                }
            };
            child.set_rollout(rollout(pool, step, surge));
        }
    }
    Stepped {
        blocked: plan.blocked,
        paused,
    }
}

/// What is observed of one worker pool.
struct Observed {
    /// Its workload's name.
    workload: String,
    /// Its replicas below desired.
    pool: Pool,
    surge: SurgeGroups,
    /// The `maxSurge` of its live LeaderWorkerSet.
    live_surge: Option<i64>,
}

impl Observed {
    /// The pool with its surge groups counted in.
    fn with_surge(&self) -> Pool {
        Pool {
            updated: self.pool.updated + self.surge.groups,
            updated_ready: self.pool.updated_ready + self.surge.ready,
            waiting_for_gpu: self.pool.waiting_for_gpu || self.surge.waiting_for_gpu,
            ..self.pool.clone()
        }
    }

    /// Whether a LeaderWorkerSet pool rolling out replaces groups rather than surging: it may
    /// (`maxUnavailable ≥ 1`), and it has no surge (`steady_surge` 0, or a live `maxSurge` of 0:
    /// it switched earlier in this rollout), or a GPU is short (`gpus_short`) and none of its
    /// surge groups is ready.
    fn replaces(&self, steady_surge: i32, gpus_short: bool) -> bool {
        self.pool.multi_node
            && self.pool.old > 0
            && self.pool.bounds.max_unavailable > 0
            && (steady_surge == 0
                || self.live_surge == Some(0)
                || (gpus_short && self.surge.ready == 0))
    }

    /// The pool as the plan sees it: one that replaces cannot surge, and its surge groups, none
    /// ready, are being deleted.
    fn planned(&self, replaces: bool) -> Pool {
        if !replaces {
            return self.with_surge();
        }
        let mut pool = self.pool.clone();
        pool.bounds.max_surge = 0;
        pool
    }
}

/// A LeaderWorkerSet pool's surge groups (its groups at `desired` and above, all of the update
/// revision).
#[derive(Debug, Default)]
struct SurgeGroups {
    groups: i32,
    ready: i32,
    /// A pod of one cannot be scheduled.
    waiting_for_gpu: bool,
}

/// The counts of pool `service` from its pods (for a multi-node pool of `groups` desired
/// groups, its groups' leaders; a group waits for a GPU when any of its pods does), apart from
/// its surge groups; the caller fills in the rest of the pool.
fn observe(
    pods: &[Arc<Pod>],
    service: &str,
    revision: &str,
    groups: Option<i32>,
) -> (Pool, SurgeGroups) {
    let mut pool = Pool {
        name: String::new(),
        side: Side::Mixed,
        desired: 0,
        bounds: infera_core::validate::PoolBounds {
            max_surge: 0,
            max_unavailable: 0,
        },
        updated: 0,
        updated_ready: 0,
        old: 0,
        old_ready: 0,
        waiting_for_gpu: false,
        multi_node: groups.is_some(),
    };
    let mut surge = SurgeGroups::default();
    let pods = pods.iter().filter(|pod| {
        pod.metadata.deletion_timestamp.is_none() && label(pod, LABEL_SERVICE) == Some(service)
    });
    for pod in pods {
        let leader = groups.is_none() || label(pod, LWS_LABEL_WORKER_INDEX) == Some("0");
        let ready = condition(pod, "Ready").is_some_and(|(status, _)| status == "True");
        if label(pod, LABEL_REVISION) == Some(revision) {
            let index = label(pod, LWS_LABEL_GROUP_INDEX).and_then(|i| i.parse::<i32>().ok());
            let surged = groups
                .zip(index)
                .is_some_and(|(groups, index)| index >= groups);
            let waiting = condition(pod, "PodScheduled")
                .is_some_and(|(status, reason)| status == "False" && reason == "Unschedulable");
            if surged {
                surge.groups += i32::from(leader);
                surge.ready += i32::from(leader && ready);
                surge.waiting_for_gpu |= waiting;
            } else {
                pool.updated += i32::from(leader);
                pool.updated_ready += i32::from(leader && ready);
                pool.waiting_for_gpu |= waiting;
            }
        } else if leader {
            pool.old += 1;
            pool.old_ready += i32::from(ready);
        }
    }
    (pool, surge)
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.labels().get(key).map(String::as_str)
}

/// The status and reason of the pod's condition `type_`.
fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<(&'a str, &'a str)> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let condition = conditions.iter().find(|c| c.type_ == type_)?;
    Some((
        condition.status.as_str(),
        condition.reason.as_deref().unwrap_or_default(),
    ))
}

/// How a LeaderWorkerSet pool surges through its rollout.
enum Surge {
    /// It keeps a `maxSurge` fixed ([`lockstep::steady_surge`]) and has `groups` surge groups.
    Steady { groups: i32, max_surge: i32 },
    /// It replaces groups in place: no surge, and the step's `maxUnavailable`.
    Replaced,
}

/// What `step` of `pool` makes of its workload's rollout. A Deployment is paused or not within
/// the step's bounds. A LeaderWorkerSet's groups from `partition` up are updated in place, the
/// others keep their revision (LeaderWorkerSet v0.9 api/leaderworkerset/v1
/// RollingUpdateConfiguration). Its controller creates the surge groups first, of the update
/// revision, recreates groups in place only within `maxUnavailable` (counting ready surge
/// groups), and deletes surge groups as soon as `maxSurge` shrinks (pkg/controllers/
/// leaderworkerset_controller.go, rollingUpdateParameters): so while it surges its bounds stay the
/// pool's through the rollout and only the partition moves, over the groups updated in place,
/// which are the updated ones besides the surge groups — until every group may be updated: its
/// controller takes the surge groups back only after that. One that replaces has no surge
/// groups, and its `maxUnavailable` is the step's, as a Deployment's is (never 0 with no surge:
/// its webhook refuses both 0).
fn rollout(pool: &Pool, step: &Step, surge: Surge) -> WorkerRollout {
    if !pool.multi_node {
        return WorkerRollout {
            paused: step.hold,
            max_surge: step.max_surge,
            max_unavailable: step.max_unavailable,
            partition: 0,
        };
    }
    let (surged, max_surge, max_unavailable) = match surge {
        Surge::Steady { groups, max_surge } => (groups, max_surge, pool.bounds.max_unavailable),
        Surge::Replaced => (0, 0, step.max_unavailable.max(1)),
    };
    let updated = if step.hold {
        pool.updated
    } else {
        step.allowed
    };
    let in_place = if pool.old == 0 || updated >= pool.desired {
        pool.desired
    } else {
        updated - surged
    };
    WorkerRollout {
        paused: false,
        max_surge,
        max_unavailable,
        partition: (pool.desired - in_place).max(0),
    }
}

#[cfg(test)]
mod tests {
    use infera_core::{
        InferaDeployment,
        naming::{LABEL_REVISION, LABEL_SERVICE, LWS_LABEL_GROUP_INDEX, LWS_LABEL_WORKER_INDEX},
        validate,
    };
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    use serde_json::json;

    use super::*;
    use crate::live::{Live, State};

    /// A prefill Deployment pool and a decode LeaderWorkerSet pool (2-pod groups), 2 replicas
    /// each, rolling out in Lockstep with the default bounds (`maxSurge: 1, maxUnavailable: 0`).
    fn graph() -> ValidDeployment {
        graph_within(json!({}))
    }

    /// [`graph`] within the graph-wide `rollout` bounds.
    fn graph_within(rollout: serde_json::Value) -> ValidDeployment {
        let idep: InferaDeployment = serde_json::from_value(json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "pd", "namespace": "demo"},
            "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
                "rollout": rollout, "services": {
                "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
                "prefill": {"componentType": "worker", "role": "prefill", "replicas": 2, "resources": {"gpu": 1}},
                "decode": {"componentType": "worker", "role": "decode", "replicas": 2, "numberOfNodes": 2,
                    "resources": {"gpu": 1}, "args": ["--tp-size", "2"]},
            }},
        }))
        .expect("an InferaDeployment");
        validate(&idep).expect("valid")
    }

    fn pod(service: &str, revision: &str, leader: bool, ready: bool) -> Arc<Pod> {
        let mut pod = Pod::default();
        let mut labels = std::collections::BTreeMap::from([
            (LABEL_SERVICE.to_string(), service.to_string()),
            (LABEL_REVISION.to_string(), revision.to_string()),
        ]);
        labels.insert(
            LWS_LABEL_WORKER_INDEX.into(),
            if leader { "0" } else { "1" }.into(),
        );
        pod.metadata.labels = Some(labels);
        pod.status = Some(PodStatus {
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                ..PodCondition::default()
            }]),
            ..PodStatus::default()
        });
        Arc::new(pod)
    }

    /// The revision `valid` renders its workers at.
    fn update_revision(valid: &ValidDeployment) -> String {
        Workload::of(&infera_core::render(valid))
            .into_iter()
            .find_map(|w| w.revision)
            .expect("a revision")
    }

    /// `pod` in LeaderWorkerSet group `index`.
    fn in_group(pod: Arc<Pod>, index: &str) -> Arc<Pod> {
        let mut pod = (*pod).clone();
        pod.labels_mut()
            .insert(LWS_LABEL_GROUP_INDEX.into(), index.into());
        Arc::new(pod)
    }

    /// The rendered workloads after the step over `pods`: the prefill Deployment's `paused` and
    /// bounds, the decode LeaderWorkerSet's partition and bounds.
    fn stepped(pods: Vec<Arc<Pod>>) -> (serde_json::Value, serde_json::Value) {
        stepped_in(
            &graph(),
            Snapshot {
                pods,
                ..Snapshot::default()
            },
        )
    }

    /// [`stepped`] for `valid` over `snapshot`.
    fn stepped_in(
        valid: &ValidDeployment,
        snapshot: Snapshot,
    ) -> (serde_json::Value, serde_json::Value) {
        let mut children = infera_core::render(valid);
        let workloads = Workload::of(&children);
        assert_eq!(
            step(valid, &snapshot, &mut children, &workloads),
            Stepped::default()
        );
        let spec = |name: &str| {
            let child = children
                .iter()
                .find(|c| c.name() == name)
                .expect("rendered");
            serde_json::to_value(child).expect("JSON")["spec"].clone()
        };
        let (prefill, decode) = (spec("pd-prefill"), spec("pd-decode"));
        (
            json!({"paused": prefill["paused"], "strategy": prefill["strategy"]}),
            decode["rolloutStrategy"].clone(),
        )
    }

    #[test]
    fn each_pool_gets_its_step_a_deployment_paused_a_leader_worker_set_partitioned() {
        let old = |service, leader| pod(service, "old", leader, true);
        let start = vec![
            old("prefill", true),
            old("prefill", true),
            old("decode", true),
            old("decode", false),
            old("decode", true),
            old("decode", false),
        ];
        let one =
            json!({"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}, "type": "RollingUpdate"});
        // One replica of each side first: the Deployment may surge one, the LeaderWorkerSet
        // updates groups from 1 up.
        assert_eq!(
            stepped(start.clone()),
            (
                json!({"paused": null, "strategy": one}),
                json!({"type": "RollingUpdate", "rollingUpdateConfiguration":
                    {"maxSurge": 1, "maxUnavailable": 0, "partition": 1}}),
            )
        );
        // Its new pod exists, not ready: the prefill Deployment is paused.
        let revision = update_revision(&graph());
        let mut surged = start;
        surged.push(pod("prefill", &revision, true, false));
        assert_eq!(stepped(surged).0, json!({"paused": true, "strategy": one}));
    }

    /// A LeaderWorkerSet's surge group of the new revision is not an update in place: held
    /// while it is not ready, the pool keeps every group below `desired` at the old revision,
    /// and its bounds stay the pool's (its controller deletes surge groups when maxSurge shrinks).
    #[test]
    fn a_surge_group_is_not_counted_as_a_group_updated_in_place() {
        let revision = update_revision(&graph());
        let old = |service, leader| pod(service, "old", leader, true);
        let pods = vec![
            old("prefill", true),
            old("prefill", true),
            pod("prefill", &revision, true, false),
            in_group(old("decode", true), "0"),
            in_group(old("decode", false), "0"),
            in_group(old("decode", true), "1"),
            in_group(old("decode", false), "1"),
            in_group(pod("decode", &revision, true, false), "2"),
            in_group(pod("decode", &revision, false, false), "2"),
        ];
        assert_eq!(
            stepped(pods).1,
            json!({"type": "RollingUpdate", "rollingUpdateConfiguration":
                {"maxSurge": 1, "maxUnavailable": 0, "partition": 2}})
        );
    }

    /// A LeaderWorkerSet pool whose surge group waits for a GPU replaces groups instead: no
    /// surge (its controller deletes the surge group), one group down at a time. It goes on
    /// replacing while its live LeaderWorkerSet has no surge, after the surge group is gone.
    #[test]
    fn a_multi_node_pool_whose_surge_finds_no_gpu_replaces_groups_for_the_rest_of_its_rollout() {
        let valid = graph_within(json!({"maxSurge": 1, "maxUnavailable": 1}));
        let revision = update_revision(&valid);
        let unschedulable = |pod: Arc<Pod>| {
            let mut pod = (*pod).clone();
            if let Some(conditions) = pod.status.as_mut().and_then(|s| s.conditions.as_mut()) {
                conditions.push(PodCondition {
                    type_: "PodScheduled".into(),
                    status: "False".into(),
                    reason: Some("Unschedulable".into()),
                    ..PodCondition::default()
                });
            }
            Arc::new(pod)
        };
        let old = |service, leader| pod(service, "old", leader, true);
        let settled = vec![
            old("prefill", true),
            old("prefill", true),
            in_group(old("decode", true), "0"),
            in_group(old("decode", false), "0"),
            in_group(old("decode", true), "1"),
            in_group(old("decode", false), "1"),
        ];
        let mut waiting = settled.clone();
        // The surge group's leader found a GPU, its worker did not.
        waiting.push(in_group(pod("decode", &revision, true, false), "2"));
        waiting.push(unschedulable(in_group(
            pod("decode", &revision, false, false),
            "2",
        )));
        let replacing = json!({"type": "RollingUpdate", "rollingUpdateConfiguration":
            {"maxSurge": 0, "maxUnavailable": 1, "partition": 1}});
        let pods_only = |pods| Snapshot {
            pods,
            ..Snapshot::default()
        };
        // The surge group waits no more once deleted: the prefill Deployment may surge into the
        // GPU its leader leaves.
        assert_eq!(
            stepped_in(&valid, pods_only(waiting)),
            (
                json!({"paused": null, "strategy":
                    {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}, "type": "RollingUpdate"}}),
                replacing.clone(),
            )
        );
        // The surge group is gone; the live LeaderWorkerSet has the surge it was given.
        let with_live_surge = |max_surge| {
            let live = Live {
                state: Some(Box::new(State {
                    max_surge: Some(max_surge),
                    ..State::default()
                })),
                ..Live::default()
            };
            Snapshot {
                children: [(
                    (infera_core::ChildKind::LeaderWorkerSet, "pd-decode".into()),
                    Arc::new(live),
                )]
                .into(),
                pods: settled.clone(),
                ..Snapshot::default()
            }
        };
        assert_eq!(stepped_in(&valid, with_live_surge(0)).1, replacing);
        // One that never switched surges, its bounds the pool's.
        assert_eq!(
            stepped_in(&valid, with_live_surge(1)).1,
            json!({"type": "RollingUpdate", "rollingUpdateConfiguration":
                {"maxSurge": 1, "maxUnavailable": 1, "partition": 1}})
        );
    }
}
