//! One reconcile: observe → validate → render → apply → status.

use std::{collections::BTreeMap, sync::Arc};

use infera_core::{InferaDeployment, InferaDeploymentStatus, State, render, validate};
use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{
        controller::Action,
        events::{Event, EventType},
    },
};
use serde_json::json;

use crate::{
    Error, REJECTED_RETRY, RESYNC, Result,
    controller::Context,
    status::{self, Outcome},
};

pub async fn reconcile(idep: Arc<InferaDeployment>, ctx: Arc<Context>) -> Result<Action> {
    let _timer = ctx.metrics.reconcile_timer();
    let snapshot = ctx.observed.snapshot(&idep);
    let outcome = match validate(&idep) {
        Err(errors) => Outcome::Invalid(errors),
        Ok(valid) => {
            let children = render(&valid);
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
            let group_sizes: BTreeMap<String, i32> = valid
                .workers
                .iter()
                .map(|w| (w.pod.service.clone(), w.nodes))
                .collect();
            Outcome::Applied {
                applied,
                endpoint: infera_core::render::endpoint(&valid),
                group_sizes,
            }
        }
    };
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
    let namespace = idep
        .namespace()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let api = Api::<InferaDeployment>::namespaced(ctx.client.clone(), &namespace);
    // A merge patch of the status subresource: the operator is its only writer.
    let patch = Patch::Merge(json!({ "status": status }));
    let params = PatchParams {
        field_manager: Some(infera_core::naming::OPERATOR_MANAGER.into()),
        ..Default::default()
    };
    api.patch_status(&idep.name_any(), &params, &patch).await?;
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
