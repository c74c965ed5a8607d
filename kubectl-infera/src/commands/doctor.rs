//! `kubectl infera doctor`: gathers [`Facts`] from the cluster (concurrently, each read on its
//! own so one forbidden call does not hide the rest), runs the pure check engine of
//! [`crate::checks`], and prints one table or exactly one JSON/YAML document.
//! Exit code 0 when no check fails (warnings allowed), 1 otherwise — in every output mode.

use infera_core::{ChildKind, InferaDeployment, ValidDeployment, naming};
use k8s_openapi::{
    api::{
        admissionregistration::v1::ValidatingWebhookConfiguration,
        apps::v1::Deployment,
        authorization::v1::{
            ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
        },
        coordination::v1::Lease,
        core::v1::{Node, Pod},
        rbac::v1::{ClusterRole, ClusterRoleBinding},
        storage::v1::StorageClass,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams, ObjectList, PostParams},
    core::{ApiResource, GroupVersionKind},
};

mod needs;
mod report;

use needs::{
    read_api_server, read_gaie, read_keda, read_monitoring, read_networks, read_pod_security,
    read_policy_engines,
};
pub use report::{report, text};

use crate::{
    bundle,
    checks::{self, Facts, Kubectl, Need, PluginOnPath, Read, infera::LeaseRenewal},
    cli::{DoctorArgs, GlobalArgs, Output},
    client::{self, Kube},
    error::{Error, Result},
    printer::Printer,
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
                resource: Some(need.resource.split('/').next().unwrap_or_default().into()),
                subresource: need.resource.split_once('/').map(|(_, sub)| sub.into()),
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
    facts(for_file(args, global)?, args.pre, global).await
}

/// Reads everything the checks need, with `target` the spec to check (`--for`) when there is one.
pub async fn facts(
    mut target: Option<(InferaDeployment, ValidDeployment)>,
    pre: bool,
    global: &GlobalArgs,
) -> Result<Facts> {
    let mut f = Facts {
        pre,
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
        read_monitoring(&kube.client, &mut f).await;
        read_pod_security(&kube.client, &mut f).await;
        read_policy_engines(&kube.client, &mut f).await;
        read_api_server(&kube.client, &mut f).await;
        read_access(&kube, pre, &mut f).await;
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
    let day2_needs = checks::day2_needs(&kube.namespace);
    let (init_answers, deploy_answers, day2_answers) = tokio::join!(
        ask(&kube.client, &init_needs),
        ask(&kube.client, &deploy_needs),
        ask(&kube.client, &day2_needs)
    );
    f.init_access = init_needs.into_iter().zip(init_answers).collect();
    f.deploy_access = deploy_needs.into_iter().zip(deploy_answers).collect();
    f.day2_access = day2_needs.into_iter().zip(day2_answers).collect();
}

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
