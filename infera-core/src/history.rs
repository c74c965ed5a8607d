//! Revision history: the ControllerRevisions the operator keeps for the revisions of a
//! deployment's worker pods (see [`crate::render`]'s revision hash), how they are numbered and
//! pruned, what changed from one to the next, and the spec `kubectl infera rollout undo` sends to
//! return to one. Pure: the operator and the plugin make the API calls.
//!
//! The model is the StatefulSet controller's (kubernetes/kubernetes
//! `pkg/controller/statefulset/stateful_set_control.go`, `getStatefulSetRevisions` and
//! `truncateHistory`, read at commit 0004b149a571): one ControllerRevision per distinct revision,
//! named `<parent>-<hash>`; a new revision gets the highest number plus one; returning to an
//! earlier revision does not copy it but gives the existing one the next number; and the oldest
//! revisions that no pod runs and that are neither the current nor the update revision are
//! deleted until at most `revisionHistoryLimit` of them remain.
//!
//! A ControllerRevision holds the whole spec it was created from (`data.spec`), not only the
//! fields that shape the worker pods: the hash covers rendered pod templates, which depend on
//! graph-wide fields (image, model, network, overlays) as much as on the pool's own, so no
//! smaller slice of the spec is enough to re-apply a revision. Undo keeps what scales and steers
//! the rollout (replicas, autoscaling, rollout bounds, this limit) from the live spec, as
//! `kubectl rollout undo` of a Deployment restores the pod template and keeps its replicas.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A revision of the history as the operator reads it from its ControllerRevision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The ControllerRevision's name, `<deployment>-<hash>`.
    pub name: String,
    /// The revision hash (the pods' `infera.amd.com/revision`).
    pub hash: String,
    /// Its number in the history: higher is newer.
    pub revision: i64,
}

/// The ControllerRevision of revision `hash` of `deployment`: `<deployment>-<hash>`, like the
/// StatefulSet controller's `ControllerRevisionName` (pkg/controller/history).
pub fn revision_name(deployment: &str, hash: &str) -> String {
    format!("{deployment}-{hash}")
}

/// What the history needs for the update revision to be its newest entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A revision never seen: create its ControllerRevision with this number.
    Create {
        /// The ControllerRevision's name.
        name: String,
        /// Its number: one above the highest.
        revision: i64,
    },
    /// An earlier revision again (a rollback): give its ControllerRevision this number.
    Renumber {
        /// The ControllerRevision's name.
        name: String,
        /// Its new number: one above the highest.
        revision: i64,
    },
}

/// What `stored` needs so that `update` (the update revision's hash) is its newest entry, or
/// `None` when it already is.
pub fn record(deployment: &str, stored: &[Stored], update: &str) -> Option<Record> {
    let newest = stored.iter().max_by_key(|s| (s.revision, s.name.as_str()));
    let next = newest.map_or(1, |newest| newest.revision + 1);
    match stored.iter().find(|s| s.hash == update) {
        Some(same) if newest == Some(same) => None,
        Some(same) => Some(Record::Renumber {
            name: same.name.clone(),
            revision: next,
        }),
        None => Some(Record::Create {
            name: revision_name(deployment, update),
            revision: next,
        }),
    }
}

/// The ControllerRevisions to delete: the oldest of `stored` whose hash is not `live` (the
/// current and update revisions and those pods run) beyond the `limit` newest of them.
pub fn prune(stored: &[Stored], live: &BTreeSet<&str>, limit: i32) -> Vec<String> {
    let mut history: Vec<&Stored> = stored
        .iter()
        .filter(|s| !live.contains(s.hash.as_str()))
        .collect();
    history.sort_by_key(|s| (s.revision, s.name.as_str()));
    let limit = usize::try_from(limit).unwrap_or(0);
    let excess = history.len().saturating_sub(limit);
    history[..excess].iter().map(|s| s.name.clone()).collect()
}

/// A ControllerRevision's `data`: the spec it re-applies.
pub fn data(spec: &Value) -> Value {
    json!({ "spec": spec })
}

