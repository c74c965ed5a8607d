//! What a `--for` spec needs of the cluster, read for doctor's checks: the Multus networks its
//! pools attach, a NetworkPolicy engine, the API server's endpoints, KEDA, the namespace's Pod Security level, and the
//! Inference Extension's CRDs, Gateway and dry runs.

use std::collections::BTreeMap;

use infera_core::{
    Child, ChildKind, ValidDeployment, naming,
    render::{ApiServer, Apis, PoolApi, render_for},
};
use k8s_openapi::{
    api::{
        apps::v1::DaemonSet,
        core::v1::{Namespace, Pod},
        discovery::v1::EndpointSlice,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, ResourceExt,
    api::{DynamicObject, ListParams, Patch, PatchParams, PostParams},
    core::ApiResource,
};

use super::{optional, read_error};
use crate::{
    checks::{self, Facts, Read},
    gateway_api::{self, Gateway},
};

/// For a `--for` spec whose pools attach Multus networks: the NetworkAttachmentDefinition CRD,
/// then each named network (one GET each).
pub(super) async fn read_networks(client: &Client, f: &mut Facts) {
    let Some(spec) = &f.spec else { return };
    let networks = checks::network::networks_of(spec);
    if networks.is_empty() {
        return;
    }
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let read = async {
        if crds
            .get_opt(checks::network::NAD_CRD)
            .await
            .map_err(read_error)?
            .is_none()
        {
            return Ok(None);
        }
        let resource = ApiResource {
            group: "k8s.cni.cncf.io".into(),
            version: "v1".into(),
            api_version: "k8s.cni.cncf.io/v1".into(),
            kind: "NetworkAttachmentDefinition".into(),
            plural: "network-attachment-definitions".into(),
        };
        let mut found = Vec::new();
        for (namespace, name) in networks {
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), &namespace, &resource);
            let exists = api.get_opt(&name).await.map_err(read_error)?.is_some();
            found.push(((namespace, name), exists));
        }
        Ok(Some(found))
    };
    f.rdma_networks = Some(read.await);
}

/// For a `--for` spec with NetworkPolicies: the DaemonSets of every namespace, names only (one
/// LIST of metadata), filtered to the known policy engines.
pub(super) async fn read_policy_engines(client: &Client, f: &mut Facts) {
    if f.spec
        .as_ref()
        .is_none_or(|spec| spec.network_policy.is_none())
    {
        return;
    }
    // As DynamicObjects: the typed list would add its own copy of the listing code to the plugin.
    let daemonsets = ApiResource::erase::<DaemonSet>(&());
    let api = Api::<DynamicObject>::all_with(client.clone(), &daemonsets);
    let read = api.list_metadata(&ListParams::default()).await;
    f.network_policy_engines = Some(read.map_err(read_error).map(|list| {
        let names: Vec<String> = list
            .items
            .iter()
            .map(|ds| format!("{}/{}", ds.namespace().unwrap_or_default(), ds.name_any()))
            .collect();
        checks::network_policy::engines(names.iter().map(String::as_str))
    }));
}

/// For a `--for` spec with restricted egress: the API server's own EndpointSlice (one GET).
pub(super) async fn read_api_server(client: &Client, f: &mut Facts) {
    let restricted = f
        .spec
        .as_ref()
        .and_then(|spec| spec.network_policy.as_ref());
    if restricted.is_none_or(|policy| policy.egress.is_none()) {
        return;
    }
    let (namespace, name) = ApiServer::SLICE;
    let slices = ApiResource::erase::<EndpointSlice>(&());
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &slices);
    f.api_server = Some(optional(api.get_opt(name).await).and_then(|slice| {
        let Some(slice) = slice else {
            return Ok(None);
        };
        let slice: EndpointSlice = serde_json::to_value(slice)
            .and_then(serde_json::from_value)
            .map_err(|e| format!("EndpointSlice {namespace}/{name} is not one: {e}"))?;
        Ok(ApiServer::of(&slice))
    }));
}

