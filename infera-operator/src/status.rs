//! The deployment's status, computed purely from what was observed and what applying ran into.
//!
//! `Ready` comes first; its reason is the most serious problem found, in the precedence
//! [`ReadyReason`] defines. `ImagesPinned` follows it: non-fatal, it says which images the spec
//! names by a mutable tag.

use std::collections::BTreeMap;

use infera_core::{
    ALL_IMAGES_PINNED, Child, ChildKind, DOWNLOAD_FAILED, DOWNLOADED, DOWNLOADING, GaieStatus,
    IMAGES_PINNED, InferaDeployment, InferaDeploymentStatus, MODEL_READY, MUTABLE_IMAGES,
    ModelStatus, PROGRESS_DEADLINE_EXCEEDED, PROGRESSING, PodHealth, READY, RECONCILE_FAILED,
    RECONCILE_SUCCEEDED, RECONCILED, ROLLOUT_PAUSED, ReadyReason, ServiceStatus, State,
    ValidationErrors, gpu_product,
    naming::{
        Component, LABEL_SERVICE, LWS_LABEL_GROUP_INDEX, LWS_LABEL_NAME, http_route_name,
        inference_pool_name,
    },
    pod_health::SchedulingCause,
    pod_security,
    validate::MutableImage,
};
use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
};
use kube::ResourceExt;

use crate::{
    apply::Applied,
    live::{Live, template_revision},
    observe::Snapshot,
    rollout,
};

/// What reconciling found, besides the observed objects.
// One value per reconcile, passed by value to the status step and dropped: never stored in
// bulk, so the size of its largest variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Invalid(ValidationErrors),
    Applied {
        applied: Applied,
        /// The server's URL; none when a gateway routes to the workers.
        endpoint: Option<String>,
        workloads: Vec<Workload>,
        /// The `hf://` models' downloads together, when the spec has any.
        model: Option<ModelPhase>,
        /// Each `hf://` download.
        downloads: Vec<Download>,
        /// Worker pools whose rollout can neither surge nor replace, and what is missing.
        blocked: Vec<String>,
        /// `spec.rollout.progressDeadlineSeconds`.
        deadline_seconds: i32,
    },
}

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
fn models(
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

    fn is_downloaded(&self) -> bool {
        *self == Self::Downloaded
    }
}

/// A workload the render asked for; readiness is judged against this, so a pool that does not
/// exist (yet, or any more) counts as not ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    pub service: String,
    pub kind: ChildKind,
    pub name: String,
    /// Replicas asked for; `None` when an autoscaler owns them, and the live workload says.
    pub replicas: Option<i32>,
    /// Pods per group, for a LeaderWorkerSet.
    pub group_size: Option<i32>,
    /// The revision its pods carry: worker pools only.
    pub revision: Option<String>,
}

impl Workload {
    /// The Deployments, StatefulSets and LeaderWorkerSets among rendered children.
    pub fn of(children: &[Child]) -> Vec<Workload> {
        children
            .iter()
            .filter_map(|child| {
                let (replicas, group_size) = match child {
                    Child::Deployment(d) => (d.spec.as_ref()?.replicas, None),
                    Child::StatefulSet(s) => (s.spec.as_ref()?.replicas, None),
                    Child::LeaderWorkerSet(l) => {
                        (l.spec.replicas, l.spec.leader_worker_template.size)
                    }
                    _ => return None,
                };
                let rendered = serde_json::to_value(child).unwrap_or_default();
                let revision = template_revision(&rendered).map(String::from);
                Some(Workload {
                    service: child.service().to_string(),
                    kind: child.kind(),
                    name: child.name().to_string(),
                    replicas,
                    group_size,
                    revision,
                })
            })
            .collect()
    }
}

/// The status this reconcile should leave. `mutable` is what
/// [`infera_core::validate::mutable_images`] finds in the spec; `previous` keeps transition times
/// stable.
pub fn compute(
    generation: Option<i64>,
    snapshot: &Snapshot,
    outcome: &Outcome,
    mutable: &[MutableImage],
    previous: Option<&InferaDeploymentStatus>,
    now: Time,
) -> InferaDeploymentStatus {
    let (services, endpoint) = match outcome {
        Outcome::Invalid(_) => (
            previous.map(|p| p.services.clone()).unwrap_or_default(),
            None,
        ),
        Outcome::Applied {
            endpoint,
            workloads,
            ..
        } => (services(snapshot, workloads), endpoint.clone()),
    };
    let (reason, message) = summarize(outcome, &services, snapshot);
    let state = reason.state();
    // The rollout of the worker pools to the rendered revision; an invalid spec keeps the last.
    let revision = match outcome {
        Outcome::Applied { workloads, .. } => workloads.iter().find_map(|w| w.revision.clone()),
        Outcome::Invalid(_) => None,
    };
    let rollout = revision.as_deref().map(|revision| {
        let pools: Vec<(&str, &ServiceStatus)> = match outcome {
            Outcome::Applied { workloads, .. } => workloads
                .iter()
                .filter(|w| w.revision.is_some())
                .filter_map(|w| Some((w.service.as_str(), services.get(&w.service)?)))
                .collect(),
            Outcome::Invalid(_) => Vec::new(),
        };
        let (held, blocked) = match outcome {
            Outcome::Applied {
                applied, blocked, ..
            } => (applied.held.as_slice(), blocked.as_slice()),
            Outcome::Invalid(_) => (&[][..], &[][..]),
        };
        rollout::rollout(
            &snapshot.pods,
            &pools,
            revision,
            (reason, &message),
            held,
            blocked,
        )
    });
    let condition = |type_: &str, holds: bool, reason: &str, message: String| {
        let status = if holds { "True" } else { "False" };
        let previous = previous.and_then(|p| p.conditions.iter().find(|c| c.type_ == type_));
        let last_transition_time = match previous {
            Some(c) if c.status == status => c.last_transition_time.clone(),
            _ => now.clone(),
        };
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message,
            observed_generation: generation,
            last_transition_time,
        }
    };
    let (pinned_reason, pinned_message) = images_pinned(mutable);
    let mut conditions = vec![
        condition(READY, state == State::Ready, reason.as_str(), message),
        condition(
            IMAGES_PINNED,
            mutable.is_empty(),
            pinned_reason,
            pinned_message,
        ),
    ];
    if let Outcome::Applied {
        model: Some(phase), ..
    } = outcome
    {
        let (reason, message) = match phase {
            ModelPhase::Downloaded => (DOWNLOADED, "the model is downloaded".to_string()),
            ModelPhase::Downloading(message) => (DOWNLOADING, message.clone()),
            ModelPhase::Failed(message) => (DOWNLOAD_FAILED, message.clone()),
        };
        conditions.push(condition(
            MODEL_READY,
            phase.is_downloaded(),
            reason,
            message,
        ));
    }
    let kept = |field: fn(&InferaDeploymentStatus) -> &Option<String>| {
        previous.and_then(|p| field(p).clone())
    };
    let mut rollout_start_time = previous.and_then(|p| p.rollout_start_time.clone());
    let (current_revision, update_revision) = match (&rollout, revision) {
        (Some(rollout), Some(revision)) => {
            let same = previous.is_some_and(|p| p.update_revision.as_ref() == Some(&revision));
            rollout_start_time = (!rollout.complete).then(|| {
                previous
                    .and_then(|p| p.rollout_start_time.clone())
                    .filter(|_| same)
                    .unwrap_or_else(|| now.clone())
            });
            let (mut holds, mut reason, mut message) = rollout.progressing.clone();
            let deadline = match outcome {
                Outcome::Applied {
                    deadline_seconds, ..
                } => *deadline_seconds,
                Outcome::Invalid(_) => i32::MAX,
            };
            let late = rollout_start_time
                .as_ref()
                .is_some_and(|start| seconds_since(start, &now) > i64::from(deadline));
            if late && reason != ROLLOUT_PAUSED {
                message = format!(
                    "the rollout to revision {revision} has not finished within progressDeadlineSeconds ({deadline}s): {message}"
                );
                (holds, reason) = (false, PROGRESS_DEADLINE_EXCEEDED);
            }
            conditions.push(condition(PROGRESSING, holds, reason, message));
            let current = if rollout.complete {
                Some(revision.clone())
            } else {
                kept(|p| &p.current_revision)
            };
            (current, Some(revision))
        }
        _ => {
            let last = previous.and_then(|p| p.conditions.iter().find(|c| c.type_ == PROGRESSING));
            conditions.extend(last.cloned());
            (kept(|p| &p.current_revision), kept(|p| &p.update_revision))
        }
    };
    let models = match outcome {
        Outcome::Applied { downloads, .. } => models(downloads, previous),
        Outcome::Invalid(_) => previous.map(|p| p.models.clone()).unwrap_or_default(),
    };
    let ready = services
        .values()
        .filter(|service| is_ready(service))
        .count();
    InferaDeploymentStatus {
        state: Some(state),
        upstream_state: Some(state.upstream()),
        // Set by `gaie`, from the spec.
        gaie: None,
        observed_generation: generation,
        conditions,
        services_ready: Some(format!("{ready}/{}", services.len())),
        services,
        endpoint,
        current_revision,
        update_revision,
        models,
        rollout_start_time,
    }
}

