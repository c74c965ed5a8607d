//! The reads a [`super::Detail`] is built from: one GET of the deployment, one LIST of its pods
//! (label selector) and one LIST of the namespace's warning events. Never one call per object.

use infera_core::{InferaDeployment, naming};
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::{Api, api::ListParams};

use crate::{
    client::Kube,
    error::{Error, Result},
};

/// One deployment, its pods and the namespace's warning events: three requests.
pub async fn gather(
    kube: &Kube,
    namespace: &str,
    name: &str,
) -> Result<(InferaDeployment, Vec<Pod>, Vec<Event>)> {
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), namespace);
    let idep = api.get(name).await.map_err(|e| match e {
        kube::Error::Api(s) if s.code == 404 => not_found(namespace, name),
        e => Error::kube(format!("reading InferaDeployment {namespace}/{name}"), e),
    })?;
    let (pods, events) = pods_and_events(kube, namespace, name).await?;
    Ok((idep, pods, events))
}

/// The error for a deployment that does not exist, with where to find the ones that do.
pub fn not_found(namespace: &str, name: &str) -> Error {
    Error::Api {
        action: format!("InferaDeployment {namespace}/{name}"),
        message: "not found; `kubectl infera status -A` lists them all".into(),
        code: 404,
    }
}

/// The deployment's pods and the namespace's warning events. Events are optional: a user who may
/// not list them gets none instead of an error.
pub async fn pods_and_events(
    kube: &Kube,
    namespace: &str,
    name: &str,
) -> Result<(Vec<Pod>, Vec<Event>)> {
    let pods: Api<Pod> = Api::namespaced(kube.client.clone(), namespace);
    let selector = format!("{}={name}", naming::LABEL_DEPLOYMENT);
    let pods = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::kube(format!("listing pods of {namespace}/{name}"), e))?
        .items;
    let events: Api<Event> = Api::namespaced(kube.client.clone(), namespace);
    let events = match events
        .list(&ListParams::default().fields("type=Warning"))
        .await
    {
        Ok(list) => list.items,
        Err(kube::Error::Api(s)) if s.code == 403 => Vec::new(),
        Err(e) => return Err(Error::kube(format!("listing events in {namespace}"), e)),
    };
    Ok((pods, events))
}
