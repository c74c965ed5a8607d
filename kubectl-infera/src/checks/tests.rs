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

/// A healthy tier-2-like cluster: two 8-GPU nodes, LWS, Infera installed, all permissions.
fn healthy() -> Facts {
    let all = |needs: Vec<Need>| needs.into_iter().map(|n| (n, Ok(true))).collect();
    Facts {
        pre: false,
        namespace: "default".into(),
        kubeconfig: Some(Ok("admin".into())),
        server: Some(Ok(("v1.36.3".into(), 36))),
        infera_crd: Some(Ok(Some(crd(
            "inferadeployments.infera.amd.com",
            "v1alpha1",
        )))),
        operator: Some(Ok(Some(operator()))),
        operator_pods: vec![],
        lws_crd: Some(Ok(Some(crd(
            "leaderworkersets.leaderworkerset.x-k8s.io",
            "v1",
        )))),
        lws_webhooks: Some(Ok(true)),
        lws_probe: Some(Ok(())),
        nodes: Some(Ok(vec![
            node("gpu-node-0", &[("amd.com/gpu", "8")]),
            node("gpu-node-1", &[("amd.com/gpu", "8")]),
        ])),
        pods: Some(Ok(vec![gpu_pod("gpu-node-0", "3")])),
        dra: Some(Ok((vec![], 0))),
        default_storage_classes: Some(Ok(vec!["standard".into()])),
        init_access: vec![],
        deploy_access: all(deploy_needs("default")),
        spec: None,
        mutable_images: None,
        gaie: GaieFacts::default(),
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
            "INF001", "INF002", "INF101", "INF102", "INF103", "INF201", "INF202", "INF301",
            "INF302", "INF303", "INF401", "INF402", "INF501"
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
        ..healthy()
    };
    let checks = evaluate(&facts);
    assert!(!success(&checks));
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

#[test]
fn amd_resource_names() {
    assert!(is_amd_gpu_resource("amd.com/gpu"));
    assert!(is_amd_gpu_resource("amd.com/cpx_nps4"));
    assert!(is_amd_gpu_resource("amd.com/spx_nps1"));
    assert!(!is_amd_gpu_resource("amd.com/xgmi"));
    assert!(!is_amd_gpu_resource("nvidia.com/gpu"));
}

/// A Gateway API CRD of release `bundle` serving v1 and v1beta1.
fn gateway_api_crd(plural: &str, bundle: &str) -> CustomResourceDefinition {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("{plural}.gateway.networking.k8s.io"), "annotations": {
            "gateway.networking.k8s.io/bundle-version": bundle,
            "gateway.networking.k8s.io/channel": "standard"}},
        "spec": {"group": "gateway.networking.k8s.io", "names": {"kind": "K", "plural": plural}, "scope": "Namespaced",
                 "versions": [{"name": "v1", "served": true, "storage": true}, {"name": "v1beta1", "served": true, "storage": false}]},
        "status": {"conditions": [{"type": "Established", "status": "True"}]}
    }))
    .unwrap_or_default()
}

/// The CRDs of the tier-2 cluster: Gateway API v1.6.3 and the Inference Extension v1.3.0.
fn gaie_crds() -> GaieFacts {
    let mut pool = crd("inferencepools.inference.networking.k8s.io", "v1");
    pool.metadata.annotations = Some(
        [(
            "inference.networking.k8s.io/bundle-version".to_string(),
            "v1.3.0".to_string(),
        )]
        .into(),
    );
    GaieFacts {
        gateway_crd: Some(Ok(Some(gateway_api_crd("gateways", "v1.6.3")))),
        route_crd: Some(Ok(Some(gateway_api_crd("httproutes", "v1.6.3")))),
        pool_crd: Some(Ok(Some(pool))),
        alpha_pool_crd: Some(Ok(None)),
        ..Default::default()
    }
}

/// A Gateway of class `test` with these listeners and `Accepted`/`Programmed` of this status.
fn gateway(listeners: serde_json::Value, status: &str) -> crate::gateway_api::Gateway {
    let condition = |type_: &str| {
        serde_json::json!({"type": type_, "status": status,
        "reason": if status == "True" { type_ } else { "Pending" },
        "message": if status == "True" { "" } else { "Waiting for controller" }})
    };
    serde_json::from_value(serde_json::json!({
        "spec": {"gatewayClassName": "test", "listeners": listeners},
        "status": {"conditions": [condition("Accepted"), condition("Programmed")]}
    }))
    .unwrap_or_default()
}