/// `value` as JSON, byte for byte as the API server re-encodes it: send a ControllerRevision in
/// this form, or it can never be renumbered.
///
/// `data` is a `RawExtension`, kept as the bytes it arrived in, and may never change
/// (`ValidateControllerRevisionUpdate`, kubernetes v1.36.3 `pkg/apis/apps/validation/validation.go:366`,
/// compares the old and new bytes). A merge patch, even one of `revision` alone, is applied to the
/// object re-encoded by Go's `encoding/json` (`applyPatchToCurrentObject`, k8s.io/apiserver
/// v0.36.3 `pkg/endpoints/handlers/patch.go:325`; `json.NewEncoder`, k8s.io/apimachinery v0.36.3
/// `pkg/runtime/serializer/json/json.go:257`), which passes a `RawExtension`'s bytes through
/// `appendCompact` with HTML escaping (Go 1.26 `src/encoding/json/encode.go:487`,
/// `indent.go:51-70`): `<`, `>`, `&`, U+2028 and U+2029 become `\u003c`, `\u003e`, `\u0026`,
/// `\u2028`, `\u2029`, and nothing else changes in compact JSON. serde_json writes them as they
/// are, so `data` with one of them — the seed's `<rdma-nic>`, a URL with `&` — was "changed" by
/// every renumbering. Written escaped, it is a fixed point of that re-encoding.
pub fn to_go_json<T: serde::Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out, GoEscaping,
    ))?;
    Ok(out)
}

/// serde_json's compact formatter, escaping in strings what Go's HTML-safe encoder escapes.
struct GoEscaping;

impl serde_json::ser::Formatter for GoEscaping {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            let escaped = match c {
                '<' => "\\u003c",
                '>' => "\\u003e",
                '&' => "\\u0026",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..at])?;
            writer.write_all(escaped.as_bytes())?;
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Graph-wide fields that scale or steer a rollout rather than shape the pods: undo keeps the live
/// spec's, and they are no change of a revision.
const GRAPH_KEPT: [&str; 2] = ["rollout", "revisionHistoryLimit"];
/// A service's fields that scale or steer its rollout, likewise.
const SERVICE_KEPT: [&str; 3] = ["replicas", "autoscaling", "rollout"];

/// What changed from the spec of one revision to the next's, for `rollout history`'s CHANGE
/// column: each changed field by its path below `spec` (a service's without `services.`), with
/// old and new value when they are text or numbers, e.g. `image: a:1 → a:2, decode.args`.
/// Without an earlier revision: `initial` for revision 1, `-` otherwise (it was pruned).
pub fn changes(before: Option<&Value>, after: &Value, revision: i64) -> String {
    let Some(before) = before else {
        return if revision == 1 { "initial" } else { "-" }.into();
    };
    let mut changes = Vec::new();
    let empty = Map::new();
    let fields = |spec: &Value| spec.as_object().cloned().unwrap_or_default();
    let (old, new) = (fields(before), fields(after));
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for key in keys {
        if key == "services" || GRAPH_KEPT.contains(&key.as_str()) {
            continue;
        }
        diff(key, old.get(key), new.get(key), &mut changes);
    }
    let services = |spec: &Map<String, Value>| {
        spec.get("services")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old, new) = (services(&old), services(&new));
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        match (old.get(name), new.get(name)) {
            (None, _) => changes.push(format!("{name} added")),
            (_, None) => changes.push(format!("{name} removed")),
            (Some(old), Some(new)) => {
                let (old, new) = (
                    old.as_object().unwrap_or(&empty),
                    new.as_object().unwrap_or(&empty),
                );
                let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
                for key in keys {
                    if !SERVICE_KEPT.contains(&key.as_str()) {
                        diff(
                            &format!("{name}.{key}"),
                            old.get(key),
                            new.get(key),
                            &mut changes,
                        );
                    }
                }
            }
        }
    }
    if changes.is_empty() {
        "spec unchanged (pods rendered anew)".into()
    } else {
        changes.join(", ")
    }
}

