//! Server-side apply of the rendered children, and deletion of the ones no longer rendered.
//!
//! Writes only when needed: a child is re-applied when what we render changed or the live object
//! changed since our last apply — its generation moved (objects with a spec the API server
//! versions), else its resourceVersion — so controllers updating a child's status cost nothing.
//! A conflict with another field manager is reported, never forced, and not retried until
//! something changes.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    hash::{DefaultHasher, Hash, Hasher},
    sync::Mutex,
};

use infera_core::{Child, ChildKind, InferaDeployment, naming::OPERATOR_MANAGER};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, DynamicObject, Patch, PatchParams, Preconditions},
};

use crate::{Error, Result, observe::Snapshot};

/// What applying a deployment's children ran into.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Children not applied because their CRD is missing, as `service: what to install`.
    pub missing: Vec<String>,
    /// Fields owned by another field manager, one line per child.
    pub conflicts: Vec<String>,
    /// Children the API server refused (admission, quota, validation), one line per child.
    pub rejected: Vec<String>,
}

/// Why a child could not be applied, as one line naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Problem {
    Conflict(String),
    Rejected(String),
}

/// Our last apply of a child: what we sent, the version it left, and any conflict.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    hash: u64,
    version: String,
    problem: Option<Problem>,
}

type Key = (ChildKind, String, String);

/// Memory of our applies, so an unchanged child costs no request.
#[derive(Default)]
pub struct Applies(Mutex<HashMap<Key, Record>>);

impl Applies {
    fn get(&self, key: &Key) -> Option<Record> {
        self.0.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: Key, record: Record) {
        if let Ok(mut records) = self.0.lock() {
            records.insert(key, record);
        }
    }

    fn forget(&self, key: &Key) {
        if let Ok(mut records) = self.0.lock() {
            records.remove(key);
        }
    }
}

/// Applies `children` and deletes children of this deployment that are no longer rendered.
pub async fn apply(
    client: &Client,
    applies: &Applies,
    installed: impl Fn(ChildKind) -> bool,
    idep: &InferaDeployment,
    snapshot: &Snapshot,
    children: Vec<Child>,
) -> Result<Applied> {
    let namespace = idep
        .namespace()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let mut applied = Applied::default();
    let mut wanted = BTreeSet::new();
    let (mut first, mut then) = (Vec::new(), Vec::new());
    for child in &children {
        let kind = child.kind();
        wanted.insert((kind, child.name().to_string()));
        if !installed(kind) {
            let missing = missing_dependency(kind, child.service());
            if !applied.missing.contains(&missing) {
                applied.missing.push(missing);
            }
        } else if kind == ChildKind::RoleBinding {
            // Binding a Role that does not exist yet is refused: bindings go second.
            then.push(child);
        } else {
            first.push(child);
        }
    }
    // Otherwise children of one deployment do not depend on each other: apply them at once.
    for batch in [first, then] {
        let results = futures::future::join_all(
            batch
                .into_iter()
                .map(|child| apply_child(client, applies, &namespace, snapshot, child)),
        )
        .await;
        for result in results {
            match result? {
                Some(Problem::Conflict(line)) => applied.conflicts.push(line),
                Some(Problem::Rejected(line)) => applied.rejected.push(line),
                None => {}
            }
        }
    }
    for ((kind, name), object) in &snapshot.children {
        if !wanted.contains(&(*kind, name.clone())) {
            delete_child(client, applies, &namespace, *kind, object).await?;
        }
    }
    Ok(applied)
}

