//! The controller: watches, triggers and the reconcile loop.

use std::sync::Arc;

use futures::StreamExt;
use infera_core::{InferaDeployment, naming::LABEL_DEPLOYMENT};
use kube::{
    Api, Client, Resource, ResourceExt,
    runtime::{
        Controller,
        controller::{Action, Config},
        events::{Event, EventType, Recorder, Reporter},
        reflector::ObjectRef,
        watcher,
    },
};
use tracing::{info, warn};

use crate::{Error, apply::Applies, metrics::Metrics, observe::Observed};

/// What every reconcile shares.
pub struct Context {
    pub client: Client,
    pub observed: Observed,
    pub applies: Applies,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
}

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Reconcile only this namespace (default: all).
    pub namespace: Option<String>,
    /// Deployments reconciled at the same time.
    pub concurrency: u16,
    /// Who publishes events (the pod name in a cluster).
    pub identity: String,
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
    let reporter = Reporter {
        controller: "infera-operator".into(),
        instance: Some(settings.identity.clone()),
    };
    let recorder = Recorder::new(client.clone(), reporter);
    let ctx = Arc::new(Context {
        client: client.clone(),
        observed,
        applies: Applies::default(),
        recorder,
        metrics: metrics.clone(),
    });

    let ideps = namespace.map_or_else(
        || Api::<InferaDeployment>::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    );
    let mut controller = Controller::new(ideps, watcher::Config::default())
        .with_config(Config::default().concurrency(settings.concurrency));
    for (kind, stream) in watches.children {
        controller = controller.owns_stream_with(stream, kind.api_resource());
    }
    let pods = watches.pods;
    controller = controller.watches_stream(pods, |pod| {
        let deployment = pod.labels().get(LABEL_DEPLOYMENT)?;
        Some(ObjectRef::new(deployment).within(&pod.namespace()?))
    });
    // A CRD appearing (LeaderWorkerSet, Gateway API) can unblock any deployment.
    let crds = watches.crds.filter_map(|event| async move {
        let crd = event.ok()?;
        let group = crd.name_any();
        let relevant = [
            "leaderworkerset.x-k8s.io",
            "inference.networking.k8s.io",
            "gateway.networking.k8s.io",
        ];
        relevant.iter().any(|g| group.ends_with(g)).then_some(())
    });
    metrics.set_ready(true);
    controller
        .reconcile_all_on(crds)
        .graceful_shutdown_on(shutdown)
        .run(crate::reconcile::reconcile, error_policy, ctx)
        .for_each(|result| async move {
            match result {
                Ok((object, _)) => tracing::debug!(deployment = %object, "reconciled"),
                Err(error) => warn!(%error, "reconcile failed"),
            }
        })
        .await;
    info!("controller stopped");
}

fn error_policy(idep: Arc<InferaDeployment>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_failure(error);
    warn!(deployment = %idep.name_any(), namespace = idep.namespace().unwrap_or_default(), %error, "reconcile error");
    // Also on the InferaDeployment, where `kubectl describe` shows it.
    let event = Event {
        type_: EventType::Warning,
        reason: "ReconcileError".into(),
        note: Some(error.to_string().chars().take(1000).collect()),
        action: "Reconcile".into(),
        secondary: None,
    };
    tokio::spawn(async move {
        if let Err(error) = ctx.recorder.publish(&event, &idep.object_ref(&())).await {
            warn!(%error, "cannot publish event");
        }
    });
    Action::requeue(std::time::Duration::from_secs(5))
}
