//! One reconcile: observe → validate → render → apply → status.

use std::sync::Arc;

use infera_core::{
    InferaDeployment, InferaDeploymentStatus, State,
    condition::failure_shown,
    render::{Apis, PoolApi, Workload, render_for},
    validate,
    validate::{ModelSource, ValidDeployment},
};
use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kube::{
    Resource, ResourceExt,
    runtime::{
        controller::Action,
        events::{Event, EventType},
        reflector::ObjectRef,
    },
};

use crate::{
    Error, REJECTED_RETRY, Result,
    apply::Graph,
    chain,
    context::Context,
    models::{Download, ModelPhase},
    observe::Snapshot,
    status::{self, Outcome, Reconciled},
};

/// Reconciles one InferaDeployment; the controller calls it whenever the deployment, one of its
/// children or pods, or a CRD it may need changes, and again after the returned delay.
///
/// The steps: observe (the watches' snapshot) → mark the workers the router registered
/// ([`crate::registration`], whatever the spec) → validate → [`converge`] (plan the downloads and
/// the rollout step, render, apply, keep the revision history) → [`report`] (the status) → when
/// to look again.
pub async fn reconcile(idep: Arc<InferaDeployment>, ctx: Arc<Context>) -> Result<Action> {
    let deployment = ObjectRef::from(idep.as_ref());
    if idep.metadata.deletion_timestamp.is_some() {
        // Garbage collection removes the children; re-applying them would only fight it.
        ctx.forget(&deployment);
        return Ok(Action::await_change());
    }
    if !ctx.observed.synced() || restricts_egress(&idep) && !ctx.observed.api_server_tried() {
        // Judging from half-filled caches would report missing children and dependencies (or,
        // with restricted egress, the API server's endpoints as unknown).
        return Ok(Action::requeue(std::time::Duration::from_millis(500)));
    }
    let _timer = ctx.metrics.reconcile_timer();
    // As of our last status write, should the watch not have shown it yet.
    let idep = ctx.unseen.latest(idep);
    let snapshot = ctx.observed.snapshot(&idep);
    // Whatever the spec says now, the workers the router registered count as ready from now on.
    if let Err(error) = crate::registration::mark(&ctx.client, &snapshot.pods).await {
        return Err(show_failure(&ctx, &idep, error).await);
    }
    let (outcome, history) = match validate(&idep) {
        Err(errors) => (Outcome::Invalid(errors), Ok(())),
        Ok(valid) => match converge(&ctx, &idep, &snapshot, valid).await {
            Ok(converged) => converged,
            Err(error) => return Err(show_failure(&ctx, &idep, error).await),
        },
    };
    let now = Time(Timestamp::now());
    let new = report(
        &ctx,
        &idep,
        &snapshot,
        &outcome,
        history.as_ref().err(),
        &now,
    )
    .await?;
    history?;
    // Only now: a status the API server keeps refusing (an InferaDeployment CRD older than the
    // operator refuses fields it lacks) backs off like any other failure.
    ctx.succeeded(&deployment);
    Ok(Action::requeue(next_look(&ctx, &outcome, &new, &now)))
}

/// Whether the deployment's egress policy names the API server's endpoints.
pub fn restricts_egress(idep: &InferaDeployment) -> bool {
    idep.spec
        .network_policy
        .as_ref()
        .is_some_and(|policy| policy.restricts_egress())
}

