//! What a workload's pods say: how many groups are ready, and what needs a person (an image that
//! cannot be pulled, a crashing container, a pod that cannot be scheduled).

use std::{collections::BTreeMap, sync::Arc};

use infera_core::{
    PodHealth, ReadyReason, gpu_product,
    naming::{
        LABEL_SERVICE, LWS_LABEL_GROUP_INDEX, LWS_LABEL_NAME, REGISTERED_CONDITION,
        WORKER_INFO_ANNOTATION,
    },
    pod_health::SchedulingCause,
};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;

use crate::registration;

/// Groups of a LeaderWorkerSet whose `size` pods are all Ready.
pub(super) fn ready_groups(pods: &[Arc<Pod>], lws: &str, size: i32) -> i32 {
    let mut groups: BTreeMap<&str, i32> = BTreeMap::new();
    for pod in pods
        .iter()
        .filter(|p| p.labels().get(LWS_LABEL_NAME).map(String::as_str) == Some(lws))
    {
        if let Some(group) = pod.labels().get(LWS_LABEL_GROUP_INDEX) {
            *groups.entry(group.as_str()).or_default() += i32::from(PodHealth::of(pod).ready);
        }
    }
    let ready = groups.values().filter(|ready| **ready >= size).count();
    i32::try_from(ready).unwrap_or(i32::MAX)
}

/// What needs a person in a pool's pods: the first container that cannot pull its image, keeps
/// crashing or cannot start, e.g. `pod demo-decode-x: container engine CrashLoopBackOff, 7
/// restarts, last exit 2 (Error): sglang serve: error: unrecognized arguments: --bogus`.
pub(super) fn trouble(pods: &[Arc<Pod>], service: &str) -> Option<String> {
    pods.iter()
        .filter(|pod| pod.labels().get(LABEL_SERVICE).map(String::as_str) == Some(service))
        .find_map(|pod| {
            let health = PodHealth::of(pod);
            let waiting = health
                .waiting
                .into_iter()
                .find(|w| w.trouble != infera_core::pod_health::Trouble::None)?;
            let mut line = format!(
                "pod {}: container {} {}",
                pod.name_any(),
                waiting.container,
                waiting.reason
            );
            if waiting.restarts > 0 {
                line.push_str(&format!(", {} restarts", waiting.restarts));
            }
            if let Some(exit) = &waiting.last_exit {
                line.push_str(&exit.describe());
            }
            // The container's own last words say more than the kubelet's back-off message.
            let quoted = waiting
                .last_exit
                .as_ref()
                .is_some_and(|e| !e.message.is_empty());
            if !quoted && !waiting.message.is_empty() {
                line.push_str(&format!(": {}", waiting.message));
            }
            Some(line)
        })
}

/// A pool's pod whose containers are ready but which the router has not registered yet (its
/// readiness gate, see [`crate::registration`]): `pod demo-decode-x: its engine serves, not yet
/// registered with the router (no infera.amd.com/worker-info annotation)`.
pub(super) fn unregistered(pods: &[Arc<Pod>], service: &str) -> Option<String> {
    pods.iter()
        .find(|pod| {
            pod.labels().get(LABEL_SERVICE).map(String::as_str) == Some(service)
                && pod.metadata.deletion_timestamp.is_none()
                && registration::gated(pod)
                && !registration::condition_true(pod, REGISTERED_CONDITION)
                && registration::condition_true(pod, "ContainersReady")
        })
        .map(|pod| {
            format!(
                "pod {}: its engine serves, not yet registered with the router (no {WORKER_INFO_ANNOTATION} annotation)",
                pod.name_any()
            )
        })
}

/// Unschedulable pods by pool, as `pool decode: 1 pod unschedulable: <the scheduler's message>`;
/// `InsufficientCapacity` when a pool lacks resources, `Unschedulable` for anything else (an
/// unbound claim, a selector no node matches) — adding GPUs would not help there.
pub(super) fn unschedulable(pods: &[Arc<Pod>]) -> Option<(ReadyReason, String)> {
    let mut by_service: BTreeMap<String, (usize, SchedulingCause, String)> = BTreeMap::new();
    for pod in pods {
        let health = PodHealth::of(pod);
        if let Some((cause, message)) = health.unschedulable() {
            let (cause, message) = match required_product(pod) {
                // The product is never substituted: a pool without a node of it lacks capacity.
                Some(product) if cause == SchedulingCause::Placement => (
                    SchedulingCause::Capacity,
                    format!("no node of GPU product {product} can take it: {message}"),
                ),
                _ => (cause, message.to_string()),
            };
            let service = pod.labels().get(LABEL_SERVICE).cloned().unwrap_or_default();
            let entry = by_service
                .entry(service)
                .or_insert((0, cause, message.clone()));
            entry.0 += 1;
            // A pool's most telling pod speaks for it: capacity first (see `SchedulingCause`).
            if cause < entry.1 {
                (entry.1, entry.2) = (cause, message);
            }
        }
    }
    let capacity = by_service
        .values()
        .any(|(_, cause, _)| *cause == SchedulingCause::Capacity);
    let lines: Vec<String> = by_service
        .into_iter()
        .map(|(service, (count, cause, message))| {
            let pods = if count == 1 { "pod" } else { "pods" };
            format!(
                "pool {service}: {count} {pods} {}: {message}",
                cause.describe()
            )
        })
        .collect();
    let reason = if capacity {
        ReadyReason::InsufficientCapacity
    } else {
        ReadyReason::Unschedulable
    };
    (!lines.is_empty()).then(|| (reason, lines.join("\n")))
}

/// The GPU product a pod's required node affinity names (`resources.gpuProduct`), as the user
/// named it.
fn required_product(pod: &Pod) -> Option<String> {
    let required = pod
        .spec
        .as_ref()?
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?;
    required
        .node_selector_terms
        .iter()
        .flat_map(|term| term.match_expressions.iter().flatten())
        .find(|expression| expression.key == gpu_product::PRODUCT_LABEL)
        .and_then(|expression| expression.values.as_ref()?.first())
        .map(|value| gpu_product::product_of(value))
}
