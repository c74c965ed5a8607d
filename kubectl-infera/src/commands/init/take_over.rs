//! `init --take-over`: another controller of InferaDeployments found, refused unless taken
//! over, then scaled to 0 (its replicas kept in an annotation) and the children it created
//! released for ours.

use std::time::Duration;

use infera_core::{ChildKind, naming, naming::PLUGIN_MANAGER};
use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    Api, Client,
    api::{
        DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions,
        PropagationPolicy,
    },
    runtime::wait::{self, await_condition},
};

use crate::{
    checks::controllers::{self, OtherController},
    cli::InitArgs,
    commands::doctor,
    duration::human,
    error::{Error, Result},
    printer::Printer,
    watch,
};

/// On a controller `init --take-over` scaled to 0: the replicas it had.
const TAKEN_OVER_ANNOTATION: &str = "infera.amd.com/replicas-before-take-over";

/// Refuses to install beside another controller of InferaDeployments (doctor's INF104); with
/// `--take-over`, returns the running ones, to be stopped ([`stop`]) once the dry run of the
/// bundle passed.
pub(super) async fn guard_others(client: &Client, args: &InitArgs) -> Result<Vec<OtherController>> {
    let found = doctor::other_controllers(client)
        .await
        .map_err(|e| Error::kube("looking for another controller of InferaDeployments", e))?;
    let running: Vec<&OtherController> = found.iter().filter(|c| c.replicas > 0).collect();
    if !args.take_over {
        if running.is_empty() {
            return Ok(Vec::new());
        }
        let found: Vec<String> = running.iter().map(|c| c.describe()).collect();
        return Err(Error::OtherController {
            found: found.join("; "),
            steps: controllers::steps(&running),
        });
    }
    Ok(running.into_iter().cloned().collect())
}

/// Scales another controller to 0 (keeping its replicas in an annotation) and waits until its
/// pods are gone, so that two operators never reconcile at once.
pub(super) async fn stop(
    client: &Client,
    other: &OtherController,
    timeout: Duration,
    printer: &Printer,
) -> Result<()> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), &other.namespace);
    let object = format!("deployment.apps/{} -n {}", other.name, other.namespace);
    let patch = serde_json::json!({
        "metadata": {"annotations": {TAKEN_OVER_ANNOTATION: other.replicas.to_string()}},
        "spec": {"replicas": 0},
    });
    let params = PatchParams {
        field_manager: Some(PLUGIN_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch(&other.name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("scaling {object} to 0"), e))?;
    let stopped = await_condition(api, &other.name, |d: Option<&Deployment>| {
        d.is_none_or(|d| d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0) == 0)
    });
    match tokio::time::timeout(timeout, stopped).await {
        Ok(Ok(_)) => {}
        Ok(Err(wait::Error::ProbeFailed(e))) => return Err(watch::failed(&object, e)),
        Err(_elapsed) => {
            return Err(Error::Timeout {
                after: human(timeout),
                why: format!("{object} still has pods after being scaled to 0"),
            });
        }
    }
    printer.out(&format!(
        "{object} scaled to 0 (was {}): it reconciled InferaDeployments; remove it with `{}`, or return to it with `kubectl scale {object} --replicas={}` after `kubectl infera uninstall`",
        other.replicas,
        other.stop_command(),
        other.replicas
    ));
    Ok(())
}

/// The kinds of children another operator of InferaDeployments creates (upstream's: discovery
/// RBAC, Services, workloads, NATS, GAIE objects; AMD-AGI/Infera `deploy/operator/internal/controller/`).
const TAKEN_OVER_KINDS: [ChildKind; 9] = [
    ChildKind::ServiceAccount,
    ChildKind::Role,
    ChildKind::RoleBinding,
    ChildKind::Service,
    ChildKind::Deployment,
    ChildKind::StatefulSet,
    ChildKind::LeaderWorkerSet,
    ChildKind::InferencePool,
    ChildKind::HttpRoute,
];

/// Deletes the children of existing InferaDeployments that the operator taken over from created,
/// for ours to create anew: they carry the labels ours select by (upstream's `labelsFor`,
/// `builders.go:166-172`) but no field of ours, and an apply over them would keep the fields it
/// set and we do not (its container `infera`, its `/boot` volume) and fail on what cannot change
/// (its Deployments select pods by three labels, ours by two). A Deployment orphans its
/// ReplicaSets: ours adopts their pods and rolls them to its template like any update, without
/// taking all of them down at once. Volumes (PersistentVolumeClaims) are left alone.
pub(super) async fn release_children(client: &Client, printer: &Printer) -> Result<()> {
    let selector = ListParams::default().labels(&naming::managed_selector());
    for kind in TAKEN_OVER_KINDS {
        let resource = kind.api_resource();
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let listed = match api.list(&selector).await {
            Ok(list) => list.items,
            // Not installed (LeaderWorkerSet, GAIE): nothing of it to release.
            Err(kube::Error::Api(status)) if status.code == 404 => continue,
            Err(e) => return Err(Error::kube(format!("listing {}", resource.plural), e)),
        };
        for object in listed {
            let ours = object
                .metadata
                .managed_fields
                .iter()
                .flatten()
                .any(|entry| {
                    [naming::OPERATOR_MANAGER, naming::REPLICAS_HANDOVER_MANAGER]
                        .contains(&entry.manager.as_deref().unwrap_or_default())
                });
            let (Some(name), Some(namespace)) = (&object.metadata.name, &object.metadata.namespace)
            else {
                continue;
            };
            if ours {
                continue;
            }
            let orphan = kind == ChildKind::Deployment;
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: object.metadata.uid.clone(),
                    resource_version: None,
                }),
                propagation_policy: Some(if orphan {
                    PropagationPolicy::Orphan
                } else {
                    PropagationPolicy::Background
                }),
                ..DeleteParams::default()
            };
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &resource);
            let display = format!("{}/{name} -n {namespace}", resource.plural);
            match api.delete(name, &params).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {
                    continue;
                }
                Err(e) => return Err(Error::kube(format!("deleting {display}"), e)),
            }
            printer.out(&format!(
                "{display} deleted: the operator taken over from created it; ours creates its own{}",
                if orphan {
                    ", adopting its pods"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(())
}
