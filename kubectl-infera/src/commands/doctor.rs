//! `kubectl infera doctor`: gathers [`Facts`] from the cluster (concurrently, each read on its
//! own so one forbidden call does not hide the rest), runs the pure check engine of
//! [`crate::checks`], and prints one table or exactly one JSON/YAML document.
//! Exit code 0 when no check fails (warnings allowed), 1 otherwise — in every output mode.

use std::collections::BTreeMap;

use infera_core::{
    Child, ChildKind, InferaDeployment, ValidDeployment, naming,
    render::{Apis, PoolApi, render_for},
};
use k8s_openapi::{
    api::{
        admissionregistration::v1::ValidatingWebhookConfiguration,
        apps::v1::{DaemonSet, Deployment},
        authorization::v1::{
            ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
        },
        coordination::v1::Lease,
        core::v1::{Namespace, Node, Pod},
        rbac::v1::{ClusterRole, ClusterRoleBinding},
        storage::v1::StorageClass,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, ResourceExt,
    api::{DynamicObject, ListParams, ObjectList, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde::Serialize;

use crate::{
    bundle,
    checks::{
        self, Check, Facts, Kubectl, Need, PluginOnPath, Read, Severity, infera::LeaseRenewal,
    },
    cli::{DoctorArgs, GlobalArgs, Output},
    client::{self, Kube},
    error::{Error, Result},
    gateway_api::{self, Gateway},
    printer::{Cell, Printer, Style, lines},
    spec,
};

/// A read's error as a check shows it: `forbidden: …` for a denied call, the API's message, or
/// the transport's chain.
fn read_error(e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => format!("forbidden: {}", s.message),
        kube::Error::Api(s) => s.message,
        other => crate::error::chain(&other),
    }
}

/// An optional object (`get_opt`) as a fact.
fn optional<T>(result: std::result::Result<Option<T>, kube::Error>) -> Read<Option<T>> {
    result.map_err(read_error)
}

/// A SelfSubjectAccessReview: may the current user do this?
async fn can(client: &Client, need: &Need) -> Read<bool> {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(need.verb.into()),
                group: Some(need.group.into()),
                resource: Some(need.resource.into()),
                namespace: need.namespace.clone(),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = api
        .create(&PostParams::default(), &review)
        .await
        .map_err(read_error)?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

/// Every need's answer, concurrently, in order.
async fn ask(client: &Client, needs: &[Need]) -> Vec<Read<bool>> {
    futures::future::join_all(needs.iter().map(|n| can(client, n))).await
}

/// A server-side dry run of a minimal LeaderWorkerSet: it passes only when the controller's
/// webhooks answer, which the CRD alone does not show.
async fn lws_probe(client: &Client, namespace: &str) -> Read<()> {
    let resource = ChildKind::LeaderWorkerSet.api_resource();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let probe: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": resource.api_version, "kind": resource.kind,
        "metadata": {"name": "infera-doctor-probe", "namespace": namespace},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 1, "workerTemplate": {"spec": {
            "containers": [{"name": "probe", "image": "example.invalid/infera-doctor-probe:0"}]}}}}
    }))
    .map_err(|e| e.to_string())?;
    api.create(
        &PostParams {
            dry_run: true,
            ..Default::default()
        },
        &probe,
    )
    .await
    .map(|_| ())
    .map_err(read_error)
}

/// DeviceClass names and the number of ResourceSlices of AMD's driver (resource.k8s.io v1, then v1beta2).
async fn dra(client: &Client) -> Read<(Vec<String>, usize)> {
    for version in ["v1", "v1beta2", "v1beta1"] {
        let classes = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("resource.k8s.io", version, "DeviceClass"),
            "deviceclasses",
        );
        let slices = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("resource.k8s.io", version, "ResourceSlice"),
            "resourceslices",
        );
        let names = match Api::<DynamicObject>::all_with(client.clone(), &classes)
            .list_metadata(&ListParams::default())
            .await
        {
            Ok(list) => list
                .items
                .into_iter()
                .filter_map(|o| o.metadata.name)
                .collect::<Vec<_>>(),
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => return Err(read_error(e)),
        };
        let amd_slices = match Api::<DynamicObject>::all_with(client.clone(), &slices)
            .list(&ListParams::default())
            .await
        {
            Ok(list) => list
                .items
                .iter()
                .filter(|s| s.data["spec"]["driver"] == checks::AMD_DRA)
                .count(),
            Err(_) => 0,
        };
        return Ok((names, amd_slices));
    }
    Ok((Vec::new(), 0))
}

