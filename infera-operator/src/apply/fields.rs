//! Who holds which fields of a live child: our field manager, another writer, or the
//! hand-over manager that keeps an autoscaled workload's replicas.

use std::collections::BTreeMap;

use infera_core::naming::REPLICAS_HANDOVER_MANAGER;
use kube::core::Status;
use serde_json::Value;

use crate::live::Live;

/// Whether the fields of a `managedFields` entry (its `fieldsV1`: `f:<field>`, list items as
/// `k:<key fields>`, `v:<value>`, `i:<index>`, and `.` for the node itself, as the Kubernetes
/// API reference for ManagedFieldsEntry and sigs.k8s.io/structured-merge-diff describe them)
/// include a value `ours` sets. Owning only a map's or an item's node (`.`) holds no value.
pub(super) fn holds_any(fields: &Value, ours: &Value) -> bool {
    let Some(fields) = fields.as_object() else {
        return false;
    };
    let items = || ours.as_array().into_iter().flatten();
    fields.iter().any(|(path, inner)| {
        let field = if let Some(name) = path.strip_prefix("f:") {
            ours.get(name)
        } else if let Some(key) = path.strip_prefix("k:") {
            let key: Value = serde_json::from_str(key).unwrap_or_default();
            let key = key.as_object();
            items().find(|item| {
                key.is_some_and(|key| {
                    key.iter()
                        .all(|(name, value)| item.get(name) == Some(value))
                })
            })
        } else if let Some(value) = path.strip_prefix("v:") {
            let value: Value = serde_json::from_str(value).unwrap_or_default();
            items().find(|item| **item == value)
        } else if let Some(index) = path.strip_prefix("i:") {
            index.parse().ok().and_then(|index: usize| ours.get(index))
        } else {
            None
        };
        let leaf = inner.as_object().is_none_or(serde_json::Map::is_empty);
        field.is_some_and(|field| leaf || holds_any(inner, field))
    })
}

/// Whether a writer other than us holds `spec.replicas` of the live child.
pub(super) fn replicas_held(live: &Live) -> bool {
    held_by_others(live, &serde_json::json!({"spec": {"replicas": 0}}))
}

/// Whether a writer other than us (status writers aside) holds a field that `ours` sets.
pub(super) fn held_by_others(live: &Live, ours: &Value) -> bool {
    live.foreign_fields.iter().any(|fields| {
        serde_json::from_str(fields).is_ok_and(|fields: Value| holds_any(&fields, ours))
    })
}

/// Whether a 409 apply response names conflicts, every one with [`REPLICAS_HANDOVER_MANAGER`].
pub(super) fn only_handed_over(status: &Status) -> bool {
    let conflicts = infera_core::conflict::parse(status);
    !conflicts.is_empty()
        && conflicts
            .iter()
            .all(|conflict| conflict.manager == REPLICAS_HANDOVER_MANAGER)
}

/// `.spec.replicas, .metadata.labels.x owned by field manager "kubectl-edit"` from a 409 apply
/// response, one part per manager; the response's message when it names no field.
pub(super) fn conflict_fields(status: &Status) -> String {
    let mut by_manager: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for conflict in infera_core::conflict::parse(status) {
        by_manager
            .entry(conflict.manager)
            .or_default()
            .push(conflict.field);
    }
    if by_manager.is_empty() {
        return status.message.clone();
    }
    let parts: Vec<String> = by_manager
        .into_iter()
        .map(|(manager, fields)| {
            format!("{} owned by field manager {manager:?}", fields.join(", "))
        })
        .collect();
    parts.join("; ")
}
