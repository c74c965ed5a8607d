//! How far the worker pods are from the revision the spec asks for (`updateRevision`): each
//! worker pool's `updatedReplicas`, whether the rollout is complete (then `currentRevision`
//! becomes the update revision), and the `Progressing` condition's reason and message. Read from
//! the pods' `infera.amd.com/revision` labels; pure, like [`crate::status`].

use std::{collections::BTreeSet, sync::Arc};

use infera_core::{
    ROLLING_OUT, ROLLOUT_BLOCKED, ROLLOUT_COMPLETE, ROLLOUT_PAUSED, ReadyReason, ServiceStatus,
    naming::{LABEL_REVISION, LABEL_SERVICE, LWS_LABEL_GROUP_INDEX},
};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;

/// Replicas of the worker pool `service` whose pods run `revision`: pods, or for a multi-node
/// pool (`multi_node`) groups with a pod of that revision (a LeaderWorkerSet replaces a group
/// whole). Terminating pods do not count.
pub fn updated_replicas(pods: &[Arc<Pod>], service: &str, revision: &str, multi_node: bool) -> i32 {
    let updated = pods.iter().filter(|pod| {
        pod.metadata.deletion_timestamp.is_none()
            && label(pod, LABEL_SERVICE) == Some(service)
            && label(pod, LABEL_REVISION) == Some(revision)
    });
    let count = if multi_node {
        updated
            .filter_map(|pod| label(pod, LWS_LABEL_GROUP_INDEX))
            .collect::<BTreeSet<_>>()
            .len()
    } else {
        updated.count()
    };
    i32::try_from(count).unwrap_or(i32::MAX)
}

/// Whether a running (not terminating) pod of the pool `service` has another revision.
fn has_old_pods(pods: &[Arc<Pod>], service: &str, revision: &str) -> bool {
    pods.iter().any(|pod| {
        pod.metadata.deletion_timestamp.is_none()
            && label(pod, LABEL_SERVICE) == Some(service)
            && label(pod, LABEL_REVISION) != Some(revision)
    })
}

/// Ready, not terminating pods of the pool `service` that run `revision`.
fn ready_pods(pods: &[Arc<Pod>], service: &str, revision: &str) -> i32 {
    let ready = pods.iter().filter(|pod| {
        pod.metadata.deletion_timestamp.is_none()
            && label(pod, LABEL_SERVICE) == Some(service)
            && label(pod, LABEL_REVISION) == Some(revision)
            && pod
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    });
    i32::try_from(ready.count()).unwrap_or(i32::MAX)
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.labels().get(key).map(String::as_str)
}

/// Where the rollout to `revision` stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rollout {
    /// Every worker pool runs `revision` on all its replicas, ready, and nothing else.
    pub complete: bool,
    /// `Progressing`'s status (`true`: True), reason and message.
    pub progressing: (bool, &'static str, String),
}