/// Reads everything the checks need. Only `--for FILE` can fail the command here: a cluster that
/// cannot be reached is what the checks report.
pub async fn gather(args: &DoctorArgs, global: &GlobalArgs) -> Result<Facts> {
    let mut target = for_file(args, global)?;
    let mut f = Facts {
        pre: args.pre,
        spec: target.as_ref().map(|(_, valid)| valid.clone()),
        mutable_images: target
            .as_ref()
            .map(|(idep, _)| infera_core::validate::mutable_images(idep)),
        ..Default::default()
    };
    f.plugins_on_path = Some(plugins_on_path());
    f.kubectl = Some(
        tokio::task::spawn_blocking(kubectl_on_path)
            .await
            .unwrap_or_else(|e| Err(e.to_string())),
    );
    let kube = match client::connect(global).await {
        Ok(kube) => kube,
        Err(e) => {
            f.kubeconfig = Some(Err(crate::error::chain(&e)));
            return Ok(f);
        }
    };
    f.kubeconfig = Some(Ok(kube.context.clone()));
    f.namespace = kube.namespace.clone();
    // A spec without a namespace goes where `deploy` would put it: the context's namespace.
    if let Some((idep, _)) = &mut target
        && idep.metadata.namespace.is_none()
    {
        idep.metadata.namespace = Some(kube.namespace.clone());
        f.spec = Some(spec::validate(idep)?);
    }
    let version = kube.client.apiserver_version().await;
    f.server = Some(version.map_err(read_error).map(|v| {
        let minor = v.minor.trim_end_matches('+').parse().unwrap_or(0);
        (v.git_version, minor)
    }));
    if matches!(f.server, Some(Ok(_))) {
        read_cluster(&kube, &mut f).await;
        read_gaie(&kube.client, &mut f).await;
        read_networks(&kube.client, &mut f).await;
        read_keda(&kube.client, &mut f).await;
        read_pod_security(&kube.client, &mut f).await;
        read_policy_engines(&kube.client, &mut f).await;
        read_access(&kube, args.pre, &mut f).await;
    }
    Ok(f)
}

