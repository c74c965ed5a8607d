//! The conditions' contract. `Ready`: which reasons exist, which is most serious, and what
//! summary [`State`] each one means; the operator writes these and the plugin reads them back with
//! [`ReadyReason::parse`]. `ImagesPinned`: non-fatal, whether every image the spec names is
//! pinned by digest. `Progressing`: how far the worker pods are in rolling out to a new revision.
//! `Reconciled`: whether the operator's last reconcile of the spec failed, and at which step.
//! No other place spells a condition type or reason.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::types::{InferaDeploymentStatus, State};

/// Type of the condition that summarizes the deployment (always the first condition).
pub const READY: &str = "Ready";

/// Type of the non-fatal condition that says whether every image the spec names is pinned by
/// digest (`True`) or some are mutable tags (`False`, with each image and its field path).
pub const IMAGES_PINNED: &str = "ImagesPinned";
/// `ImagesPinned=True`: every image the spec names is pinned by digest.
pub const ALL_IMAGES_PINNED: &str = "AllImagesPinned";
/// `ImagesPinned=False`: some image is a mutable tag.
pub const MUTABLE_IMAGES: &str = "MutableImages";

/// Type of the condition that says whether the `hf://` model of `spec.model` is downloaded (only
/// with such a model).
pub const MODEL_READY: &str = "ModelReady";
/// `ModelReady=True`: the download Job succeeded; the GPU pools run.
pub const DOWNLOADED: &str = "Downloaded";
/// `ModelReady=False`: the download Job is running; the GPU pools are held at zero replicas.
pub const DOWNLOADING: &str = "Downloading";
/// `ModelReady=False`: the download Job failed (its message); the GPU pools stay at zero.
pub const DOWNLOAD_FAILED: &str = "DownloadFailed";
/// Type of the condition that follows the worker pods from `currentRevision` to `updateRevision`.
pub const PROGRESSING: &str = "Progressing";
/// `Progressing=True`: some worker pool still runs pods of another revision, or not all of its
/// updated replicas are ready yet.
pub const ROLLING_OUT: &str = "RollingOut";
/// `Progressing=False`: a rollout cannot go on — the pods of the new revision cannot be
/// scheduled, or a pool can neither surge nor replace a replica (the message says what is
/// missing).
pub const ROLLOUT_BLOCKED: &str = "RolloutBlocked";
/// `Progressing=False`: the rollout has not finished within `spec.rollout.progressDeadlineSeconds`
/// (it goes on; the message says where it stands).
pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// `Progressing=False`: `spec.rollout.paused` holds worker pools at the revision they run.
pub const ROLLOUT_PAUSED: &str = "RolloutPaused";
/// `Progressing=True`: every worker pool runs `updateRevision` on all its replicas, ready.
pub const ROLLOUT_COMPLETE: &str = "RolloutComplete";

/// Type of the condition that says whether the operator's last reconcile of the deployment went
/// through every step (`True`) or failed (`False`: the step and the API server's message), for the
/// generation it names. A failure shows once [`failure_shown`] says so; until then the operator
/// retries with the condition as it was.
pub const RECONCILED: &str = "Reconciled";
/// `Reconciled=True`: every step of the last reconcile succeeded.
pub const RECONCILE_SUCCEEDED: &str = "ReconcileSucceeded";
/// `Reconciled=False`: a step failed; the message is `<step>: <error>`. Clients that wait for the
/// generation stop at once: retrying goes on, but will not change what they wait for by itself.
pub const RECONCILE_FAILED: &str = "ReconcileFailed";
/// Failures in a row after which a retryable one (a timeout, throttling, an unavailable server)
/// shows: with the operator's backoff (5 s, 10 s, …) about 15 s after the first.
pub const FAILURES_SHOWN: u32 = 3;

/// Whether a failed reconcile shows as `Reconciled=False`: at once when the API server refused
/// the request (it will refuse it again), else after [`FAILURES_SHOWN`] in a row.
pub fn failure_shown(refused: bool, in_a_row: u32) -> bool {
    refused || in_a_row >= FAILURES_SHOWN
}

/// The `Reconciled=False` condition of `status` if it is about `generation` (or a later one): the
/// operator failed to reconcile the spec a client waits for, and says why.
pub fn reconcile_failure(
    status: &InferaDeploymentStatus,
    generation: Option<i64>,
) -> Option<&Condition> {
    status.conditions.iter().find(|c| {
        c.type_ == RECONCILED
            && c.status == "False"
            && c.observed_generation.unwrap_or_default() >= generation.unwrap_or_default()
    })
}

/// Reason of the `Ready` condition, in precedence order: when several apply, the first one listed
/// (the smallest by `Ord`) is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadyReason {
    /// The spec breaks a rule admission could not check (e.g. parallelism × GPUs).
    InvalidSpec,
    /// A CRD a child needs (LeaderWorkerSet, Gateway API) is not installed; the rest is deployed.
    MissingDependency,
    /// Another field manager owns a field of a child; the operator does not fight it.
    OwnershipConflict,
    /// The API server refused a child (a ResourceQuota, an admission webhook).
    ApplyRejected,
    /// The API server refuses the pods of a workload the operator applied: Pod Security, a
    /// ResourceQuota, an admission webhook.
    PodsRefused,
    /// The `hf://` model is still downloading (or its download failed): the GPU pools wait. What
    /// keeps a pod from being scheduled meanwhile is part of the message.
    ModelNotReady,
    /// Pods cannot be scheduled because no node has the GPUs, CPU, memory or pod slots.
    InsufficientCapacity,
    /// Pods cannot be scheduled for another reason: an unbound volume claim, a node selector or
    /// affinity no node matches, a taint without a toleration.
    Unschedulable,
    /// Everything is applied and scheduled; some replicas are not Ready yet.
    PodsNotReady,
    /// Every service has all its replicas Ready.
    AllReplicasReady,
}