/// Upstream's `status.gaie` (`deploy/operator/internal/controller/gaie.go`, `gaieStatus`): the
/// Endpoint Picker's replicas, the InferencePool's and HTTPRoute's names and whether a Gateway
/// accepted them (a pool without conditions counts as ready, as upstream's); `None` without GAIE.
pub fn gaie(idep: &InferaDeployment, snapshot: &Snapshot) -> Option<GaieStatus> {
    idep.spec.gaie.as_ref().filter(|gaie| gaie.is_enabled())?;
    let name = idep.name_any();
    let child = |kind, object: &str| snapshot.children.get(&(kind, object.to_string()));
    let (pool, route) = (inference_pool_name(&name), http_route_name(&name));
    let epp = child(
        ChildKind::Deployment,
        &Component::EndpointPicker.object_name(&name),
    )
    .and_then(|epp| epp.state());
    let pool_ready = child(ChildKind::InferencePool, &pool)
        .or_else(|| child(ChildKind::InferencePoolV1Alpha2, &pool))
        .is_some_and(|pool| pool.state().and_then(|s| s.accepted) != Some(false));
    let route_accepted = child(ChildKind::HttpRoute, &route)
        .and_then(|route| route.state())
        .and_then(|s| s.accepted)
        == Some(true);
    let count = |n: Option<i64>| i32::try_from(n.unwrap_or(0)).unwrap_or(i32::MAX);
    let epp_ready_replicas = count(epp.and_then(|s| s.ready_replicas));
    Some(GaieStatus {
        epp_replicas: count(epp.and_then(|s| s.replicas)),
        epp_ready_replicas,
        inference_pool_name: Some(pool),
        inference_pool_ready: Some(pool_ready),
        http_route_name: Some(route),
        http_route_accepted: Some(route_accepted),
        ready: Some(epp_ready_replicas > 0 && pool_ready && route_accepted),
    })
}

/// How the reconcile that computed a status went, for its `Reconciled` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reconciled {
    /// Every step succeeded.
    Succeeded,
    /// A step failed, and shows ([`infera_core::condition::failure_shown`]): `<step>: <error>`.
    Failed(String),
    /// A step failed, to be retried before it shows: the condition stays as it was.
    Retrying,
}

/// Sets the `Reconciled` condition of `status` (the one `compute` left, or the previous status
/// when the reconcile failed before it could compute one) for `generation`. While it is `False`
/// the deployment is `Degraded` whatever its pods do (`Failed` stays `Failed`): the operator is
/// not keeping it as the spec says.
pub fn record_reconcile(
    status: &mut InferaDeploymentStatus,
    previous: Option<&InferaDeploymentStatus>,
    generation: Option<i64>,
    reconciled: &Reconciled,
    now: Time,
) {
    let before = previous.and_then(|p| p.conditions.iter().find(|c| c.type_ == RECONCILED));
    let fresh = |holds: &str, reason: &str, message: String| Condition {
        type_: RECONCILED.into(),
        status: holds.into(),
        reason: reason.into(),
        message,
        observed_generation: generation,
        last_transition_time: before
            .filter(|before| before.status == holds)
            .map_or(now.clone(), |before| before.last_transition_time.clone()),
    };
    let condition = match (reconciled, before) {
        (Reconciled::Succeeded, _) => fresh(
            "True",
            RECONCILE_SUCCEEDED,
            "every step of the last reconcile succeeded".into(),
        ),
        (Reconciled::Failed(message), _) => fresh("False", RECONCILE_FAILED, message.clone()),
        (Reconciled::Retrying, Some(before)) => before.clone(),
        (Reconciled::Retrying, None) => return,
    };
    status.conditions.retain(|c| c.type_ != RECONCILED);
    if condition.status == "False" && status.state != Some(State::Failed) {
        status.state = Some(State::Degraded);
        status.upstream_state = Some(State::Degraded.upstream());
    }
    status.conditions.push(condition);
}

