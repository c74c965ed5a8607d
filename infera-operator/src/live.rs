//! Our children as the watch caches keep them: [`Live`], a few hundred bytes per child.
//!
//! At 1,000 deployments the children are most of what the operator holds. A cached
//! [`DynamicObject`], even stripped, cost about 2.5 KB: its key carried a whole `ApiResource`, its
//! one annotation a map, its fields a JSON map, another writer's `managedFields` entry a JSON tree.
//! [`Live`] keeps the same facts as plain fields, keyed by its [`ChildKind`].

use std::borrow::Cow;

use infera_core::{ChildKind, naming::MODEL_SOURCE_ANNOTATION};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Resource,
    api::{DynamicObject, PartialObjectMeta},
    core::DynamicResourceScope,
};
use serde::Deserialize;
use serde_json::Value;

use crate::ownership::{APPLIED_HASH, hash, is_other_writer};

/// A child of ours, stripped to what reconcile reads. Everything else — labels (the watches
/// select on ours), pod templates, `managedFields` but other writers' fields, the type meta (the
/// store is per kind) — is dropped as each object arrives (see `From<DynamicObject>`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(from = "Whole")]
pub struct Live {
    /// Name, namespace, uid, resourceVersion, generation, controller reference and deletion
    /// timestamp; nothing else.
    pub metadata: ObjectMeta,
    /// The [`hash`] of the object we last applied ([`APPLIED_HASH`]).
    pub applied_hash: Option<u64>,
    /// What a download Job fetches ([`MODEL_SOURCE_ANNOTATION`]).
    pub model_source: Option<String>,
    /// The `fieldsV1` of other writers' `managedFields` entries, status writers aside, as JSON
    /// text: a restarted operator reads them to tell whether someone else holds fields it sets
    /// (`apply::records::adopt`).
    pub foreign_fields: Vec<String>,
    /// A workload's or Job's spec and status; none for kinds watched metadata-only.
    pub state: Option<Box<State>>,
}

/// What status and apply read of a workload's or a Job's spec and status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// `spec.replicas`.
    pub replicas: Option<i64>,
    /// The [`hash`] of the rest of its spec: what must move for a workload whose replicas an
    /// autoscaler owns to count as changed (see `apply::records::version`).
    pub spec_besides_replicas: u64,
    /// Its pod template's revision ([`template_revision`]).
    pub template_revision: Option<String>,
    /// A LeaderWorkerSet's `maxSurge`, when a number: 0 once its rollout has switched to
    /// replacing groups (`lockstep::step`).
    pub max_surge: Option<i64>,
    pub observed_generation: Option<i64>,
    pub ready_replicas: Option<i64>,
    /// A Job's pods: active, succeeded, failed.
    pub active: Option<i64>,
    pub succeeded: Option<i64>,
    pub failed: Option<i64>,
    /// A Job's `Failed` condition, when it is `True`: its reason and message (`ModelPhase::of`).
    pub failure: Option<(String, String)>,
    /// A Deployment's `ReplicaFailure` condition, when it is `True`: why its ReplicaSet cannot
    /// create pods (Pod Security, a ResourceQuota, a webhook), which the deployment controller
    /// copies from the ReplicaSet (kubernetes `pkg/controller/deployment/progress.go:97-105`).
    pub replica_failure: Option<String>,
    /// An HTTPRoute's or InferencePool's `Accepted` conditions (top-level or per parent Gateway):
    /// whether one is `True`; none without such a condition.
    pub accepted: Option<bool>,
}

/// The `infera.amd.com/revision` label of a workload's pod template — a Deployment's
/// `spec.template`, a LeaderWorkerSet's `spec.leaderWorkerTemplate.workerTemplate` — from its
/// JSON, rendered or live.
pub fn template_revision(workload: &Value) -> Option<&str> {
    let spec = &workload["spec"];
    [
        &spec["template"],
        &spec["leaderWorkerTemplate"]["workerTemplate"],
    ]
    .into_iter()
    .find_map(|template| {
        template["metadata"]["labels"][infera_core::naming::LABEL_REVISION].as_str()
    })
}

