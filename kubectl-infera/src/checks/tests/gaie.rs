//! The Gateway API Inference Extension checks (INF211–INF215).

use super::*;

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
        image: "rocm/infera:sglang-v0.1.1".into(),
        tokenizer_path: "Qwen/Qwen3-0.6B".into(),
        hostnames: Vec::new(),
        frontend_port: infera_core::flags::FRONTEND_PORT,
        model_name: None,
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
            "INF001", "INF002", "INF003", "INF004", "INF101", "INF102", "INF103", "INF104",
            "INF201", "INF202", "INF211", "INF212", "INF301", "INF302", "INF303", "INF401",
            "INF402", "INF403", "INF501"
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
        let mut c = crd(&crate::checks::gaie::alpha_pool_crd(), "v1alpha2");
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