/// Whole seconds from `start` to `now`.
fn seconds_since(start: &Time, now: &Time) -> i64 {
    now.0.duration_since(start.0).as_secs()
}

/// How long until the rollout `status` reports would pass its deadline, if it is rolling out
/// and has not yet: the reconcile to look again then.
pub fn until_deadline(
    status: &InferaDeploymentStatus,
    deadline_seconds: i32,
    now: &Time,
) -> Option<std::time::Duration> {
    let start = status.rollout_start_time.as_ref()?;
    let left = i64::from(deadline_seconds) - seconds_since(start, now) + 1;
    u64::try_from(left)
        .ok()
        .filter(|left| *left > 0)
        .map(std::time::Duration::from_secs)
}

/// The `ImagesPinned` reason and message: every mutable image with its field path.
fn images_pinned(mutable: &[MutableImage]) -> (&'static str, String) {
    if mutable.is_empty() {
        return (
            ALL_IMAGES_PINNED,
            "every image the spec names is pinned by digest".into(),
        );
    }
    let images: Vec<String> = mutable.iter().map(ToString::to_string).collect();
    (
        MUTABLE_IMAGES,
        format!(
            "mutable tags (pods may run different images): {}; pin them by digest, or set spec.imagePolicy.requireDigest to require it",
            images.join(", ")
        ),
    )
}

fn summarize(
    outcome: &Outcome,
    services: &BTreeMap<String, ServiceStatus>,
    snapshot: &Snapshot,
) -> (ReadyReason, String) {
    let (applied, model, workloads) = match outcome {
        Outcome::Invalid(errors) => return (ReadyReason::InvalidSpec, errors.to_string()),
        Outcome::Applied {
            applied,
            model,
            workloads,
            ..
        } => (applied, model, workloads),
    };
    let problems = [
        (ReadyReason::MissingDependency, &applied.missing),
        (ReadyReason::OwnershipConflict, &applied.conflicts),
        (ReadyReason::ApplyRejected, &applied.rejected),
    ];
    if let Some((reason, lines)) = problems.into_iter().find(|(_, lines)| !lines.is_empty()) {
        return (reason, lines.join("\n"));
    }
    let refused = refused(snapshot, workloads);
    if !refused.is_empty() {
        return (ReadyReason::PodsRefused, refused.join("\n"));
    }
    // While the weights download, the GPU pools wait for them: that is the reason, with what
    // keeps a pod (the download's, the server's) from being scheduled, if anything does.
    match model {
        Some(ModelPhase::Downloading(message) | ModelPhase::Failed(message)) => {
            let message = match unschedulable(&snapshot.pods) {
                Some((_, why)) => format!("{message}\n{why}"),
                None => message.clone(),
            };
            return (ReadyReason::ModelNotReady, message);
        }
        Some(ModelPhase::Downloaded) | None => {}
    }
    if let Some(unschedulable) = unschedulable(&snapshot.pods) {
        return unschedulable;
    }
    let not_ready: Vec<String> = services
        .iter()
        .filter(|(_, s)| !is_ready(s))
        .map(|(name, s)| {
            let ready = format!(
                "{name}: {}/{} ready",
                s.ready_groups.unwrap_or(s.ready_replicas),
                s.desired_replicas
            );
            match trouble(&snapshot.pods, name) {
                Some(trouble) => format!("{ready} ({trouble})"),
                None => ready,
            }
        })
        .collect();
    if services.is_empty() || !not_ready.is_empty() {
        let message = if not_ready.is_empty() {
            "waiting for children to be observed".into()
        } else {
            not_ready.join(", ")
        };
        return (ReadyReason::PodsNotReady, message);
    }
    (
        ReadyReason::AllReplicasReady,
        "every service has all replicas ready".into(),
    )
}

/// The workloads whose pods the API server refuses, as `decode: Pod Security refuses its pods:
/// violates PodSecurity "restricted:latest": …` (or the refusal as it comes, for a quota or a
/// webhook), from their `ReplicaFailure` condition.
fn refused(snapshot: &Snapshot, workloads: &[Workload]) -> Vec<String> {
    workloads
        .iter()
        .filter_map(|workload| {
            let live = snapshot
                .children
                .get(&(workload.kind, workload.name.clone()))?;
            let message = live.state()?.replica_failure.as_deref()?;
            let service = &workload.service;
            Some(match pod_security::refusal(message) {
                Some(verdict) => format!(
                    "{service}: Pod Security refuses its pods: {verdict} (the namespace's {} label; docs/security.md lists what each pod needs)",
                    pod_security::ENFORCE_LABEL
                ),
                None => format!("{service}: the API server refuses its pods: {message}"),
            })
        })
        .collect()
}

fn is_ready(service: &ServiceStatus) -> bool {
    service.ready_replicas >= service.desired_replicas
        && service
            .ready_groups
            .is_none_or(|groups| groups >= service.desired_replicas)
}

/// Readiness of every rendered workload, keyed by service (`nats`, `epp` for plumbing).
fn services(snapshot: &Snapshot, workloads: &[Workload]) -> BTreeMap<String, ServiceStatus> {
    let mut services = BTreeMap::new();
    for workload in workloads {
        let observed = snapshot
            .children
            .get(&(workload.kind, workload.name.clone()));
        let ready_groups = workload
            .group_size
            .map(|size| ready_groups(&snapshot.pods, &workload.name, size));
        let live_replicas = live_replicas(snapshot, workload);
        let updated_replicas = workload.revision.as_deref().map(|revision| {
            rollout::updated_replicas(
                &snapshot.pods,
                &workload.service,
                revision,
                workload.group_size.is_some(),
            )
        });
        let status = ServiceStatus {
            kind: workload.kind.api_resource().kind,
            // An autoscaled workload wants what its live spec says (the API server's default,
            // 1, until it exists).
            desired_replicas: workload.replicas.or(live_replicas).unwrap_or(1),
            ready_replicas: observed.map_or(0, |object| ready_replicas(object)),
            ready_groups,
            updated_replicas,
        };
        services.insert(workload.service.clone(), status);
    }
    services
}

/// The replicas the live `workload` asks for, if it exists.
pub fn live_replicas(snapshot: &Snapshot, workload: &Workload) -> Option<i32> {
    let object = snapshot
        .children
        .get(&(workload.kind, workload.name.clone()))?;
    i32::try_from(object.state()?.replicas?).ok()
}

