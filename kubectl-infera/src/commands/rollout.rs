//! `kubectl infera rollout pause|resume NAME`: sets `spec.rollout.paused`, with a JSON merge
//! patch as field manager [`ROLLOUT_MANAGER`] that owns exactly that field (as `scale` does for
//! `replicas`). While paused, the operator holds every existing worker pool at the revision its
//! pods run; `status` shows `Progressing=False, RolloutPaused` and the pools it holds.
//!
//! `kubectl infera rollout history|undo NAME` are in [`revisions`].
//!
//! `kubectl infera rollout status NAME` follows the `Progressing` condition with a watch, a line
//! per change, until the rollout of the spec's generation is complete (exit 0) or past its
//! `progressDeadlineSeconds` (exit 3, the condition's message says what blocks it). On a terminal,
//! a bar per worker pool on stderr shows its updated replicas of the desired ones as they move.

use std::time::Duration;

use futures::StreamExt;
use infera_core::{
    InferaDeployment, PROGRESS_DEADLINE_EXCEEDED, PROGRESSING, ROLLOUT_COMPLETE,
    condition::reconcile_failure, naming::ROLLOUT_MANAGER,
};
use kube::{
    Api,
    api::{Patch, PatchParams},
};

use crate::{
    cli::{GlobalArgs, RolloutAction, RolloutArgs},
    client,
    commands::revisions,
    error::{Error, Result},
    printer::{PoolProgress, Printer},
    view, watch,
};

pub async fn run(args: &RolloutArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let (name, paused) = match &args.action {
        RolloutAction::Pause { name } => (name, true),
        RolloutAction::Resume { name } => (name, false),
        RolloutAction::Status { name, timeout } => {
            return status(name, *timeout, global, printer).await;
        }
        RolloutAction::History {
            name,
            revision,
            output,
        } => return revisions::history(name, *revision, *output, global, printer).await,
        RolloutAction::Undo { name, to_revision } => {
            return revisions::undo(name, *to_revision, global, printer).await;
        }
    };
    let kube = client::connect(global).await?;
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &kube.namespace);
    let object = format!("InferaDeployment {}/{name}", kube.namespace);
    let idep = view::deployment(&kube, &kube.namespace, name).await?;
    let line = |verb: &str| format!("inferadeployment.infera.amd.com/{name} {verb}");
    let was = idep.spec.rollout.as_ref().is_some_and(|r| r.paused);
    if was == paused {
        printer.out(&line(if paused {
            "already paused"
        } else {
            "not paused"
        }));
        return Ok(());
    }
    let params = PatchParams {
        field_manager: Some(ROLLOUT_MANAGER.into()),
        ..PatchParams::default()
    };
    let patch = serde_json::json!({"spec": {"rollout": {"paused": paused}}});
    api.patch(name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("updating {object}"), e))?;
    printer.out(&line(if paused { "paused" } else { "resumed" }));
    Ok(())
}

/// Where a rollout stands, from the deployment as the operator last reported it.
#[derive(Debug, PartialEq, Eq)]
enum Standing {
    /// The operator has not reported on this generation yet.
    Unseen,
    /// `Progressing`'s reason and message.
    Progressing(String, String),
}

fn standing(idep: &InferaDeployment) -> Standing {
    let Some(status) = &idep.status else {
        return Standing::Unseen;
    };
    if status.observed_generation < idep.metadata.generation {
        return Standing::Unseen;
    }
    status
        .conditions
        .iter()
        .find(|c| c.type_ == PROGRESSING)
        .map_or(Standing::Unseen, |c| {
            Standing::Progressing(c.reason.clone(), c.message.clone())
        })
}

/// Each worker pool's updated, desired and ready replicas, for its bar.
fn pool_progress(idep: &InferaDeployment) -> Vec<PoolProgress> {
    let services = idep.status.iter().flat_map(|status| &status.services);
    services
        .filter_map(|(pool, service)| {
            let updated = service.updated_replicas?;
            Some(PoolProgress {
                pool: pool.clone(),
                updated: u64::try_from(updated).unwrap_or(0),
                desired: u64::try_from(service.desired_replicas).unwrap_or(0),
                ready: service.ready_replicas,
            })
        })
        .collect()
}

/// Follows the rollout of `name` until it is complete or past its deadline (or `timeout`).
async fn status(
    name: &str,
    timeout: Option<Duration>,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<()> {
    let kube = client::connect(global).await?;
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &kube.namespace);
    let object = format!("InferaDeployment {}/{name}", kube.namespace);
    let follow = async {
        let mut updates = Box::pin(watch::object(api, name, object.clone()));
        let mut last = Standing::Unseen;
        while let Some(update) = updates.next().await {
            let Some(idep) = update? else {
                return Err(Error::Deleted {
                    object: object.clone(),
                });
            };
            printer.pool_progress(&pool_progress(&idep));
            let generation = idep.metadata.generation;
            let failure = idep
                .status
                .as_ref()
                .and_then(|status| reconcile_failure(status, generation));
            if let Some(c) = failure {
                return Err(Error::ReconcileFailed {
                    object: object.clone(),
                    generation: generation.unwrap_or_default(),
                    message: c.message.clone(),
                });
            }
            let now = standing(&idep);
            if now == last {
                continue;
            }
            if let Standing::Progressing(reason, message) = &now {
                printer.out(&format!("{reason}: {message}"));
                if reason == ROLLOUT_COMPLETE {
                    return Ok(());
                }
                if reason == PROGRESS_DEADLINE_EXCEEDED {
                    return Err(Error::Timeout {
                        after: "spec.rollout.progressDeadlineSeconds".into(),
                        why: message.clone(),
                    });
                }
            }
            last = now;
        }
        Err(Error::Deleted {
            object: object.clone(),
        })
    };
    let result = match timeout {
        None => follow.await,
        Some(limit) => tokio::time::timeout(limit, follow)
            .await
            .unwrap_or_else(|_| {
                Err(Error::Timeout {
                    after: format!("{}s", limit.as_secs()),
                    why: format!("the rollout of {object} is not complete"),
                })
            }),
    };
    printer.clear_progress();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_pool_gets_a_bar_of_its_updated_replicas() {
        let idep: InferaDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "demo"},
            "spec": {"backendFramework": "sglang", "services": {}},
            "status": {"observedGeneration": 1, "services": {
                "server": {"kind": "Deployment", "desiredReplicas": 1, "readyReplicas": 1},
                "decode": {"kind": "Deployment", "desiredReplicas": 4, "readyReplicas": 3, "updatedReplicas": 2},
            }},
        }))
        .expect("an InferaDeployment");
        assert_eq!(
            pool_progress(&idep),
            [PoolProgress {
                pool: "decode".into(),
                updated: 2,
                desired: 4,
                ready: 3,
            }]
        );
    }
}