/// For a `--for` spec with a `provider: keda` pool: KEDA's ScaledObject CRD (one GET).
pub(super) async fn read_keda(client: &Client, f: &mut Facts) {
    let (Some(spec), Some(crd)) = (&f.spec, ChildKind::ScaledObject.crd()) else {
        return;
    };
    if checks::keda::keda_pools(spec).is_empty() {
        return;
    }
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    f.keda_crd = Some(optional(crds.get_opt(&crd.name).await));
}

/// For a `--for` spec with `monitoring`: the PodMonitor CRD, and with `monitoring.slo` the
/// PrometheusRule CRD (one GET each).
pub(super) async fn read_monitoring(client: &Client, f: &mut Facts) {
    let Some(monitoring) = f.spec.as_ref().and_then(|spec| spec.monitoring.as_ref()) else {
        return;
    };
    let slo = monitoring.slo.is_some();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let read = async |kind: ChildKind| match kind.crd() {
        Some(crd) => Some(optional(crds.get_opt(&crd.name).await)),
        None => None,
    };
    f.monitoring_crd = read(ChildKind::PodMonitor).await;
    if slo {
        f.rule_crd = read(ChildKind::PrometheusRule).await;
    }
}

/// For a `--for` spec: its namespace's `enforce` label and a server-side dry run of a Pod from
/// each pod template it renders (see [`checks::pod_security`]). The Pods run as the namespace's
/// default ServiceAccount, as the spec's own may not exist yet (and Pod Security does not read it).
pub(super) async fn read_pod_security(client: &Client, f: &mut Facts) {
    let Some(spec) = &f.spec else { return };
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = match namespaces.get_opt(&spec.namespace).await {
        Ok(namespace) => namespace,
        Err(e) => {
            f.pod_security = Some(Err(read_error(e)));
            return;
        }
    };
    let Some(namespace) = namespace else {
        f.pod_security = Some(Ok(checks::pod_security::PodSecurityFacts::default()));
        return;
    };
    // As JSON: the typed Pod would add its whole status to what the binary serializes.
    let resource = ApiResource::erase::<Pod>(&());
    let pods: Api<DynamicObject> = Api::namespaced_with(client.clone(), &spec.namespace, &resource);
    let params = PostParams {
        dry_run: true,
        field_manager: Some(naming::PLUGIN_MANAGER.into()),
    };
    // The JSON the API server would receive: the pods' templates as the workloads carry them.
    let templates: Vec<(String, String, serde_json::Value)> = render_for(spec, Apis::default())
        .iter()
        .filter_map(|child| {
            let body = serde_json::to_vec(child).ok()?;
            let body = serde_json::from_slice(&body).ok()?;
            let (kind, name) = (child.kind(), child.name());
            let templates = infera_core::render::pod_templates(kind, name, &body);
            Some(templates.into_iter().map(move |(role, template)| {
                (
                    format!("{kind:?} {name} ({role})"),
                    format!("{name}-{role}-dry-run"),
                    template,
                )
            }))
        })
        .flatten()
        .collect();
    let runs = templates.into_iter().map(|(shown, pod_name, template)| {
        let (pods, params, resource) = (&pods, &params, &resource);
        let mut pod = DynamicObject::new(&pod_name, resource);
        pod.metadata.labels = serde_json::from_value(template["metadata"]["labels"].clone()).ok();
        let mut spec = template["spec"].clone();
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("serviceAccountName");
        }
        pod.data = serde_json::json!({"spec": spec});
        async move {
            let result = pods.create(params, &pod).await;
            (shown, result.err().map(read_error))
        }
    });
    f.pod_security = Some(Ok(checks::pod_security::PodSecurityFacts {
        namespace_exists: true,
        enforce: namespace
            .metadata
            .labels
            .and_then(|mut labels| labels.remove(infera_core::pod_security::ENFORCE_LABEL)),
        pods: futures::future::join_all(runs).await,
    }));
}

