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