/// Brings the graph to a valid spec: the `hf://` downloads planned (the GPU pools of a model wait
/// for its download Job, rendered at zero), the children rendered, the rollout's next step
/// planned on them, the whole applied, and the revision history kept. A failure to apply is
/// returned; the history's, which is bookkeeping and holds back nothing else of the graph, comes
/// beside the outcome and shows in the status.
async fn converge(
    ctx: &Context,
    idep: &InferaDeployment,
    snapshot: &Snapshot,
    mut valid: ValidDeployment,
) -> Result<(Outcome, Result<()>)> {
    let (downloads, model) = plan_downloads(&mut valid, snapshot);
    let installed = |kind| ctx.observed.installed(kind);
    // The API server's endpoints are read only for a deployment whose egress names them.
    let restricted = valid
        .network_policy
        .as_ref()
        .is_some_and(|p| p.egress.is_some());
    let apis = Apis {
        inference_pool: PoolApi::served(installed),
        api_server: restricted.then(|| ctx.observed.api_server()).flatten(),
    };
    if restricted && apis.api_server.is_none() {
        let (namespace, name) = infera_core::render::ApiServer::SLICE;
        return Err(Error::ApiServerUnknown {
            name: idep.name_any(),
            slice: format!("{namespace}/{name}"),
        });
    }
    let mut children = render_for(&valid, apis);
    let workloads = Workload::of(&children);
    let stepped = crate::lockstep::step(&valid, snapshot, &mut children, &workloads);
    let graph = Graph {
        children,
        // A new password each time; used only when NATS's StatefulSet is written.
        credentials: crate::credentials::render(&valid)?,
        paused: valid.rollout.paused,
    };
    let (client, applies) = (&ctx.client, &ctx.applies);
    let mut applied =
        crate::apply::apply(client, applies, installed, idep, snapshot, graph).await?;
    applied.held.extend(stepped.paused);
    let mut history = Ok(());
    if let Some(update) = workloads.iter().find_map(|w| w.revision.as_deref()) {
        let current = idep
            .status
            .as_ref()
            .and_then(|s| s.current_revision.as_deref());
        let live = crate::history::Live { update, current };
        let limit = valid.rollout.revision_history_limit;
        history = crate::history::sync(ctx, idep, snapshot, live, limit).await;
    }
    let outcome = Outcome::Applied {
        applied,
        endpoint: infera_core::render::endpoint(&valid),
        workloads,
        model,
        downloads,
        blocked: stepped.blocked,
        deadline_seconds: valid.rollout.progress_deadline_seconds,
    };
    Ok((outcome, history))
}

/// The spec's `hf://` downloads and where their Jobs are; a model already downloaded is marked so
/// in `valid`, which then renders its GPU pools at their size.
fn plan_downloads(
    valid: &mut ValidDeployment,
    snapshot: &Snapshot,
) -> (Vec<Download>, Option<ModelPhase>) {
    let mut downloads = Vec::new();
    let phases: Vec<(String, ModelPhase)> = valid
        .downloads()
        .into_iter()
        .filter_map(|model| {
            let ModelSource::HuggingFace { repo, .. } = &model.source else {
                return None;
            };
            let job = &model.download_name;
            let source = model.source.to_string();
            let phase = ModelPhase::of(snapshot, job, repo, &source);
            downloads.push(Download::of(snapshot, job, source));
            Some((job.clone(), phase))
        })
        .collect();
    for (job, phase) in &phases {
        if *phase == ModelPhase::Downloaded {
            valid.set_downloaded(job);
        }
    }
    let model = ModelPhase::combined(phases.into_iter().map(|(_, phase)| phase));
    (downloads, model)
}

/// Computes the status this reconcile leaves, writes it when it changed and publishes the
/// transition as an Event; returns it.
async fn report(
    ctx: &Context,
    idep: &InferaDeployment,
    snapshot: &Snapshot,
    outcome: &Outcome,
    history: Option<&Error>,
    now: &Time,
) -> Result<InferaDeploymentStatus> {
    let mut new = status::compute(
        idep.metadata.generation,
        snapshot,
        outcome,
        &infera_core::validate::mutable_images(idep),
        idep.status.as_ref(),
        now.clone(),
    );
    new.gaie = status::gaie(idep, snapshot);
    let reconciled = match history {
        None => Reconciled::Succeeded,
        Some(error) => reconciled(ctx, idep, error),
    };
    let previous = idep.status.as_ref();
    status::record_reconcile(
        &mut new,
        previous,
        idep.metadata.generation,
        &reconciled,
        now.clone(),
    );
    if previous != Some(&new) {
        write_status(ctx, idep, &new).await?;
        publish_transition(ctx, idep, previous, &new).await;
    }
    Ok(new)
}

/// When to reconcile again though nothing changed: soon when the API server refused a child
/// (nothing watches what made it refuse: a quota, a webhook), when a rollout's deadline passes
/// (nor the clock), else at the resync period.
fn next_look(
    ctx: &Context,
    outcome: &Outcome,
    new: &InferaDeploymentStatus,
    now: &Time,
) -> std::time::Duration {
    let Outcome::Applied {
        applied,
        deadline_seconds,
        ..
    } = outcome
    else {
        return ctx.resync;
    };
    if !applied.rejected.is_empty() {
        return REJECTED_RETRY;
    }
    status::until_deadline(new, *deadline_seconds, now)
        .map_or(ctx.resync, |deadline| deadline.min(ctx.resync))
}

