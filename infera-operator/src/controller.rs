//! The controller: watches, triggers and the reconcile loop.

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use infera_core::{ChildKind, InferaDeployment, naming::LABEL_DEPLOYMENT};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::DynamicObject,
    runtime::{
        Controller, WatchStreamExt,
        controller::{self, Action, Config},
        events::{Event, EventType},
        reflector::{self, ObjectRef},
        watcher,
    },
};
use tracing::{debug, info, warn};

use crate::{
    Error, chain,
    context::Context,
    fairness::{self, Ended},
    metrics::Metrics,
    observe::{paged, slim_deployment},
};

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Reconcile only this namespace (default: all).
    pub namespace: Option<String>,
    /// Deployments reconciled at the same time.
    pub concurrency: u16,
    /// Who publishes events (the pod name in a cluster).
    pub identity: String,
    /// How often an unchanged deployment is looked at again.
    pub resync: Duration,
}

/// Runs the controller until `shutdown` resolves.
pub async fn run(
    client: Client,
    metrics: Arc<Metrics>,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let namespace = settings.namespace.as_deref();
    let (observed, watches) = crate::observe::watch(&client, namespace);
    let ctx = Arc::new(Context::new(
        client.clone(),
        observed,
        metrics.clone(),
        settings.identity,
        settings.resync,
    ));

    let ideps = namespace.map_or_else(
        || Api::<InferaDeployment>::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    );
    // The controller's own cache of InferaDeployments, slimmed like the others.
    let (deployments, mut writer) = reflector::store();
    let refused = deployments.clone();
    let restricted = deployments.clone();
    let planned = deployments.clone();
    let deployment_watch = watcher(ideps, paged()).modify(slim_deployment);
    // Reconciles that ended, for the gate that keeps a burst from queueing ahead of a change.
    let (ended, ended_rx) = futures::channel::mpsc::unbounded();
    let mut controller = Controller::for_stream(
        fairness::gate(
            on_own_task(crate::observe::reflect(
                move |event| writer.apply_watcher_event(event),
                deployment_watch,
                "inferadeployments".into(),
            )),
            ended_rx,
            deployments.clone(),
            usize::from(settings.concurrency),
        ),
        deployments,
    )
    .with_config(Config::default().concurrency(settings.concurrency));
    for (kind, stream) in watches.children {
        controller = controller.owns_stream_with(on_own_task(stream), kind);
    }
    let pods = watches.pods;
    controller = controller.watches_stream(on_own_task(pods), |pod| {
        let deployment = pod.labels().get(LABEL_DEPLOYMENT)?;
        Some(ObjectRef::new(deployment).within(&pod.namespace()?))
    });
    // A revision of the history deleted or changed by someone else is put back as it should be.
    controller = controller.watches_stream(on_own_task(watches.revisions), |revision| {
        let deployment = revision.labels().get(LABEL_DEPLOYMENT)?;
        Some(ObjectRef::new(deployment).within(&revision.namespace()?))
    });
    // A quota that changes may now take a graph it refused: retry those of its namespace.
    controller = controller.watches_stream(watches.quotas, move |quota| {
        let namespace = quota.namespace();
        refused
            .state()
            .into_iter()
            .filter(|idep| idep.namespace() == namespace && refused_by_api(idep))
            .map(|idep| ObjectRef::from(idep.as_ref()))
            .collect::<Vec<_>>()
    });
    // The API server's endpoints seen or moved: the egress policies that name them follow.
    controller = controller.watches_stream(watches.api_server, move |_| {
        restricted
            .state()
            .into_iter()
            .filter(|idep| crate::reconcile::restricts_egress(idep))
            .map(|idep| ObjectRef::from(idep.as_ref()))
            .collect::<Vec<_>>()
    });
    // A CRD appearing (LeaderWorkerSet, Gateway API) can unblock any deployment.
    let crds = watches.crds.filter_map(|event| async move {
        let name = event.ok()?.name_any();
        ChildKind::ALL
            .iter()
            .filter_map(|kind| kind.crd())
            .any(|crd| crd.name == name)
            .then_some(())
    });
    ready_when_synced(&ctx, metrics.clone());
    // After an outage of the API every deployment is looked at at once, instead of each waiting
    // out the backoff its failures during the outage earned.
    let planner = tokio::spawn(crate::planner::run(ctx.clone(), planned));
    let api_back = metrics.api_returns();
    controller
        .reconcile_all_on(futures::stream::select(crds, api_back))
        .graceful_shutdown_on(shutdown)
        .run(crate::reconcile::reconcile, error_policy, ctx.clone())
        .for_each(|result| {
            // The gate lives as long as the controller; a send fails only while shutting down.
            if let Some(one) = ended_one(result, &ctx) {
                ended.unbounded_send(one).ok();
            }
            std::future::ready(())
        })
        .await;
    planner.abort();
    info!("controller stopped");
}

