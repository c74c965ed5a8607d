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
    core::Status,
    runtime::reflector::ObjectRef,
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

/// A child of a deployment: the deployment, the child's kind and name.
type Key = (ObjectRef<InferaDeployment>, ChildKind, String);

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

    /// Forgets every child of `deployment`.
    pub fn forget_deployment(&self, deployment: &ObjectRef<InferaDeployment>) {
        if let Ok(mut records) = self.0.lock() {
            records.retain(|(owner, ..), _| owner != deployment);
        }
    }
}

/// Whether a rendered child must be sent: unless our last apply of it (`last`) sent the same
/// object (`hash`) and the live object has not moved since (`live_version`, see [`version`]).
/// A conflict is remembered like an apply, so it is not retried until one of them changes.
fn must_apply(last: Option<&Record>, hash: u64, live_version: Option<&str>) -> bool {
    last.is_none_or(|last| last.hash != hash || live_version != Some(last.version.as_str()))
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
    let deployment = ObjectRef::from(idep);
    let namespace = idep.namespace().ok_or_else(|| Error::NoNamespace {
        name: idep.name_any(),
    })?;
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
    let target = Target {
        client,
        applies,
        deployment: &deployment,
        namespace: &namespace,
        snapshot,
    };
    // Otherwise children of one deployment do not depend on each other: apply them at once.
    for batch in [first, then] {
        let results =
            futures::future::join_all(batch.into_iter().map(|child| target.apply(child))).await;
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
            target.delete(*kind, object).await?;
        }
    }
    Ok(applied)
}

/// Where one deployment's children go, and what we know of them.
struct Target<'a> {
    client: &'a Client,
    applies: &'a Applies,
    deployment: &'a ObjectRef<InferaDeployment>,
    namespace: &'a str,
    snapshot: &'a Snapshot,
}

impl Target<'_> {
    fn api(&self, kind: ChildKind) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), self.namespace, &kind.api_resource())
    }

    fn key(&self, kind: ChildKind, name: &str) -> Key {
        (self.deployment.clone(), kind, name.to_string())
    }

    /// Server-side applies `child` unless [`must_apply`] says our last apply still stands.
    async fn apply(&self, child: &Child) -> Result<Option<Problem>> {
        let (kind, name) = (child.kind(), child.name().to_string());
        let kind_name = kind.api_resource().kind;
        let body = serde_json::to_value(child).map_err(|source| Error::Encode {
            kind: kind_name.clone(),
            name: name.clone(),
            source,
        })?;
        let hash = hash(&body);
        let key = self.key(kind, &name);
        let live_version = self
            .snapshot
            .children
            .get(&(kind, name.clone()))
            .and_then(|o| version(o));
        let last = self.applies.get(&key);
        if !must_apply(last.as_ref(), hash, live_version.as_deref()) {
            return Ok(last.and_then(|last| last.problem));
        }
        let params = PatchParams::apply(OPERATOR_MANAGER);
        match self
            .api(kind)
            .patch(&name, &params, &Patch::Apply(&body))
            .await
        {
            Ok(object) => {
                let version = version(&object).unwrap_or_default();
                let record = Record {
                    hash,
                    version,
                    problem: None,
                };
                self.applies.put(key, record);
                Ok(None)
            }
            // A conflict or a refusal is reported; throttling and server errors are retried.
            Err(kube::Error::Api(status))
                if (400..500).contains(&status.code) && status.code != 429 =>
            {
                if status.code != 409 {
                    // A refusal (quota, webhook) can be lifted without the child changing: it is
                    // not remembered, so the next reconcile tries again.
                    let line = format!("{kind_name} {name}: {}", status.message);
                    return Ok(Some(Problem::Rejected(line)));
                }
                let line = format!("{kind_name} {name}: {}", conflict_fields(&status));
                let problem = Problem::Conflict(line);
                if let Some(version) = live_version {
                    let record = Record {
                        hash,
                        version,
                        problem: Some(problem.clone()),
                    };
                    self.applies.put(key, record);
                }
                Ok(Some(problem))
            }
            Err(source) => Err(Error::Apply {
                kind: kind_name,
                name,
                source,
            }),
        }
    }

    /// Deletes a child that is no longer rendered.
    async fn delete(&self, kind: ChildKind, object: &DynamicObject) -> Result<()> {
        let name = object.name_any();
        // The uid precondition guarantees we delete exactly the object we judged ours.
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: object.uid(),
                resource_version: None,
            }),
            propagation_policy: Some(kube::api::PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match self.api(kind).delete(&name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
            Err(source) => {
                return Err(Error::Delete {
                    kind: kind.api_resource().kind,
                    name,
                    source,
                });
            }
        }
        self.applies.forget(&self.key(kind, &name));
        Ok(())
    }
}

