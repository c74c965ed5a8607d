//! What we remember of our applies, so an unchanged child costs no request, and what a
//! restarted operator adopts as its last apply.

use std::{collections::HashMap, sync::Mutex};

use infera_core::{ChildKind, InferaDeployment};
use kube::{ResourceExt, runtime::reflector::ObjectRef};
use serde_json::Value;

use super::fields::held_by_others;
use crate::{live::Live, ownership::hex};

/// Why a child could not be applied, as one line naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Problem {
    Conflict(String),
    Rejected(String),
}

/// Our last apply of a child: what we sent, the version it left, any conflict, and, for a
/// workload whose replicas an autoscaler owns, whether its replicas were handed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) hash: u64,
    pub(super) version: String,
    pub(super) problem: Option<Problem>,
    pub(super) handed_over: bool,
}

/// A child of a deployment: the deployment, the child's kind and name.
pub(super) type Key = (ObjectRef<InferaDeployment>, ChildKind, String);

/// Memory of our applies, so an unchanged child costs no request: per deployment, the records
/// of its children, a few, found by a linear search. One map entry per child instead cost
/// 200 bytes a slot, and a map of 30,000 children (5,000 deployments) doubled to 65,536 slots.
#[derive(Default)]
pub struct Applies(Mutex<HashMap<ObjectRef<InferaDeployment>, Vec<ChildRecord>>>);

/// The record of one child: its kind, its name, our last apply.
type ChildRecord = (ChildKind, String, Record);

impl Applies {
    pub(super) fn get(&self, (deployment, kind, name): &Key) -> Option<Record> {
        let records = self.0.lock().ok()?;
        let (.., record) = records
            .get(deployment)?
            .iter()
            .find(|(k, n, _)| k == kind && n == name)?;
        Some(record.clone())
    }

    pub(super) fn put(&self, (deployment, kind, name): Key, record: Record) {
        if let Ok(mut records) = self.0.lock() {
            let children = records.entry(deployment).or_default();
            match children
                .iter_mut()
                .find(|(k, n, _)| *k == kind && *n == name)
            {
                Some((.., last)) => *last = record,
                None => children.push((kind, name, record)),
            }
        }
    }

    pub(super) fn forget(&self, (deployment, kind, name): &Key) {
        if let Ok(mut records) = self.0.lock()
            && let Some(children) = records.get_mut(deployment)
        {
            children.retain(|(k, n, _)| k != kind || n != name);
            if children.is_empty() {
                records.remove(deployment);
            }
        }
    }

    /// Forgets every child of `deployment`.
    pub fn forget_deployment(&self, deployment: &ObjectRef<InferaDeployment>) {
        if let Ok(mut records) = self.0.lock() {
            records.remove(deployment);
        }
    }
}

/// A live child that a previous operator applied exactly as we render it now (its
/// [`APPLIED_HASH`](crate::ownership::APPLIED_HASH) is `hash`) and whose fields we set are still ours, taken as our last apply:
/// re-applying it would change nothing.
///
/// The hash says what was applied, not what the object holds now: a writer may have changed our
/// fields since. Such a writer takes the fields it changed from us, so it appears in the child's
/// `managedFields` holding a field we set (see [`holds_any`](super::fields::holds_any)) — an Update (`kubectl edit`,
/// `kubectl scale` through the scale subresource) or a forced apply alike — and the child is
/// applied again (a 409 then reports the conflict, as for any child). Other writers' entries that
/// hold only fields we do not set (the Deployment controller's revision annotation) and status
/// writers are no reason to apply. Not seen: a field of ours that another writer removed
/// outright while no operator was running, which leaves no owner behind; a running operator sees
/// it (the generation moves) and so does the next change of the render.
pub(super) fn adopt(live: &Live, hash: u64, rendered: &Value, autoscaled: bool) -> Option<Record> {
    let untouched = !held_by_others(live, rendered);
    (live.applied_hash? == hash && untouched).then(|| Record {
        hash,
        version: version(live, autoscaled).unwrap_or_default(),
        problem: None,
        handed_over: false,
    })
}

/// Whether a rendered child must be sent: unless our last apply of it (`last`) sent the same
/// object (`hash`) and the live object has not moved since (`live_version`, see [`version`]).
/// A conflict is remembered like an apply, so it is not retried until one of them changes.
pub(super) fn must_apply(last: Option<&Record>, hash: u64, live_version: Option<&str>) -> bool {
    last.is_none_or(|last| last.hash != hash || live_version != Some(last.version.as_str()))
}

/// What must move for a live child to count as changed by someone else: its generation, for
/// objects with a spec the API server versions, else its resourceVersion. For a workload whose
/// replicas an autoscaler owns (`autoscaled`), the rest of its spec
/// ([`State::spec_besides_replicas`](crate::live::State)): the autoscaler's and `kubectl scale`'s
/// changes move its generation but are not ours to undo.
pub(super) fn version(object: &Live, autoscaled: bool) -> Option<String> {
    if autoscaled && let Some(state) = object.state() {
        return Some(format!("spec {}", hex(state.spec_besides_replicas)));
    }
    match object.metadata.generation {
        Some(generation) => Some(format!("generation {generation}")),
        None => object.resource_version(),
    }
}
