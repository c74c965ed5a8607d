//! The reads a [`super::Detail`] is built from: one GET of the deployment, one LIST of its pods
//! (label selector) and one LIST of the namespace's warning events; with `spec.gaie`, one GET each
//! of its HTTPRoute and InferencePool. Never one call per pod or event.

use infera_core::{ChildKind, InferaDeployment, naming};
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::{
    Api, Resource,
    api::{DynamicObject, ListParams},
};

use super::{GatewaySection, Summary, gateway_section, listed::Table};
use crate::{
    client::Kube,
    error::{Error, Result},
    gateway_api::ParentsStatus,
};

/// Objects per page of a list, as kubectl reads them (`kubectl get --help`: `--chunk-size=500`).
pub const PAGE: u32 = 500;

/// The list's rows: the InferaDeployments of `namespace` (every namespace with `None`) as the
/// API server's own Table of them, read in pages of [`PAGE`], with each row's object reduced
/// to its metadata (`includeObject=Metadata`), as `kubectl get` reads them. The Table holds
/// the CRD's printer columns, which hold everything a [`Summary`] shows. Whole objects are 1.7
/// times the bytes (their `managedFields` and spec): over 5,000 deployments the Table's pages
/// came a third faster (docs/performance.md). The Table kind and its `includeObject`
/// parameter are described in the Kubernetes API concepts ("Receiving resources as Tables").
pub async fn list_summaries(
    kube: &Kube,
    namespace: Option<&str>,
    now: Timestamp,
) -> Result<Vec<Summary>> {
    let what = "listing InferaDeployments";
    let lists = kube::core::Request::new(InferaDeployment::url_path(&(), namespace));
    let mut params = ListParams::default().limit(PAGE);
    let mut rows = Vec::new();
    loop {
        let mut request = lists
            .list(&params)
            .map_err(|e| Error::kube(what, kube::Error::BuildRequest(e)))?;
        let uri = format!("{}&includeObject=Metadata", request.uri());
        *request.uri_mut() = uri.parse().map_err(|e: http::uri::InvalidUri| {
            Error::kube(what, kube::Error::HttpError(e.into()))
        })?;
        request
            .headers_mut()
            .insert(http::header::ACCEPT, http::HeaderValue::from_static(TABLE));
        let page: Table = kube
            .client
            .request(request)
            .await
            .map_err(|e| Error::kube(what, e))?;
        rows.extend(page.summaries(now));
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(rows),
        }
    }
}

/// The media type of a Table (meta.k8s.io/v1), as kubectl asks for it.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// One deployment, its pods and the namespace's warning events: three requests.
pub async fn gather(
    kube: &Kube,
    namespace: &str,
    name: &str,
) -> Result<(InferaDeployment, Vec<Pod>, Vec<Event>)> {
    let idep = deployment(kube, namespace, name).await?;
    let (pods, events) = pods_and_events(kube, namespace, name).await?;
    Ok((idep, pods, events))
}

/// One deployment: one GET. A 404 says whether the deployment or its API is missing.
pub async fn deployment(kube: &Kube, namespace: &str, name: &str) -> Result<InferaDeployment> {
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), namespace);
    api.get(name).await.map_err(|e| match e {
        kube::Error::Api(s) if s.code == 404 && s.reason != "NotFound" => {
            Error::NotInstalled { detail: s.message }
        }
        kube::Error::Api(s) if s.code == 404 => not_found(namespace, name),
        e => Error::kube(format!("reading InferaDeployment {namespace}/{name}"), e),
    })
}

/// The error for a deployment that does not exist, with where to find the ones that do.
pub fn not_found(namespace: &str, name: &str) -> Error {
    Error::not_found(
        format!("InferaDeployment {namespace}/{name}"),
        "kubectl infera status -A",
    )
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

/// With `spec.gaie`, the Gateway section: one GET each of the HTTPRoute and the InferencePool
/// (`None` without `gaie`). A missing or unreadable object is shown as such, never an error.
pub async fn gather_gateway(kube: &Kube, idep: &InferaDeployment) -> Option<GatewaySection> {
    idep.spec.gaie.as_ref().filter(|gaie| gaie.is_enabled())?;
    let namespace = idep
        .metadata
        .namespace
        .as_deref()
        .unwrap_or(&kube.namespace);
    let name = idep.metadata.name.as_deref().unwrap_or_default();
    let (route, pool) = (
        naming::http_route_name(name),
        naming::inference_pool_name(name),
    );
    let (route, mut found) = futures::join!(
        parents_status(kube, ChildKind::HttpRoute, namespace, &route),
        parents_status(kube, ChildKind::InferencePool, namespace, &pool),
    );
    // A cluster with only the pre-1.0 API gets a v1alpha2 pool (`PoolApi::served`).
    if !matches!(found, Ok(Some(_))) {
        let older = parents_status(kube, ChildKind::InferencePoolV1Alpha2, namespace, &pool).await;
        if matches!(older, Ok(Some(_))) {
            found = older;
        }
    }
    gateway_section(idep, route, found)
}

/// The `status.parents` of one HTTPRoute or InferencePool; `Ok(None)` when it does not exist.
async fn parents_status(
    kube: &Kube,
    kind: ChildKind,
    namespace: &str,
    name: &str,
) -> std::result::Result<Option<ParentsStatus>, String> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(kube.client.clone(), namespace, &kind.api_resource());
    match api.get_opt(name).await {
        Ok(None) => Ok(None),
        Ok(Some(object)) => {
            let status = object.data.get("status").cloned().unwrap_or_default();
            serde_json::from_value::<Option<ParentsStatus>>(status)
                .map(|s| Some(s.unwrap_or_default()))
                .map_err(|e| format!("unexpected status: {e}"))
        }
        Err(kube::Error::Api(s)) if s.code == 403 => Err(format!("forbidden: {}", s.message)),
        Err(e) => Err(crate::error::chain(&e)),
    }
}