/// `.spec.replicas, .metadata.labels.x owned by field manager "kubectl-edit"` from a 409 apply
/// response, one part per manager; the response's message when it names no field.
fn conflict_fields(status: &Status) -> String {
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

/// `decode: needs the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) for
/// numberOfNodes > 1; install LeaderWorkerSet (https://…)`
fn missing_dependency(kind: ChildKind, service: &str) -> String {
    match kind.crd() {
        Some(crd) => format!(
            "{service}: needs {crd} for {}; {}",
            crd.needed_for, crd.install
        ),
        None => format!("{service}: needs a CRD that is not installed"),
    }
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
    use kube::core::response::{StatusCause, StatusDetails};

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
    fn a_409_without_field_causes_reads_as_its_message() {
        let status = Status::failure("Operation cannot be fulfilled", "Conflict").with_code(409);
        assert_eq!(conflict_fields(&status), "Operation cannot be fulfilled");
    }

    fn record(hash: u64, version: &str) -> Record {
        Record {
            hash,
            version: version.into(),
            problem: None,
        }
    }

    #[test]
    fn a_child_never_applied_is_applied() {
        assert!(must_apply(None, 1, None));
        assert!(must_apply(None, 1, Some("generation 1")));
    }

    #[test]
    fn the_same_render_over_an_unmoved_live_object_is_skipped() {
        assert!(!must_apply(
            Some(&record(1, "generation 2")),
            1,
            Some("generation 2")
        ));
    }

    #[test]
    fn a_changed_render_is_applied() {
        assert!(must_apply(
            Some(&record(1, "generation 2")),
            2,
            Some("generation 2")
        ));
    }

    #[test]
    fn a_live_object_someone_changed_or_deleted_is_applied_again() {
        let last = record(1, "generation 2");
        assert!(must_apply(Some(&last), 1, Some("generation 3")));
        assert!(must_apply(Some(&last), 1, None));
    }

    #[test]
    fn a_conflict_is_not_retried_until_the_render_or_the_live_object_changes() {
        let last = Record {
            problem: Some(Problem::Conflict("Deployment demo-worker: ...".into())),
            ..record(1, "generation 2")
        };
        assert!(!must_apply(Some(&last), 1, Some("generation 2")));
        assert!(must_apply(Some(&last), 2, Some("generation 2")));
        assert!(must_apply(Some(&last), 1, Some("generation 3")));
    }

    fn live(generation: Option<i64>, resource_version: &str) -> DynamicObject {
        let resource = ChildKind::Deployment.api_resource();
        let mut object = DynamicObject::new("demo-worker", &resource);
        object.metadata.generation = generation;
        object.metadata.resource_version = Some(resource_version.into());
        object
    }

    #[test]
    fn a_versioned_spec_moves_with_its_generation_not_with_status_updates() {
        assert_eq!(
            version(&live(Some(2), "100")),
            version(&live(Some(2), "101"))
        );
        assert_eq!(
            version(&live(Some(2), "100")).as_deref(),
            Some("generation 2")
        );
        assert_ne!(
            version(&live(Some(2), "100")),
            version(&live(Some(3), "101"))
        );
    }

    #[test]
    fn an_object_without_a_generation_moves_with_its_resource_version() {
        assert_eq!(version(&live(None, "100")).as_deref(), Some("100"));
        assert_ne!(version(&live(None, "100")), version(&live(None, "101")));
    }

    #[test]
    fn forgetting_a_deployment_forgets_only_its_children() {
        let applies = Applies::default();
        let demo = ObjectRef::<InferaDeployment>::new("demo").within("ns");
        let other = ObjectRef::<InferaDeployment>::new("demo-2").within("ns");
        let key = |deployment: &ObjectRef<InferaDeployment>| {
            (
                deployment.clone(),
                ChildKind::Deployment,
                "demo-worker".to_string(),
            )
        };
        applies.put(key(&demo), record(1, "generation 1"));
        applies.put(key(&other), record(2, "generation 1"));
        applies.forget_deployment(&demo);
        assert_eq!(applies.get(&key(&demo)), None);
        assert_eq!(applies.get(&key(&other)), Some(record(2, "generation 1")));
    }

    #[test]
    fn missing_dependencies_name_the_pool_and_what_to_install() {
        assert_eq!(
            missing_dependency(ChildKind::LeaderWorkerSet, "decode"),
            "decode: needs the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) for numberOfNodes > 1; install LeaderWorkerSet (https://lws.sigs.k8s.io/docs/installation/)"
        );
    }
}