/// `examples/pd.yaml` in namespace team-a behind Gateway infra/gw (listener `section`), on a
/// healthy cluster whose Gateway is programmed and lets every namespace attach, and whose API
/// server accepts the dry runs.
fn with_gaie(section: Option<&str>) -> Facts {
    let mut spec = spec("pd.yaml");
    spec.namespace = "team-a".into();
    spec.gaie = Some(infera_core::validate::Gaie {
        gateway_name: "gw".into(),
        gateway_namespace: Some("infra".into()),
        gateway_section_name: section.map(Into::into),
        epp_image: None,
    });
    let listeners = serde_json::json!([
        {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}},
        {"name": "internal", "protocol": "HTTP", "port": 8080, "allowedRoutes": {"namespaces": {"from": "Same"}}}
    ]);
    Facts {
        spec: Some(spec),
        gaie: GaieFacts {
            gateway: Some(Ok(Some(gateway(listeners, "True")))),
            dry_runs: vec![
                ("InferencePool demo-pool".into(), Ok(())),
                ("HTTPRoute demo-route".into(), Ok(())),
            ],
            ..gaie_crds()
        },
        ..healthy()
    }
}

fn message_of(checks: &[Check], id: &str) -> (Severity, String) {
    let c = by_id(checks, id);
    (c.severity, c.message.clone())
}

#[test]
fn installed_gaie_crds_are_checked_at_cluster_level_only() {
    let facts = Facts {
        gaie: gaie_crds(),
        ..healthy()
    };
    let checks = evaluate(&facts);
    let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "INF001", "INF002", "INF101", "INF102", "INF103", "INF201", "INF202", "INF211",
            "INF212", "INF301", "INF302", "INF303", "INF401", "INF402", "INF501"
        ]
    );
    assert_eq!(
        message_of(&checks, "INF211"),
        (
            Severity::Pass,
            "Gateway API v1.6.3, standard channel: gateways and httproutes serve v1".into()
        )
    );
    assert_eq!(
        message_of(&checks, "INF212"),
        (
            Severity::Pass,
            "inferencepools.inference.networking.k8s.io serves v1 (Gateway API Inference Extension v1.3.0)"
                .into()
        )
    );
    assert_eq!(by_id(&checks, "INF212").details, ["served versions: v1"]);
}

#[test]
fn a_gaie_spec_on_a_ready_gateway_passes_every_gateway_check() {
    let checks = evaluate(&with_gaie(Some("http")));
    assert!(success(&checks), "{checks:#?}");
    let gateway: Vec<(Severity, String)> = ["INF213", "INF214", "INF215"]
        .into_iter()
        .map(|id| message_of(&checks, id))
        .collect();
    assert_eq!(
        gateway,
        [
            (
                Severity::Pass,
                "Gateway infra/gw (class test) is Accepted and Programmed".to_string()
            ),
            (
                Severity::Pass,
                "listener http of Gateway infra/gw allows HTTPRoutes from namespace team-a".into()
            ),
            (
                Severity::Pass,
                "the API server accepts InferencePool demo-pool and HTTPRoute demo-route in namespace team-a (server-side dry run)".into()
            ),
        ]
    );
    assert_eq!(
        by_id(&checks, "INF214").details,
        ["listener http (HTTP): allows routes from all namespaces"]
    );
    // In the Gateway's own namespace, both listeners let it attach.
    let mut own = with_gaie(None);
    if let Some(spec) = own.spec.as_mut() {
        spec.namespace = "infra".into();
    }
    assert_eq!(
        message_of(&evaluate(&own), "INF214"),
        (
            Severity::Pass,
            "listeners http, internal of Gateway infra/gw allow HTTPRoutes from namespace infra"
                .into()
        )
    );
}

#[test]
fn a_missing_gateway_fails_with_a_hint_and_skips_its_listener() {
    let mut facts = with_gaie(None);
    facts.gaie.gateway = Some(Ok(None));
    let checks = evaluate(&facts);
    assert!(!success(&checks));
    let gateway = by_id(&checks, "INF213");
    assert_eq!(
        (gateway.severity, gateway.message.as_str()),
        (
            Severity::Fail,
            "Gateway infra/gw (spec.gaie.gatewayName) does not exist"
        )
    );
    assert_eq!(
        gateway.hint.as_deref(),
        Some(
            "create it with the gatewayClassName of your gateway controller, or point spec.gaie.gatewayName/gatewayNamespace at an existing Gateway (`kubectl get gateways -A`)"
        )
    );
    assert_eq!(
        message_of(&checks, "INF214"),
        (Severity::Skip, "needs the Gateway (INF213)".into())
    );
    assert_eq!(by_id(&checks, "INF215").severity, Severity::Pass);
}

