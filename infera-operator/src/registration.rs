//! The readiness gate of the workers that register with the router
//! ([`REGISTERED_CONDITION`], rendered by `infera_core::render`): once upstream's wrapper has put
//! its registration on its own pod ([`WORKER_INFO_ANNOTATION`]), the router routes to the pod, and
//! the operator sets the pod's condition `True` so that Kubernetes counts it Ready from then on —
//! not at the engine's `/health`, which comes up to seconds earlier. Rollouts (the Deployment and
//! LeaderWorkerSet controllers, Lockstep), `status` and `deploy --wait` all read Ready.
//!
//! Set once and left. The wrapper takes its registration off when it stops (SIGTERM or its
//! engine's death: `infera/engine/sglang/__main__.py:393-450`, `registration_k8s.py:97-111`); a
//! stopping pod is not Ready anyway (terminating, or its container restarting), and the router
//! stops routing to it on its own (`infera/common/discovery_k8s.py:216-260`). What the gate
//! holds back is a worker's first registration, which rollouts wait on; after a container
//! restart the pod is Ready at the engine's health again, as without the gate.

use std::sync::Arc;

use infera_core::naming::{OPERATOR_MANAGER, REGISTERED_CONDITION, WORKER_INFO_ANNOTATION};
use k8s_openapi::{
    api::core::v1::{Pod, PodCondition},
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::json;

use crate::{Error, Result};

/// The pods whose gate is to be set: not terminating, gated, registered, and not marked yet.
pub fn unmarked(pods: &[Arc<Pod>]) -> impl Iterator<Item = &Arc<Pod>> {
    pods.iter().filter(|pod| {
        gated(pod)
            && !condition_true(pod, REGISTERED_CONDITION)
            && pod.metadata.deletion_timestamp.is_none()
            && pod.annotations().contains_key(WORKER_INFO_ANNOTATION)
    })
}

/// Whether the pod carries the readiness gate.
pub fn gated(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_ref())
        .is_some_and(|gates| {
            gates
                .iter()
                .any(|g| g.condition_type == REGISTERED_CONDITION)
        })
}

/// Whether the pod's condition `type_` is `True`.
pub fn condition_true(pod: &Pod, type_: &str) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == type_ && c.status == "True")
        })
}

/// Sets the gate of every [`unmarked`] pod: a server-side apply of that one condition of the
/// pod's status, as the operator's field manager (the kubelet keeps conditions it does not own).
/// A pod deleted meanwhile is skipped.
pub async fn mark(client: &Client, pods: &[Arc<Pod>]) -> Result<()> {
    for pod in unmarked(pods) {
        let (name, namespace) = (pod.name_any(), pod.namespace().unwrap_or_default());
        let api: Api<Pod> = Api::namespaced(client.clone(), &namespace);
        let condition = PodCondition {
            type_: REGISTERED_CONDITION.into(),
            status: "True".into(),
            reason: Some("WorkerRegistered".into()),
            message: Some("the router routes to this worker".into()),
            last_transition_time: Some(Time(Timestamp::now())),
            ..PodCondition::default()
        };
        let patch = Patch::Apply(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "status": {"conditions": [condition]},
        }));
        let params = PatchParams::apply(OPERATOR_MANAGER);
        match api.patch_status(&name, &params, &patch).await {
            Ok(_) => tracing::debug!(%namespace, pod = %name, "worker registered"),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(source) => return Err(Error::MarkRegistered { pod: name, source }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(gated: bool, registered: bool, condition: Option<&str>, terminating: bool) -> Arc<Pod> {
        let mut pod = json!({
            "metadata": {"name": "demo-decode-x", "namespace": "team"},
            "spec": {"containers": [{"name": "engine"}]},
            "status": {},
        });
        if gated {
            pod["spec"]["readinessGates"] = json!([{"conditionType": REGISTERED_CONDITION}]);
        }
        if registered {
            pod["metadata"]["annotations"] = json!({WORKER_INFO_ANNOTATION: ""});
        }
        if let Some(status) = condition {
            pod["status"]["conditions"] = json!([{"type": REGISTERED_CONDITION, "status": status}]);
        }
        if terminating {
            pod["metadata"]["deletionTimestamp"] = json!("2026-12-06T10:00:00Z");
        }
        Arc::new(serde_json::from_value(pod).unwrap_or_default())
    }

    #[test]
    fn only_a_gated_registered_live_pod_not_marked_yet_is_marked() {
        let count = |pod: Arc<Pod>| unmarked(&[pod]).count();
        assert_eq!(count(pod(true, true, None, false)), 1);
        assert_eq!(count(pod(true, true, Some("False"), false)), 1);
        assert_eq!(count(pod(true, true, Some("True"), false)), 0, "marked");
        assert_eq!(count(pod(true, false, None, false)), 0, "not registered");
        assert_eq!(count(pod(false, true, None, false)), 0, "not gated");
        assert_eq!(count(pod(true, true, None, true)), 0, "terminating");
    }
}
