//! Setting pools' replicas, as `kubectl infera scale` and the SLO planner's `Act` both do: one
//! JSON merge patch of `spec.services.POOL.replicas`, guarded by the resourceVersion that was
//! read, so every pool changes at once or none does, and a concurrent write makes the writer
//! read and decide anew instead of overwriting what it did not see. As an update (not a
//! server-side apply) it takes ownership of exactly the `replicas` fields it sets.

use serde_json::{Map, Value, json};

/// The merge patch setting each `(pool, replicas)`, guarded by `resource_version`.
pub fn patch<'a>(
    resource_version: Option<&str>,
    replicas: impl IntoIterator<Item = (&'a str, i32)>,
) -> Value {
    let services: Map<String, Value> = replicas
        .into_iter()
        .map(|(pool, to)| (pool.to_string(), json!({"replicas": to})))
        .collect();
    json!({
        "metadata": {"resourceVersion": resource_version},
        "spec": {"services": services},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_sets_each_pools_replicas_guarded_by_the_resource_version() {
        assert_eq!(
            patch(Some("42"), [("prefill", 3), ("server", 1)]),
            json!({
                "metadata": {"resourceVersion": "42"},
                "spec": {"services": {"prefill": {"replicas": 3}, "server": {"replicas": 1}}},
            })
        );
    }
}