/// `stream` polled on a task of its own, its items passed on through a channel: the controller
/// polls every trigger stream on its one task, so every watch's objects were decoded and cached
/// one after another on one core — on a restart over 5,000 deployments, 45,000 objects, most of its
/// time. Each watch on its own task decodes beside the others. The task ends when the controller
/// drops the receiving end.
fn on_own_task<T: Send + 'static>(
    stream: impl futures::Stream<Item = T> + Send + 'static,
) -> futures::stream::BoxStream<'static, T> {
    let (sender, receiver) = futures::channel::mpsc::channel(256);
    tokio::spawn(stream.map(Ok).forward(sender));
    receiver.boxed()
}

/// Marks the operator ready once the caches are filled (they fill as the controller polls their
/// watches).
fn ready_when_synced(ctx: &Context, metrics: Arc<Metrics>) {
    ctx.observed.track_sync();
    let observed = ctx.observed.clone();
    tokio::spawn(async move {
        while !observed.synced() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        metrics.set_ready(true);
    });
}

/// What the end of one reconcile tells the fairness gate, logged: the deployment reconciled (its
/// reconciler failed or not), or gone; nothing for a failure of the controller itself.
fn ended_one<E: std::error::Error + 'static>(
    result: Result<(ObjectRef<InferaDeployment>, Action), controller::Error<Error, E>>,
    ctx: &Context,
) -> Option<Ended> {
    match result {
        Ok((object, _)) => {
            debug!(
                namespace = object.namespace.as_deref(),
                deployment = object.name,
                "reconciled"
            );
            Some(Ended::Reconciled(object))
        }
        // A trigger for a deployment that is gone: nothing to do but forget it.
        Err(controller::Error::ObjectNotFound(object)) => {
            debug!(
                namespace = object.namespace.as_deref(),
                deployment = object.name,
                "deleted"
            );
            let object = deployment_ref(&object);
            ctx.forget(&object);
            Some(Ended::Gone(object))
        }
        // The error policy has logged it.
        Err(controller::Error::ReconcilerFailed(_, object)) => {
            Some(Ended::Reconciled(deployment_ref(&object)))
        }
        Err(error) => {
            warn!(error = %chain(&error), "reconcile failed");
            None
        }
    }
}

/// Whether the deployment's `Ready` condition says the API server (or the quota check) refused
/// its children.
fn refused_by_api(idep: &InferaDeployment) -> bool {
    idep.status.iter().flat_map(|s| &s.conditions).any(|c| {
        c.type_ == "Ready"
            && c.reason == infera_core::condition::ReadyReason::ApplyRejected.as_str()
    })
}

/// The InferaDeployment an erased reference from the controller names.
fn deployment_ref(object: &ObjectRef<DynamicObject>) -> ObjectRef<InferaDeployment> {
    let mut deployment = ObjectRef::new(&object.name);
    deployment.namespace.clone_from(&object.namespace);
    deployment
}

fn error_policy(idep: Arc<InferaDeployment>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_failure(error);
    let message = chain(error);
    warn!(
        namespace = idep.namespace().unwrap_or_default(),
        deployment = idep.name_any(),
        error = %message,
        "reconcile error"
    );
    // Also on the InferaDeployment, where `kubectl describe` shows it.
    let event = Event {
        type_: EventType::Warning,
        reason: "ReconcileError".into(),
        note: Some(message.chars().take(1000).collect()),
        action: "Reconcile".into(),
        secondary: None,
    };
    let failures = ctx.failed(ObjectRef::from(idep.as_ref()));
    tokio::spawn(async move {
        if let Err(error) = ctx.recorder.publish(&event, &idep.object_ref(&())).await {
            warn!(
                namespace = idep.namespace().unwrap_or_default(),
                deployment = idep.name_any(),
                %error,
                "cannot publish event"
            );
        }
    });
    Action::requeue(backoff(failures))
}

/// 5s, 10s, 20s, ... up to 5 minutes after `failures` consecutive failures.
fn backoff(failures: u32) -> Duration {
    let exponent = failures.saturating_sub(1).min(6);
    Duration::from_secs(5 * 2u64.pow(exponent)).min(Duration::from_secs(300))
}

#[cfg(test)]
mod tests {
    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = (1..=9).map(|n| super::backoff(n).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 300, 300, 300]);
    }
}
