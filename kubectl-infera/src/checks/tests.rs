use infera_core::{ValidDeployment, crd::VERSION};
use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{Node, Pod},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};

use super::{
    gpu::{fit, gpu_capacity, is_amd_gpu_resource},
    *,
};

fn node(name: &str, allocatable: &[(&str, &str)]) -> Node {
    let alloc: serde_json::Map<String, serde_json::Value> = allocatable
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
        .collect();
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "status": {"allocatable": alloc, "conditions": [{"type": "Ready", "status": "True"}]}
    }))
    .unwrap_or_default()
}

fn gpu_pod(node: &str, gpus: &str) -> Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"limits": {"amd.com/gpu": gpus}}}]},
        "status": {"phase": "Running"}
    }))
    .unwrap_or_default()
}

fn crd(name: &str, version: &str) -> CustomResourceDefinition {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "annotations": {"infera.amd.com/version": VERSION}},
        "spec": {"group": "g", "names": {"kind": "K", "plural": "ks"}, "scope": "Namespaced",
                 "versions": [{"name": version, "served": true, "storage": true}]},
        "status": {"conditions": [{"type": "Established", "status": "True"}]}
    }))
    .unwrap_or_default()
}

fn operator() -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "infera-operator", "generation": 1, "labels": {"app.kubernetes.io/version": VERSION}},
        "spec": {"replicas": 2, "selector": {}, "template": {}},
        "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2}
    }))
    .unwrap_or_default()
}

fn kubectl_at(minor: u32) -> Kubectl {
    Kubectl {
        path: "/usr/bin/kubectl".into(),
        version: format!("v1.{minor}.2"),
        major: 1,
        minor,
    }
}

fn plugin(path: &str, is_this: bool) -> PluginOnPath {
    PluginOnPath {
        path: path.into(),
        is_this,
    }
}

/// A healthy tier-2-like cluster: two 8-GPU nodes, LWS, Infera installed, all permissions.
fn healthy() -> Facts {
    let all = |needs: Vec<Need>| needs.into_iter().map(|n| (n, Ok(true))).collect();
    Facts {
        pre: false,
        namespace: "default".into(),
        kubeconfig: Some(Ok("admin".into())),
        server: Some(Ok(("v1.36.3".into(), 36))),
        kubectl: Some(Ok(Some(kubectl_at(36)))),
        plugins_on_path: Some((
            "/home/u/.krew/bin/kubectl-infera".into(),
            vec![plugin("/home/u/.krew/bin/kubectl-infera", true)],
        )),
        infera_crd: Some(Ok(Some(crd(
            "inferadeployments.infera.amd.com",
            "v1alpha1",
        )))),
        operator: Some(Ok(Some(operator()))),
        operator_pods: vec![],
        operator_lease: None,
        other_controllers: Some(Ok(vec![])),
        lws_crd: Some(Ok(Some(crd(
            "leaderworkersets.leaderworkerset.x-k8s.io",
            "v1",
        )))),
        lws_webhooks: Some(Ok(true)),
        lws_probe: Some(Ok(())),
        keda_crd: None,
        monitoring_crd: None,
        rule_crd: None,
        nodes: Some(Ok(vec![
            node("gpu-node-0", &[("amd.com/gpu", "8")]),
            node("gpu-node-1", &[("amd.com/gpu", "8")]),
        ])),
        pods: Some(Ok(vec![gpu_pod("gpu-node-0", "3")])),
        dra: Some(Ok((vec![], 0))),
        default_storage_classes: Some(Ok(vec!["standard".into()])),
        init_access: vec![],
        deploy_access: all(deploy_needs("default")),
        day2_access: all(day2_needs("default")),
        spec: None,
        mutable_images: None,
        rdma_networks: None,
        gaie: GaieFacts::default(),
        pod_security: None,
        network_policy_engines: None,
        api_server: None,
    }
}

fn by_id<'a>(checks: &'a [Check], id: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

fn spec(file: &str) -> ValidDeployment {
    let text =
        std::fs::read_to_string(format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_default();
    let idep = infera_core::yaml::parse_deployments(&text)
        .unwrap_or_default()
        .remove(0);
    infera_core::validate(&idep).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_healthy_cluster_passes_with_free_gpus_per_node() {
    let checks = evaluate(&healthy());
    assert!(success(&checks));
    let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "INF001", "INF002", "INF003", "INF004", "INF101", "INF102", "INF103", "INF104",
            "INF201", "INF202", "INF301", "INF302", "INF303", "INF401", "INF402", "INF403",
            "INF501"
        ]
    );
    assert_eq!(
        by_id(&checks, "INF302").details,
        [
            "gpu-node-0: 5/8 amd.com/gpu free",
            "gpu-node-1: 8/8 amd.com/gpu free"
        ]
    );
}