/// The Inference Extension's facts: its CRDs always (four GETs, so doctor can tell whether GAIE
/// is in use); for a `--for` spec with `gaie` also its Gateway, the namespace's labels when a
/// listener selects route namespaces by label, and server-side dry runs of the HTTPRoute and the
/// InferencePool the spec renders.
pub(super) async fn read_gaie(client: &Client, f: &mut Facts) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = |kind: ChildKind| kind.crd().map(|c| c.name).unwrap_or_default();
    let (gateways, routes, pools, alpha_pools) = (
        checks::gateway_crd_name(),
        name(ChildKind::HttpRoute),
        name(ChildKind::InferencePool),
        name(ChildKind::InferencePoolV1Alpha2),
    );
    let (gateway_crd, route_crd, pool_crd, alpha_pool_crd) = tokio::join!(
        crds.get_opt(&gateways),
        crds.get_opt(&routes),
        crds.get_opt(&pools),
        crds.get_opt(&alpha_pools),
    );
    let g = &mut f.gaie;
    g.gateway_crd = Some(optional(gateway_crd));
    g.route_crd = Some(optional(route_crd));
    g.pool_crd = Some(optional(pool_crd));
    g.alpha_pool_crd = Some(optional(alpha_pool_crd));
    let Some((spec, gaie)) = f.spec.as_ref().and_then(|s| Some((s, s.gaie.as_ref()?))) else {
        return;
    };
    let namespace = checks::gateway_namespace(spec, gaie);
    // The pool in the API the operator would create it in (see `PoolApi::served`).
    let installed =
        |crd: &Option<Read<Option<CustomResourceDefinition>>>| matches!(crd, Some(Ok(Some(_))));
    let pool_api = PoolApi::served(|kind| match kind {
        ChildKind::InferencePool => installed(&g.pool_crd),
        ChildKind::InferencePoolV1Alpha2 => installed(&g.alpha_pool_crd),
        _ => true,
    });
    let (gateway, dry_runs) = tokio::join!(
        gateway(client, namespace, &gaie.gateway_name),
        gaie_dry_runs(client, spec, pool_api)
    );
    if let Ok(Some(found)) = &gateway
        && checks::needs_namespace_labels(found, gaie)
    {
        g.namespace_labels = Some(namespace_labels(client, &spec.namespace).await);
    }
    g.gateway = Some(gateway);
    g.dry_runs = dry_runs;
}

/// One Gateway (`gateway.networking.k8s.io/v1`), or `None` when it (or its CRD) does not exist.
async fn gateway(client: &Client, namespace: &str, name: &str) -> Read<Option<Gateway>> {
    let resource = gateway_api::gateway_resource();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    match api.get_opt(name).await.map_err(read_error)? {
        None => Ok(None),
        Some(object) => serde_json::from_value(object.data)
            .map(Some)
            .map_err(|e| format!("unexpected Gateway {namespace}/{name}: {e}")),
    }
}

/// The labels of a namespace (listeners may select route namespaces by them).
async fn namespace_labels(client: &Client, namespace: &str) -> Read<BTreeMap<String, String>> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = api.get(namespace).await.map_err(read_error)?;
    Ok(ns.metadata.labels.unwrap_or_default())
}

/// Server-side dry runs (`dryRun=All`) of the HTTPRoute and the InferencePool the spec renders,
/// applied as the operator applies them; forced, so that a deployment that already exists is
/// validated too instead of reporting the operator's ownership.
async fn gaie_dry_runs(
    client: &Client,
    spec: &ValidDeployment,
    inference_pool: PoolApi,
) -> Vec<(String, Read<()>)> {
    let children: Vec<Child> = render_for(
        spec,
        Apis {
            inference_pool,
            ..Apis::default()
        },
    )
    .into_iter()
    .filter(|c| {
        matches!(
            c.kind(),
            ChildKind::HttpRoute | ChildKind::InferencePool | ChildKind::InferencePoolV1Alpha2
        )
    })
    .collect();
    let params = PatchParams::apply(naming::PLUGIN_MANAGER).force().dry_run();
    let runs = children.iter().map(|child| {
        let resource = child.kind().api_resource();
        let api: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), &spec.namespace, &resource);
        let params = &params;
        async move {
            let result = api
                .patch(child.name(), params, &Patch::Apply(child))
                .await
                .map(|_| ())
                .map_err(read_error);
            (format!("{} {}", resource.kind, child.name()), result)
        }
    });
    futures::future::join_all(runs).await
}
