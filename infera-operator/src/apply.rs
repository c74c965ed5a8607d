//! Server-side apply of the rendered children, and deletion of the ones no longer rendered.
//!
//! Writes only when needed: a child is re-applied when what we render changed or the live object
//! changed since our last apply — its generation moved (objects with a spec the API server
//! versions), else its resourceVersion — so controllers updating a child's status cost nothing.
//! A conflict with another field manager is reported, never forced, and not retried until
//! something changes.
//!
//! Our last apply survives a restart on the child itself: every child carries the hash of the
//! object we applied in the [`APPLIED_HASH`] annotation. A restarted operator, or a standby that
//! takes over the Lease, adopts a child whose hash matches what it renders now as already applied
//! (see [`adopt`]) and sends nothing for it.
//!
//! A workload whose replicas an autoscaler owns is rendered without `replicas`. Its replica count
//! is then no reason to apply it again (see [`version`]), and before our apply lets go of
//! `spec.replicas` a second field manager takes it over at its current value (see
//! [`Target::hand_over`]), so it is neither reset to the default nor fought over.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Mutex,
};

use infera_core::{
    Child, ChildKind, InferaDeployment,
    naming::{Component, MODEL_SOURCE_ANNOTATION, OPERATOR_MANAGER, REPLICAS_HANDOVER_MANAGER},
    quota::{self, Usage},
};
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, DynamicObject, Patch, PatchParams, Preconditions},
    core::Status,
    runtime::reflector::ObjectRef,
};
use serde_json::Value;

use crate::{
    Error, Result,
    live::{Live, template_revision},
    observe::Snapshot,
};

/// The annotation on every child holding the [`hash`] of the object we last applied to it (the
/// rendered child, without this annotation), as 16 hex digits.
pub const APPLIED_HASH: &str = "infera.amd.com/applied-hash";

/// What applying a deployment's children ran into.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Children not applied because their CRD is missing, as `service: what to install`.
    pub missing: Vec<String>,
    /// Fields owned by another field manager, one line per child.
    pub conflicts: Vec<String>,
    /// Children the API server refused (admission, quota, validation), one line per child.
    pub rejected: Vec<String>,
    /// Worker workloads not applied because `spec.rollout.paused` holds them at the revision
    /// they run, as `service (revision r)` (the reconcile adds those it holds part-way through
    /// a rollout, as `service (n/m updated)`).
    pub held: Vec<String>,
}

/// Why a child could not be applied, as one line naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Problem {
    Conflict(String),
    Rejected(String),
}

/// Our last apply of a child: what we sent, the version it left, any conflict, and, for a
/// workload whose replicas an autoscaler owns, whether its replicas were handed over.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    hash: u64,
    version: String,
    problem: Option<Problem>,
    handed_over: bool,
}

/// A child of a deployment: the deployment, the child's kind and name.
type Key = (ObjectRef<InferaDeployment>, ChildKind, String);

/// Memory of our applies, so an unchanged child costs no request: per deployment, the records
/// of its children, a few, found by a linear search. One map entry per child instead cost
/// 200 bytes a slot, and a map of 30,000 children (5,000 deployments) doubled to 65,536 slots.
#[derive(Default)]
pub struct Applies(Mutex<HashMap<ObjectRef<InferaDeployment>, Vec<ChildRecord>>>);

/// The record of one child: its kind, its name, our last apply.
type ChildRecord = (ChildKind, String, Record);

impl Applies {
    fn get(&self, (deployment, kind, name): &Key) -> Option<Record> {
        let records = self.0.lock().ok()?;
        let (.., record) = records
            .get(deployment)?
            .iter()
            .find(|(k, n, _)| k == kind && n == name)?;
        Some(record.clone())
    }

