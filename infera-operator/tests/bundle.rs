//! The install bundle in deploy/ matches this release and stays least-privilege.

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
        Some(format!("rocm/infera-operator:{version}").as_str())
    );
}

#[test]
fn the_cluster_role_has_no_wildcards_and_no_secrets() {
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
            assert!(!values.contains(&"secrets"), "Secrets in {rule}");
        }
    }
}
