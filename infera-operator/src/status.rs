//! The deployment's status, computed purely from what was observed and what applying ran into.
//!
//! `Ready` comes first; its reason is the most serious problem found, in the precedence
//! [`ReadyReason`] defines. `ImagesPinned` follows it: non-fatal, it says which images the spec
//! names by a mutable tag.

use std::collections::BTreeMap;

use infera_core::{
    ALL_IMAGES_PINNED, ChildKind, GaieStatus, IMAGES_PINNED, InferaDeployment,
    InferaDeploymentStatus, MODEL_READY, MUTABLE_IMAGES, PROGRESS_DEADLINE_EXCEEDED, PROGRESSING,
    READY, RECONCILE_FAILED, RECONCILE_SUCCEEDED, RECONCILED, ROLLOUT_PAUSED, ReadyReason,
    ServiceStatus, State, ValidationErrors,
    naming::{Component, http_route_name, inference_pool_name},
    pod_security,
    render::Workload,
    validate::MutableImage,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::ResourceExt;

mod pods;
#[cfg(test)]
mod tests;

use pods::{ready_groups, trouble, unregistered, unschedulable};

use crate::{
    apply::Applied,
    live::Live,
    models::{self, Download, ModelPhase},
    observe::Snapshot,
    rollout::{self, Rollout},
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
    let rollout = revision
        .as_deref()
        .map(|revision| pool_rollout(snapshot, outcome, &services, revision, (reason, &message)));
    let mut conditions = Conditions {
        generation,
        previous,
        now: &now,
        list: Vec::new(),
    };
    conditions.set(READY, state == State::Ready, reason.as_str(), message);
    let (pinned_reason, pinned_message) = images_pinned(mutable);
    conditions.set(
        IMAGES_PINNED,
        mutable.is_empty(),
        pinned_reason,
        pinned_message,
    );
    if let Outcome::Applied {
        model: Some(phase), ..
    } = outcome
    {
        let (reason, message) = phase.reason();
        conditions.set(MODEL_READY, phase.is_downloaded(), reason, message);
    }
    let deadline = match outcome {
        Outcome::Applied {
            deadline_seconds, ..
        } => *deadline_seconds,
        Outcome::Invalid(_) => i32::MAX,
    };
    let revisions = conditions.progressing(rollout.as_ref().zip(revision), deadline);
    let models = match outcome {
        Outcome::Applied { downloads, .. } => models::status(downloads, previous),
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
        conditions: conditions.list,
        services_ready: Some(format!("{ready}/{}", services.len())),
        services,
        endpoint,
        current_revision: revisions.current,
        update_revision: revisions.update,
        models,
        rollout_start_time: revisions.start,
        // The planner's own (`crate::planner`), carried so that it is no change here;
        // `reconcile::write_status` leaves it out.
        planner: previous.and_then(|p| p.planner.clone()),
    }
}

/// The rollout of the worker pools to `revision`, as [`rollout::rollout`] judges it from their
/// pods and services, what the apply held and what blocks them.
fn pool_rollout(
    snapshot: &Snapshot,
    outcome: &Outcome,
    services: &BTreeMap<String, ServiceStatus>,
    revision: &str,
    ready: (ReadyReason, &str),
) -> Rollout {
    let (pools, held, blocked): (Vec<(&str, &ServiceStatus)>, &[String], &[String]) = match outcome
    {
        Outcome::Applied {
            workloads,
            applied,
            blocked,
            ..
        } => (
            workloads
                .iter()
                .filter(|w| w.revision.is_some())
                .filter_map(|w| Some((w.service.as_str(), services.get(&w.service)?)))
                .collect(),
            &applied.held,
            blocked,
        ),
        Outcome::Invalid(_) => (Vec::new(), &[], &[]),
    };
    rollout::rollout(&snapshot.pods, &pools, revision, ready, held, blocked)
}

/// The conditions this reconcile sets, in order: each keeps its last transition time from the
/// `previous` status while its status stays.
struct Conditions<'a> {
    generation: Option<i64>,
    previous: Option<&'a InferaDeploymentStatus>,
    now: &'a Time,
    list: Vec<Condition>,
}

/// The revisions a status reports, and when the rollout between them started.
struct Revisions {
    current: Option<String>,
    update: Option<String>,
    start: Option<Time>,
}

impl Conditions<'_> {
    fn set(&mut self, type_: &str, holds: bool, reason: &str, message: String) {
        let status = if holds { "True" } else { "False" };
        let last_transition_time = match self.last(type_) {
            Some(c) if c.status == status => c.last_transition_time.clone(),
            _ => self.now.clone(),
        };
        self.list.push(Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message,
            observed_generation: self.generation,
            last_transition_time,
        });
    }

    fn last(&self, type_: &str) -> Option<&Condition> {
        self.previous
            .and_then(|p| p.conditions.iter().find(|c| c.type_ == type_))
    }

    /// `Progressing` for the rollout to `revision`, late once it has taken longer than
    /// `deadline` seconds (unless paused), and the revisions the status reports. Without a
    /// rollout (an invalid spec), the last condition and revisions stay.
    fn progressing(&mut self, rollout: Option<(&Rollout, String)>, deadline: i32) -> Revisions {
        let previous = self.previous;
        let kept = |field: fn(&InferaDeploymentStatus) -> &Option<String>| {
            previous.and_then(|p| field(p).clone())
        };
        let Some((rollout, revision)) = rollout else {
            self.list.extend(self.last(PROGRESSING).cloned());
            return Revisions {
                current: kept(|p| &p.current_revision),
                update: kept(|p| &p.update_revision),
                start: previous.and_then(|p| p.rollout_start_time.clone()),
            };
        };
        let same = previous.is_some_and(|p| p.update_revision.as_ref() == Some(&revision));
        let start = (!rollout.complete).then(|| {
            previous
                .and_then(|p| p.rollout_start_time.clone())
                .filter(|_| same)
                .unwrap_or_else(|| self.now.clone())
        });
        let (mut holds, mut reason, mut message) = rollout.progressing.clone();
        let late = start
            .as_ref()
            .is_some_and(|start| seconds_since(start, self.now) > i64::from(deadline));
        if late && reason != ROLLOUT_PAUSED {
            message = format!(
                "the rollout to revision {revision} has not finished within progressDeadlineSeconds ({deadline}s): {message}"
            );
            (holds, reason) = (false, PROGRESS_DEADLINE_EXCEEDED);
        }
        self.set(PROGRESSING, holds, reason, message);
        Revisions {
            current: if rollout.complete {
                Some(revision.clone())
            } else {
                kept(|p| &p.current_revision)
            },
            update: Some(revision),
            start,
        }
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
            match trouble(&snapshot.pods, name).or_else(|| unregistered(&snapshot.pods, name)) {
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
        let live_replicas = snapshot.live_replicas(workload);
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

/// Ready replicas of a workload; a status older than its spec counts as nothing ready.
fn ready_replicas(object: &Live) -> i32 {
    let Some(state) = object.state() else {
        return 0;
    };
    let current = state.observed_generation >= object.metadata.generation;
    let ready = state.ready_replicas.filter(|_| current).unwrap_or(0);
    i32::try_from(ready).unwrap_or(0)
}