/// The paths below `path` where `old` and `new` differ, into `changes`: objects are compared
/// field by field; other values whole, shown with both sides when they are scalars.
fn diff(path: &str, old: Option<&Value>, new: Option<&Value>, changes: &mut Vec<String>) {
    if old == new {
        return;
    }
    if let (Some(Value::Object(old)), Some(Value::Object(new))) = (old, new) {
        let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for key in keys {
            diff(
                &format!("{path}.{key}"),
                old.get(key),
                new.get(key),
                changes,
            );
        }
        return;
    }
    let scalar = |value: Option<&Value>| match value {
        None | Some(Value::Null) => Some("(none)".to_string()),
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        Some(_) => None,
    };
    changes.push(match (scalar(old), scalar(new)) {
        (Some(old), Some(new)) => format!("{path}: {old} → {new}"),
        _ => path.to_string(),
    });
}

/// The spec `undo` makes of the `live` one to return to a revision's `stored` spec: the stored
/// spec, with the live graph's rollout settings and history limit, and each service that
/// exists in both with its live replicas, autoscaling and rollout bounds (so undo neither fights
/// an autoscaler nor undoes a `scale`, nor unpauses).
pub fn restore(live: &Value, stored: &Value) -> Value {
    let mut restored = stored.clone();
    let Some(fields) = restored.as_object_mut() else {
        return restored;
    };
    let keep = |target: &mut Map<String, Value>, source: Option<&Value>, keys: &[&str]| {
        for key in keys {
            match source.and_then(|source| source.get(*key)) {
                Some(value) => target.insert((*key).to_string(), value.clone()),
                None => target.remove(*key),
            };
        }
    };
    keep(fields, Some(live), &GRAPH_KEPT);
    if let Some(services) = fields.get_mut("services").and_then(Value::as_object_mut) {
        for (name, service) in services.iter_mut() {
            let live_service = live["services"].get(name);
            if let (Some(service), Some(_)) = (service.as_object_mut(), live_service) {
                keep(service, live_service, &SERVICE_KEPT);
            }
        }
    }
    restored
}

/// The JSON merge patch (RFC 7386) that turns `from` into `to`: changed fields set, removed
/// fields `null`, unchanged fields absent, so an update sent with it changes (and takes field
/// ownership of) only what differs.
pub fn merge_patch(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(from), Value::Object(to)) => {
            let mut patch = Map::new();
            for (key, old) in from {
                match to.get(key) {
                    None => {
                        patch.insert(key.clone(), Value::Null);
                    }
                    Some(new) if new != old => {
                        patch.insert(key.clone(), merge_patch(old, new));
                    }
                    Some(_) => {}
                }
            }
            for (key, new) in to {
                if !from.contains_key(key) {
                    patch.insert(key.clone(), new.clone());
                }
            }
            Value::Object(patch)
        }
        (_, to) => to.clone(),
    }
}

/// Why `undo` has no revision to return to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    /// The history has only the newest revision.
    #[error("there is no earlier revision to return to: the history has {0}")]
    NoPrevious(String),
    /// `--to-revision` names a revision the history does not have.
    #[error(
        "revision {revision} is not in the history, which has {have}; see `kubectl infera rollout history`"
    )]
    NotFound {
        /// The revision asked for.
        revision: i64,
        /// The revisions the history has.
        have: String,
    },
}

/// The revision `undo` returns to among `revisions` (the numbers of the history): `to`, or
/// without it the one before the newest, as `kubectl rollout undo` does.
pub fn undo_target(revisions: &[i64], to: Option<i64>) -> Result<i64, UndoError> {
    let mut sorted = revisions.to_vec();
    sorted.sort_unstable();
    let have = || match sorted.as_slice() {
        [] => "no revisions".to_string(),
        [only] => format!("only revision {only}"),
        numbers => format!(
            "revisions {}",
            numbers
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match to {
        Some(revision) if sorted.contains(&revision) => Ok(revision),
        Some(revision) => Err(UndoError::NotFound {
            revision,
            have: have(),
        }),
        None => match sorted.as_slice() {
            [.., previous, _] => Ok(*previous),
            _ => Err(UndoError::NoPrevious(have())),
        },
    }
}

#[cfg(test)]
mod tests;