/// The `kubectl` that `PATH` finds (as a shell would, with `which`) and its client version.
fn kubectl_on_path() -> Read<Option<Kubectl>> {
    let Ok(path) = which::which("kubectl") else {
        return Ok(None);
    };
    let shown = path.display().to_string();
    let out = std::process::Command::new(&path)
        .args(["version", "--client", "-o", "json"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} version --client failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    checks::parse_kubectl_version(shown, &out.stdout).map(Some)
}

/// This binary, and every `kubectl-infera` on `PATH` in the order kubectl looks (kubectl runs
/// the first), each compared with this binary once symlinks are resolved (Krew links them).
fn plugins_on_path() -> (String, Vec<PluginOnPath>) {
    let this = std::env::current_exe().unwrap_or_default();
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let this_real = real(&this);
    let found = which::which_all("kubectl-infera")
        .map(|all| {
            all.map(|path| PluginOnPath {
                is_this: real(&path) == this_real,
                path: path.display().to_string(),
            })
            .collect()
        })
        .unwrap_or_default();
    (this.display().to_string(), found)
}

/// `--for FILE`: exactly one valid InferaDeployment (and the document, whose namespace may still
/// be the context's to fill in).
fn for_file(
    args: &DoctorArgs,
    global: &GlobalArgs,
) -> Result<Option<(InferaDeployment, ValidDeployment)>> {
    let Some(path) = &args.for_file else {
        return Ok(None);
    };
    let mut loaded = spec::load(path, global.namespace.as_deref())?;
    if loaded.len() != 1 {
        return Err(Error::Usage(format!(
            "{}: --for takes a file with exactly one InferaDeployment",
            path.display()
        )));
    }
    Ok(Some(loaded.remove(0)))
}

/// The controllers of InferaDeployments other than ours (INF104): every ClusterRole and
/// ClusterRoleBinding, and the Deployments of the namespaces whose ServiceAccounts they bind.
pub async fn other_controllers(
    client: &Client,
) -> kube::Result<Vec<checks::controllers::OtherController>> {
    let all = ListParams::default();
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let (roles, bindings) = tokio::join!(roles.list(&all), bindings.list(&all));
    let (roles, bindings) = (roles?.items, bindings?.items);
    let namespaces: std::collections::BTreeSet<&str> = bindings
        .iter()
        .flat_map(|binding| binding.subjects.iter().flatten())
        .filter(|subject| subject.kind == "ServiceAccount")
        .filter_map(|subject| subject.namespace.as_deref())
        .collect();
    let mut deployments = Vec::new();
    for namespace in namespaces {
        let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
        deployments.extend(api.list(&all).await?.items);
    }
    Ok(checks::controllers::other_controllers(
        &roles,
        &bindings,
        &deployments,
    ))
}

/// Every cluster read, concurrently, each on its own: one forbidden call hides nothing else.
async fn read_cluster(kube: &Kube, f: &mut Facts) {
    let client = &kube.client;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let operator_api: Api<Deployment> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let operator_pods: Api<Pod> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let leases: Api<Lease> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let webhooks: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let nodes: Api<Node> = Api::all(client.clone());
    let pods: Api<Pod> = Api::all(client.clone());
    let storage: Api<StorageClass> = Api::all(client.clone());
    let holding = ListParams::default().fields("status.phase!=Succeeded,status.phase!=Failed");
    let operator_selector = ListParams::default().labels(bundle::OPERATOR_PODS);
    let lws_crd = ChildKind::LeaderWorkerSet
        .crd()
        .map(|c| c.name)
        .unwrap_or_default();
    let infera_crd_name = bundle::crd_name();
    let all = ListParams::default();
    let (
        infera_crd,
        operator,
        op_pods,
        lease,
        lws,
        hooks,
        probe,
        node_list,
        pod_list,
        dra,
        classes,
        others,
    ) = tokio::join!(
        crds.get_opt(&infera_crd_name),
        operator_api.get_opt(bundle::OPERATOR),
        operator_pods.list(&operator_selector),
        leases.get_opt(naming::LEADER_LEASE),
        crds.get_opt(&lws_crd),
        webhooks.list(&all),
        lws_probe(client, &kube.namespace),
        nodes.list(&all),
        pods.list(&holding),
        dra(client),
        storage.list(&all),
        other_controllers(client),
    );
    f.other_controllers = Some(others.map_err(read_error));
    f.infera_crd = Some(optional(infera_crd));
    f.operator = Some(optional(operator));
    f.operator_pods = op_pods.map(|l| l.items).unwrap_or_default();
    let now = k8s_openapi::jiff::Timestamp::now();
    f.operator_lease = Some(optional(lease).map(|l| l.map(|l| LeaseRenewal::of(&l, now))));
    f.lws_crd = Some(optional(lws));
    f.lws_webhooks = Some(hooks.map_err(read_error).map(|list| {
        list.items.iter().any(|c| {
            c.webhooks
                .iter()
                .flatten()
                .any(|w| w.name.contains("leaderworkerset"))
        })
    }));
    f.lws_probe = Some(probe);
    f.nodes = Some(node_list.map(|l| l.items).map_err(read_error));
    f.pods = Some(pod_list.map(|l| l.items).map_err(read_error));
    f.dra = Some(dra);
    f.default_storage_classes = Some(classes.map_err(read_error).map(default_classes));
}

/// For a `--for` spec whose pools attach Multus networks: the NetworkAttachmentDefinition CRD,
/// then each named network (one GET each).
async fn read_networks(client: &Client, f: &mut Facts) {
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
async fn read_policy_engines(client: &Client, f: &mut Facts) {
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

/// For a `--for` spec with a `provider: keda` pool: KEDA's ScaledObject CRD (one GET).
async fn read_keda(client: &Client, f: &mut Facts) {
    let (Some(spec), Some(crd)) = (&f.spec, ChildKind::ScaledObject.crd()) else {
        return;
    };
    if checks::keda::keda_pools(spec).is_empty() {
        return;
    }
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    f.keda_crd = Some(optional(crds.get_opt(&crd.name).await));
}

/// For a `--for` spec: its namespace's `enforce` label and a server-side dry run of a Pod from
/// each pod template it renders (see [`checks::pod_security`]). The Pods run as the namespace's
/// default ServiceAccount, as the spec's own may not exist yet (and Pod Security does not read it).
async fn read_pod_security(client: &Client, f: &mut Facts) {
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
async fn read_gaie(client: &Client, f: &mut Facts) {
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
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(gateway_api::GROUP, "v1", "Gateway"),
        "gateways",
    );
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
    let children: Vec<Child> = render_for(spec, Apis { inference_pool })
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

/// Names of the StorageClasses marked as the default.
fn default_classes(list: ObjectList<StorageClass>) -> Vec<String> {
    list.items
        .into_iter()
        .filter(|c| {
            c.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("storageclass.kubernetes.io/is-default-class"))
                .is_some_and(|v| v == "true")
        })
        .filter_map(|c| c.metadata.name)
        .collect()
}

/// The SelfSubjectAccessReviews: `deploy`'s always; `init`'s before install (`--pre`) or when
/// something of Infera is missing, not afterwards.
async fn read_access(kube: &Kube, pre: bool, f: &mut Facts) {
    let missing = matches!(f.infera_crd, Some(Ok(None))) || matches!(f.operator, Some(Ok(None)));
    let init_needs = if pre || missing {
        checks::init_needs()
    } else {
        Vec::new()
    };
    let deploy_needs = checks::deploy_needs(&kube.namespace);
    let (init_answers, deploy_answers) = tokio::join!(
        ask(&kube.client, &init_needs),
        ask(&kube.client, &deploy_needs)
    );
    f.init_access = init_needs.into_iter().zip(init_answers).collect();
    f.deploy_access = deploy_needs.into_iter().zip(deploy_answers).collect();
}

/// The one document `-o json|yaml` prints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub success: bool,
    pub summary: BTreeMap<&'static str, usize>,
    pub checks: Vec<Check>,
}

/// The checks with their counts per severity and the verdict.
pub fn report(checks: Vec<Check>) -> Report {
    let mut summary = BTreeMap::from([("pass", 0), ("warn", 0), ("fail", 0), ("skip", 0)]);
    for c in &checks {
        let key = match c.severity {
            Severity::Pass => "pass",
            Severity::Warn => "warn",
            Severity::Fail => "fail",
            Severity::Skip => "skip",
        };
        *summary.entry(key).or_default() += 1;
    }
    Report {
        schema_version: 1,
        success: checks::success(&checks),
        summary,
        checks,
    }
}

/// The report as text: per category a heading and a table of its checks (label, ID, name,
/// message), each check's details and hint on lines of their own under its message.
pub fn text(printer: &Printer, report: &Report) -> String {
    let mut out = String::new();
    let mut categories: Vec<(&str, Vec<&Check>)> = Vec::new();
    for c in &report.checks {
        match categories.last_mut() {
            Some((category, checks)) if *category == c.category => checks.push(c),
            _ => categories.push((c.category, vec![c])),
        }
    }
    for (category, checks) in categories {
        out.push_str(&format!("{}\n", printer.paint(Style::Bold, category)));
        out.push_str(&category_table(printer, &checks));
    }
    let s = &report.summary;
    let verdict = if report.success {
        printer.paint(Style::Good, "no failures")
    } else {
        printer.paint(Style::Bad, "problems found")
    };
    out.push_str(&format!(
        "\n{verdict}: {} passed, {} warning(s), {} failed, {} skipped\n",
        s.get("pass").unwrap_or(&0),
        s.get("warn").unwrap_or(&0),
        s.get("fail").unwrap_or(&0),
        s.get("skip").unwrap_or(&0)
    ));
    out
}

/// One category's checks as a borderless table, its names at least 20 wide so that every
/// category's messages start in the same column.
fn category_table(printer: &Printer, checks: &[&Check]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    for c in checks {
        let (label, style) = match c.severity {
            Severity::Pass => ("ok", Style::Good),
            Severity::Warn => ("warn", Style::Warn),
            Severity::Fail => ("FAIL", Style::Bad),
            Severity::Skip => ("skip", Style::Dim),
        };
        table.add_row(vec![
            printer.cell(&Cell::styled(label, Some(style))),
            printer.cell(&Cell::from(c.id)),
            printer.cell(&Cell::from(c.name)),
            printer.cell(&Cell::from(c.message.as_str())),
        ]);
        let under = c.details.iter().map(|d| Cell::from(d.as_str())).chain(
            c.hint
                .iter()
                .map(|h| Cell::styled(format!("hint: {h}"), Some(Style::Dim))),
        );
        for cell in under {
            table.add_row(vec![
                comfy_table::Cell::new(""),
                comfy_table::Cell::new(""),
                comfy_table::Cell::new(""),
                printer.cell(&cell),
            ]);
        }
    }
    printer.lay_out(&mut table, 2, &[2, 2, 1]);
    for (column, width) in [(0, LABEL_WIDTH), (2, NAME_WIDTH)] {
        if let Some(column) = table.column_mut(column) {
            column.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                comfy_table::Width::Fixed(width),
            ));
        }
    }
    lines(&table)
}