/// The rollout of the worker pools (`pools`, by service, with their status) to `revision`;
/// `ready` is the Ready condition's reason and message, which says why pods cannot start;
/// `held` the pools a paused rollout holds, as `service (revision r)`; `blocked` why pools can
/// neither surge nor replace a replica (see [`infera_core::lockstep`]).
pub fn rollout(
    pods: &[Arc<Pod>],
    pools: &[(&str, &ServiceStatus)],
    revision: &str,
    ready: (ReadyReason, &str),
    held: &[String],
    blocked: &[String],
) -> Rollout {
    let pool_done = |(service, status): &(&str, &ServiceStatus)| {
        let updated = status.updated_replicas.unwrap_or(0);
        // A single-node pool's ready pods of the revision, from the pods themselves: the
        // workload's status lags the pod it just replaced.
        let ready = status
            .ready_groups
            .unwrap_or_else(|| ready_pods(pods, service, revision));
        updated >= status.desired_replicas
            && ready >= status.desired_replicas
            && !has_old_pods(pods, service, revision)
    };
    if pools.iter().all(pool_done) {
        let message = format!("every worker pool runs revision {revision}");
        return Rollout {
            complete: true,
            progressing: (true, ROLLOUT_COMPLETE, message),
        };
    }
    if !held.is_empty() {
        let message = format!(
            "paused before revision {revision}: {} hold the revision they run",
            held.join(", ")
        );
        return Rollout {
            complete: false,
            progressing: (false, ROLLOUT_PAUSED, message),
        };
    }
    if !blocked.is_empty() {
        return Rollout {
            complete: false,
            progressing: (false, ROLLOUT_BLOCKED, blocked.join("; ")),
        };
    }
    let (reason, message) = ready;
    if matches!(
        reason,
        ReadyReason::InsufficientCapacity | ReadyReason::Unschedulable
    ) {
        return Rollout {
            complete: false,
            progressing: (false, ROLLOUT_BLOCKED, message.to_string()),
        };
    }
    let pools: Vec<String> = pools
        .iter()
        .map(|(service, status)| {
            format!(
                "{service} {}/{} updated",
                status.updated_replicas.unwrap_or(0),
                status.desired_replicas
            )
        })
        .collect();
    Rollout {
        complete: false,
        progressing: (
            true,
            ROLLING_OUT,
            format!("to revision {revision}: {}", pools.join(", ")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    use super::*;

    fn pod(service: &str, revision: &str, group: Option<&str>, terminating: bool) -> Arc<Pod> {
        let mut labels = std::collections::BTreeMap::from([
            (LABEL_SERVICE.to_string(), service.to_string()),
            (LABEL_REVISION.to_string(), revision.to_string()),
        ]);
        if let Some(group) = group {
            labels.insert(LWS_LABEL_GROUP_INDEX.into(), group.into());
        }
        Arc::new(Pod {
            metadata: ObjectMeta {
                labels: Some(labels),
                deletion_timestamp: terminating
                    .then_some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)),
                ..ObjectMeta::default()
            },
            status: Some(k8s_openapi::api::core::v1::PodStatus {
                conditions: Some(vec![k8s_openapi::api::core::v1::PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Pod::default()
        })
    }

    fn pool(desired: i32, ready: i32, updated: i32) -> ServiceStatus {
        ServiceStatus {
            kind: "Deployment".into(),
            desired_replicas: desired,
            ready_replicas: ready,
            ready_groups: None,
            updated_replicas: Some(updated),
        }
    }

    #[test]
    fn updated_replicas_count_pods_or_groups_of_the_revision_not_terminating() {
        let pods = [
            pod("decode", "new", None, false),
            pod("decode", "new", None, true),
            pod("decode", "old", None, false),
            pod("prefill", "new", None, false),
            pod("wide", "new", Some("0"), false),
            pod("wide", "new", Some("0"), false),
            pod("wide", "new", Some("1"), false),
        ];
        assert_eq!(updated_replicas(&pods, "decode", "new", false), 1);
        assert_eq!(updated_replicas(&pods, "wide", "new", true), 2);
        assert_eq!(updated_replicas(&pods, "wide", "old", true), 0);
    }

    #[test]
    fn a_rollout_is_complete_when_every_pool_is_updated_ready_and_has_no_old_pods() {
        let ready = (
            ReadyReason::AllReplicasReady,
            "every service has all replicas ready",
        );
        let pods = [
            pod("decode", "new", None, false),
            pod("decode", "old", None, true),
        ];
        let decode = pool(1, 1, 1);
        let done = rollout(&pods, &[("decode", &decode)], "new", ready, &[], &[]);
        assert_eq!(
            done,
            Rollout {
                complete: true,
                progressing: (
                    true,
                    ROLLOUT_COMPLETE,
                    "every worker pool runs revision new".into()
                ),
            }
        );
        let pods = [
            pod("decode", "new", None, false),
            pod("decode", "old", None, false),
        ];
        let surging = rollout(&pods, &[("decode", &decode)], "new", ready, &[], &[]);
        assert!(!surging.complete, "an old pod still runs");
        let prefill = pool(2, 2, 1);
        let rolling = rollout(
            &pods[..1],
            &[("decode", &decode), ("prefill", &prefill)],
            "new",
            ready,
            &[],
            &[],
        );
        assert_eq!(
            rolling.progressing,
            (
                true,
                ROLLING_OUT,
                "to revision new: decode 1/1 updated, prefill 1/2 updated".into()
            )
        );
    }

    #[test]
    fn a_paused_rollout_names_the_pools_it_holds() {
        let ready = (
            ReadyReason::AllReplicasReady,
            "every service has all replicas ready",
        );
        let paused = rollout(
            &[pod("decode", "old", None, false)],
            &[("decode", &pool(1, 1, 0))],
            "new",
            ready,
            &["decode (revision old)".into()],
            &[],
        );
        assert_eq!(
            paused,
            Rollout {
                complete: false,
                progressing: (
                    false,
                    ROLLOUT_PAUSED,
                    "paused before revision new: decode (revision old) hold the revision they run"
                        .into()
                ),
            }
        );
    }

    #[test]
    fn a_rollout_whose_pods_cannot_be_scheduled_is_blocked() {
        let message =
            "pool decode: 1 pod unschedulable: 0/2 nodes are available: 2 Insufficient amd.com/gpu";
        let blocked = rollout(
            &[],
            &[("decode", &pool(1, 0, 0))],
            "new",
            (ReadyReason::InsufficientCapacity, message),
            &[],
            &[],
        );
        assert_eq!(
            blocked.progressing,
            (false, ROLLOUT_BLOCKED, message.to_string())
        );
    }
}