#[test]
fn a_gateway_no_controller_programmed_fails_naming_its_class() {
    let mut facts = with_gaie(None);
    let listeners = serde_json::json!([{"name": "http", "protocol": "HTTP"}]);
    facts.gaie.gateway = Some(Ok(Some(gateway(listeners, "Unknown"))));
    let checks = evaluate(&facts);
    let gateway = by_id(&checks, "INF213");
    assert_eq!(
        (gateway.severity, gateway.message.as_str()),
        (
            Severity::Fail,
            "Gateway infra/gw (class test) is not ready: Accepted=Unknown (Pending: Waiting for controller), Programmed=Unknown (Pending: Waiting for controller)"
        )
    );
    assert_eq!(
        gateway.hint.as_deref(),
        Some(
            "check that a gateway controller for GatewayClass test is installed and running; see `kubectl describe gateway -n infra gw`"
        )
    );
    // The only listener allows its own namespace (infra), not team-a.
    let listener = by_id(&checks, "INF214");
    assert_eq!(
        (listener.severity, listener.message.as_str()),
        (
            Severity::Fail,
            "no listener of Gateway infra/gw allows HTTPRoutes from namespace team-a"
        )
    );
    assert_eq!(
        listener.details,
        ["listener http (HTTP): allows routes only from its own namespace infra"]
    );
}

#[test]
fn the_named_listener_must_exist_and_admit_the_namespace() {
    let checks = evaluate(&with_gaie(Some("https")));
    let listener = by_id(&checks, "INF214");
    assert_eq!(
        (listener.severity, listener.message.as_str()),
        (
            Severity::Fail,
            "Gateway infra/gw has no listener https (spec.gaie.gatewaySectionName)"
        )
    );
    assert_eq!(
        listener.hint.as_deref(),
        Some(
            "set spec.gaie.gatewaySectionName to one of its listeners (http, internal), or remove it to attach to every listener that allows the route"
        )
    );
    let checks = evaluate(&with_gaie(Some("internal")));
    assert_eq!(
        message_of(&checks, "INF214"),
        (
            Severity::Fail,
            "listener internal of Gateway infra/gw does not allow HTTPRoutes from namespace team-a"
                .into()
        )
    );
}

#[test]
fn a_selector_listener_is_evaluated_against_the_namespace_labels() {
    let mut facts = with_gaie(None);
    let listeners = serde_json::json!([{"name": "http", "protocol": "HTTP", "allowedRoutes": {"namespaces": {
        "from": "Selector", "selector": {"matchLabels": {"gateway": "shared"}}}}}]);
    facts.gaie.gateway = Some(Ok(Some(gateway(listeners, "True"))));
    facts.gaie.namespace_labels = Some(Err("forbidden: namespaces \"team-a\" is forbidden".into()));
    let unknown = by_id(&evaluate(&facts), "INF214").clone();
    assert_eq!(
        (unknown.severity, unknown.message.as_str()),
        (
            Severity::Warn,
            "cannot tell whether a listener of Gateway infra/gw allows HTTPRoutes from namespace team-a"
        )
    );
    facts.gaie.namespace_labels = Some(Ok([("gateway".to_string(), "shared".to_string())].into()));
    assert_eq!(
        message_of(&evaluate(&facts), "INF214"),
        (
            Severity::Pass,
            "listener http of Gateway infra/gw allows HTTPRoutes from namespace team-a".into()
        )
    );
}