#[test]
fn without_lws_the_crd_check_fails_with_a_hint() {
    let facts = Facts {
        lws_crd: Some(Ok(None)),
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert!(!success(&checks));
    let lws = by_id(&checks, "INF201");
    assert_eq!(lws.severity, Severity::Fail);
    assert_eq!(
        lws.message,
        "the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) is not installed"
    );
    assert!(
        lws.hint
            .as_deref()
            .is_some_and(|h| h.starts_with("install LeaderWorkerSet"))
    );
    assert_eq!(by_id(&checks, "INF202").severity, Severity::Skip);
}

#[test]
fn lws_crd_without_controller_fails_the_controller_check() {
    let facts = Facts {
        lws_webhooks: Some(Ok(false)),
        lws_probe: Some(Ok(())),
        ..healthy()
    };
    let c = evaluate(&facts);
    assert_eq!(by_id(&c, "INF202").severity, Severity::Fail);
    let facts = Facts {
        lws_probe: Some(Err("Internal error occurred: failed calling webhook".into())),
        ..healthy()
    };
    assert_eq!(by_id(&evaluate(&facts), "INF202").severity, Severity::Fail);
}

#[test]
fn without_gpu_nodes_the_gpu_check_fails_with_a_hint() {
    let facts = Facts {
        nodes: Some(Ok(vec![node("cpu-0", &[("cpu", "8")])])),
        pods: Some(Ok(vec![])),
        ..healthy()
    };
    let checks = evaluate(&facts);
    let gpu = by_id(&checks, "INF301");
    assert_eq!(gpu.severity, Severity::Fail);
    assert_eq!(
        gpu.message,
        "no node has allocatable amd.com/gpu (of 1 node(s))"
    );
    assert!(
        gpu.hint
            .as_deref()
            .is_some_and(|h| h.contains("AMD GPU Operator"))
    );
    assert_eq!(by_id(&checks, "INF302").severity, Severity::Skip);
}

#[test]
fn partitioned_gpus_are_recognised_with_a_hint_not_a_failure() {
    let facts = Facts {
        nodes: Some(Ok(vec![node("mi300-0", &[("amd.com/cpx_nps4", "64")])])),
        ..healthy()
    };
    let checks = evaluate(&facts);
    let gpu = by_id(&checks, "INF301");
    assert_eq!(gpu.severity, Severity::Warn);
    assert_eq!(
        gpu.message,
        "no node has amd.com/gpu, but 1 node(s) have partitioned AMD GPUs: amd.com/cpx_nps4"
    );
    assert_eq!(
        gpu.hint.as_deref(),
        Some(
            "the device plugin uses the `mixed` naming strategy: set `resources.gpuType: amd.com/cpx_nps4` on your worker pools"
        )
    );
    assert!(success(&checks));
}

#[test]
fn dra_is_recognised_with_a_hint() {
    let facts = Facts {
        nodes: Some(Ok(vec![node("mi300-0", &[("cpu", "96")])])),
        dra: Some(Ok((vec!["gpu.amd.com".into()], 1))),
        ..healthy()
    };
    let gpu = evaluate(&facts).into_iter().find(|c| c.id == "INF301");
    assert_eq!(gpu.as_ref().map(|c| c.severity), Some(Severity::Warn));
    assert!(
        gpu.and_then(|c| c.hint)
            .is_some_and(|h| h.contains("DeviceClass gpu.amd.com"))
    );
}

#[test]
fn an_unprivileged_user_is_told_which_permissions_are_missing() {
    fn forbidden<T>(what: &str) -> Read<T> {
        Err(format!(
            "forbidden: {what} is forbidden: User \"alice\" cannot list"
        ))
    }
    let facts = Facts {
        kubeconfig: Some(Ok("alice".into())),
        infera_crd: Some(forbidden("customresourcedefinitions")),
        operator: Some(forbidden("deployments")),
        lws_crd: Some(forbidden("customresourcedefinitions")),
        nodes: Some(forbidden("nodes")),
        pods: Some(forbidden("pods")),
        default_storage_classes: Some(forbidden("storageclasses")),
        deploy_access: deploy_needs("team-a")
            .into_iter()
            .map(|n| (n.clone(), Ok(n.verb == "get")))
            .collect(),
        day2_access: day2_needs("team-a")
            .into_iter()
            .map(|n| (n, Ok(false)))
            .collect(),
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert!(!success(&checks));
    let day2 = by_id(&checks, "INF403");
    assert_eq!(day2.severity, Severity::Warn);
    assert_eq!(
        day2.details,
        [
            "missing: get pods/log in namespace team-a",
            "missing: get pods/proxy in namespace team-a",
            "missing: watch pods in namespace team-a",
        ]
    );
    let deploy = by_id(&checks, "INF402");
    assert_eq!(deploy.severity, Severity::Fail);
    assert_eq!(
        deploy.details,
        [
            "missing: create inferadeployments.infera.amd.com in namespace team-a",
            "missing: patch inferadeployments.infera.amd.com in namespace team-a",
            "missing: list pods in namespace team-a",
            "missing: list events in namespace team-a",
        ]
    );
    assert_eq!(by_id(&checks, "INF301").severity, Severity::Warn);
    assert!(
        by_id(&checks, "INF301")
            .message
            .starts_with("cannot check: listing nodes: forbidden")
    );
}

#[test]
fn pre_install_accepts_a_missing_crd_and_checks_init_permissions() {
    let facts = Facts {
        pre: true,
        infera_crd: Some(Ok(None)),
        operator: Some(Ok(None)),
        init_access: init_needs().into_iter().map(|n| (n, Ok(true))).collect(),
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert!(success(&checks), "{checks:#?}");
    assert_eq!(
        by_id(&checks, "INF101").message,
        "not installed yet (expected before `kubectl infera init`)"
    );
    assert_eq!(by_id(&checks, "INF401").severity, Severity::Pass);
    let after = Facts {
        pre: false,
        ..facts
    };
    assert_eq!(by_id(&evaluate(&after), "INF101").severity, Severity::Fail);
}

#[test]
fn unreachable_api_stops_after_the_api_check() {
    let facts = Facts {
        server: Some(Err("connection refused".into())),
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[1].severity, Severity::Fail);
}

#[test]
fn fit_places_pools_one_by_one() {
    let capacity = gpu_capacity(
        &[
            node("a", &[("amd.com/gpu", "8")]),
            node("b", &[("amd.com/gpu", "8")]),
        ],
        &[gpu_pod("a", "3")],
    );
    assert_eq!(
        fit(&spec("pd.yaml"), &capacity),
        (
            true,
            vec![
                "decode: 1 pod(s) × 1 amd.com/gpu fit".to_string(),
                "prefill: 1 pod(s) × 1 amd.com/gpu fit".to_string(),
            ]
        )
    );
    // 2 groups × 2 nodes × 8 GPUs = 4 pods of 8 GPUs; only node b has 8 free.
    assert_eq!(fit(&spec("multinode.yaml"), &capacity), (false, vec![
        "worker: 4 pod(s) × 8 amd.com/gpu needed, only 1 fit (largest free block left: 5 on one node)".to_string(),
    ]));
}

/// A node of `product` (the label value AMD's node labeller writes) with 8 GPUs.
fn product_node(name: &str, product: &str) -> Node {
    let mut node = node(name, &[("amd.com/gpu", "8")]);
    node.metadata.labels = Some(
        [(
            infera_core::gpu_product::PRODUCT_LABEL.to_string(),
            product.to_string(),
        )]
        .into(),
    );
    node
}

/// `pd.yaml` with both pools on GPU `product`.
fn pd_on(product: &str) -> ValidDeployment {
    let mut spec = spec("pd.yaml");
    for worker in &mut spec.workers {
        worker.gpu_product = Some(product.into());
    }
    spec
}

#[test]
fn fit_places_a_pool_only_on_its_gpu_product_and_names_the_products_present() {
    let capacity = gpu_capacity(
        &[
            product_node("mi300x", "AMD_Instinct_MI300X_OAM"),
            product_node("mi210", "Instinct_MI210"),
        ],
        &[gpu_pod("mi300x", "7")],
    );
    assert_eq!(
        fit(&pd_on("MI300X"), &capacity),
        (
            false,
            vec![
                "decode: 1 pod(s) × 1 amd.com/gpu of product MI300X fit".to_string(),
                "prefill: 1 pod(s) × 1 amd.com/gpu of product MI300X needed, only 0 fit (largest free block left: 0 on one node)".to_string(),
            ]
        )
    );
    assert_eq!(
        fit(&pd_on("MI355X"), &capacity).1[0],
        "decode: 1 pod(s) × 1 amd.com/gpu of product MI355X needed, only 0 fit (largest free block left: 0 on one node); no node has MI355X, the cluster has MI210, MI300X"
    );
    assert_eq!(
        super::gpu::free_per_product(&capacity, "amd.com/gpu"),
        [("MI210".to_string(), 8), ("MI300X".to_string(), 1)].into()
    );
    let facts = Facts {
        nodes: Some(Ok(vec![
            product_node("mi300x", "AMD_Instinct_MI300X_OAM"),
            product_node("mi210", "Instinct_MI210"),
        ])),
        pods: Some(Ok(vec![gpu_pod("mi300x", "7")])),
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert_eq!(
        by_id(&checks, "INF301").message,
        "2 node(s) with 16 allocatable amd.com/gpu; GPU products: 1 MI210, 1 MI300X"
    );
    assert_eq!(
        by_id(&checks, "INF302").details,
        [
            "mi300x: 1/8 MI300X amd.com/gpu free",
            "mi210: 8/8 MI210 amd.com/gpu free"
        ]
    );
}

#[test]
fn fit_places_rdma_pools_only_where_the_nics_are_free_too() {
    let mut with_nics = product_node("nics", "AMD_Instinct_MI300X");
    if let Some(allocatable) = with_nics
        .status
        .as_mut()
        .and_then(|s| s.allocatable.as_mut())
    {
        allocatable.insert(
            "rdma/hca".into(),
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("1".into()),
        );
    }
    let capacity = gpu_capacity(
        &[with_nics, product_node("bare", "AMD_Instinct_MI300X")],
        &[],
    );
    // Prefill and decode each need 1 GPU and 1 rdma/hca; only one NIC is free.
    assert_eq!(
        fit(&spec("pd-mi300x.yaml"), &capacity),
        (
            false,
            vec![
                "decode: 1 pod(s) × 1 amd.com/gpu of product MI300X with 1 rdma/hca fit".to_string(),
                "prefill: 1 pod(s) × 1 amd.com/gpu of product MI300X with 1 rdma/hca needed, only 0 fit (largest free block left: 0 on one node)".to_string(),
            ]
        )
    );
    let bare = gpu_capacity(&[product_node("bare", "AMD_Instinct_MI300X")], &[]);
    assert!(
        fit(&spec("pd-mi300x.yaml"), &bare).1[0]
            .ends_with("; no node with these GPUs advertises rdma/hca"),
        "{:?}",
        fit(&spec("pd-mi300x.yaml"), &bare)
    );
}

#[test]
fn rdma_networks_are_checked_only_for_a_spec_that_attaches_some() {
    use super::network::networks_of;
    assert!(evaluate(&healthy()).iter().all(|c| c.id != "INF305"));
    let pd = spec("pd-mi300x.yaml");
    assert_eq!(
        networks_of(&pd).into_iter().collect::<Vec<_>>(),
        [("default".to_string(), "rdma-net".to_string())]
    );
    let with = |found: network::NetworkFacts| {
        let facts = Facts {
            spec: Some(pd.clone()),
            rdma_networks: Some(Ok(found)),
            ..healthy()
        };
        let check = by_id(&evaluate(&facts), "INF305").clone();
        (check.severity, check.message)
    };
    assert_eq!(
        with(None),
        (Severity::Fail, "the spec attaches RDMA networks, but the network-attachment-definitions.k8s.cni.cncf.io CRD is not installed".to_string())
    );
    let net = ("default".to_string(), "rdma-net".to_string());
    assert_eq!(
        with(Some(vec![(net.clone(), false)])),
        (
            Severity::Fail,
            "missing NetworkAttachmentDefinition(s): default/rdma-net".to_string()
        )
    );
    assert_eq!(
        with(Some(vec![(net, true)])),
        (
            Severity::Pass,
            "every RDMA network exists: default/rdma-net".to_string()
        )
    );
}

#[test]
fn network_policy_engines_are_looked_for_by_their_daemonsets() {
    use super::network_policy::engines;
    assert!(evaluate(&healthy()).iter().all(|c| c.id != "INF602"));
    assert_eq!(
        engines([
            "kube-system/calico-node",
            "kube-system/kube-proxy",
            "cilium/cilium-envoy",
            "monitoring/node-exporter",
        ]),
        ["kube-system/calico-node", "cilium/cilium-envoy"]
    );
    let with = |found: Read<Vec<String>>| {
        let facts = Facts {
            spec: Some(spec("pd.yaml")),
            network_policy_engines: Some(found),
            ..healthy()
        };
        let check = by_id(&evaluate(&facts), "INF602").clone();
        (check.severity, check.message)
    };
    assert_eq!(
        with(Ok(vec!["kube-system/calico-node".into()])),
        (
            Severity::Pass,
            "NetworkPolicies are enforced by kube-system/calico-node".to_string()
        )
    );
    let (severity, message) = with(Ok(vec![]));
    assert_eq!(severity, Severity::Warn);
    assert!(
        message.starts_with("no NetworkPolicy engine found among the cluster's DaemonSets (looked for calico-node, canal, cilium,"),
        "{message}"
    );
    assert_eq!(with(Err("forbidden".into())).0, Severity::Warn);
}

#[test]
fn restricted_egress_needs_the_api_servers_endpoints() {
    use infera_core::render::ApiServer;
    assert!(evaluate(&healthy()).iter().all(|c| c.id != "INF603"));
    let with = |read: Read<Option<ApiServer>>| {
        let facts = Facts {
            api_server: Some(read),
            ..healthy()
        };
        let check = by_id(&evaluate(&facts), "INF603").clone();
        (check.severity, check.message, check.hint)
    };
    let api = ApiServer {
        addresses: vec!["172.18.0.2".into(), "172.18.0.3".into()],
        ports: vec![6443],
    };
    let (severity, message, _) = with(Ok(Some(api)));
    assert_eq!(severity, Severity::Pass);
    assert_eq!(
        message,
        "restricted egress lets the graph's pods reach the API server at 172.18.0.2, 172.18.0.3 (port 6443)"
    );
    let (severity, message, hint) = with(Ok(None));
    assert_eq!(severity, Severity::Fail);
    assert!(
        message.starts_with("the API server publishes no endpoints (EndpointSlice default/kubernetes is missing or lists none)"),
        "{message}"
    );
    assert!(
        hint.as_deref()
            .is_some_and(|h| h.contains("--endpoint-reconciler-type=lease")),
        "{hint:?}"
    );
    assert_eq!(with(Err("forbidden".into())).0, Severity::Warn);
}

#[test]
fn amd_resource_names() {
    assert!(is_amd_gpu_resource("amd.com/gpu"));
    assert!(is_amd_gpu_resource("amd.com/cpx_nps4"));
    assert!(is_amd_gpu_resource("amd.com/spx_nps1"));
    assert!(!is_amd_gpu_resource("amd.com/xgmi"));
    assert!(!is_amd_gpu_resource("nvidia.com/gpu"));
}

#[test]
fn image_pinning_is_checked_only_for_a_spec() {
    assert!(evaluate(&healthy()).iter().all(|c| c.id != "INF304"));

    let facts = Facts {
        spec: Some(spec("pd.yaml")),
        mutable_images: Some(vec![infera_core::validate::MutableImage {
            path: "spec.image".into(),
            image: "rocm/infera:sglang-v0.1.1".into(),
        }]),
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert!(success(&checks), "a warning does not fail doctor");
    let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "INF001", "INF002", "INF003", "INF004", "INF101", "INF102", "INF103", "INF104",
            "INF201", "INF202", "INF301", "INF302", "INF303", "INF304", "INF401", "INF402",
            "INF403", "INF501"
        ]
    );
    let pinning = by_id(&checks, "INF304");
    assert_eq!(
        (pinning.category, pinning.name, pinning.severity),
        ("images", "image-pinning", Severity::Warn)
    );
    assert_eq!(pinning.message, "1 image(s) are mutable tags");
    assert_eq!(
        pinning.hint.as_deref(),
        Some(
            "pin each by digest, e.g. rocm/infera@sha256:<64 hex> (find it with `crane digest IMAGE` or your registry); spec.imagePolicy.requireDigest makes this an error"
        )
    );
    assert_eq!(
        pinning.details,
        [
            "spec.image rocm/infera:sglang-v0.1.1 is a mutable tag; pin it by digest (spec.imagePolicy.requireDigest makes this an error)"
        ]
    );

    let pinned = Facts {
        mutable_images: Some(vec![]),
        ..facts
    };
    let pinning = evaluate(&pinned)
        .into_iter()
        .find(|c| c.id == "INF304")
        .expect("INF304");
    assert_eq!(
        (pinning.severity, pinning.message.as_str(), pinning.hint),
        (
            Severity::Pass,
            "every image the spec names is pinned by digest",
            None
        )
    );
}

mod controllers;
mod gaie;
mod pod_security;

#[test]
fn kubectl_within_one_minor_of_the_server_passes_and_further_warns() {
    let with = |kubectl| {
        let checks = evaluate(&Facts {
            kubectl: Some(kubectl),
            ..healthy()
        });
        let c = by_id(&checks, "INF003").clone();
        (c.severity, c.message, c.hint)
    };
    let hint = Some("use a kubectl v1.35–v1.37 for this cluster: kubectl is supported within one minor version of the API server (Kubernetes version skew policy)".to_string());
    for minor in [35, 36, 37] {
        assert_eq!(
            with(Ok(Some(kubectl_at(minor)))),
            (
                Severity::Pass,
                format!("v1.{minor}.2 (/usr/bin/kubectl), within ±1 minor of the server's v1.36.3"),
                None
            )
        );
    }
    for minor in [34, 38] {
        assert_eq!(
            with(Ok(Some(kubectl_at(minor)))),
            (
                Severity::Warn,
                format!(
                    "v1.{minor}.2 (/usr/bin/kubectl) is outside the supported skew of the server's v1.36.3 (±1 minor)"
                ),
                hint.clone()
            )
        );
    }
    assert_eq!(
        with(Ok(None)),
        (Severity::Warn, "no kubectl on PATH".into(), hint.clone())
    );
    assert_eq!(with(Err("exit 1".into())).0, Severity::Warn);
}

#[test]
fn kubectl_version_output_is_parsed() {
    let json = br#"{"clientVersion": {"major": "1", "minor": "36+", "gitVersion": "v1.36.3"}, "kustomizeVersion": "v5"}"#;
    assert_eq!(
        parse_kubectl_version("/usr/bin/kubectl".into(), json),
        Ok(Kubectl {
            path: "/usr/bin/kubectl".into(),
            version: "v1.36.3".into(),
            major: 1,
            minor: 36
        })
    );
    assert_eq!(
        parse_kubectl_version("k".into(), br#"{"clientVersion": {}}"#),
        Err("k version --client -o json: no clientVersion.major".into())
    );
}

#[test]
fn another_kubectl_infera_on_path_is_reported_like_kubectl_plugin_list() {
    let with = |found: Vec<PluginOnPath>| {
        let checks = evaluate(&Facts {
            plugins_on_path: Some(("/build/kubectl-infera".into(), found)),
            ..healthy()
        });
        by_id(&checks, "INF004").clone()
    };
    let only = with(vec![plugin("/build/kubectl-infera", true)]);
    assert_eq!(
        (only.severity, only.message.as_str()),
        (
            Severity::Pass,
            "`kubectl infera` runs this binary (/build/kubectl-infera)"
        )
    );
    let shadowed = with(vec![
        plugin("/usr/local/bin/kubectl-infera", false),
        plugin("/build/kubectl-infera", true),
    ]);
    assert_eq!(shadowed.severity, Severity::Warn);
    assert_eq!(
        shadowed.message,
        "`kubectl infera` runs /usr/local/bin/kubectl-infera, not this binary (/build/kubectl-infera)"
    );
    assert_eq!(shadowed.details, ["/usr/local/bin/kubectl-infera"]);
    let shadowing = with(vec![
        plugin("/build/kubectl-infera", true),
        plugin("/usr/local/bin/kubectl-infera", false),
    ]);
    assert_eq!(
        (shadowing.severity, shadowing.message.as_str()),
        (
            Severity::Warn,
            "1 other kubectl-infera on PATH, overshadowed by /build/kubectl-infera"
        )
    );
    let missing = with(vec![]);
    assert_eq!(
        (missing.severity, missing.message.as_str()),
        (
            Severity::Warn,
            "kubectl-infera is not on PATH, so `kubectl infera` cannot run /build/kubectl-infera"
        )
    );
}

/// `pd.yaml` with its decode pool autoscaled by KEDA.
fn keda_spec() -> ValidDeployment {
    let text = std::fs::read_to_string(format!(
        "{}/../examples/pd.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_default();
    let mut idep = infera_core::yaml::parse_deployments(&text)
        .unwrap_or_default()
        .remove(0);
    let decode = idep.spec.services.get_mut("decode").expect("a decode pool");
    decode.replicas = None;
    decode.autoscaling = serde_json::from_value(serde_json::json!({
        "provider": "keda", "maxReplicas": 4,
        "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}],
    }))
    .ok();
    infera_core::validate(&idep).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn keda_is_checked_only_for_a_spec_that_scales_with_it() {
    let pd = Facts {
        spec: Some(spec("pd.yaml")),
        keda_crd: Some(Ok(None)),
        ..healthy()
    };
    assert!(evaluate(&pd).iter().all(|c| c.id != "INF221"));

    let missing = Facts {
        spec: Some(keda_spec()),
        keda_crd: Some(Ok(None)),
        ..healthy()
    };
    let checks = evaluate(&missing);
    assert!(!success(&checks));
    let keda = by_id(&checks, "INF221");
    assert_eq!(
        (keda.category, keda.name, keda.severity),
        ("autoscaling", "keda-crd", Severity::Fail)
    );
    assert_eq!(
        keda.message,
        "the KEDA CRD (scaledobjects.keda.sh) is not installed"
    );
    assert_eq!(
        keda.hint.as_deref(),
        Some(
            "install KEDA, v2.x (https://keda.sh/docs/latest/deploy/), or use provider: hpa; decode scales with autoscaling.provider: keda"
        )
    );

    let installed = Facts {
        keda_crd: Some(Ok(Some(crd("scaledobjects.keda.sh", "v1alpha1")))),
        ..missing
    };
    let keda = by_id(&evaluate(&installed), "INF221").clone();
    assert_eq!(keda.severity, Severity::Pass);
    assert_eq!(
        keda.message,
        "scaledobjects.keda.sh serves v1alpha1 (the ScaledObjects of decode)"
    );
}

/// An available operator that elects a leader reconciles only while a replica renews the Lease:
/// a Lease nobody acquired (tier 2's kwok pods run no process) or renews is a warning saying so.
#[test]
fn an_available_operator_is_reconciling_only_while_its_lease_is_renewed() {
    use super::infera::LeaseRenewal;
    let electing = || {
        let mut d = operator();
        if let Some(spec) = d.spec.as_mut() {
            spec.template.spec = serde_json::from_value(serde_json::json!({"containers": [
                {"name": "operator", "args": ["--leader-elect", "--http-addr=0.0.0.0:8080"]}]}))
            .ok();
        }
        d
    };
    let lease = |seconds_ago: Option<i64>| LeaseRenewal {
        holder: Some("infera-operator-5d9f-abcde".into()),
        seconds_ago,
        duration_seconds: 15,
    };
    let inf103 = |operator: Deployment, lease: Option<Read<Option<LeaseRenewal>>>| {
        let mut f = healthy();
        f.operator = Some(Ok(Some(operator)));
        f.operator_lease = lease;
        let checks = evaluate(&f);
        let c = by_id(&checks, "INF103");
        (c.severity, c.message.clone(), c.hint.clone())
    };
    assert_eq!(
        inf103(electing(), Some(Ok(Some(lease(Some(4)))))),
        (
            Severity::Pass,
            "infera-operator is available (2/2) and reconciling (leader infera-operator-5d9f-abcde, Lease renewed 4s ago)".into(),
            None
        )
    );
    let logs = Some("see `kubectl logs -n infera-system deploy/infera-operator`".to_string());
    assert_eq!(
        inf103(electing(), Some(Ok(None))),
        (
            Severity::Warn,
            "infera-operator is available (2/2), but no replica has acquired its leader Lease infera-system/infera-operator: it has not started reconciling".into(),
            logs.clone()
        )
    );
    assert_eq!(
        inf103(electing(), Some(Ok(Some(lease(Some(600)))))),
        (
            Severity::Warn,
            "infera-operator is available (2/2), but its leader Lease infera-system/infera-operator was last renewed 10m ago: no replica is reconciling".into(),
            logs
        )
    );
    // Without leader election there is no Lease to read.
    assert_eq!(inf103(operator(), Some(Ok(None))).0, Severity::Pass);
}

#[test]
fn the_pod_monitor_crd_is_checked_only_for_a_spec_with_monitoring() {
    let pd = Facts {
        spec: Some(spec("pd.yaml")),
        monitoring_crd: Some(Ok(None)),
        ..healthy()
    };
    assert!(evaluate(&pd).iter().all(|c| c.id != "INF222"));

    let mut monitored = spec("pd.yaml");
    monitored.monitoring = Some(infera_core::validate::Monitoring::default());
    let missing = Facts {
        spec: Some(monitored),
        monitoring_crd: Some(Ok(None)),
        ..healthy()
    };
    let checks = evaluate(&missing);
    assert!(!success(&checks));
    let c = by_id(&checks, "INF222");
    assert_eq!(
        (c.category, c.name, c.severity),
        ("monitoring", "pod-monitor-crd", Severity::Fail)
    );
    assert_eq!(
        c.message,
        "the Prometheus Operator CRD (podmonitors.monitoring.coreos.com) is not installed"
    );
    assert_eq!(
        c.hint.as_deref(),
        Some(
            "install the Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/getting-started/installation/), or set monitoring.enabled: false"
        )
    );
    let installed = Facts {
        monitoring_crd: Some(Ok(Some(crd("podmonitors.monitoring.coreos.com", "v1")))),
        ..missing
    };
    let c = by_id(&evaluate(&installed), "INF222").clone();
    assert_eq!(c.severity, Severity::Pass);
    assert_eq!(
        c.message,
        "podmonitors.monitoring.coreos.com serves v1 (the PodMonitor demo)"
    );
}

#[test]
fn the_prometheus_rule_crd_is_checked_only_for_a_spec_with_objectives() {
    let mut monitored = spec("pd.yaml");
    monitored.monitoring = Some(infera_core::validate::Monitoring::default());
    let pod_monitor = Some(Ok(Some(crd("podmonitors.monitoring.coreos.com", "v1"))));
    let without = Facts {
        spec: Some(monitored.clone()),
        monitoring_crd: pod_monitor.clone(),
        rule_crd: Some(Ok(None)),
        ..healthy()
    };
    assert!(evaluate(&without).iter().all(|c| c.id != "INF223"));

    monitored.monitoring = Some(infera_core::validate::Monitoring {
        slo: Some(infera_core::LatencySlo {
            ttft_p95_milliseconds: 500,
            itl_p95_milliseconds: 50,
        }),
        ..Default::default()
    });
    let missing = Facts {
        spec: Some(monitored),
        monitoring_crd: pod_monitor,
        rule_crd: Some(Ok(None)),
        ..healthy()
    };
    let checks = evaluate(&missing);
    assert!(!success(&checks));
    assert_eq!(by_id(&checks, "INF222").severity, Severity::Pass);
    let c = by_id(&checks, "INF223");
    assert_eq!(
        (c.category, c.name, c.severity),
        ("monitoring", "prometheus-rule-crd", Severity::Fail)
    );
    assert_eq!(
        c.message,
        "the Prometheus Operator CRD (prometheusrules.monitoring.coreos.com) is not installed"
    );
    assert_eq!(
        c.hint.as_deref(),
        Some(
            "install the Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/getting-started/installation/), or remove monitoring.slo"
        )
    );
    let installed = Facts {
        rule_crd: Some(Ok(Some(crd("prometheusrules.monitoring.coreos.com", "v1")))),
        ..missing
    };
    let c = by_id(&evaluate(&installed), "INF223").clone();
    assert_eq!(c.severity, Severity::Pass);
    assert_eq!(
        c.message,
        "prometheusrules.monitoring.coreos.com serves v1 (the PrometheusRule demo)"
    );
}

/// INF102 warns of a CRD older than the operator (Helm upgraded the operator but, as Helm does,
/// not the chart's CRD): the fix is the CRD's, with Helm's command for a Helm install.
#[test]
fn a_crd_older_than_the_operator_is_a_skew_warning_with_the_crds_fix() {
    let inf102 = |helm: bool| {
        let mut f = healthy();
        let mut old = crd("inferadeployments.infera.amd.com", "v1alpha1");
        old.metadata.annotations = Some([("infera.amd.com/version".into(), "0.0.1".into())].into());
        f.infera_crd = Some(Ok(Some(old)));
        if helm {
            let mut d = operator();
            d.metadata.annotations = Some(
                [
                    (
                        "meta.helm.sh/release-name".to_string(),
                        "infera".to_string(),
                    ),
                    (
                        "meta.helm.sh/release-namespace".to_string(),
                        "infera-system".to_string(),
                    ),
                ]
                .into(),
            );
            f.operator = Some(Ok(Some(d)));
        }
        let checks = evaluate(&f);
        let c = by_id(&checks, "INF102");
        (
            c.severity,
            c.message.clone(),
            c.hint.clone().unwrap_or_default(),
        )
    };
    let (severity, message, hint) = inf102(false);
    assert_eq!(severity, Severity::Warn);
    assert_eq!(
        message,
        format!(
            "CRD is 0.0.1, older than the operator {VERSION}: the API server refuses a status naming a field the CRD lacks, if the operator writes one"
        )
    );
    assert_eq!(
        hint,
        format!(
            "upgrade the CRD to release {VERSION}: `kubectl infera init` with that release's plugin, or apply its infera-operator-{VERSION}.yaml"
        )
    );
    let (severity, _, hint) = inf102(true);
    assert_eq!(severity, Severity::Warn);
    assert_eq!(
        hint,
        format!(
            "apply release {VERSION}'s CRD (Helm does not upgrade CRDs): `helm show crds oci://ghcr.io/amd/infera/charts/infera-operator --version {VERSION} | kubectl apply --server-side --field-manager=helm --force-conflicts -f -`"
        )
    );
}