/// The `Reconciled` condition a failure of this reconcile gives: shown at once when the API server
/// refused the request, else after a few failures in a row (the failures so far are counted by
/// the controller's error policy, which sees this one after it).
fn reconciled(ctx: &Context, idep: &InferaDeployment, error: &Error) -> Reconciled {
    let in_a_row = ctx.failures(&ObjectRef::from(idep)) + 1;
    if failure_shown(error.refused(), in_a_row) {
        Reconciled::Failed(format!("{}: {}", error.metric_label(), chain(error)))
    } else {
        Reconciled::Retrying
    }
}

/// A reconcile that failed before its status could be computed: the last status says so, for
/// this generation, when the failure shows ([`reconciled`]); the error goes on to the error
/// policy either way.
async fn show_failure(ctx: &Context, idep: &InferaDeployment, error: Error) -> Error {
    let reconciled = reconciled(ctx, idep, &error);
    let previous = idep.status.as_ref();
    let mut new = previous.cloned().unwrap_or_default();
    let now = Time(Timestamp::now());
    status::record_reconcile(
        &mut new,
        previous,
        idep.metadata.generation,
        &reconciled,
        now,
    );
    if previous != Some(&new)
        && let Err(write) = write_status(ctx, idep, &new).await
    {
        tracing::warn!(
            namespace = idep.namespace().unwrap_or_default(),
            deployment = idep.name_any(),
            error = %chain(&write),
            "cannot report the failed reconcile in the status"
        );
    }
    error
}

/// Server-side apply, so fields that are gone (a removed service, the endpoint of an invalid spec)
/// are removed too. The status is the operator's alone, but for `planner`, which the planner writes
/// as its own manager: it takes the rest back by force. Remembered until the watch shows it.
async fn write_status(
    ctx: &Context,
    idep: &InferaDeployment,
    status: &InferaDeploymentStatus,
) -> Result<()> {
    let sent = InferaDeploymentStatus {
        planner: None,
        ..status.clone()
    };
    let made = ctx
        .apply_status(idep, infera_core::naming::OPERATOR_MANAGER, true, sent)
        .await?;
    ctx.unseen.wrote(idep, status, made);
    Ok(())
}