#[test]
fn an_older_inference_extension_warns_and_infera_uses_its_v1alpha2_pool() {
    let alpha = {
        let mut c = crd(ALPHA_POOL_CRD, "v1alpha2");
        c.metadata.annotations = None;
        c
    };
    let older = GaieFacts {
        pool_crd: Some(Ok(None)),
        alpha_pool_crd: Some(Ok(Some(alpha))),
        ..gaie_crds()
    };
    let expected = "only inferencepools.inference.networking.x-k8s.io (v1alpha2) is installed, from a Gateway API Inference Extension release before v1.0; Infera creates v1alpha2 InferencePools there, not inference.networking.k8s.io/v1";
    let cluster = evaluate(&Facts {
        gaie: older.clone(),
        ..healthy()
    });
    assert_eq!(
        message_of(&cluster, "INF212"),
        (Severity::Warn, expected.into())
    );
    let wanted = evaluate(&Facts {
        gaie: GaieFacts {
            gateway: Some(Ok(Some(gateway(serde_json::json!([]), "True")))),
            ..older
        },
        ..with_gaie(None)
    });
    assert_eq!(
        message_of(&wanted, "INF212"),
        (Severity::Warn, expected.into())
    );
    assert!(
        by_id(&wanted, "INF212")
            .hint
            .as_deref()
            .is_some_and(|h| h.starts_with(
                "upgrade to v1.0 or newer: install the Gateway API Inference Extension CRDs"
            ))
    );
    // The dry run still runs (on the v1alpha2 pool); these facts hold none.
    assert_eq!(
        message_of(&wanted, "INF215"),
        (Severity::Skip, "not checked".into())
    );
}

#[test]
fn missing_or_old_gateway_api_crds() {
    let mut facts = with_gaie(None);
    facts.gaie.route_crd = Some(Ok(None));
    let checks = evaluate(&facts);
    let crds = by_id(&checks, "INF211");
    assert_eq!(
        (crds.severity, crds.message.as_str()),
        (
            Severity::Fail,
            "the Gateway API CRDs are not installed: httproutes.gateway.networking.k8s.io"
        )
    );
    assert_eq!(
        crds.hint.as_deref(),
        Some(
            "install the Gateway API CRDs (https://gateway-api.sigs.k8s.io/guides/); spec.gaie needs them"
        )
    );
    assert_eq!(by_id(&checks, "INF213").severity, Severity::Skip);

    let mut old = with_gaie(None);
    old.gaie.gateway_crd = Some(Ok(Some(gateway_api_crd("gateways", "v0.8.1"))));
    assert_eq!(
        message_of(&evaluate(&old), "INF211"),
        (
            Severity::Warn,
            "Gateway API v0.8.1 is older than v1.0: spec.gaie needs v1.0 or newer".into()
        )
    );
}

#[test]
fn a_refused_dry_run_fails_with_the_api_servers_message() {
    let mut facts = with_gaie(None);
    facts.gaie.dry_runs[1].1 = Err(
        "HTTPRoute.gateway.networking.k8s.io \"demo-route\" is invalid: spec.parentRefs: Too many: 33: must have at most 32 items".into(),
    );
    let dry_run = by_id(&evaluate(&facts), "INF215").clone();
    assert_eq!(
        (dry_run.severity, dry_run.message.as_str()),
        (
            Severity::Fail,
            "the API server refuses HTTPRoute demo-route: HTTPRoute.gateway.networking.k8s.io \"demo-route\" is invalid: spec.parentRefs: Too many: 33: must have at most 32 items"
        )
    );
    let forbidden = |what: &str| {
        Err(format!(
            "forbidden: {what} is forbidden: User \"alice\" cannot patch"
        ))
    };
    facts.gaie.dry_runs = vec![
        (
            "InferencePool demo-pool".into(),
            forbidden("inferencepools"),
        ),
        ("HTTPRoute demo-route".into(), forbidden("httproutes")),
    ];
    assert_eq!(
        message_of(&evaluate(&facts), "INF215"),
        (
            Severity::Warn,
            "cannot check: server-side dry run: InferencePool demo-pool: forbidden: inferencepools is forbidden: User \"alice\" cannot patch".into()
        )
    );
}

#[test]
fn unreadable_crds_do_not_hide_the_gateway_and_dry_run_checks() {
    let forbidden = || {
        Some(Err(
            "forbidden: customresourcedefinitions is forbidden".to_string()
        ))
    };
    let mut facts = with_gaie(None);
    facts.gaie.gateway_crd = forbidden();
    facts.gaie.route_crd = forbidden();
    facts.gaie.pool_crd = forbidden();
    let checks = evaluate(&facts);
    let severities: Vec<Severity> = ["INF211", "INF212", "INF213", "INF214", "INF215"]
        .into_iter()
        .map(|id| by_id(&checks, id).severity)
        .collect();
    assert_eq!(
        severities,
        [
            Severity::Warn,
            Severity::Warn,
            Severity::Pass,
            Severity::Pass,
            Severity::Pass
        ]
    );
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
            "INF001", "INF002", "INF101", "INF102", "INF103", "INF201", "INF202", "INF301",
            "INF302", "INF303", "INF304", "INF401", "INF402", "INF501"
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