/// A child's JSON as a watch of the whole object reads it, before it is stripped: its metadata, its
/// spec and its status (everything a workload, a Job or a Gateway API object carries). Read into a
/// [`DynamicObject`] instead, whose fields are one flattened map, every object went through
/// serde's buffering first; the 10,000 Deployments of a restart over 5,000 deployments were the
/// largest part of its CPU.
#[derive(Deserialize)]
struct Whole {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Value,
    #[serde(default)]
    status: Value,
}

impl From<Whole> for Live {
    fn from(object: Whole) -> Self {
        let data = serde_json::Map::from_iter([
            ("spec".to_string(), object.spec),
            ("status".to_string(), object.status),
        ]);
        Self::from(DynamicObject {
            types: None,
            metadata: object.metadata,
            data: Value::Object(data),
        })
    }
}

impl Live {
    /// A child watched metadata-only.
    pub fn from_meta(meta: PartialObjectMeta<Self>) -> Self {
        Self::from(DynamicObject {
            types: None,
            metadata: meta.metadata,
            data: Value::Null,
        })
    }

    pub fn state(&self) -> Option<&State> {
        self.state.as_deref()
    }
}

impl From<DynamicObject> for Live {
    fn from(object: DynamicObject) -> Self {
        let meta = object.metadata;
        let mut annotations = meta.annotations.unwrap_or_default();
        let foreign_fields = meta
            .managed_fields
            .into_iter()
            .flatten()
            .filter(is_other_writer)
            .filter_map(|entry| entry.fields_v1)
            .filter_map(|fields| serde_json::to_string(&fields.0).ok())
            .collect();
        Self {
            metadata: ObjectMeta {
                name: meta.name,
                namespace: meta.namespace,
                uid: meta.uid,
                resource_version: meta.resource_version,
                generation: meta.generation,
                owner_references: meta.owner_references.map(|owners| {
                    owners
                        .into_iter()
                        .filter(|owner| owner.controller == Some(true))
                        .collect()
                }),
                deletion_timestamp: meta.deletion_timestamp,
                ..ObjectMeta::default()
            },
            applied_hash: annotations
                .get(APPLIED_HASH)
                .and_then(|hex| u64::from_str_radix(hex, 16).ok()),
            model_source: annotations.remove(MODEL_SOURCE_ANNOTATION),
            foreign_fields,
            state: State::of(object.data).map(Box::new),
        }
    }
}

impl State {
    /// The state of a workload's or Job's JSON; none for an object without data.
    fn of(mut data: Value) -> Option<Self> {
        if data.is_null() {
            return None;
        }
        let replicas = data
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .and_then(|spec| spec.remove("replicas"))
            .and_then(|replicas| replicas.as_i64());
        let data = &data;
        let status = &data["status"];
        let int = |field: &str| status[field].as_i64();
        let holds = |type_: &str| {
            status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["type"] == type_ && c["status"] == "True")
        };
        let text = |c: &Value, field: &str| c[field].as_str().unwrap_or_default().to_string();
        let failure = holds("Failed").map(|c| (text(c, "reason"), text(c, "message")));
        let replica_failure = holds("ReplicaFailure").map(|c| text(c, "message"));
        Some(Self {
            replicas,
            spec_besides_replicas: hash(&data["spec"]),
            template_revision: template_revision(data).map(String::from),
            max_surge: data["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"]
                .as_i64(),
            observed_generation: int("observedGeneration"),
            ready_replicas: int("readyReplicas"),
            active: int("active"),
            succeeded: int("succeeded"),
            failed: int("failed"),
            failure,
            replica_failure,
            accepted: accepted(status),
        })
    }
}

