//! Which warning events belong to a deployment, and which of them are still news.

use std::collections::BTreeSet;

use infera_core::{InferaDeployment, InferaDeploymentStatus, READY, State, naming};
use k8s_openapi::{
    api::core::v1::{Event, Pod},
    jiff::Timestamp,
};

use super::WarningRow;
use crate::diagnose::event_time;

/// At most this many warnings are listed.
const MAX_WARNINGS: usize = 10;

/// A deployment's warnings.
pub(super) struct Warnings<'a> {
    /// Every warning event about the deployment or its objects, newest first.
    pub events: Vec<&'a Event>,
    /// The most recent ones to list (since `since`, when set).
    pub rows: Vec<WarningRow>,
    /// When it became Ready, if it is Ready: older warnings are resolved.
    pub since: Option<Timestamp>,
    /// How many warnings are older than `since`.
    pub resolved: usize,
}

/// The deployment's warnings among the namespace's events. A Ready deployment lists only those
/// since it became Ready: what happened on the way there (a pull back-off, a failed scheduling
/// attempt) is resolved, not a current problem.
pub(super) fn of<'a>(
    idep: &InferaDeployment,
    pods: &[Pod],
    events: &'a [Event],
    now: Timestamp,
) -> Warnings<'a> {
    let owned = owned_names(idep, pods);
    let mut mine: Vec<&Event> = events
        .iter()
        .filter(|e| {
            e.type_.as_deref() == Some("Warning")
                && e.involved_object
                    .name
                    .as_deref()
                    .is_some_and(|object| owned.contains(object))
        })
        .collect();
    mine.sort_by_key(|e| std::cmp::Reverse(event_time(e)));
    let since = idep.status.as_ref().and_then(ready_since);
    let current = |e: &Event| since.is_none_or(|t| event_time(e) >= t.as_second());
    let rows = mine
        .iter()
        .filter(|e| current(e))
        .take(MAX_WARNINGS)
        .map(|e| row(e, now))
        .collect();
    let resolved = mine.iter().filter(|e| !current(e)).count();
    Warnings {
        events: mine,
        rows,
        since,
        resolved,
    }
}

/// When a Ready deployment became Ready: the `Ready` condition's last transition to True.
fn ready_since(status: &InferaDeploymentStatus) -> Option<Timestamp> {
    if status.state != Some(State::Ready) {
        return None;
    }
    status
        .conditions
        .iter()
        .find(|c| c.type_ == READY && c.status == "True")
        .map(|c| c.last_transition_time.0)
}

/// One event as a row: `Kind/name`, reason, message, count and age.
fn row(e: &Event, now: Timestamp) -> WarningRow {
    let object = &e.involved_object;
    WarningRow {
        object: format!(
            "{}/{}",
            object.kind.as_deref().unwrap_or("?"),
            object.name.as_deref().unwrap_or("?")
        ),
        reason: e.reason.clone().unwrap_or_default(),
        message: e.message.clone().unwrap_or_default().trim().to_string(),
        count: e.count.unwrap_or(1),
        age_seconds: now.as_second() - event_time(e),
    }
}

/// Names of objects whose events belong to this deployment, from what is already fetched: the
/// deployment, its pods (label `infera.amd.com/deployment=<name>`) and their owners, and the
/// children the operator names per service. Never a name prefix: `demo-x`'s children are not
/// `demo`'s.
fn owned_names(idep: &InferaDeployment, pods: &[Pod]) -> BTreeSet<String> {
    let name = idep.metadata.name.clone().unwrap_or_default();
    let mut owned = BTreeSet::from([name.clone()]);
    for pod in pods {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        if labels.get(naming::LABEL_DEPLOYMENT) != Some(&name) {
            continue;
        }
        owned.extend(pod.metadata.name.clone());
        for owner in pod.metadata.owner_references.iter().flatten() {
            owned.insert(owner.name.clone());
        }
        if let Some(service) = labels.get(naming::LABEL_SERVICE) {
            owned.insert(format!("{name}-{service}"));
        }
    }
    let status = idep.status.clone().unwrap_or_default();
    for service in idep.spec.services.keys().chain(status.services.keys()) {
        owned.insert(format!("{name}-{service}"));
    }
    for component in [
        naming::Component::Nats,
        naming::Component::Discovery,
        naming::Component::EndpointPicker,
        naming::Component::Gateway,
    ] {
        owned.insert(component.object_name(&name));
    }
    owned.insert(naming::nats_headless_name(&name));
    owned.insert(naming::inference_pool_name(&name));
    owned.insert(naming::http_route_name(&name));
    owned
}