/// Ready replicas of a workload; a status older than its spec counts as nothing ready.
fn ready_replicas(object: &Live) -> i32 {
    let Some(state) = object.state() else {
        return 0;
    };
    let current = state.observed_generation >= object.metadata.generation;
    let ready = state.ready_replicas.filter(|_| current).unwrap_or(0);
    i32::try_from(ready).unwrap_or(0)
}

/// Groups of a LeaderWorkerSet whose `size` pods are all Ready.
fn ready_groups(pods: &[std::sync::Arc<Pod>], lws: &str, size: i32) -> i32 {
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
fn trouble(pods: &[std::sync::Arc<Pod>], service: &str) -> Option<String> {
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

/// Unschedulable pods by pool, as `pool decode: 1 pod unschedulable: <the scheduler's message>`;
/// `InsufficientCapacity` when a pool lacks resources, `Unschedulable` for anything else (an
/// unbound claim, a selector no node matches) — adding GPUs would not help there.
fn unschedulable(pods: &[std::sync::Arc<Pod>]) -> Option<(ReadyReason, String)> {
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::{
        api::core::v1::{PodCondition, PodStatus},
        apimachinery::pkg::apis::meta::v1::ObjectMeta,
        jiff::Timestamp,
    };
    use kube::api::ApiResource;
    use serde_json::json;

    use super::*;
    use kube::api::DynamicObject;

    fn now() -> Time {
        Time(Timestamp::UNIX_EPOCH)
    }

    fn deployment(service: &str, desired: i64, ready: i64) -> ((ChildKind, String), Arc<Live>) {
        deployment_with_status(
            service,
            desired,
            json!({"observedGeneration": 1, "readyReplicas": ready}),
        )
    }

    fn deployment_with_status(
        service: &str,
        desired: i64,
        status: serde_json::Value,
    ) -> ((ChildKind, String), Arc<Live>) {
        let mut object = DynamicObject::new(
            &format!("demo-{service}"),
            &ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
        )
        .data(json!({"spec": {"replicas": desired}, "status": status}));
        object.metadata.generation = Some(1);
        (
            (ChildKind::Deployment, object.name_any()),
            Arc::new(Live::from(object)),
        )
    }

    fn pod(service: &str, condition: PodCondition) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                labels: Some([(LABEL_SERVICE.to_string(), service.to_string())].into()),
                ..Default::default()
            },
            status: Some(PodStatus {
                conditions: Some(vec![condition]),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// The outcome of applying what `snapshot` holds: its Deployments are the rendered workloads.
    fn outcome(applied: Applied, snapshot: &Snapshot) -> Outcome {
        let workloads = snapshot
            .children
            .values()
            .map(|object| Workload {
                service: object.name_any().replacen("demo-", "", 1),
                kind: ChildKind::Deployment,
                name: object.name_any(),
                replicas: Some(
                    object
                        .state()
                        .and_then(|s| s.replicas)
                        .map_or(1, |r| r as i32),
                ),
                group_size: None,
                revision: None,
            })
            .collect();
        Outcome::Applied {
            applied,
            endpoint: Some("http://demo-server.ns.svc.cluster.local:8000".into()),
            workloads,
            model: None,
            downloads: Vec::new(),
            blocked: Vec::new(),
            deadline_seconds: 600,
        }
    }

    /// The status of a deployment whose render is what `snapshot` holds, applied cleanly.
    fn status_of(snapshot: &Snapshot) -> InferaDeploymentStatus {
        compute(
            Some(1),
            snapshot,
            &outcome(Applied::default(), snapshot),
            &[],
            None,
            now(),
        )
    }

    /// A pod of `service` the scheduler could not place, with its message.
    fn unschedulable_pod(service: &str, message: &str) -> Arc<Pod> {
        let condition = PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("Unschedulable".into()),
            message: Some(message.into()),
            ..Default::default()
        };
        pod(service, condition)
    }

    /// Upstream's `status.gaie`: names, the Endpoint Picker's replicas, and ready only once the
    /// pool exists and a Gateway accepted the route; nothing without GAIE.
    #[test]
    fn gaie_status_reports_the_picker_pool_and_route() {
        let idep = |gaie: serde_json::Value| -> InferaDeployment {
            serde_json::from_value(json!({
                "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
                "metadata": {"name": "demo", "namespace": "ns"},
                "spec": {"image": "i", "gaie": gaie, "services": {}},
            }))
            .expect("a deployment")
        };
        let gateway = |kind: ChildKind, name: &str, status: serde_json::Value| {
            let object = DynamicObject::new(name, &kind.api_resource())
                .data(json!({"spec": {}, "status": status}));
            ((kind, name.to_string()), Arc::new(Live::from(object)))
        };
        let on = idep(json!({"enabled": true, "gatewayName": "gw", "tokenizerPath": "t"}));
        let accepted =
            json!({"parents": [{"conditions": [{"type": "Accepted", "status": "True"}]}]});
        let mut snapshot = Snapshot {
            children: [
                deployment("epp", 2, 1),
                gateway(ChildKind::InferencePool, "demo-pool", json!({})),
            ]
            .into(),
            ..Snapshot::default()
        };
        let waiting = gaie(&on, &snapshot).expect("a GAIE status");
        assert_eq!(
            waiting,
            GaieStatus {
                epp_replicas: 2,
                epp_ready_replicas: 1,
                inference_pool_name: Some("demo-pool".into()),
                inference_pool_ready: Some(true),
                http_route_name: Some("demo-route".into()),
                http_route_accepted: Some(false),
                ready: Some(false),
            }
        );
        let (key, route) = gateway(ChildKind::HttpRoute, "demo-route", accepted);
        snapshot.children.insert(key, route);
        assert_eq!(gaie(&on, &snapshot).and_then(|g| g.ready), Some(true));
        for off in [json!(false), serde_json::Value::Null] {
            let off = idep(json!({"enabled": off, "gatewayName": "gw", "tokenizerPath": "t"}));
            assert_eq!(gaie(&off, &snapshot), None);
        }
    }

    fn ready_condition(status: &InferaDeploymentStatus) -> (&str, &str, &str) {
        let c = &status.conditions[0];
        (c.status.as_str(), c.reason.as_str(), c.message.as_str())
    }

    #[test]
    fn all_replicas_ready_is_ready() {
        let snapshot = Snapshot {
            children: [deployment("server", 2, 2), deployment("decode", 1, 1)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let status = compute(
            Some(3),
            &snapshot,
            &outcome(Applied::default(), &snapshot),
            &[],
            None,
            now(),
        );
        assert_eq!(status.state, Some(State::Ready));
        assert_eq!(status.services_ready.as_deref(), Some("2/2"));
        assert_eq!(
            ready_condition(&status),
            (
                "True",
                "AllReplicasReady",
                "every service has all replicas ready"
            )
        );
        assert_eq!(status.observed_generation, Some(3));
        assert_eq!(
            status.services["server"],
            ServiceStatus {
                kind: "Deployment".into(),
                desired_replicas: 2,
                ready_replicas: 2,
                ready_groups: None,
                updated_replicas: None,
            }
        );
        assert_eq!(
            status.endpoint.as_deref(),
            Some("http://demo-server.ns.svc.cluster.local:8000")
        );
    }

    #[test]
    fn a_rendered_pool_that_does_not_exist_is_not_ready() {
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("decode", 1, 1)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let Outcome::Applied {
            applied,
            endpoint,
            mut workloads,
            ..
        } = outcome(Applied::default(), &snapshot)
        else {
            unreachable!()
        };
        workloads.push(Workload {
            service: "prefill".into(),
            kind: ChildKind::Deployment,
            name: "demo-prefill".into(),
            replicas: Some(1),
            group_size: None,
            revision: None,
        });
        let outcome = Outcome::Applied {
            applied,
            endpoint,
            workloads,
            model: None,
            downloads: Vec::new(),
            blocked: Vec::new(),
            deadline_seconds: 600,
        };
        let status = compute(Some(1), &snapshot, &outcome, &[], None, now());
        assert_eq!(
            ready_condition(&status),
            ("False", "PodsNotReady", "prefill: 0/1 ready")
        );
    }

    /// A Job of the model download in `status`.
    fn download_job(status: serde_json::Value) -> ((ChildKind, String), Arc<Live>) {
        let object = DynamicObject::new(
            "demo-model",
            &ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&()),
        )
        .data(json!({ "status": status }));
        (
            (ChildKind::Job, "demo-model".into()),
            Arc::new(Live::from(object)),
        )
    }

    /// The commit a succeeded download pod wrote to its termination message is the resolved
    /// revision; without the pod, the one reported before for the same source stays, and a
    /// message that is no commit is not taken.
    #[test]
    fn the_resolved_revision_comes_from_the_download_pods_termination_message() {
        let commit = "c1e7ed4b1f4ea4bd5e1c41f8bb25c8b8d7f0e2a1";
        let pod = |job_uid: &str, exit: i32, message: &str| -> Arc<Pod> {
            Arc::new(
                serde_json::from_value(json!({
                    "metadata": {"name": "demo-model-x", "labels": {"batch.kubernetes.io/controller-uid": job_uid}},
                    "status": {"containerStatuses": [{"name": "download", "image": "i", "imageID": "", "ready": false,
                        "restartCount": 0, "state": {"terminated": {"exitCode": exit, "message": message}}}]},
                }))
                .expect("a pod"),
            )
        };
        let resolved = |pods: Vec<Arc<Pod>>| {
            let (key, job) = download_job(json!({"succeeded": 1}));
            let mut job = (*job).clone();
            job.metadata.uid = Some("uid-1".into());
            let snapshot = Snapshot {
                pods,
                children: [(key, Arc::new(job))].into(),
                ..Snapshot::default()
            };
            Download::of(&snapshot, "demo-model", "hf://Qwen/Qwen3-0.6B".into()).resolved_revision
        };
        assert_eq!(
            resolved(vec![pod("uid-1", 0, &format!("{commit}\n"))]).as_deref(),
            Some(commit)
        );
        assert_eq!(resolved(vec![pod("uid-1", 1, commit)]), None);
        assert_eq!(
            resolved(vec![pod("uid-of-a-replaced-job", 0, commit)]),
            None
        );
        assert_eq!(resolved(vec![pod("uid-1", 0, "not a commit")]), None);

        let download = |source: &str, resolved: Option<&str>| Download {
            job: "demo-model".into(),
            source: source.into(),
            resolved_revision: resolved.map(String::from),
        };
        let before = InferaDeploymentStatus {
            models: [(
                "demo-model".to_string(),
                ModelStatus {
                    source: "hf://Qwen/Qwen3-0.6B".into(),
                    resolved_revision: Some(commit.into()),
                },
            )]
            .into(),
            ..Default::default()
        };
        let kept = models(&[download("hf://Qwen/Qwen3-0.6B", None)], Some(&before));
        assert_eq!(kept, before.models);
        let moved = models(&[download("hf://Qwen/Qwen3-0.6B@v2", None)], Some(&before));
        assert_eq!(moved["demo-model"].resolved_revision, None);
    }

    /// The `hf://` download: Downloading while the Job runs (Ready waits with ModelNotReady),
    /// DownloadFailed with the Job's reason and message, Downloaded once it succeeded.
    #[test]
    fn the_model_download_is_a_condition_and_holds_ready() {
        let phase = |job: Option<serde_json::Value>| {
            let mut children: BTreeMap<_, _> = [deployment("decode", 0, 0)].into();
            children.extend(job.map(download_job));
            ModelPhase::of(
                &Snapshot {
                    children,
                    ..Snapshot::default()
                },
                "demo-model",
                "Qwen/Qwen3-0.6B",
                "hf://Qwen/Qwen3-0.6B",
            )
        };
        assert_eq!(
            phase(None),
            ModelPhase::Downloading(
                "downloading Qwen/Qwen3-0.6B: Job demo-model is being created".into()
            )
        );
        let running = phase(Some(json!({"active": 1})));
        assert_eq!(
            running,
            ModelPhase::Downloading("downloading Qwen/Qwen3-0.6B: Job demo-model has 1 pod(s) running, 0 failed; the GPU pools start when it succeeds".into())
        );
        let failed = phase(Some(
            json!({"failed": 7, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}),
        ));
        assert_eq!(
            failed,
            ModelPhase::Failed("downloading Qwen/Qwen3-0.6B failed: Job demo-model: BackoffLimitExceeded: Job has reached the specified backoff limit".into())
        );
        assert_eq!(phase(Some(json!({"succeeded": 1}))), ModelPhase::Downloaded);

        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("decode", 0, 0)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let with = |model: ModelPhase| {
            let Outcome::Applied {
                applied,
                endpoint,
                workloads,
                ..
            } = outcome(Applied::default(), &snapshot)
            else {
                unreachable!()
            };
            let outcome = Outcome::Applied {
                applied,
                endpoint,
                workloads,
                model: Some(model),
                downloads: Vec::new(),
                blocked: Vec::new(),
                deadline_seconds: 600,
            };
            let status = compute(Some(1), &snapshot, &outcome, &[], None, now());
            let model = &status.conditions[2];
            (
                status.state,
                ready_condition(&status).1.to_string(),
                (
                    model.type_.clone(),
                    model.status.clone(),
                    model.reason.clone(),
                ),
            )
        };
        let row = |status: &str, reason: &str| {
            (
                "ModelReady".to_string(),
                status.to_string(),
                reason.to_string(),
            )
        };
        assert_eq!(
            with(running),
            (
                Some(State::Pending),
                "ModelNotReady".into(),
                row("False", "Downloading")
            )
        );
        assert_eq!(
            with(failed),
            (
                Some(State::Pending),
                "ModelNotReady".into(),
                row("False", "DownloadFailed")
            )
        );
        assert_eq!(
            with(ModelPhase::Downloaded),
            (
                Some(State::Ready),
                "AllReplicasReady".into(),
                row("True", "Downloaded")
            )
        );
    }

    #[test]
    fn an_autoscaled_pool_wants_what_its_live_workload_says() {
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("decode", 3, 2)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let Outcome::Applied {
            applied,
            endpoint,
            mut workloads,
            ..
        } = outcome(Applied::default(), &snapshot)
        else {
            unreachable!()
        };
        for workload in &mut workloads {
            workload.replicas = None;
        }
        workloads.push(Workload {
            service: "prefill".into(),
            kind: ChildKind::Deployment,
            name: "demo-prefill".into(),
            replicas: None,
            group_size: None,
            revision: None,
        });
        let outcome = Outcome::Applied {
            applied,
            endpoint,
            workloads,
            model: None,
            downloads: Vec::new(),
            blocked: Vec::new(),
            deadline_seconds: 600,
        };
        let status = compute(Some(1), &snapshot, &outcome, &[], None, now());
        let desired = |service: &str| status.services[service].desired_replicas;
        assert_eq!((desired("server"), desired("decode")), (1, 3));
        assert_eq!(
            desired("prefill"),
            1,
            "not created yet: the API server's default"
        );
        assert_eq!(
            ready_condition(&status),
            (
                "False",
                "PodsNotReady",
                "decode: 2/3 ready, prefill: 0/1 ready"
            )
        );
    }

    #[test]
    fn worker_pools_report_updated_replicas_and_the_rollout() {
        let snapshot = |revisions: &[&str]| Snapshot {
            children: [deployment("server", 1, 1), deployment("decode", 2, 2)].into(),
            pods: revisions
                .iter()
                .map(|revision| {
                    let mut pod = Pod::default();
                    pod.metadata.labels = Some(
                        [
                            (LABEL_SERVICE.to_string(), "decode".to_string()),
                            (
                                infera_core::naming::LABEL_REVISION.to_string(),
                                revision.to_string(),
                            ),
                        ]
                        .into(),
                    );
                    pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
                        conditions: Some(vec![k8s_openapi::api::core::v1::PodCondition {
                            type_: "Ready".into(),
                            status: "True".into(),
                            ..Default::default()
                        }]),
                        ..Default::default()
                    });
                    Arc::new(pod)
                })
                .collect(),
            ..Snapshot::default()
        };
        let status = |snapshot: &Snapshot, previous: Option<&InferaDeploymentStatus>| {
            let Outcome::Applied {
                applied,
                endpoint,
                mut workloads,
                ..
            } = outcome(Applied::default(), snapshot)
            else {
                unreachable!()
            };
            for workload in workloads.iter_mut().filter(|w| w.service == "decode") {
                workload.revision = Some("new".into());
            }
            let outcome = Outcome::Applied {
                applied,
                endpoint,
                workloads,
                model: None,
                downloads: Vec::new(),
                blocked: Vec::new(),
                deadline_seconds: 600,
            };
            compute(Some(1), snapshot, &outcome, &[], previous, now())
        };
        let progressing = |status: &InferaDeploymentStatus| {
            let c = &status.conditions[2];
            (
                c.type_.clone(),
                c.status.clone(),
                c.reason.clone(),
                c.message.clone(),
            )
        };
        let done = status(&snapshot(&["new", "new"]), None);
        assert_eq!(done.services["decode"].updated_replicas, Some(2));
        assert_eq!(done.services["server"].updated_replicas, None);
        assert_eq!(
            (
                done.current_revision.as_deref(),
                done.update_revision.as_deref()
            ),
            (Some("new"), Some("new"))
        );
        assert_eq!(
            progressing(&done),
            (
                "Progressing".into(),
                "True".into(),
                "RolloutComplete".into(),
                "every worker pool runs revision new".into()
            )
        );
        // Mid-rollout the current revision stays what it was.
        let mut before = done.clone();
        before.current_revision = Some("old".into());
        let rolling = status(&snapshot(&["new", "old"]), Some(&before));
        assert_eq!(rolling.services["decode"].updated_replicas, Some(1));
        assert_eq!(rolling.current_revision.as_deref(), Some("old"));
        assert_eq!(
            progressing(&rolling).2,
            "RollingOut",
            "{:?}",
            progressing(&rolling)
        );
        // The rollout started now (the fixtures' clock), and says when its deadline passes.
        assert_eq!(rolling.rollout_start_time, Some(now()));
        let at = |seconds: i64| Time(Timestamp::from_second(seconds).expect("a time"));
        assert_eq!(
            until_deadline(&rolling, 600, &at(100)),
            Some(std::time::Duration::from_secs(501))
        );
        assert_eq!(done.rollout_start_time, None, "a complete rollout has none");
        // Started 601 s before the clock: past its deadline, reported, still rolling out.
        let mut late = rolling.clone();
        late.rollout_start_time = Some(at(-601));
        let reported = status(&snapshot(&["new", "old"]), Some(&late));
        assert_eq!(
            progressing(&reported),
            (
                "Progressing".into(),
                "False".into(),
                "ProgressDeadlineExceeded".into(),
                "the rollout to revision new has not finished within progressDeadlineSeconds (600s): to revision new: decode 1/2 updated".into()
            )
        );
        assert_eq!(reported.rollout_start_time, Some(at(-601)));
        assert_eq!(until_deadline(&reported, 600, &now()), None);
    }

    #[test]
    fn not_ready_pools_are_listed() {
        let snapshot = Snapshot {
            children: [deployment("server", 2, 1), deployment("decode", 1, 1)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let status = status_of(&snapshot);
        assert_eq!(status.state, Some(State::Deploying));
        assert_eq!(
            ready_condition(&status),
            ("False", "PodsNotReady", "server: 1/2 ready")
        );
        assert_eq!(status.services_ready.as_deref(), Some("1/2"));
    }

    #[test]
    fn a_crash_looping_pod_says_why_its_pool_is_not_ready() {
        let crashing: Pod = serde_json::from_value(json!({
            "metadata": {"name": "demo-decode-x", "labels": {LABEL_SERVICE: "decode"}},
            "status": {"containerStatuses": [{
                "name": "engine", "image": "rocm/infera", "imageID": "", "ready": false,
                "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
            }]},
        }))
        .expect("a pod");
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("decode", 1, 0)].into(),
            pods: vec![Arc::new(crashing)],
            ..Snapshot::default()
        };
        assert_eq!(
            ready_condition(&status_of(&snapshot)),
            (
                "False",
                "PodsNotReady",
                "decode: 0/1 ready (pod demo-decode-x: container engine CrashLoopBackOff, 7 restarts, last exit 137 (OOMKilled))"
            )
        );
    }

    #[test]
    fn unschedulable_pods_name_the_pool() {
        let snapshot = Snapshot {
            children: [deployment("decode", 1, 0)].into(),
            pods: vec![unschedulable_pod(
                "decode",
                "0/2 nodes are available: 2 Insufficient amd.com/gpu.",
            )],
            ..Snapshot::default()
        };
        let status = status_of(&snapshot);
        assert_eq!(status.state, Some(State::Pending));
        assert_eq!(
            ready_condition(&status),
            (
                "False",
                "InsufficientCapacity",
                "pool decode: 1 pod unschedulable: 0/2 nodes are available: 2 Insufficient amd.com/gpu."
            )
        );
    }

    /// Pods the API server refuses are `PodsRefused` (Degraded), from the Deployment's
    /// `ReplicaFailure` condition: Pod Security named as such, anything else in its own words.
    #[test]
    fn refused_pods_are_pods_refused_naming_pod_security() {
        let refusing = |service: &str, message: &str| {
            let condition = json!({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message});
            deployment_with_status(
                service,
                1,
                json!({"observedGeneration": 1, "conditions": [condition]}),
            )
        };
        let snapshot = Snapshot {
            children: [
                refusing("decode", r#"pods "demo-decode-7c9-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true"#),
                refusing("prefill", r#"pods "demo-prefill-5f-y" is forbidden: exceeded quota: q, requested: amd.com/gpu=1"#),
                deployment("server", 1, 1),
            ]
            .into(),
            ..Snapshot::default()
        };
        let status = status_of(&snapshot);
        assert_eq!(status.state, Some(State::Degraded));
        assert_eq!(
            ready_condition(&status),
            (
                "False",
                "PodsRefused",
                "decode: Pod Security refuses its pods: violates PodSecurity \"restricted:latest\": runAsNonRoot != true (the namespace's pod-security.kubernetes.io/enforce label; docs/security.md lists what each pod needs)\nprefill: the API server refuses its pods: pods \"demo-prefill-5f-y\" is forbidden: exceeded quota: q, requested: amd.com/gpu=1"
            )
        );
    }

    /// A pool that names a GPU product no node has is short of capacity, not misplaced: the
    /// product is never substituted.
    #[test]
    fn a_missing_gpu_product_is_insufficient_capacity_naming_the_product() {
        let message = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
        let mut pod = Arc::unwrap_or_clone(unschedulable_pod("decode", message));
        pod.spec = Some(serde_json::from_value(json!({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "amd.com/gpu.product-name", "operator": "In", "values": ["AMD_Instinct_MI355X", "AMD_Instinct_MI355X_OAM"]}]}]}}}})).expect("a pod spec"));
        let snapshot = Snapshot {
            children: [deployment("decode", 1, 0)].into(),
            pods: vec![Arc::new(pod)],
            ..Snapshot::default()
        };
        let status = status_of(&snapshot);
        assert_eq!(status.state, Some(State::Pending));
        let expected = format!(
            "pool decode: 1 pod unschedulable: no node of GPU product MI355X can take it: {message}"
        );
        assert_eq!(
            ready_condition(&status),
            ("False", "InsufficientCapacity", expected.as_str())
        );
    }

    #[test]
    fn an_unbound_claim_is_not_missing_capacity() {
        let message = "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
        let snapshot = Snapshot {
            children: [deployment("nats", 1, 0)].into(),
            pods: vec![unschedulable_pod("nats", message)],
            ..Snapshot::default()
        };
        let status = status_of(&snapshot);
        assert_eq!(status.state, Some(State::Pending));
        let expected =
            format!("pool nats: 1 pod unschedulable (waiting for its volumes): {message}");
        assert_eq!(
            ready_condition(&status),
            ("False", "Unschedulable", expected.as_str())
        );
    }

    #[test]
    fn missing_dependency_outranks_conflicts_and_invalid_outranks_all() {
        let result = outcome(
            Applied {
                missing: vec!["decode: needs LWS".into()],
                conflicts: vec!["x".into()],
                rejected: vec!["y".into()],
                held: Vec::new(),
            },
            &Snapshot::default(),
        );
        let status = compute(Some(1), &Snapshot::default(), &result, &[], None, now());
        assert_eq!(
            (status.state, ready_condition(&status).1),
            (Some(State::Degraded), "MissingDependency")
        );

        let quota =
            "Deployment demo-decode: exceeded quota: gpus, requested: requests.amd.com/gpu=1";
        let result = outcome(
            Applied {
                rejected: vec![quota.into()],
                ..Applied::default()
            },
            &Snapshot::default(),
        );
        let status = compute(Some(1), &Snapshot::default(), &result, &[], None, now());
        assert_eq!(ready_condition(&status), ("False", "ApplyRejected", quota));

        let invalid = ValidationErrors(vec![infera_core::FieldError {
            path: "spec.services".into(),
            message: "bad; fix".into(),
        }]);
        let status = compute(
            Some(2),
            &Snapshot::default(),
            &Outcome::Invalid(invalid),
            &[],
            None,
            now(),
        );
        assert_eq!(status.state, Some(State::Failed));
        assert_eq!(
            ready_condition(&status),
            ("False", "InvalidSpec", "spec.services: bad; fix")
        );
    }

    #[test]
    fn transition_time_is_kept_while_the_condition_holds() {
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("w", 1, 1)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let first = status_of(&snapshot);
        let later = Time(Timestamp::from_second(1000).expect("timestamp"));
        let second = compute(
            Some(1),
            &snapshot,
            &outcome(Applied::default(), &snapshot),
            &[],
            Some(&first),
            later,
        );
        assert_eq!(first, second);
    }

    fn images_condition(status: &InferaDeploymentStatus) -> (&str, &str, &str, &str) {
        let c = &status.conditions[1];
        (
            c.type_.as_str(),
            c.status.as_str(),
            c.reason.as_str(),
            c.message.as_str(),
        )
    }

    fn mutable() -> Vec<MutableImage> {
        vec![
            MutableImage {
                path: "spec.image".into(),
                image: "rocm/infera:sglang-v0.1.1".into(),
            },
            MutableImage {
                path: "spec.services.decode.image".into(),
                image: "rocm/infera".into(),
            },
        ]
    }

    #[test]
    fn images_pinned_follows_ready_and_lists_mutable_images() {
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("w", 1, 1)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let result = outcome(Applied::default(), &snapshot);
        let status = compute(Some(2), &snapshot, &result, &mutable(), None, now());
        assert_eq!(status.state, Some(State::Ready));
        assert_eq!(
            ready_condition(&status),
            (
                "True",
                "AllReplicasReady",
                "every service has all replicas ready"
            )
        );
        assert_eq!(
            images_condition(&status),
            (
                "ImagesPinned",
                "False",
                "MutableImages",
                "mutable tags (pods may run different images): spec.image rocm/infera:sglang-v0.1.1, spec.services.decode.image rocm/infera; pin them by digest, or set spec.imagePolicy.requireDigest to require it"
            )
        );
        assert_eq!(status.conditions[1].observed_generation, Some(2));
        assert_eq!(status.conditions.len(), 2);

        let pinned = compute(Some(2), &snapshot, &result, &[], None, now());
        assert_eq!(
            images_condition(&pinned),
            (
                "ImagesPinned",
                "True",
                "AllImagesPinned",
                "every image the spec names is pinned by digest"
            )
        );
    }

    #[test]
    fn images_pinned_keeps_its_transition_time_until_its_status_changes() {
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("w", 1, 1)].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let result = outcome(Applied::default(), &snapshot);
        let first = compute(Some(1), &snapshot, &result, &mutable(), None, now());
        let later = Time(Timestamp::from_second(1000).expect("timestamp"));
        // One mutable image fewer: the message changes, the status and its time do not.
        let fewer = compute(
            Some(1),
            &snapshot,
            &result,
            &mutable()[..1],
            Some(&first),
            later.clone(),
        );
        assert_eq!(
            fewer.conditions[1].last_transition_time,
            first.conditions[1].last_transition_time
        );
        assert_ne!(fewer.conditions[1].message, first.conditions[1].message);
        // Pinned: a transition now; Ready, which held, keeps its time.
        let pinned = compute(
            Some(1),
            &snapshot,
            &result,
            &[],
            Some(&fewer),
            later.clone(),
        );
        assert_eq!(pinned.conditions[1].last_transition_time, later);
        assert_eq!(
            pinned.conditions[0].last_transition_time,
            first.conditions[0].last_transition_time
        );
    }

    #[test]
    fn an_invalid_spec_still_reports_its_mutable_images() {
        let invalid = ValidationErrors(vec![infera_core::FieldError {
            path: "spec.image".into(),
            message: "must be pinned by digest; pin it".into(),
        }]);
        let status = compute(
            Some(1),
            &Snapshot::default(),
            &Outcome::Invalid(invalid),
            &mutable()[..1],
            None,
            now(),
        );
        assert_eq!(
            ready_condition(&status),
            (
                "False",
                "InvalidSpec",
                "spec.image: must be pinned by digest; pin it"
            )
        );
        assert_eq!(images_condition(&status).2, "MutableImages");
    }

    #[test]
    fn stale_workload_status_counts_as_not_ready() {
        let (key, object) = deployment("server", 1, 1);
        let mut object = (*object).clone();
        object.metadata.generation = Some(2);
        let snapshot = Snapshot {
            children: [(key, Arc::new(object))].into(),
            pods: vec![],
            ..Snapshot::default()
        };
        let status = status_of(&snapshot);
        assert_eq!(status.services["server"].ready_replicas, 0);
    }
    fn reconciled_condition(status: &InferaDeploymentStatus) -> Option<(&str, &str, &str, i64)> {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == RECONCILED)
            .map(|c| {
                (
                    c.status.as_str(),
                    c.reason.as_str(),
                    c.message.as_str(),
                    c.observed_generation.unwrap_or_default(),
                )
            })
    }

    #[test]
    fn a_failed_reconcile_shows_for_its_generation_and_degrades_a_ready_deployment() {
        let snapshot = Snapshot::default();
        let ready = status_of(&snapshot);
        let mut first = ready.clone();
        record_reconcile(&mut first, None, Some(1), &Reconciled::Succeeded, now());
        assert_eq!(
            reconciled_condition(&first),
            Some((
                "True",
                RECONCILE_SUCCEEDED,
                "every step of the last reconcile succeeded",
                1
            ))
        );
        // Generation 4 fails in its history step: said for generation 4, and not Ready any more
        // as a state, while the Ready condition still says what the pods do.
        let message = "history: cannot renumber ControllerRevision demo-bb14536a19: ApiError: field is immutable";
        let mut failed = first.clone();
        let later = Time(now().0 + k8s_openapi::jiff::SignedDuration::from_secs(60));
        record_reconcile(
            &mut failed,
            Some(&first),
            Some(4),
            &Reconciled::Failed(message.into()),
            later.clone(),
        );
        assert_eq!(
            reconciled_condition(&failed),
            Some(("False", RECONCILE_FAILED, message, 4))
        );
        assert_eq!(failed.state, Some(State::Degraded));
        assert_eq!(ready_condition(&failed).0, ready_condition(&first).0);
        let transition = |s: &InferaDeploymentStatus| {
            s.conditions
                .iter()
                .find(|c| c.type_ == RECONCILED)
                .map(|c| c.last_transition_time.clone())
        };
        assert_eq!(transition(&failed), Some(later));
        // A retryable failure before it shows keeps the condition as it was.
        let mut retrying = failed.clone();
        record_reconcile(
            &mut retrying,
            Some(&failed),
            Some(5),
            &Reconciled::Retrying,
            now(),
        );
        assert_eq!(retrying, failed);
        // Without a condition before, retrying adds none; an invalid spec stays Failed.
        let mut fresh = ready.clone();
        record_reconcile(&mut fresh, None, Some(1), &Reconciled::Retrying, now());
        assert_eq!(fresh, ready);
        let mut invalid = InferaDeploymentStatus {
            state: Some(State::Failed),
            ..ready
        };
        record_reconcile(
            &mut invalid,
            None,
            Some(1),
            &Reconciled::Failed("apply: x".into()),
            now(),
        );
        assert_eq!(invalid.state, Some(State::Failed));
    }
}