    fn put(&self, (deployment, kind, name): Key, record: Record) {
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

    fn forget(&self, (deployment, kind, name): &Key) {
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
/// [`APPLIED_HASH`] is `hash`) and whose fields we set are still ours, taken as our last apply:
/// re-applying it would change nothing.
///
/// The hash says what was applied, not what the object holds now: a writer may have changed our
/// fields since. Such a writer takes the fields it changed from us, so it appears in the child's
/// `managedFields` holding a field we set (see [`holds_any`]) — an Update (`kubectl edit`,
/// `kubectl scale` through the scale subresource) or a forced apply alike — and the child is
/// applied again (a 409 then reports the conflict, as for any child). Other writers' entries that
/// hold only fields we do not set (the Deployment controller's revision annotation) and status
/// writers are no reason to apply. Not seen: a field of ours that another writer removed
/// outright while no operator was running, which leaves no owner behind; a running operator sees
/// it (the generation moves) and so does the next change of the render.
fn adopt(live: &Live, hash: u64, rendered: &Value, autoscaled: bool) -> Option<Record> {
    let untouched = !held_by_others(live, rendered);
    (live.applied_hash? == hash && untouched).then(|| Record {
        hash,
        version: version(live, autoscaled).unwrap_or_default(),
        problem: None,
        handed_over: false,
    })
}

/// An entry of another writer of the object (its status aside): what it holds may differ from
/// what we applied.
pub fn is_other_writer(entry: &ManagedFieldsEntry) -> bool {
    entry.manager.as_deref() != Some(OPERATOR_MANAGER)
        && entry.subresource.as_deref() != Some("status")
}

/// Whether the fields of a `managedFields` entry (its `fieldsV1`: `f:<field>`, list items as
/// `k:<key fields>`, `v:<value>`, `i:<index>`, and `.` for the node itself, as the Kubernetes
/// API reference for ManagedFieldsEntry and sigs.k8s.io/structured-merge-diff describe them)
/// include a value `ours` sets. Owning only a map's or an item's node (`.`) holds no value.
fn holds_any(fields: &Value, ours: &Value) -> bool {
    let Some(fields) = fields.as_object() else {
        return false;
    };
    let items = || ours.as_array().into_iter().flatten();
    fields.iter().any(|(path, inner)| {
        let field = if let Some(name) = path.strip_prefix("f:") {
            ours.get(name)
        } else if let Some(key) = path.strip_prefix("k:") {
            let key: Value = serde_json::from_str(key).unwrap_or_default();
            let key = key.as_object();
            items().find(|item| {
                key.is_some_and(|key| {
                    key.iter()
                        .all(|(name, value)| item.get(name) == Some(value))
                })
            })
        } else if let Some(value) = path.strip_prefix("v:") {
            let value: Value = serde_json::from_str(value).unwrap_or_default();
            items().find(|item| **item == value)
        } else if let Some(index) = path.strip_prefix("i:") {
            index.parse().ok().and_then(|index: usize| ours.get(index))
        } else {
            None
        };
        let leaf = inner.as_object().is_none_or(serde_json::Map::is_empty);
        field.is_some_and(|field| leaf || holds_any(inner, field))
    })
}

/// Whether a rendered child must be sent: unless our last apply of it (`last`) sent the same
/// object (`hash`) and the live object has not moved since (`live_version`, see [`version`]).
/// A conflict is remembered like an apply, so it is not retried until one of them changes.
fn must_apply(last: Option<&Record>, hash: u64, live_version: Option<&str>) -> bool {
    last.is_none_or(|last| last.hash != hash || live_version != Some(last.version.as_str()))
}

/// Applies `children` and deletes children of this deployment that are no longer rendered — all
/// of a change or none of it.
///
/// Only children whose last apply no longer stands are sent (see [`must_apply`]). Before any of
/// them is written, the whole graph is checked against the namespace's ResourceQuotas (see
/// `infera_core::quota`: the API server charges pods only when controllers create them, so no
/// per-object check sees a graph that cannot run whole), and each is sent as a strict server-side
/// dry run. When one is refused nothing is written or deleted: the running children stay as they
/// are, and the refusal is reported.
///
/// With `paused`, a live worker workload whose pods run another revision than rendered is held:
/// left as it is, neither applied nor deleted.
///
/// The managed NATS's credentials are created (unless they exist) right before its StatefulSet is
/// written: first, or changed, as when an operator that did not make them yet upgrades it.
pub async fn apply(
    client: &Client,
    applies: &Applies,
    installed: impl Fn(ChildKind) -> bool,
    idep: &InferaDeployment,
    snapshot: &Snapshot,
    graph: Graph,
) -> Result<Applied> {
    let Graph {
        children,
        credentials,
        paused,
    } = graph;
    let namespace = idep.namespace().ok_or_else(|| Error::NoNamespace {
        name: idep.name_any(),
    })?;
    // Name and namespace only: the key of every record, so no resourceVersion or uid per child.
    let deployment = ObjectRef::new(&idep.name_any()).within(&namespace);
    let mut applied = Applied::default();
    let mut wanted = BTreeSet::new();
    let target = Target {
        client,
        applies,
        deployment: &deployment,
        namespace: &namespace,
        snapshot,
        floors: floors(&children),
    };
    let mut pending = Vec::new();
    let mut replaced = Vec::new();
    for child in &children {
        let kind = child.kind();
        wanted.insert((kind, child.name().to_string()));
        if let Some(live) = snapshot.children.get(&(kind, child.name().to_string()))
            && kind == ChildKind::Job
        {
            match job_change(child, live) {
                JobChange::Apply => {}
                JobChange::Keep => continue,
                JobChange::Replace => {
                    replaced.push(live);
                    continue;
                }
            }
        }
        if !installed(kind) {
            let missing = missing_dependency(kind, child.service());
            if !applied.missing.contains(&missing) {
                applied.missing.push(missing);
            }
            continue;
        }
        if let Some(running) = paused.then(|| held(snapshot, child)).flatten() {
            applied
                .held
                .push(format!("{} (revision {running})", child.service()));
            continue;
        }
        match target.prepare(child).await? {
            Prepared::Unchanged(problem) => applied.report(problem),
            Prepared::Send(send) => pending.push(send),
        }
    }
    // A conflict our last apply of a child met, and that still stands, holds back the rest of
    // the change too: it is written whole once the conflict is resolved.
    if !applied.conflicts.is_empty() {
        return Ok(applied);
    }
    if !pending.is_empty() {
        let shortfalls = quota::shortfalls(
            snapshot.quotas.iter().map(AsRef::as_ref),
            &current_usage(snapshot),
            &Usage::of_children(&children),
        );
        if !shortfalls.is_empty() {
            applied
                .rejected
                .extend(shortfalls.iter().map(ToString::to_string));
            return Ok(applied);
        }
        let checks = pending
            .iter()
            .filter(|send| target.can_dry_run(send))
            .map(|send| target.send(send, Mode::DryRun));
        let refusals: Vec<Problem> = futures::future::join_all(checks)
            .await
            .into_iter()
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        if !refusals.is_empty() {
            refusals
                .into_iter()
                .for_each(|problem| applied.report(Some(problem)));
            return Ok(applied);
        }
        let nats = Component::Nats.object_name(&idep.name_any());
        if let Some(secret) = &credentials
            && pending
                .iter()
                .any(|send| send.kind == ChildKind::StatefulSet && send.name == nats)
        {
            crate::credentials::create(client, secret).await?;
        }
        // Binding a Role that does not exist yet is refused: bindings go second. Otherwise
        // children of one deployment do not depend on each other: they are written at once.
        let (bindings, others): (Vec<_>, Vec<_>) = pending
            .iter()
            .partition(|send| send.kind == ChildKind::RoleBinding);
        for batch in [others, bindings] {
            let writes = batch.into_iter().map(|send| target.send(send, Mode::Write));
            for result in futures::future::join_all(writes).await {
                applied.report(result?);
            }
        }
    }
    if applied.conflicts.is_empty() && applied.rejected.is_empty() {
        // Deleted now, created by the reconcile its deletion triggers.
        for live in replaced {
            target.delete(ChildKind::Job, live).await?;
        }
        for ((kind, name), object) in &snapshot.children {
            if !wanted.contains(&(*kind, name.clone())) {
                target.delete(*kind, object).await?;
            }
        }
    }
    Ok(applied)
}

/// What to do with a live download Job.
#[derive(Debug, PartialEq, Eq)]
enum JobChange {
    /// Apply the rendered Job as any child (it is what we applied last, or not ours yet).
    Apply,
    /// Leave it: it succeeded for the source we want, and a new one would only download again.
    Keep,
    /// Delete it, and create the rendered one afterwards: its pod template, immutable, differs.
    Replace,
}

/// A Job's pod template cannot be updated (the API server refuses the apply): a rendered Job
/// that differs from the live one (its [`APPLIED_HASH`]) replaces it, unless the live one already
/// downloaded the same source ([`MODEL_SOURCE_ANNOTATION`]).
fn job_change(child: &Child, live: &Live) -> JobChange {
    let Ok(rendered) = serde_json::to_value(child) else {
        return JobChange::Apply;
    };
    let Some(applied) = live.applied_hash else {
        return JobChange::Apply;
    };
    if applied == hash(&rendered) {
        return JobChange::Apply;
    }
    let wanted = rendered["metadata"]["annotations"][MODEL_SOURCE_ANNOTATION].as_str();
    let downloaded = live.model_source.as_deref();
    let succeeded = live.state().and_then(|state| state.succeeded) > Some(0);
    if succeeded && wanted.is_some() && downloaded == wanted {
        JobChange::Keep
    } else {
        JobChange::Replace
    }
}

impl Applied {
    fn report(&mut self, problem: Option<Problem>) {
        match problem {
            Some(Problem::Conflict(line)) => self.conflicts.push(line),
            Some(Problem::Rejected(line)) => self.rejected.push(line),
            None => {}
        }
    }
}

/// What the deployment's live children and pods are charged to quotas now.
fn current_usage(snapshot: &Snapshot) -> Usage {
    let mut usage = Usage::default();
    for (kind, _) in snapshot.children.keys() {
        usage.add_object(*kind);
    }
    let charged = snapshot.pods.iter().filter(|pod| {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        !matches!(phase, Some("Succeeded" | "Failed"))
    });
    for pod in charged {
        if let Some(spec) = &pod.spec {
            usage.add_pod(spec);
        }
    }
    usage
}

/// What one reconcile applies: the rendered children; the managed NATS's credentials, with a
/// password of their own, if it has one; and whether the rollout is paused.
pub struct Graph {
    pub children: Vec<Child>,
    pub credentials: Option<Secret>,
    pub paused: bool,
}

/// A child to send: its object with our hash annotation, and what we remember of it.
struct Outgoing {
    kind: ChildKind,
    name: String,
    body: Value,
    hash: u64,
    live_version: Option<String>,
    /// For a RoleBinding, the Role it binds.
    role: Option<String>,
    /// A workload rendered without `replicas`, which an autoscaler owns.
    autoscaled: bool,
    /// Its replicas go to the hand-over manager once the write creates it.
    hand_over_at_creation: bool,
    /// Our record says its replicas were handed over.
    handed_over: bool,
}

/// What [`Target::prepare`] found: nothing to send (and the problem our last apply met, if
/// any), or a child to send.
enum Prepared {
    Unchanged(Option<Problem>),
    Send(Outgoing),
}

/// A strict server-side dry run, or the write itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    DryRun,
    Write,
}

/// The revision a live worker workload's pods run, if it is not the one `child` renders: what a
/// paused rollout holds it at.
fn held(snapshot: &Snapshot, child: &Child) -> Option<String> {
    let live = snapshot
        .children
        .get(&(child.kind(), child.name().to_string()))?;
    let running = live.state()?.template_revision.as_deref()?;
    let rendered = serde_json::to_value(child).ok()?;
    (template_revision(&rendered)? != running).then(|| running.to_string())
}

/// Where one deployment's children go, and what we know of them.
struct Target<'a> {
    client: &'a Client,
    applies: &'a Applies,
    deployment: &'a ObjectRef<InferaDeployment>,
    namespace: &'a str,
    snapshot: &'a Snapshot,
    /// The floor of each rendered autoscaler, by the name of its target.
    floors: BTreeMap<String, i32>,
}

/// The floor of each autoscaler among `children` (a HorizontalPodAutoscaler's `minReplicas`, a
/// ScaledObject's `minReplicaCount`), by the name of its target.
fn floors(children: &[Child]) -> BTreeMap<String, i32> {
    children
        .iter()
        .filter_map(|child| match child {
            Child::HorizontalPodAutoscaler(hpa) => {
                let spec = hpa.spec.as_ref()?;
                Some((spec.scale_target_ref.name.clone(), spec.min_replicas?))
            }
            Child::ScaledObject(scaled) => Some((
                scaled.spec.scale_target_ref.name.clone(),
                scaled.spec.min_replica_count?,
            )),
            _ => None,
        })
        .collect()
}

/// Whether `body`, a rendered child of `kind`, is a workload rendered without `replicas`
/// because an autoscaler owns them.
fn autoscaled(kind: ChildKind, body: &Value) -> bool {
    matches!(
        kind,
        ChildKind::Deployment | ChildKind::StatefulSet | ChildKind::LeaderWorkerSet
    ) && body["spec"].get("replicas").is_none()
}

/// Whether a writer other than us holds `spec.replicas` of the live child.
fn replicas_held(live: &Live) -> bool {
    held_by_others(live, &serde_json::json!({"spec": {"replicas": 0}}))
}

/// Whether a writer other than us (status writers aside) holds a field that `ours` sets.
fn held_by_others(live: &Live, ours: &Value) -> bool {
    live.foreign_fields.iter().any(|fields| {
        serde_json::from_str(fields).is_ok_and(|fields: Value| holds_any(&fields, ours))
    })
}

impl Target<'_> {
    fn api(&self, kind: ChildKind) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), self.namespace, &kind.api_resource())
    }

    fn key(&self, kind: ChildKind, name: &str) -> Key {
        (self.deployment.clone(), kind, name.to_string())
    }

    /// `child` to send, unless [`must_apply`] says our last apply of it still stands.
    async fn prepare(&self, child: &Child) -> Result<Prepared> {
        let (kind, name) = (child.kind(), child.name().to_string());
        let mut body = serde_json::to_value(child).map_err(|source| Error::Encode {
            kind: kind.api_resource().kind,
            name: name.clone(),
            source,
        })?;
        let hash = hash(&body);
        let key = self.key(kind, &name);
        let live = self.snapshot.children.get(&(kind, name.clone()));
        let autoscaled = autoscaled(kind, &body);
        let live_version = live.and_then(|o| version(o, autoscaled));
        let last = match self.applies.get(&key) {
            Some(last) => Some(last),
            // After a restart: what the previous operator applied, if it still stands.
            None => live
                .and_then(|live| adopt(live, hash, &body, autoscaled))
                .inspect(|adopted| self.applies.put(key.clone(), adopted.clone())),
        };
        // Nobody but us holds the replicas of a workload we let go of: hand them over, at their
        // live value before our apply releases them, or at the autoscaler's floor right after
        // our apply creates the workload (see `send`). Our record says when we did, until the
        // watch shows it.
        let handed_over = last.as_ref().is_some_and(|last| last.handed_over);
        let needs_hand_over =
            autoscaled && !handed_over && !live.is_some_and(|live| replicas_held(live));
        let skip = !must_apply(last.as_ref(), hash, live_version.as_deref());
        if needs_hand_over && let Some(live) = live {
            let replicas = live.state().and_then(|state| state.replicas).unwrap_or(1);
            self.hand_over(kind, &name, replicas).await?;
            if let Some(last) = last.as_ref().filter(|_| skip) {
                let record = Record {
                    handed_over: true,
                    ..last.clone()
                };
                self.applies.put(key.clone(), record);
            }
        }
        if skip {
            return Ok(Prepared::Unchanged(last.and_then(|last| last.problem)));
        }
        body["metadata"]["annotations"][APPLIED_HASH] = Value::String(hex(hash));
        let role = match child {
            Child::RoleBinding(binding) => Some(binding.role_ref.name.clone()),
            _ => None,
        };
        Ok(Prepared::Send(Outgoing {
            kind,
            name,
            body,
            hash,
            live_version,
            role,
            autoscaled,
            hand_over_at_creation: needs_hand_over && live.is_none(),
            handed_over,
        }))
    }

    /// Whether a dry run can judge `send`: not a binding of a Role that does not exist yet, which
    /// the API server refuses until the Role is written (the binding is ours whole, and its Role
    /// is dry-run).
    fn can_dry_run(&self, send: &Outgoing) -> bool {
        send.role.as_ref().is_none_or(|role| {
            self.snapshot
                .children
                .contains_key(&(ChildKind::Role, role.clone()))
        })
    }

    /// Server-side applies `send` (strict field validation), as a dry run or for real; a conflict
    /// or a refusal is returned as a [`Problem`], other failures as errors, to be retried.
    async fn send(&self, send: &Outgoing, mode: Mode) -> Result<Option<Problem>> {
        let (kind, name) = (send.kind, &send.name);
        let kind_name = kind.api_resource().kind;
        let key = self.key(kind, name);
        let mut params = PatchParams::apply(OPERATOR_MANAGER).validation_strict();
        if mode == Mode::DryRun {
            params = params.dry_run();
        }
        let api = self.api(kind);
        let sent = match api.patch(name, &params, &Patch::Apply(&send.body)).await {
            // Only our own hand-over manager holds what we set: the replicas of a workload whose
            // autoscaling was removed, which nobody scaled since. Ours to take back.
            Err(kube::Error::Api(status)) if status.code == 409 && only_handed_over(&status) => {
                api.patch(name, &params.force(), &Patch::Apply(&send.body))
                    .await
            }
            sent => sent,
        };
        match sent {
            Ok(mut object) => {
                if mode == Mode::Write {
                    if send.hand_over_at_creation {
                        let floor = self.floors.get(name).copied().unwrap_or(1);
                        object = self.hand_over(kind, name, floor.into()).await?;
                    }
                    // Versioned the way the watch stores it (see `version`).
                    let object = Live::from(object);
                    let record = Record {
                        hash: send.hash,
                        version: version(&object, send.autoscaled).unwrap_or_default(),
                        problem: None,
                        handed_over: send.autoscaled,
                    };
                    self.applies.put(key, record);
                }
                Ok(None)
            }
            // A conflict or a refusal is reported; throttling and server errors are retried.
            Err(kube::Error::Api(status))
                if (400..500).contains(&status.code) && status.code != 429 =>
            {
                let name = &send.name;
                if status.code != 409 {
                    // A refusal (quota, webhook) can be lifted without the child changing: it is
                    // not remembered, so the next reconcile tries again.
                    let line = format!("{kind_name} {name}: {}", status.message);
                    return Ok(Some(Problem::Rejected(line)));
                }
                let line = format!("{kind_name} {name}: {}", conflict_fields(&status));
                let problem = Problem::Conflict(line);
                if let Some(version) = &send.live_version {
                    let record = Record {
                        hash: send.hash,
                        version: version.clone(),
                        problem: Some(problem.clone()),
                        handed_over: send.handed_over,
                    };
                    self.applies.put(key, record);
                }
                Ok(Some(problem))
            }
            Err(source) => Err(Error::Apply {
                kind: kind_name,
                name: send.name.clone(),
                source,
            }),
        }
    }

    /// Sets `spec.replicas` of a workload to `replicas` under [`REPLICAS_HANDOVER_MANAGER`], which
    /// holds nothing else: the field stays when our own apply lets go of it, and the autoscaler or
    /// `kubectl scale` (updates through the scale subresource) take it from that manager without
    /// a conflict. Returns the object as it is afterwards.
    async fn hand_over(&self, kind: ChildKind, name: &str, replicas: i64) -> Result<DynamicObject> {
        let resource = kind.api_resource();
        let body = serde_json::json!({
            "apiVersion": resource.api_version,
            "kind": resource.kind,
            "metadata": {"name": name},
            "spec": {"replicas": replicas},
        });
        let params = PatchParams::apply(REPLICAS_HANDOVER_MANAGER);
        self.api(kind)
            .patch(name, &params, &Patch::Apply(&body))
            .await
            .map_err(|source| Error::Apply {
                kind: resource.kind,
                name: name.to_string(),
                source,
            })
    }

    /// Deletes a child that is no longer rendered.
    async fn delete(&self, kind: ChildKind, object: &Live) -> Result<()> {
        let name = object.name_any();
        // The uid precondition guarantees we delete exactly the object we judged ours.
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: object.uid(),
                resource_version: None,
            }),
            propagation_policy: Some(kube::api::PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match self.api(kind).delete(&name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
            Err(source) => {
                return Err(Error::Delete {
                    kind: kind.api_resource().kind,
                    name,
                    source,
                });
            }
        }
        self.applies.forget(&self.key(kind, &name));
        Ok(())
    }
}

