//! The `hf://` model downloads: each download Job the render asked for, where it is, and
//! `status.models` with the commit each one fetched.

use std::collections::BTreeMap;

use infera_core::{
    ChildKind, DOWNLOAD_FAILED, DOWNLOADED, DOWNLOADING, InferaDeploymentStatus, ModelStatus,
};
use kube::ResourceExt;

use crate::observe::Snapshot;

/// An `hf://` download the render asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Download {
    /// Its Job (and volume).
    pub job: String,
    /// What it downloads, as `model.source` spells it.
    pub source: String,
    /// The commit its succeeded pod reported, if the pod is still there.
    pub resolved_revision: Option<String>,
}

impl Download {
    /// The download of `source` by Job `job`, with the commit its pod's `download` container
    /// wrote to its termination message (see infera_core's `render::model`), if a pod of the live
    /// Job (by its uid, not an older Job of the name) succeeded with one.
    pub fn of(snapshot: &Snapshot, job: &str, source: String) -> Self {
        let uid = snapshot
            .children
            .get(&(ChildKind::Job, job.to_string()))
            .and_then(|live| live.uid());
        let resolved_revision = snapshot
            .pods
            .iter()
            .filter(|pod| uid.is_some() && pod.labels().get(JOB_UID_LABEL) == uid.as_ref())
            .flat_map(|pod| {
                pod.status
                    .iter()
                    .flat_map(|s| s.container_statuses.iter().flatten())
            })
            .filter_map(|c| c.state.as_ref()?.terminated.as_ref())
            .filter(|terminated| terminated.exit_code == 0)
            .filter_map(|terminated| terminated.message.as_deref())
            .map(str::trim)
            .find(|message| is_commit(message))
            .map(String::from);
        Self {
            job: job.to_string(),
            source,
            resolved_revision,
        }
    }
}

/// The label the Job controller puts on a Job's pods: the Job's uid (Kubernetes' well-known
/// labels, `batch.kubernetes.io/controller-uid`).
const JOB_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// Whether `text` is a git commit id (40 lowercase hex digits), as a termination message should be.
fn is_commit(text: &str) -> bool {
    text.len() == 40
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `status.models`: every download, with the commit its pod reported or, when the pod is gone,
/// the one reported before for the same source.
pub fn status(
    downloads: &[Download],
    previous: Option<&InferaDeploymentStatus>,
) -> BTreeMap<String, ModelStatus> {
    downloads
        .iter()
        .map(|download| {
            let before = previous
                .and_then(|p| p.models.get(&download.job))
                .filter(|before| before.source == download.source)
                .and_then(|before| before.resolved_revision.clone());
            let status = ModelStatus {
                source: download.source.clone(),
                resolved_revision: download.resolved_revision.clone().or(before),
            };
            (download.job.clone(), status)
        })
        .collect()
}

/// Where an `hf://` model's download Job is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelPhase {
    /// The Job runs (or is about to): what it downloads and how far its pods got.
    Downloading(String),
    /// The Job failed: its `Failed` condition's reason and message.
    Failed(String),
    /// The Job succeeded: the weights are on the volume.
    Downloaded,
}

impl ModelPhase {
    /// The download of `repo` (the whole `source`) by Job `job`, as the snapshot has it. A Job
    /// of another source is being replaced (see `apply::job_change`): it says nothing of ours.
    pub fn of(snapshot: &Snapshot, job: &str, repo: &str, source: &str) -> Self {
        let Some(object) = snapshot.children.get(&(ChildKind::Job, job.to_string())) else {
            return Self::Downloading(format!("downloading {repo}: Job {job} is being created"));
        };
        if let Some(other) = object
            .model_source
            .as_ref()
            .filter(|other| *other != source)
        {
            return Self::Downloading(format!(
                "downloading {repo}: Job {job} of {other} is being replaced by one of {source}"
            ));
        }
        let state = object.state().cloned().unwrap_or_default();
        if state.succeeded > Some(0) {
            return Self::Downloaded;
        }
        if let Some((reason, message)) = state.failure {
            return Self::Failed(format!(
                "downloading {repo} failed: Job {job}: {reason}: {message}"
            ));
        }
        Self::Downloading(format!(
            "downloading {repo}: Job {job} has {} pod(s) running, {} failed; the GPU pools start when it succeeds",
            state.active.unwrap_or(0),
            state.failed.unwrap_or(0)
        ))
    }

    /// The phase of several downloads: failed if one failed, else downloading if one is, else
    /// downloaded; `None` without downloads.
    pub fn combined(phases: impl IntoIterator<Item = Self>) -> Option<Self> {
        let phases: Vec<Self> = phases.into_iter().collect();
        let messages = |failed: bool| -> Vec<String> {
            phases
                .iter()
                .filter_map(|phase| match phase {
                    Self::Failed(message) if failed => Some(message.clone()),
                    Self::Downloading(message) if !failed => Some(message.clone()),
                    _ => None,
                })
                .collect()
        };
        let (failed, downloading) = (messages(true), messages(false));
        if phases.is_empty() {
            None
        } else if !failed.is_empty() {
            Some(Self::Failed(failed.join("; ")))
        } else if !downloading.is_empty() {
            Some(Self::Downloading(downloading.join("; ")))
        } else {
            Some(Self::Downloaded)
        }
    }

    pub fn is_downloaded(&self) -> bool {
        *self == Self::Downloaded
    }

    /// `ModelReady`'s reason and message.
    pub fn reason(&self) -> (&'static str, String) {
        match self {
            ModelPhase::Downloaded => (DOWNLOADED, "the model is downloaded".to_string()),
            ModelPhase::Downloading(message) => (DOWNLOADING, message.clone()),
            ModelPhase::Failed(message) => (DOWNLOAD_FAILED, message.clone()),
        }
    }
}