async fn apply_child(
    client: &Client,
    applies: &Applies,
    namespace: &str,
    snapshot: &Snapshot,
    child: &Child,
) -> Result<Option<Problem>> {
    let kind = child.kind();
    let name = child.name().to_string();
    let body = serde_json::to_value(child).map_err(|source| Error::Encode {
        kind: format!("{kind:?}"),
        name: name.clone(),
        source,
    })?;
    let hash = hash(&body);
    let key = (kind, namespace.to_string(), name.clone());
    let live_version = snapshot
        .children
        .get(&(kind, name.clone()))
        .and_then(|o| version(o));
    if let Some(record) = applies.get(&key)
        && record.hash == hash
        && live_version.as_deref() == Some(record.version.as_str())
    {
        return Ok(record.problem);
    }

    let api =
        Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &kind.api_resource());
    match api
        .patch(
            &name,
            &PatchParams::apply(OPERATOR_MANAGER),
            &Patch::Apply(&body),
        )
        .await
    {
        Ok(object) => {
            let version = version(&object).unwrap_or_default();
            applies.put(
                key,
                Record {
                    hash,
                    version,
                    problem: None,
                },
            );
            Ok(None)
        }
        // A conflict or a refusal is reported; throttling and server errors are retried.
        Err(kube::Error::Api(status))
            if (400..500).contains(&status.code) && status.code != 429 =>
        {
            let kind_name = kind.api_resource().kind;
            let problem = if status.code == 409 {
                Problem::Conflict(format!("{kind_name} {name}: {}", conflict_fields(&status)))
            } else {
                Problem::Rejected(format!("{kind_name} {name}: {}", status.message))
            };
            // A refusal (quota, webhook) can be lifted without the child changing: retry it.
            if let (Problem::Conflict(_), Some(version)) = (&problem, live_version) {
                applies.put(
                    key,
                    Record {
                        hash,
                        version,
                        problem: Some(problem.clone()),
                    },
                );
            }
            Ok(Some(problem))
        }
        Err(error) => Err(error.into()),
    }
}

async fn delete_child(
    client: &Client,
    applies: &Applies,
    namespace: &str,
    kind: ChildKind,
    object: &DynamicObject,
) -> Result<()> {
    let name = object.name_any();
    let api =
        Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &kind.api_resource());
    // The uid precondition guarantees we delete exactly the object we judged ours.
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: object.uid(),
            resource_version: None,
        }),
        propagation_policy: Some(kube::api::PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    match api.delete(&name, &params).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
        Err(error) => return Err(error.into()),
    }
    applies.forget(&(kind, namespace.to_string(), name));
    Ok(())
}

/// `field .spec.replicas is owned by "kubectl-edit"` from a 409 apply response.
pub fn conflict_fields(status: &kube::core::Status) -> String {
    let causes = status
        .details
        .as_ref()
        .map(|d| d.causes.as_slice())
        .unwrap_or_default();
    let mut by_manager: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for cause in causes {
        let manager = cause
            .message
            .split('"')
            .nth(1)
            .map_or_else(|| cause.message.clone(), ToString::to_string);
        by_manager
            .entry(manager)
            .or_default()
            .push(cause.field.clone());
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

fn missing_dependency(kind: ChildKind, service: &str) -> String {
    let what = match kind {
        ChildKind::LeaderWorkerSet => {
            "needs the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) for numberOfNodes > 1; install LeaderWorkerSet"
        }
        ChildKind::InferencePool => {
            "needs the Gateway API Inference Extension CRD (inferencepools.inference.networking.k8s.io) for spec.gaie; install it"
        }
        ChildKind::HttpRoute => {
            "needs the Gateway API CRD (httproutes.gateway.networking.k8s.io) for spec.gaie; install Gateway API"
        }
        _ => "needs a CRD that is not installed",
    };
    format!("{service}: {what}")
}

/// What must move for a live child to count as changed by someone else.
fn version(object: &DynamicObject) -> Option<String> {
    match object.metadata.generation {
        Some(generation) => Some(format!("generation {generation}")),
        None => object.resource_version(),
    }
}

fn hash(value: &serde_json::Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use kube::core::{
        Status,
        response::{StatusCause, StatusDetails},
    };

    use super::*;

    #[test]
    fn a_409_names_each_manager_and_its_fields() {
        let cause = |manager: &str, field: &str| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with \"{manager}\" using apps/v1"),
            field: field.into(),
        };
        let status = Status::failure("Apply failed with 2 conflicts", "Conflict")
            .with_code(409)
            .with_details(StatusDetails {
                causes: vec![
                    cause("kubectl-scale", ".spec.replicas"),
                    cause("kubectl-scale", ".metadata.labels.x"),
                ],
                name: "demo-server".into(),
                group: "apps".into(),
                kind: "deployments".into(),
                uid: String::new(),
                retry_after_seconds: 0,
            });
        assert_eq!(
            conflict_fields(&status),
            r#".spec.replicas, .metadata.labels.x owned by field manager "kubectl-scale""#
        );
    }

    #[test]
    fn missing_dependencies_name_the_pool_and_what_to_install() {
        assert_eq!(
            missing_dependency(ChildKind::LeaderWorkerSet, "decode"),
            "decode: needs the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) for numberOfNodes > 1; install LeaderWorkerSet"
        );
    }
}
