//! What marks a child as applied by us: the hash of the object we last applied, in an
//! annotation on the child, and which field managers of it are other writers.

use infera_core::naming::OPERATOR_MANAGER;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use serde_json::Value;

/// The annotation on every child holding the [`hash`] of the object we last applied to it (the
/// rendered child, without this annotation), as 16 hex digits.
pub const APPLIED_HASH: &str = "infera.amd.com/applied-hash";

/// An entry of another writer of the object (its status aside): what it holds may differ from
/// what we applied.
pub fn is_other_writer(entry: &ManagedFieldsEntry) -> bool {
    entry.manager.as_deref() != Some(OPERATOR_MANAGER)
        && entry.subresource.as_deref() != Some("status")
}

/// A hash of `value` that every build of the operator computes alike, so a restarted or upgraded
/// operator compares it with what an earlier one recorded.
pub(crate) fn hash(value: &Value) -> u64 {
    infera_core::hash::json(value)
}

/// `hash` as the [`APPLIED_HASH`] annotation writes it.
pub(crate) fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}
