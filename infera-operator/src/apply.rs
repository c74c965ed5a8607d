//! Server-side apply of the rendered children, and deletion of the ones no longer rendered.
//!
//! Writes only when needed: a child is re-applied when what we render changed or the live object
//! changed since our last apply — its generation moved (objects with a spec the API server
//! versions), else its resourceVersion — so controllers updating a child's status cost nothing.
//! A conflict with another field manager is reported, never forced, and not retried until
//! something changes.
//!
//! Our last apply survives a restart on the child itself: every child carries the hash of the
//! object we applied in the [`APPLIED_HASH`](crate::ownership::APPLIED_HASH) annotation. A
//! restarted operator, or a standby that takes over the Lease, adopts a child whose hash matches
//! what it renders now as already applied (see [`records::adopt`]) and sends nothing for it.
//!
//! A workload whose replicas an autoscaler owns is rendered without `replicas`. Its replica count
//! is then no reason to apply it again (see [`records::version`]), and before our apply lets go
//! of `spec.replicas` a second field manager takes it over at its current value (see
//! `Target::hand_over` in [`target`]), so it is neither reset to the default nor fought over.
//!
//! The rooms: [`records`] (what we remember of our applies), [`fields`] (who holds which fields
//! of a live child), [`target`] (each child prepared, dry-run, written or deleted); this file
//! orchestrates one deployment's change, all of it or none.

mod fields;
mod records;
mod target;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use infera_core::{
    Child, ChildKind, InferaDeployment,
    naming::{Component, MODEL_SOURCE_ANNOTATION},
    quota::{self, Usage},
};
use k8s_openapi::api::core::v1::Secret;
use kube::{Client, ResourceExt, runtime::reflector::ObjectRef};

pub use records::Applies;
use records::Problem;
use target::{Mode, Outgoing, Prepared, Target, floors};

use crate::{
    Error, Result,
    live::{Live, template_revision},
    observe::Snapshot,
    ownership::hash,
};

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

/// Applies `children` and deletes children of this deployment that are no longer rendered — all
/// of a change or none of it.
///
/// Only children whose last apply no longer stands are sent (see [`records::must_apply`]). Before any of
/// them is written, the whole graph is checked against the namespace's ResourceQuotas (see
/// `infera_core::quota`: the API server charges pods only when controllers create them, so no
/// per-object check sees a graph that cannot run whole), and each is sent as a strict server-side
/// dry run but one, written first and alone (see [`written_alone`]). When one is refused nothing is
/// written or deleted: the running children stay as they are, and the refusal is reported.
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
        let nats = Component::Nats.object_name(&idep.name_any());
        let sending = Sending {
            children: &children,
            credentials: credentials.as_ref(),
            nats: &nats,
        };
        sending.write(&target, &pending, &mut applied).await?;
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

/// A deployment's children to write, and what writing them needs.
struct Sending<'a> {
    children: &'a [Child],
    /// The managed NATS's credentials, created before its StatefulSet (named `nats`) is written.
    credentials: Option<&'a Secret>,
    nats: &'a str,
}

impl Sending<'_> {
    /// Writes `pending` once the whole graph fits the namespace's quotas and each child passed a
    /// strict dry run — but the one [`written_alone`], whose write checks it — otherwise writes
    /// nothing and reports why in `applied`.
    async fn write(
        &self,
        target: &Target<'_>,
        pending: &[Outgoing],
        applied: &mut Applied,
    ) -> Result<()> {
        let shortfalls = quota::shortfalls(
            target.snapshot.quotas.iter().map(AsRef::as_ref),
            &current_usage(target.snapshot),
            &Usage::of_children(self.children),
        );
        if !shortfalls.is_empty() {
            applied
                .rejected
                .extend(shortfalls.iter().map(ToString::to_string));
            return Ok(());
        }
        let credentials = self.credentials.filter(|_| {
            pending
                .iter()
                .any(|send| send.kind == ChildKind::StatefulSet && send.name == self.nats)
        });
        // The credentials, created right before NATS's StatefulSet is written, are the one write
        // no dry run checks: no child is written alone beside them.
        let alone = match credentials {
            Some(_) => None,
            None => written_alone(pending),
        };
        let rest: Vec<&Outgoing> = pending
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != alone)
            .map(|(_, send)| send)
            .collect();
        let alone = alone.map(|i| &pending[i]);
        let checks = rest
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
            // The child that would have been written alone is judged too: the report names
            // every refusal of the change at once.
            let also = match alone {
                Some(first) => target.send(first, Mode::DryRun).await?,
                None => None,
            };
            refusals
                .into_iter()
                .chain(also)
                .for_each(|problem| applied.report(Some(problem)));
            return Ok(());
        }
        if let Some(first) = alone {
            let refused = target.send(first, Mode::Write).await?;
            if refused.is_some() {
                applied.report(refused);
                return Ok(());
            }
        }
        if let Some(secret) = credentials {
            crate::credentials::create(target.client, secret).await?;
        }
        // Binding a Role that does not exist yet is refused: bindings go second. Otherwise
        // children of one deployment do not depend on each other: they are written at once.
        let (bindings, others): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|send| send.kind == ChildKind::RoleBinding);
        for batch in [others, bindings] {
            let writes = batch.into_iter().map(|send| target.send(send, Mode::Write));
            for result in futures::future::join_all(writes).await {
                applied.report(result?);
            }
        }
        Ok(())
    }
}

/// Which of `pending` is written first, alone, with no dry run of its own: written only once the
/// others passed theirs, and were it refused nothing else would be written — as after a refused
/// dry run — so its write is its check. Not a RoleBinding (its Role may be among the others);
/// rather one that runs nothing — a ServiceAccount, a Role, a Service, a monitoring object — when
/// the change has one, should a write after it fail all the same.
fn written_alone(pending: &[Outgoing]) -> Option<usize> {
    let runs_nothing = |kind| {
        matches!(
            kind,
            ChildKind::ServiceAccount
                | ChildKind::Role
                | ChildKind::Service
                | ChildKind::PodMonitor
                | ChildKind::PrometheusRule
        )
    };
    pending
        .iter()
        .position(|send| runs_nothing(send.kind))
        .or_else(|| {
            pending
                .iter()
                .position(|send| send.kind != ChildKind::RoleBinding)
        })
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
/// that differs from the live one (its [`APPLIED_HASH`](crate::ownership::APPLIED_HASH)) replaces it, unless the live one already
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