impl ReadyReason {
    /// Every reason, most serious first.
    pub const ALL: [ReadyReason; 10] = [
        Self::InvalidSpec,
        Self::MissingDependency,
        Self::OwnershipConflict,
        Self::ApplyRejected,
        Self::PodsRefused,
        Self::ModelNotReady,
        Self::InsufficientCapacity,
        Self::Unschedulable,
        Self::PodsNotReady,
        Self::AllReplicasReady,
    ];

    /// The condition's `reason` string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidSpec => "InvalidSpec",
            Self::MissingDependency => "MissingDependency",
            Self::OwnershipConflict => "OwnershipConflict",
            Self::ApplyRejected => "ApplyRejected",
            Self::PodsRefused => "PodsRefused",
            Self::InsufficientCapacity => "InsufficientCapacity",
            Self::Unschedulable => "Unschedulable",
            Self::ModelNotReady => "ModelNotReady",
            Self::PodsNotReady => "PodsNotReady",
            Self::AllReplicasReady => "AllReplicasReady",
        }
    }

    /// The reason a condition carries, if it is one of ours.
    pub fn parse(reason: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == reason)
    }

    /// The summary state a deployment with this reason is in.
    pub fn state(self) -> State {
        match self {
            Self::InvalidSpec => State::Failed,
            Self::MissingDependency
            | Self::OwnershipConflict
            | Self::ApplyRejected
            | Self::PodsRefused => State::Degraded,
            Self::InsufficientCapacity | Self::Unschedulable | Self::ModelNotReady => {
                State::Pending
            }
            Self::PodsNotReady => State::Deploying,
            Self::AllReplicasReady => State::Ready,
        }
    }
}

impl fmt::Display for ReadyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_declaration_order() {
        let mut sorted = ReadyReason::ALL;
        sorted.sort();
        assert_eq!(sorted, ReadyReason::ALL);
        assert!(ReadyReason::InvalidSpec < ReadyReason::MissingDependency);
        assert!(ReadyReason::InsufficientCapacity < ReadyReason::PodsNotReady);
    }

    #[test]
    fn strings_round_trip() {
        for reason in ReadyReason::ALL {
            assert_eq!(ReadyReason::parse(reason.as_str()), Some(reason));
            assert_eq!(reason.to_string(), reason.as_str());
        }
        assert_eq!(ReadyReason::parse("SomethingElse"), None);
    }

    #[test]
    fn states() {
        let states: Vec<(&str, State)> = ReadyReason::ALL
            .iter()
            .map(|r| (r.as_str(), r.state()))
            .collect();
        assert_eq!(
            states,
            [
                ("InvalidSpec", State::Failed),
                ("MissingDependency", State::Degraded),
                ("OwnershipConflict", State::Degraded),
                ("ApplyRejected", State::Degraded),
                ("PodsRefused", State::Degraded),
                ("ModelNotReady", State::Pending),
                ("InsufficientCapacity", State::Pending),
                ("Unschedulable", State::Pending),
                ("PodsNotReady", State::Deploying),
                ("AllReplicasReady", State::Ready),
            ]
        );
    }

    fn reconciled(status: &str, generation: i64) -> InferaDeploymentStatus {
        serde_json::from_value(serde_json::json!({
            "observedGeneration": 2,
            "conditions": [
                {"type": READY, "status": "True", "reason": "AllReplicasReady", "message": "",
                    "observedGeneration": 2, "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": RECONCILED, "status": status, "reason": RECONCILE_FAILED,
                    "message": "history: cannot renumber ControllerRevision demo-bb14536a19",
                    "observedGeneration": generation, "lastTransitionTime": "2026-01-01T00:00:00Z"},
            ],
        }))
        .expect("a status")
    }

    #[test]
    fn a_refused_request_shows_at_once_a_retryable_one_on_the_third_failure() {
        let shown: Vec<(bool, u32, bool)> =
            [(true, 1), (false, 1), (false, 2), (false, 3), (false, 9)]
                .into_iter()
                .map(|(refused, in_a_row)| (refused, in_a_row, failure_shown(refused, in_a_row)))
                .collect();
        assert_eq!(
            shown,
            [
                (true, 1, true),
                (false, 1, false),
                (false, 2, false),
                (false, 3, true),
                (false, 9, true)
            ]
        );
    }

    #[test]
    fn a_failure_stops_a_client_waiting_for_its_generation_or_an_earlier_one() {
        // The spec is at generation 4; the rest of the status still speaks of 2.
        let failed = reconciled("False", 4);
        let message =
            |generation| reconcile_failure(&failed, Some(generation)).map(|c| c.message.as_str());
        assert_eq!(
            message(4),
            Some("history: cannot renumber ControllerRevision demo-bb14536a19")
        );
        assert_eq!(message(3), message(4));
        // A client that waits for a later generation waits for the operator to try it.
        assert_eq!(message(5), None);
        assert_eq!(reconcile_failure(&reconciled("True", 4), Some(4)), None);
        assert_eq!(
            reconcile_failure(&InferaDeploymentStatus::default(), Some(1)),
            None
        );
    }
}
