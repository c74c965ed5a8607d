//! The install bundle in deploy/ matches this release and stays least-privilege.

use infera_core::render::{Apis, PoolApi, render_for};
use serde_json::Value;

fn manifest(file: &str) -> Value {
    let path = format!("{}/../deploy/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_operator_deployment_runs_this_release() {
    let version = infera_core::crd::VERSION;
    let deployment = manifest("deployment.yaml");
    assert_eq!(
        deployment["metadata"]["labels"]["app.kubernetes.io/version"],
        version
    );
    let image = &deployment["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(
        image.as_str(),
        Some(format!("ghcr.io/amd/infera/operator:{version}").as_str())
    );
}

/// No wildcard, and Secrets may only be created (the NATS credentials), never read or changed.
#[test]
fn the_cluster_role_has_no_wildcards_and_cannot_read_secrets() {
    let role = manifest("clusterrole.yaml");
    let rules = role["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    assert!(!rules.is_empty());
    for rule in rules {
        for field in ["apiGroups", "resources", "verbs"] {
            let values: Vec<&str> = rule[field]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            assert!(!values.is_empty(), "{field} in {rule}");
            assert!(!values.contains(&"*"), "wildcard in {rule}");
        }
        if rule["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r == "secrets")
        {
            assert_eq!(rule["resources"], serde_json::json!(["secrets"]), "{rule}");
            assert_eq!(rule["verbs"], serde_json::json!(["create"]), "{rule}");
        }
    }
}

/// The one object the operator reads outside the namespaces it manages: the API server's
/// EndpointSlice, by name, read only — the one it watches.
#[test]
fn the_api_server_role_reads_only_its_endpoint_slice() {
    let text = std::fs::read_to_string(format!(
        "{}/../deploy/api-server.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("deploy/api-server.yaml: {e}"));
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
        .unwrap_or_else(|e| panic!("deploy/api-server.yaml: {e}"));
    let (namespace, name) = infera_core::render::ApiServer::SLICE;
    assert_eq!(documents[0]["kind"], "Role");
    assert_eq!(documents[0]["metadata"]["namespace"], namespace);
    assert_eq!(
        documents[0]["rules"],
        serde_json::json!([{"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
            "resourceNames": [name], "verbs": ["get", "list", "watch"]}])
    );
    assert_eq!(documents[1]["kind"], "RoleBinding");
    assert_eq!(documents[1]["metadata"]["namespace"], namespace);
    assert_eq!(
        documents[1]["roleRef"]["name"],
        documents[0]["metadata"]["name"]
    );
}

/// RBAC refuses to let the operator create a Role granting more than it holds (escalation
/// prevention): every permission of every Role the render can produce must be in the ClusterRole.
#[test]
fn the_cluster_role_holds_everything_the_rendered_roles_grant() {
    let text = std::fs::read_to_string(format!(
        "{}/../examples/pd.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("examples/pd.yaml: {e}"));
    let mut deployment = infera_core::yaml::parse_deployments(&text)
        .unwrap_or_else(|e| panic!("examples/pd.yaml: {e}"))
        .remove(0);
    deployment.spec.gaie = Some(infera_core::GaieSpec {
        enabled: Some(true),
        gateway_name: "gw".into(),
        tokenizer_path: Some("Qwen/Qwen3-0.6B".into()),
        ..Default::default()
    });
    let valid = infera_core::validate(&deployment).unwrap_or_else(|e| panic!("{e}"));
    let held = permissions(&manifest("clusterrole.yaml")["rules"]);
    let mut granted = Vec::new();
    let children = [PoolApi::V1, PoolApi::V1Alpha2]
        .into_iter()
        .flat_map(|inference_pool| {
            let apis = Apis {
                inference_pool,
                ..Apis::default()
            };
            render_for(&valid, apis)
        });
    for child in children {
        if child.kind() == infera_core::ChildKind::Role {
            let role = serde_json::to_value(&child).unwrap_or_else(|e| panic!("{e}"));
            granted.extend(permissions(&role["rules"]));
        }
    }
    assert!(granted.len() > 5, "{granted:?}");
    let missing: Vec<_> = granted.iter().filter(|p| !held.contains(p)).collect();
    assert!(missing.is_empty(), "the ClusterRole lacks {missing:?}");
}

/// Every (group, resource, verb) a list of policy rules allows.
fn permissions(rules: &Value) -> Vec<(String, String, String)> {
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let mut out = Vec::new();
    for rule in rules.as_array().into_iter().flatten() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    out.push((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    out
}