/// Widths of the label and check-name columns, padding included, the same in every category so
/// that all messages start in one column.
const LABEL_WIDTH: u16 = 8;
const NAME_WIDTH: u16 = 21;

/// Runs `doctor`: gathers, evaluates, prints; a failing check is [`Error::ChecksFailed`] (exit 1)
/// after the report, in every output mode.
pub async fn run(args: &DoctorArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let facts = gather(args, global).await?;
    let report = report(checks::evaluate(&facts));
    match args.output {
        Output::Json => printer.json(&report)?,
        Output::Yaml => printer.yaml(&report)?,
        Output::Table | Output::Wide => printer.out(&text(printer, &report)),
    }
    match report.summary.get("fail").copied().unwrap_or_default() {
        0 => Ok(()),
        failed => Err(Error::ChecksFailed { failed }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_report_aligns_messages_hints_and_details_in_one_column() {
        let check = |id, category, name, severity, message: &str| Check {
            id,
            category,
            name,
            severity,
            message: message.into(),
            hint: None,
            details: vec![],
        };
        let mut warn = check(
            "INF004",
            "kubernetes",
            "plugin-path",
            Severity::Warn,
            "2 copies",
        );
        warn.details = vec!["/opt/bin/kubectl-infera".into()];
        warn.hint = Some("remove the other copies".into());
        let report = report(vec![
            check(
                "INF001",
                "kubernetes",
                "kubeconfig",
                Severity::Pass,
                "context \"admin\"",
            ),
            warn,
            check("INF101", "infera", "crd", Severity::Pass, "installed"),
        ]);
        assert_eq!(
            text(&Printer::plain(), &report),
            "kubernetes\n  \
             ok    INF001  kubeconfig           context \"admin\"\n  \
             warn  INF004  plugin-path          2 copies\n                                     \
             /opt/bin/kubectl-infera\n                                     \
             hint: remove the other copies\n\
             infera\n  \
             ok    INF101  crd                  installed\n\
             \nno failures: 2 passed, 1 warning(s), 0 failed, 0 skipped\n"
        );
    }
}