/// Whether a 409 apply response names conflicts, every one with [`REPLICAS_HANDOVER_MANAGER`].
fn only_handed_over(status: &Status) -> bool {
    let conflicts = infera_core::conflict::parse(status);
    !conflicts.is_empty()
        && conflicts
            .iter()
            .all(|conflict| conflict.manager == REPLICAS_HANDOVER_MANAGER)
}

/// `.spec.replicas, .metadata.labels.x owned by field manager "kubectl-edit"` from a 409 apply
/// response, one part per manager; the response's message when it names no field.
fn conflict_fields(status: &Status) -> String {
    let mut by_manager: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for conflict in infera_core::conflict::parse(status) {
        by_manager
            .entry(conflict.manager)
            .or_default()
            .push(conflict.field);
    }
    if by_manager.is_empty() {
        return status.message.clone();
    }
    let parts: Vec<String> = by_manager
        .into_iter()
        .map(|(manager, fields)| {
            format!("{} owned by field manager {manager:?}", fields.join(", "))
        })
        .collect();
    parts.join("; ")
}

/// `decode: needs the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) for
/// numberOfNodes > 1; install LeaderWorkerSet (https://…)`
fn missing_dependency(kind: ChildKind, service: &str) -> String {
    match kind.crd() {
        Some(crd) => format!(
            "{service}: needs {crd} for {}; {}",
            crd.needed_for, crd.install
        ),
        None => format!("{service}: needs a CRD that is not installed"),
    }
}