/// An Event on the InferaDeployment when its state or the Ready reason changes.
async fn publish_transition(
    ctx: &Context,
    idep: &InferaDeployment,
    old: Option<&InferaDeploymentStatus>,
    new: &InferaDeploymentStatus,
) {
    let reason_of = |s: Option<&InferaDeploymentStatus>| {
        s.and_then(|s| s.conditions.first())
            .map(|c| (c.reason.clone(), c.message.clone()))
    };
    let (old_state, new_state) = (old.and_then(|s| s.state), new.state);
    let (old_reason, new_reason) = (reason_of(old), reason_of(Some(new)));
    if old_state == new_state
        && old_reason.as_ref().map(|r| &r.0) == new_reason.as_ref().map(|r| &r.0)
    {
        return;
    }
    let (reason, message) = new_reason.unwrap_or_default();
    let warning = matches!(
        new_state,
        Some(State::Failed | State::Degraded | State::Pending)
    );
    let event = Event {
        type_: if warning {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason,
        note: Some(
            format!(
                "{}: {message}",
                new_state.map(|s| s.to_string()).unwrap_or_default()
            )
            .chars()
            .take(1000)
            .collect(),
        ),
        action: "Reconcile".into(),
        secondary: None,
    };
    tracing::info!(
        namespace = idep.namespace().unwrap_or_default(),
        deployment = idep.name_any(),
        reason = event.reason,
        "{}",
        event.note.as_deref().unwrap_or_default()
    );
    if let Err(error) = ctx.recorder.publish(&event, &idep.object_ref(&())).await {
        tracing::warn!(
            namespace = idep.namespace().unwrap_or_default(),
            deployment = idep.name_any(),
            %error,
            "cannot publish event"
        );
    }
}

#[cfg(test)]
mod tests {
    use infera_core::{Child, ChildKind};
    use k8s_openapi::api::apps::v1::ControllerRevision;
    use kube::api::DynamicObject;
    use serde_json::{Value, json};

    use super::*;
    use crate::{
        fixtures::{self, GENERATION, RESOURCE_VERSION},
        ownership::APPLIED_HASH,
    };

    /// A small valid deployment: a server and one single-GPU worker pool.
    fn calm() -> Value {
        json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "calm", "namespace": "demo", "uid": "calm-uid", "generation": 1, "resourceVersion": "7"},
            "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "nats": {"deploy": false}, "services": {
                "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
                "worker": {"componentType": "worker", "replicas": 1, "resources": {"gpu": 1, "gpuType": "amd.com/gpu"}},
            }},
        })
    }

    /// The children of `idep` as they live in the cluster after an earlier apply.
    fn live_children(idep: &InferaDeployment) -> Vec<(ChildKind, DynamicObject)> {
        let valid = validate(idep).expect("a valid deployment");
        infera_core::render(&valid)
            .iter()
            .map(|child| (child.kind(), live(child)))
            .collect()
    }

    /// A child of `calm` that it no longer renders.
    fn stale() -> DynamicObject {
        let idep: InferaDeployment = serde_json::from_value(calm()).expect("an InferaDeployment");
        let (_, mut object) = live_children(&idep)
            .into_iter()
            .find(|(kind, _)| *kind == ChildKind::Deployment)
            .expect("a Deployment");
        object.metadata.name = Some("calm-old".into());
        object.metadata.uid = Some("old-uid".into());
        object
    }

    fn live(child: &Child) -> DynamicObject {
        let mut object: DynamicObject =
            serde_json::from_value(serde_json::to_value(child).expect("JSON")).expect("an object");
        object.metadata.resource_version = Some(RESOURCE_VERSION.into());
        object.metadata.generation = Some(GENERATION);
        object
    }

    /// What the first reconcile of `calm` sends: a strict dry run of every child but the
    /// ServiceAccount, then the ServiceAccount applied alone (its write is its check), then every
    /// other child applied, not forced, in two batches (RoleBindings last), the child no longer
    /// rendered deleted, the first ControllerRevision of the history created, the status, an
    /// Event.
    const FIRST_RECONCILE: [&str; 17] = [
        "PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/demo/roles/calm-discovery?&dryRun=All&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings/calm-discovery?&dryRun=All&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/networking.k8s.io/v1/namespaces/demo/networkpolicies/calm-workers?&dryRun=All&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/apps/v1/namespaces/demo/deployments/calm-server?&dryRun=All&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /api/v1/namespaces/demo/services/calm-server?&dryRun=All&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/apps/v1/namespaces/demo/deployments/calm-worker?&dryRun=All&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /api/v1/namespaces/demo/serviceaccounts/calm-discovery?&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/demo/roles/calm-discovery?&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/networking.k8s.io/v1/namespaces/demo/networkpolicies/calm-workers?&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/apps/v1/namespaces/demo/deployments/calm-server?&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /api/v1/namespaces/demo/services/calm-server?&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/apps/v1/namespaces/demo/deployments/calm-worker?&fieldManager=infera-operator&fieldValidation=Strict",
        "PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings/calm-discovery?&fieldManager=infera-operator&fieldValidation=Strict",
        "DELETE /apis/apps/v1/namespaces/demo/deployments/calm-old?",
        "POST /apis/apps/v1/namespaces/demo/controllerrevisions?&fieldManager=infera-operator",
        "PATCH /apis/infera.amd.com/v1alpha1/namespaces/demo/inferadeployments/calm/status?&force=true&fieldManager=infera-operator",
        "POST /apis/events.k8s.io/v1/namespaces/demo/events?",
    ];

    /// `calm` reconciled once by a fresh operator over the children an earlier one applied, and
    /// one child it no longer renders (deleted from the caches, as the watch would); returns what
    /// was sent and `calm` with the status written.
    async fn first_reconcile() -> (
        Arc<Context>,
        fixtures::Caches,
        fixtures::ApiServer,
        InferaDeployment,
        Vec<fixtures::Sent>,
    ) {
        let mut idep: InferaDeployment =
            serde_json::from_value(calm()).expect("an InferaDeployment");
        let mut children = live_children(&idep);
        children.push((ChildKind::Deployment, stale()));
        let (ctx, mut caches, mut server) = fixtures::context(calm(), children).await;
        let (result, sent) = server
            .serve(reconcile(Arc::new(idep.clone()), ctx.clone()))
            .await;
        assert!(result.is_ok(), "{result:?}");
        caches.delete(ChildKind::Deployment, stale());
        caches.apply_revision(created_revision(&sent));
        let status = sent.iter().find(|s| s.line.contains("/status?"));
        let status = status.map(|s| s.body["status"].clone());
        idep.status = serde_json::from_value(status.unwrap_or_default()).expect("a status");
        (ctx, caches, server, idep, sent)
    }

    /// With a managed NATS, its credentials are created once the children passed their dry runs
    /// and before anything is written, with a fresh 256-bit password; once the StatefulSet stands
    /// as applied, they are not sent again (a restarted operator tells so from the StatefulSet).
    #[tokio::test]
    async fn a_managed_nats_gets_its_credentials_before_its_stateful_set_and_once() {
        let mut spec = calm();
        spec["spec"]["nats"] = json!({});
        let idep: InferaDeployment =
            serde_json::from_value(spec.clone()).expect("an InferaDeployment");
        let (ctx, _caches, mut server) = fixtures::context(spec.clone(), Vec::new()).await;
        let (result, sent) = server
            .serve(reconcile(Arc::new(idep.clone()), ctx.clone()))
            .await;
        assert!(result.is_ok(), "{result:?}");
        let first = lines(&sent);
        let create = "POST /api/v1/namespaces/demo/secrets?&fieldManager=infera-operator";
        let at = first
            .iter()
            .position(|l| *l == create)
            .expect("the credentials");
        // Every child was dry-run, none written alone: the credentials are the one write no dry
        // run checks.
        assert!(
            first[..at].iter().all(|l| l.contains("dryRun=All")),
            "{first:#?}"
        );
        assert!(
            first[at + 1..]
                .iter()
                .any(|l| l.contains("/statefulsets/calm-nats?&fieldManager")),
            "{first:#?}"
        );
        let secret = &sent[at].body;
        assert_eq!(secret["metadata"]["name"], "calm-nats-auth");
        assert_eq!(secret["metadata"]["ownerReferences"][0]["uid"], "calm-uid");
        let password = secret["stringData"]["password"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(password.len(), 64);
        assert_eq!(
            secret["stringData"]["url"],
            format!("nats://infera:{password}@calm-nats.demo.svc.cluster.local:4222")
        );

        // A restarted operator over the children the first applied sends nothing, credentials
        // included.
        let children = applied_children(&sent);
        let (ctx, _caches, mut server) = fixtures::context(spec, children).await;
        let mut idep = idep;
        let status = sent.iter().find(|s| s.line.contains("/status?"));
        let status = status.map(|s| s.body["status"].clone());
        idep.status = serde_json::from_value(status.unwrap_or_default()).expect("a status");
        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert!(
            !sent.iter().any(|s| s.line.contains("/secrets")),
            "{:#?}",
            lines(&sent)
        );
    }

    /// The ControllerRevision the first reconcile created, as the watch delivers it.
    fn created_revision(sent: &[fixtures::Sent]) -> ControllerRevision {
        let created = sent
            .iter()
            .find(|s| s.line.contains("/controllerrevisions?"));
        let mut revision: ControllerRevision =
            serde_json::from_value(created.map(|s| s.body.clone()).unwrap_or_default())
                .expect("a ControllerRevision");
        revision.metadata.uid = Some("revision-uid".into());
        revision
    }

    fn lines(sent: &[fixtures::Sent]) -> Vec<&str> {
        sent.iter().map(|s| s.line.as_str()).collect()
    }

    #[tokio::test]
    async fn a_refused_status_write_keeps_the_failures_counting() {
        let (ctx, _caches, mut server, mut idep, _) = first_reconcile().await;
        server.refuse_status = true;
        // A newer version without the status written (the status we wrote is not read instead).
        idep.status = None;
        idep.metadata.resource_version = Some("9".into());
        let deployment = ObjectRef::from(&idep);
        assert_eq!(ctx.failed(deployment.clone()), 1);
        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx.clone())).await;
        assert!(result.is_err(), "{result:?}");
        assert_eq!(lines(&sent), [FIRST_RECONCILE[15]]);
        // The second failure in a row, so the next retry waits longer.
        assert_eq!(ctx.failed(deployment), 2);
    }

    #[tokio::test]
    async fn an_unchanged_deployment_is_applied_once_then_costs_no_request() {
        let (ctx, _caches, mut server, idep, sent) = first_reconcile().await;
        assert_eq!(lines(&sent), FIRST_RECONCILE);
        let valid = validate(&idep).expect("a valid deployment");
        let body = |child: &Child| serde_json::to_value(child).expect("JSON").to_string();
        let mut rendered: Vec<String> = infera_core::render(&valid).iter().map(body).collect();
        // Each child is applied as rendered, with the hash of what was rendered recorded on it.
        let mut applied: Vec<String> = sent[6..13]
            .iter()
            .map(|s| {
                let mut body = s.body.clone();
                let annotations = body["metadata"]["annotations"]
                    .as_object_mut()
                    .expect("annotations");
                let hash = annotations.remove(APPLIED_HASH).expect("the applied hash");
                assert_eq!(hash.as_str().map(str::len), Some(16), "{hash}");
                if annotations.is_empty() {
                    body["metadata"]
                        .as_object_mut()
                        .expect("metadata")
                        .remove("annotations");
                }
                body.to_string()
            })
            .collect();
        rendered.sort();
        applied.sort();
        assert_eq!(applied, rendered);
        assert_eq!(
            sent[13].body,
            json!({"preconditions": {"uid": "old-uid"}, "propagationPolicy": "Background"})
        );
        // The history's first revision: ours, owned by the deployment, holding its spec.
        let revision = &sent[14].body;
        let hash = revision["metadata"]["labels"]["infera.amd.com/revision"]
            .as_str()
            .expect("the revision hash");
        assert_eq!(revision["metadata"]["name"], format!("calm-{hash}"));
        assert_eq!(
            revision["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "infera-operator"
        );
        assert_eq!(
            revision["metadata"]["labels"]["infera.amd.com/deployment"],
            "calm"
        );
        assert_eq!(
            revision["metadata"]["ownerReferences"][0]["uid"],
            "calm-uid"
        );
        assert_eq!(
            revision["metadata"]["ownerReferences"][0]["controller"],
            true
        );
        assert_eq!(revision["revision"], 1);
        assert_eq!(revision["data"]["spec"], calm()["spec"]);
        let status = &sent[15].body["status"];
        assert_eq!(status["state"], "Deploying");
        assert_eq!(status["conditions"][0]["reason"], "PodsNotReady");
        assert_eq!(status["updateRevision"].as_str(), Some(hash));
        assert_eq!(
            sent[16].body["note"],
            "Deploying: server: 0/1 ready, worker: 0/1 ready"
        );

        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), Vec::<&str>::new());
    }

    /// A reconcile that reads the deployment as it was before the last one wrote its status (the
    /// watch has not delivered that write yet) neither writes the status again nor publishes its
    /// transition twice; once the watch shows a newer version, that version is read.
    #[tokio::test]
    async fn a_status_write_the_watch_has_not_shown_is_not_sent_again() {
        let (ctx, _caches, mut server, written, _) = first_reconcile().await;
        let before: InferaDeployment = serde_json::from_value(calm()).expect("an InferaDeployment");
        assert!(before.status.is_none());
        let (result, sent) = server
            .serve(reconcile(Arc::new(before.clone()), ctx.clone()))
            .await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), Vec::<&str>::new());

        // A newer version without our status (someone removed it): read as it is, written again.
        let mut newer = before;
        newer.metadata.resource_version = Some("9".into());
        let (result, sent) = server.serve(reconcile(Arc::new(newer), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent)[0], FIRST_RECONCILE[15]);
        assert!(lines(&sent)[1].contains("/events"), "{:#?}", lines(&sent));
        assert_eq!(
            sent[0].body["status"]["state"],
            serde_json::to_value(written.status.and_then(|s| s.state)).expect("JSON")
        );
    }

    /// The child written alone (the ServiceAccount) refused: nothing else is written, as after a
    /// refused dry run. Another child's dry run refused: the ServiceAccount is dry-run too, so the
    /// status names every refusal, and nothing is written.
    #[tokio::test]
    async fn a_refusal_of_the_child_written_alone_or_of_a_dry_run_writes_nothing() {
        let idep: InferaDeployment = serde_json::from_value(calm()).expect("an InferaDeployment");
        let (account, worker) = (
            "/serviceaccounts/calm-discovery",
            "/deployments/calm-worker",
        );
        for refused in [vec![account], vec![account, worker]] {
            let (ctx, _caches, mut server) = fixtures::context(calm(), Vec::new()).await;
            server.refuse = refused.clone();
            let (result, sent) = server.serve(reconcile(Arc::new(idep.clone()), ctx)).await;
            assert!(result.is_ok(), "{result:?}");
            let lines = lines(&sent);
            let written: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| l.starts_with("PATCH") && !l.contains("dryRun=All"))
                .filter(|l| !l.contains("/status?"))
                .collect();
            let status = sent.iter().find(|s| s.line.contains("/status?"));
            let ready = status.map(|s| s.body["status"]["conditions"][0].clone());
            let ready = ready.unwrap_or_default();
            assert_eq!(ready["reason"], "ApplyRejected", "{ready}");
            let message = ready["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("ServiceAccount calm-discovery: the webhook says no"),
                "{message}"
            );
            if refused.len() == 1 {
                // Its write was the one attempted.
                assert_eq!(written.len(), 1, "{lines:#?}");
                assert!(written[0].contains(account), "{lines:#?}");
            } else {
                assert_eq!(written, Vec::<&str>::new(), "{lines:#?}");
                assert!(
                    message.contains("Deployment calm-worker: the webhook says no"),
                    "{message}"
                );
            }
        }
    }

    #[tokio::test]
    async fn a_child_someone_changed_is_applied_again_alone() {
        let (ctx, mut caches, mut server, idep, _) = first_reconcile().await;
        let (kind, mut worker) = live_children(&idep)
            .into_iter()
            .find(|(_, object)| object.metadata.name.as_deref() == Some("calm-worker"))
            .expect("a worker Deployment");
        worker.metadata.generation = Some(GENERATION + 1);
        caches.apply(kind, worker);

        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), [FIRST_RECONCILE[11]]);
    }

    #[tokio::test]
    async fn a_deployment_being_deleted_is_left_to_garbage_collection_and_forgotten() {
        let (ctx, _caches, mut server, idep, _) = first_reconcile().await;
        let mut deleting = idep.clone();
        deleting.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
        let (result, sent) = server
            .serve(reconcile(Arc::new(deleting), ctx.clone()))
            .await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), Vec::<&str>::new());

        // Its applies are forgotten: were it reconciled again, every child would be sent again.
        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), FIRST_RECONCILE[..13]);
    }

    /// The children as the first reconcile left them: what it applied, with the API server's
    /// resourceVersion and generation.
    fn applied_children(sent: &[fixtures::Sent]) -> Vec<(ChildKind, DynamicObject)> {
        sent[..7]
            .iter()
            .map(|s| {
                let mut object: DynamicObject =
                    serde_json::from_value(s.body.clone()).expect("an object");
                object.metadata.resource_version = Some(RESOURCE_VERSION.into());
                object.metadata.generation = Some(GENERATION);
                let kind = ChildKind::ALL
                    .into_iter()
                    .find(|kind| {
                        s.line
                            .contains(&format!("/{}/", kind.api_resource().plural))
                    })
                    .expect("a child kind");
                (kind, object)
            })
            .collect()
    }

    #[tokio::test]
    async fn a_restarted_operator_sends_nothing_for_children_it_applied_before() {
        let (_, _, _, idep, sent) = first_reconcile().await;
        let children = applied_children(&sent);
        // A new process: its memory of applies is empty, its caches hold what the first applied.
        let (ctx, mut caches, mut server) = fixtures::context(calm(), children).await;
        caches.apply_revision(created_revision(&sent));
        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), Vec::<&str>::new());
    }

    #[tokio::test]
    async fn a_restarted_operator_applies_again_a_child_whose_field_another_writer_took() {
        let (_, _, _, idep, sent) = first_reconcile().await;
        let mut children = applied_children(&sent);
        let worker = children
            .iter_mut()
            .find(|(_, object)| object.metadata.name.as_deref() == Some("calm-worker"))
            .map(|(_, object)| object)
            .expect("a worker Deployment");
        // `kubectl scale` took spec.replicas; the Deployment controller's revision annotation and
        // status writers are no reason to apply.
        worker.metadata.managed_fields = Some(
            serde_json::from_value(json!([
                {"manager": "kube-controller-manager", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:replicas": {}}}},
                {"manager": "kubectl", "operation": "Update", "subresource": "scale",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            ]))
            .expect("managedFields"),
        );
        let (ctx, mut caches, mut server) = fixtures::context(calm(), children).await;
        caches.apply_revision(created_revision(&sent));
        let (result, sent) = server.serve(reconcile(Arc::new(idep), ctx)).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(lines(&sent), [FIRST_RECONCILE[11]]);
    }
}
