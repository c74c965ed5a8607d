//! One reconcile: observe → validate → render → apply → status.

use std::sync::Arc;

use infera_core::{InferaDeployment, InferaDeploymentStatus, State, render, validate};
use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{
        controller::Action,
        events::{Event, EventType},
        reflector::ObjectRef,
    },
};
use serde_json::json;

use crate::{
    Error, REJECTED_RETRY, RESYNC, Result,
    context::Context,
    status::{self, Outcome, Workload},
};

/// Reconciles one InferaDeployment; the controller calls it whenever the deployment, one of its
/// children or pods, or a CRD it may need changes, and again after the returned delay.
pub async fn reconcile(idep: Arc<InferaDeployment>, ctx: Arc<Context>) -> Result<Action> {
    let deployment = ObjectRef::from(idep.as_ref());
    if idep.metadata.deletion_timestamp.is_some() {
        // Garbage collection removes the children; re-applying them would only fight it.
        ctx.forget(&deployment);
        return Ok(Action::await_change());
    }
    if !ctx.observed.synced() {
        // Judging from half-filled caches would report missing children and dependencies.
        return Ok(Action::requeue(std::time::Duration::from_millis(500)));
    }
    let _timer = ctx.metrics.reconcile_timer();
    let snapshot = ctx.observed.snapshot(&idep);
    let outcome = match validate(&idep) {
        Err(errors) => Outcome::Invalid(errors),
        Ok(valid) => {
            let children = render(&valid);
            let workloads = Workload::of(&children);
            let installed = |kind| ctx.observed.installed(kind);
            let applied = crate::apply::apply(
                &ctx.client,
                &ctx.applies,
                installed,
                &idep,
                &snapshot,
                children,
            )
            .await?;
            Outcome::Applied {
                applied,
                endpoint: infera_core::render::endpoint(&valid),
                workloads,
            }
        }
    };
    ctx.succeeded(&deployment);
    let now = Time(Timestamp::now());
    let new = status::compute(
        idep.metadata.generation,
        &snapshot,
        &outcome,
        idep.status.as_ref(),
        now,
    );
    if idep.status.as_ref() != Some(&new) {
        write_status(&ctx, &idep, &new).await?;
        publish_transition(&ctx, &idep, idep.status.as_ref(), &new).await;
    }
    // Nothing watches what made the API server refuse a child (a quota, a webhook): look again soon.
    let refused =
        matches!(&outcome, Outcome::Applied { applied, .. } if !applied.rejected.is_empty());
    Ok(Action::requeue(if refused {
        REJECTED_RETRY
    } else {
        RESYNC
    }))
}

async fn write_status(
    ctx: &Context,
    idep: &InferaDeployment,
    status: &InferaDeploymentStatus,
) -> Result<()> {
    let name = idep.name_any();
    let namespace = idep
        .namespace()
        .ok_or_else(|| Error::NoNamespace { name: name.clone() })?;
    let api = Api::<InferaDeployment>::namespaced(ctx.client.clone(), &namespace);
    // Server-side apply, so fields that are gone (a removed service, the endpoint of an invalid
    // spec) are removed too. The status is the operator's alone: it takes it back by force.
    let patch = Patch::Apply(json!({
        "apiVersion": "infera.amd.com/v1alpha1",
        "kind": "InferaDeployment",
        "status": status,
    }));
    let params = PatchParams::apply(infera_core::naming::OPERATOR_MANAGER).force();
    api.patch_status(&name, &params, &patch)
        .await
        .map_err(|source| Error::WriteStatus { name, source })?;
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
    if let Err(error) = ctx.recorder.publish(&event, &idep.object_ref(&())).await {
        tracing::warn!(%error, "cannot publish event");
    }
}

