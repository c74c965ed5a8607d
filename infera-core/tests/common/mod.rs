//! Fixtures shared by infera-core's tests and, through `#[path]`, by the CRD admission test in
//! `tests/`, which checks the same bad specs against a real API server: the seed's example and
//! JSON merge patches of it.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

use serde_json::Value;

/// The seed's example, `examples/pd.yaml`, as JSON.
pub fn seed() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml");
    let text = std::fs::read_to_string(path).expect("the example");
    let deployments = infera_core::yaml::parse_deployments(&text).expect("the example parses");
    serde_json::to_value(&deployments[0]).expect("json")
}

/// Applies a JSON merge patch (RFC 7386): objects merge, `null` removes, anything else replaces.
pub fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(&key);
                } else {
                    merge(target.entry(key).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch,
    }
}

/// On vLLM, gives each prefill and decode pool of `deployment` the `--kv-transfer-config` whose
/// `kv_role` is its role, which validation requires there (vLLM has no `--disaggregation-mode`).
#[allow(
    dead_code,
    reason = "not every test that includes this module switches to vLLM"
)]
pub fn with_kv_roles(deployment: &mut infera_core::InferaDeployment) {
    if deployment.spec.backend_framework != infera_core::BackendFramework::Vllm {
        return;
    }
    for pool in deployment.spec.services.values_mut() {
        let kv_role = match pool.role {
            Some(infera_core::Role::Prefill) => "kv_producer",
            Some(infera_core::Role::Decode) => "kv_consumer",
            _ => continue,
        };
        if !pool
            .args
            .iter()
            .any(|a| a.starts_with("--kv-transfer-config"))
        {
            pool.args.extend([
                "--kv-transfer-config".into(),
                format!(r#"{{"kv_connector":"MoRIIOConnector","kv_role":"{kv_role}"}}"#),
            ]);
        }
    }
}