/// Whether a Gateway API object's `Accepted` conditions — top-level, per parent (`parents`, GAIE
/// 1.x and Gateway API routes) or per parent of an InferencePool before 1.0 (`parent`) — include
/// a `True` one; `None` when it has none.
fn accepted(status: &Value) -> Option<bool> {
    let per_parent = ["parents", "parent"].into_iter().flat_map(|field| {
        status[field]
            .as_array()
            .into_iter()
            .flatten()
            .map(|parent| &parent["conditions"])
    });
    let mut found = None;
    for conditions in std::iter::once(&status["conditions"]).chain(per_parent) {
        for condition in conditions.as_array().into_iter().flatten() {
            if condition["type"] == "Accepted" {
                found = Some(found.unwrap_or(false) || condition["status"] == "True");
            }
        }
    }
    found
}

/// Each [`Live`] knows its kind from its store (the `DynamicType` is the [`ChildKind`]), so a
/// cache key costs one byte for it, not a whole `ApiResource`.
impl Resource for Live {
    type DynamicType = ChildKind;
    type Scope = DynamicResourceScope;

    fn kind(kind: &ChildKind) -> Cow<'_, str> {
        kind.api_resource().kind.into()
    }

    fn group(kind: &ChildKind) -> Cow<'_, str> {
        kind.api_resource().group.into()
    }

    fn version(kind: &ChildKind) -> Cow<'_, str> {
        kind.api_resource().version.into()
    }

    fn api_version(kind: &ChildKind) -> Cow<'_, str> {
        kind.api_resource().api_version.into()
    }

    fn plural(kind: &ChildKind) -> Cow<'_, str> {
        kind.api_resource().plural.into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Live, State};
    use crate::ownership::hash;

    /// A live Deployment keeps its identity, its controller reference, our hash, the fields of
    /// other writers and what status and apply read of its spec and status; its labels,
    /// template, other annotations and our own `managedFields` entry go.
    #[test]
    fn a_live_workload_keeps_only_what_reconcile_reads_however_it_is_read() {
        let value = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "name": "demo-decode", "namespace": "team", "uid": "u-1", "resourceVersion": "7",
                "generation": 3,
                "labels": {"app.kubernetes.io/managed-by": "infera-operator", "infera.amd.com/deployment": "demo"},
                "annotations": {"infera.amd.com/applied-hash": "00ff", "deployment.kubernetes.io/revision": "2"},
                "ownerReferences": [
                    {"apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment", "name": "demo", "uid": "d-1", "controller": true},
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "c-1"},
                ],
                "managedFields": [
                    {"manager": "infera-operator", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                    {"manager": "kube-controller-manager", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}}}},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}},
                ],
            },
            "spec": {"replicas": 2, "template": {
                "metadata": {"labels": {"infera.amd.com/revision": "1ba066e764"}},
                "spec": {"containers": [{"name": "engine", "image": "rocm/x"}]},
            }},
            "status": {"observedGeneration": 3, "readyReplicas": 1, "replicas": 2, "conditions": [{"type": "Available", "status": "True"}]},
        });
        let object: kube::api::DynamicObject =
            serde_json::from_value(value.clone()).expect("a Deployment");
        let spec_hash = hash(&json!({"template": {
            "metadata": {"labels": {"infera.amd.com/revision": "1ba066e764"}},
            "spec": {"containers": [{"name": "engine", "image": "rocm/x"}]},
        }}));
        let live = Live::from(object);
        // A watch reads it so, in one pass: the same.
        let read: Live = serde_json::from_value(value).expect("a Live");
        assert_eq!(read, live);
        let expected_meta = json!({
            "name": "demo-decode", "namespace": "team", "uid": "u-1", "resourceVersion": "7",
            "generation": 3,
            "ownerReferences": [
                {"apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment", "name": "demo", "uid": "d-1", "controller": true},
            ],
        });
        assert_eq!(
            serde_json::to_value(&live.metadata).expect("JSON"),
            expected_meta
        );
        assert_eq!(live.applied_hash, Some(0xff));
        assert_eq!(live.model_source, None);
        assert_eq!(
            live.foreign_fields,
            [r#"{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}}}"#]
        );
        assert_eq!(
            live.state(),
            Some(&State {
                replicas: Some(2),
                spec_besides_replicas: spec_hash,
                template_revision: Some("1ba066e764".into()),
                observed_generation: Some(3),
                ready_replicas: Some(1),
                ..State::default()
            })
        );
    }

    /// A download Job keeps its source, its pod counts and a `Failed` condition that holds.
    #[test]
    fn a_live_job_keeps_its_source_counts_and_failure() {
        let object: kube::api::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "demo-model", "annotations": {"infera.amd.com/model-source": "hf://org/model"}},
            "spec": {"template": {}},
            "status": {"failed": 3, "conditions": [
                {"type": "Complete", "status": "False"},
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
            ]},
        }))
        .expect("a Job");
        let live = Live::from(object);
        assert_eq!(live.model_source.as_deref(), Some("hf://org/model"));
        let state = live.state().expect("a Job's state");
        assert_eq!(
            (state.failed, state.succeeded, state.active),
            (Some(3), None, None)
        );
        assert_eq!(
            state.failure,
            Some((
                "BackoffLimitExceeded".into(),
                "Job has reached the specified backoff limit".into()
            ))
        );
    }

    /// A route or pool is accepted when one `Accepted` condition holds, top-level or per parent;
    /// without such a condition it says nothing.
    #[test]
    fn acceptance_is_read_from_any_parents_conditions() {
        let accepted = |status: serde_json::Value| {
            let object: kube::api::DynamicObject = serde_json::from_value(json!({
                "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                "metadata": {"name": "demo-route"}, "spec": {}, "status": status,
            }))
            .expect("a route");
            Live::from(object).state().and_then(|s| s.accepted)
        };
        let parent = |status: &str| json!({"conditions": [{"type": "ResolvedRefs", "status": "True"}, {"type": "Accepted", "status": status}]});
        assert_eq!(accepted(json!({})), None);
        assert_eq!(
            accepted(
                json!({"parents": [{"conditions": [{"type": "ResolvedRefs", "status": "True"}]}]})
            ),
            None
        );
        assert_eq!(accepted(json!({"parents": [parent("False")]})), Some(false));
        assert_eq!(
            accepted(json!({"parents": [parent("False"), parent("True")]})),
            Some(true)
        );
        // GAIE before 1.0: `parent`; and a top-level condition.
        assert_eq!(accepted(json!({"parent": [parent("True")]})), Some(true));
        assert_eq!(
            accepted(json!({"conditions": [{"type": "Accepted", "status": "False"}]})),
            Some(false)
        );
    }

    /// A child watched metadata-only has no state.
    #[test]
    fn a_metadata_only_child_has_no_state() {
        let meta: kube::api::PartialObjectMeta<Live> = serde_json::from_value(
            json!({"metadata": {"name": "demo-router", "resourceVersion": "4"}}),
        )
        .expect("metadata");
        let live = Live::from_meta(meta);
        assert_eq!(live.metadata.name.as_deref(), Some("demo-router"));
        assert_eq!(live.state, None);
    }

    /// A LeaderWorkerSet keeps its `maxSurge`, which says whether its rollout replaces groups.
    #[test]
    fn a_live_leader_worker_set_keeps_its_max_surge() {
        let object: kube::api::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "demo-decode"},
            "spec": {"replicas": 4, "rolloutStrategy": {"type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1, "partition": 2}}},
        }))
        .expect("a LeaderWorkerSet");
        let live = Live::from(object);
        let state = live.state().expect("a workload's state");
        assert_eq!((state.replicas, state.max_surge), (Some(4), Some(0)));
    }
}