/// What must move for a live child to count as changed by someone else: its generation, for
/// objects with a spec the API server versions, else its resourceVersion. For a workload whose
/// replicas an autoscaler owns (`autoscaled`), the rest of its spec
/// ([`State::spec_besides_replicas`](crate::live::State)): the autoscaler's and `kubectl scale`'s
/// changes move its generation but are not ours to undo.
fn version(object: &Live, autoscaled: bool) -> Option<String> {
    if autoscaled && let Some(state) = object.state() {
        return Some(format!("spec {}", hex(state.spec_besides_replicas)));
    }
    match object.metadata.generation {
        Some(generation) => Some(format!("generation {generation}")),
        None => object.resource_version(),
    }
}

/// A hash of `value` that every build of the operator computes alike, so a restarted or upgraded
/// operator compares it with what an earlier one recorded.
pub(crate) fn hash(value: &Value) -> u64 {
    infera_core::hash::json(value)
}

/// `hash` as the [`APPLIED_HASH`] annotation writes it.
pub(crate) fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use kube::core::response::{StatusCause, StatusDetails};

    use super::*;

    #[test]
    fn a_409_names_each_manager_and_its_fields() {
        let cause = |manager: &str, field: &str| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with \"{manager}\" using apps/v1"),
            field: field.into(),
        };
        let status = Status::failure("Apply failed with 2 conflicts", "Conflict")
            .with_code(409)
            .with_details(StatusDetails {
                causes: vec![
                    cause("kubectl-scale", ".spec.replicas"),
                    cause("kubectl-scale", ".metadata.labels.x"),
                ],
                name: "demo-server".into(),
                group: "apps".into(),
                kind: "deployments".into(),
                uid: String::new(),
                retry_after_seconds: 0,
            });
        assert_eq!(
            conflict_fields(&status),
            r#".spec.replicas, .metadata.labels.x owned by field manager "kubectl-scale""#
        );
    }

    #[test]
    fn only_conflicts_with_our_hand_over_manager_are_taken_back() {
        let conflict = |managers: &[&str]| {
            let causes = managers
                .iter()
                .map(|manager| StatusCause {
                    reason: "FieldManagerConflict".into(),
                    message: format!("conflict with \"{manager}\" using apps/v1"),
                    field: ".spec.replicas".into(),
                })
                .collect();
            Status::failure("Apply failed", "Conflict")
                .with_code(409)
                .with_details(StatusDetails {
                    causes,
                    name: "demo-worker".into(),
                    group: "apps".into(),
                    kind: "deployments".into(),
                    uid: String::new(),
                    retry_after_seconds: 0,
                })
        };
        assert!(only_handed_over(&conflict(&[REPLICAS_HANDOVER_MANAGER])));
        assert!(!only_handed_over(&conflict(&[
            REPLICAS_HANDOVER_MANAGER,
            "kubectl-scale"
        ])));
        assert!(!only_handed_over(&conflict(&["kube-controller-manager"])));
        assert!(!only_handed_over(&conflict(&[])));
    }

    #[test]
    fn a_409_without_field_causes_reads_as_its_message() {
        let status = Status::failure("Operation cannot be fulfilled", "Conflict").with_code(409);
        assert_eq!(conflict_fields(&status), "Operation cannot be fulfilled");
    }

    fn record(hash: u64, version: &str) -> Record {
        Record {
            hash,
            version: version.into(),
            problem: None,
            handed_over: false,
        }
    }

    #[test]
    fn a_child_never_applied_is_applied() {
        assert!(must_apply(None, 1, None));
        assert!(must_apply(None, 1, Some("generation 1")));
    }

    #[test]
    fn the_same_render_over_an_unmoved_live_object_is_skipped() {
        assert!(!must_apply(
            Some(&record(1, "generation 2")),
            1,
            Some("generation 2")
        ));
    }

    /// A download Job rendered as applied is applied as any child; one rendered differently is
    /// replaced, unless it already downloaded the source we want.
    #[test]
    fn a_download_job_of_another_source_is_replaced_not_updated() {
        let job = |source: &str| {
            Child::Job(
                serde_json::from_value(serde_json::json!({
                    "metadata": {"name": "demo-model", "annotations": {MODEL_SOURCE_ANNOTATION: source}},
                    "spec": {"template": {"spec": {"containers": [{"name": "download", "args": [source]}]}}},
                }))
                .expect("a job"),
            )
        };
        let live = |applied: &Child, source: &str, succeeded: i64| {
            let hash = hex(hash(&serde_json::to_value(applied).expect("json")));
            let mut object = DynamicObject::new(
                "demo-model",
                &kube::core::ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&()),
            )
            .data(serde_json::json!({"status": {"succeeded": succeeded}}));
            object.metadata.annotations = Some(
                [
                    (APPLIED_HASH.to_string(), hash),
                    (MODEL_SOURCE_ANNOTATION.to_string(), source.to_string()),
                ]
                .into(),
            );
            Live::from(object)
        };
        let (v1, v2) = ("hf://Qwen/Qwen3-0.6B@v1", "hf://Qwen/Qwen3-0.6B@v2");
        assert_eq!(
            job_change(&job(v1), &live(&job(v1), v1, 0)),
            JobChange::Apply
        );
        assert_eq!(
            job_change(&job(v2), &live(&job(v1), v1, 0)),
            JobChange::Replace
        );
        assert_eq!(
            job_change(&job(v2), &live(&job(v1), v1, 1)),
            JobChange::Replace
        );
        // An operator that renders the same source differently leaves a finished download be.
        let mut restyled = job(v1);
        if let Child::Job(j) = &mut restyled {
            j.spec.get_or_insert_default().backoff_limit = Some(3);
        }
        assert_eq!(
            job_change(&restyled, &live(&job(v1), v1, 1)),
            JobChange::Keep
        );
        assert_eq!(
            job_change(&restyled, &live(&job(v1), v1, 0)),
            JobChange::Replace
        );
    }

    #[test]
    fn a_changed_render_is_applied() {
        assert!(must_apply(
            Some(&record(1, "generation 2")),
            2,
            Some("generation 2")
        ));
    }

    #[test]
    fn a_live_object_someone_changed_or_deleted_is_applied_again() {
        let last = record(1, "generation 2");
        assert!(must_apply(Some(&last), 1, Some("generation 3")));
        assert!(must_apply(Some(&last), 1, None));
    }

    #[test]
    fn a_conflict_is_not_retried_until_the_render_or_the_live_object_changes() {
        let last = Record {
            problem: Some(Problem::Conflict("Deployment demo-worker: ...".into())),
            ..record(1, "generation 2")
        };
        assert!(!must_apply(Some(&last), 1, Some("generation 2")));
        assert!(must_apply(Some(&last), 2, Some("generation 2")));
        assert!(must_apply(Some(&last), 1, Some("generation 3")));
    }

    fn live(generation: Option<i64>, resource_version: &str) -> DynamicObject {
        let resource = ChildKind::Deployment.api_resource();
        let mut object = DynamicObject::new("demo-worker", &resource);
        object.metadata.generation = generation;
        object.metadata.resource_version = Some(resource_version.into());
        object
    }

    #[test]
    fn a_versioned_spec_moves_with_its_generation_not_with_status_updates() {
        assert_eq!(
            version(&Live::from(live(Some(2), "100")), false),
            version(&Live::from(live(Some(2), "101")), false)
        );
        assert_eq!(
            version(&Live::from(live(Some(2), "100")), false).as_deref(),
            Some("generation 2")
        );
        assert_ne!(
            version(&Live::from(live(Some(2), "100")), false),
            version(&Live::from(live(Some(3), "101")), false)
        );
    }

    #[test]
    fn an_object_without_a_generation_moves_with_its_resource_version() {
        assert_eq!(
            version(&Live::from(live(None, "100")), false).as_deref(),
            Some("100")
        );
        assert_ne!(
            version(&Live::from(live(None, "100")), false),
            version(&Live::from(live(None, "101")), false)
        );
    }

    #[test]
    fn forgetting_a_deployment_forgets_only_its_children() {
        let applies = Applies::default();
        let demo = ObjectRef::<InferaDeployment>::new("demo").within("ns");
        let other = ObjectRef::<InferaDeployment>::new("demo-2").within("ns");
        let key = |deployment: &ObjectRef<InferaDeployment>| {
            (
                deployment.clone(),
                ChildKind::Deployment,
                "demo-worker".to_string(),
            )
        };
        applies.put(key(&demo), record(1, "generation 1"));
        applies.put(key(&other), record(2, "generation 1"));
        applies.forget_deployment(&demo);
        assert_eq!(applies.get(&key(&demo)), None);
        assert_eq!(applies.get(&key(&other)), Some(record(2, "generation 1")));
    }

    #[test]
    fn missing_dependencies_name_the_pool_and_what_to_install() {
        assert_eq!(
            missing_dependency(ChildKind::LeaderWorkerSet, "decode"),
            "decode: needs the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) for numberOfNodes > 1; install LeaderWorkerSet (https://lws.sigs.k8s.io/docs/installation/)"
        );
    }

    /// A Deployment's container list, as rendered.
    fn rendered() -> Value {
        serde_json::json!({
            "metadata": {"labels": {"app": "calm"}, "annotations": {APPLIED_HASH: "0"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "worker", "image": "rocm/infera", "ports": [{"containerPort": 8000}]},
            ]}}},
        })
    }

    #[test]
    fn a_field_we_set_held_by_another_writer_is_found_through_maps_and_list_items() {
        let holds = |fields: Value| holds_any(&fields, &rendered());
        assert!(holds(serde_json::json!({"f:spec": {"f:replicas": {}}})));
        assert!(holds(
            serde_json::json!({"f:metadata": {"f:labels": {"f:app": {}}}})
        ));
        assert!(holds(
            serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
                r#"k:{"name":"worker"}"#: {".": {}, "f:image": {}},
            }}}}})
        ));
        assert!(holds(
            serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
                r#"k:{"name":"worker"}"#: {"f:ports": {"i:0": {}}},
            }}}}})
        ));
    }

    #[test]
    fn fields_we_do_not_set_and_bare_nodes_are_not_ours() {
        let holds = |fields: Value| holds_any(&fields, &rendered());
        // The Deployment controller's revision annotation, beside ours.
        assert!(!holds(serde_json::json!({"f:metadata": {"f:annotations": {
            ".": {}, "f:deployment.kubernetes.io/revision": {},
        }}})));
        assert!(!holds(
            serde_json::json!({"f:metadata": {"f:labels": {"f:team": {}}}})
        ));
        // Another container, or a field of ours it does not hold.
        assert!(!holds(
            serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
                r#"k:{"name":"sidecar"}"#: {".": {}, "f:image": {}},
                r#"k:{"name":"worker"}"#: {".": {}, "f:env": {}},
            }}}}})
        ));
        assert!(!holds(serde_json::json!({"f:spec": {"f:paused": {}}})));
    }

    #[test]
    fn a_child_is_adopted_when_it_carries_our_hash_and_no_other_writer_holds_our_fields() {
        let body = rendered();
        let mut live = live(Some(4), "100");
        assert_eq!(
            adopt(&Live::from(live.clone()), 7, &body, false),
            None,
            "no hash: never applied by us"
        );
        live.metadata.annotations = Some([(APPLIED_HASH.to_string(), hex(7))].into());
        assert_eq!(
            adopt(&Live::from(live.clone()), 8, &body, false),
            None,
            "we render something else now"
        );
        assert_eq!(
            adopt(&Live::from(live.clone()), 7, &body, false),
            Some(record(7, "generation 4"))
        );
        live.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("kubectl-edit".into()),
            operation: Some("Update".into()),
            fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                serde_json::json!({"f:spec": {"f:replicas": {}}}),
            )),
            ..ManagedFieldsEntry::default()
        }]);
        assert_eq!(
            adopt(&Live::from(live.clone()), 7, &body, false),
            None,
            "another writer took spec.replicas"
        );
    }

    #[test]
    fn only_a_workload_rendered_without_replicas_is_autoscaled() {
        let spec = |spec: Value| serde_json::json!({ "spec": spec });
        assert!(autoscaled(
            ChildKind::Deployment,
            &spec(serde_json::json!({}))
        ));
        assert!(autoscaled(
            ChildKind::LeaderWorkerSet,
            &spec(serde_json::json!({}))
        ));
        assert!(!autoscaled(
            ChildKind::Deployment,
            &spec(serde_json::json!({"replicas": 2}))
        ));
        assert!(!autoscaled(
            ChildKind::HorizontalPodAutoscaler,
            &spec(serde_json::json!({}))
        ));
    }

    /// A Deployment as the watch stores it, with `replicas` and an image.
    fn watched(replicas: i64, image: &str, generation: i64) -> Live {
        let object = live(Some(generation), "100").data(serde_json::json!({
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "engine", "image": image}]}}},
            "status": {"observedGeneration": generation, "readyReplicas": replicas},
        }));
        Live::from(object)
    }

    #[test]
    fn an_autoscaled_workload_moves_with_its_spec_besides_replicas() {
        let scaled = watched(5, "rocm/infera:a", 3);
        let version = |object: &Live| version(object, true);
        assert_eq!(version(&watched(2, "rocm/infera:a", 2)), version(&scaled));
        assert_ne!(version(&scaled), version(&watched(5, "rocm/infera:b", 4)));
        // Not autoscaled: the generation, which the scale moved.
        assert_ne!(
            super::version(&watched(2, "rocm/infera:a", 2), false),
            super::version(&scaled, false)
        );
    }

    #[test]
    fn replicas_are_held_by_another_writer_of_spec_replicas_only() {
        let entry = |manager: &str, subresource: Option<&str>, fields: Value| ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Update".into()),
            subresource: subresource.map(Into::into),
            fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                fields,
            )),
            ..ManagedFieldsEntry::default()
        };
        let replicas = serde_json::json!({"f:spec": {"f:replicas": {}}});
        let mut object = live(Some(1), "100");
        assert!(!replicas_held(&Live::from(object.clone())), "no writer");
        object.metadata.managed_fields = Some(vec![
            entry(OPERATOR_MANAGER, None, replicas.clone()),
            entry("kube-controller-manager", Some("status"), replicas.clone()),
            entry(
                "kubectl-edit",
                None,
                serde_json::json!({"f:spec": {"f:paused": {}}}),
            ),
        ]);
        assert!(
            !replicas_held(&Live::from(object.clone())),
            "ours, a status writer's, another field"
        );
        object
            .metadata
            .managed_fields
            .get_or_insert_default()
            .push(entry("kube-controller-manager", Some("scale"), replicas));
        assert!(
            replicas_held(&Live::from(object.clone())),
            "the HPA through the scale subresource"
        );
    }

    #[test]
    fn a_paused_rollout_holds_a_live_workload_of_another_revision() {
        use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
        let rendered = |revision: &str| {
            let mut spec = DeploymentSpec::default();
            spec.template.metadata =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    labels: Some(
                        [(
                            infera_core::naming::LABEL_REVISION.to_string(),
                            revision.to_string(),
                        )]
                        .into(),
                    ),
                    ..Default::default()
                });
            let mut deployment = Deployment {
                spec: Some(spec),
                ..Default::default()
            };
            deployment.metadata.name = Some("demo-worker".into());
            Child::Deployment(deployment)
        };
        let mut snapshot = Snapshot::default();
        assert_eq!(held(&snapshot, &rendered("new")), None, "not created yet");
        let object = serde_json::from_value::<DynamicObject>(
            serde_json::to_value(rendered("old")).expect("json"),
        )
        .expect("an object");
        snapshot.children.insert(
            (ChildKind::Deployment, "demo-worker".into()),
            std::sync::Arc::new(Live::from(object)),
        );
        assert_eq!(held(&snapshot, &rendered("new")).as_deref(), Some("old"));
        assert_eq!(held(&snapshot, &rendered("old")), None, "nothing to hold");
    }

    #[test]
    fn the_applied_hash_is_16_hex_digits() {
        assert_eq!(hex(0xaf63_dc4c_8601_ec8c), "af63dc4c8601ec8c");
        assert_eq!(hex(1), "0000000000000001");
    }
}
