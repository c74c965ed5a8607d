use infera_core::naming::{OPERATOR_MANAGER, REPLICAS_HANDOVER_MANAGER};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::{
    api::DynamicObject,
    core::{
        Status,
        response::{StatusCause, StatusDetails},
    },
};
use serde_json::Value;

use super::{fields::*, records::*, target::*, *};
use crate::ownership::{APPLIED_HASH, hex};

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
fn only_conflicts_with_our_hand_over_manager_are_taken_back() {
    let conflict = |managers: &[&str]| {
        let causes = managers
            .iter()
            .map(|manager| StatusCause {
                reason: "FieldManagerConflict".into(),
                message: format!("conflict with \"{manager}\" using apps/v1"),
                field: ".spec.replicas".into(),
            })
            .collect();
        Status::failure("Apply failed", "Conflict")
            .with_code(409)
            .with_details(StatusDetails {
                causes,
                name: "demo-worker".into(),
                group: "apps".into(),
                kind: "deployments".into(),
                uid: String::new(),
                retry_after_seconds: 0,
            })
    };
    assert!(only_handed_over(&conflict(&[REPLICAS_HANDOVER_MANAGER])));
    assert!(!only_handed_over(&conflict(&[
        REPLICAS_HANDOVER_MANAGER,
        "kubectl-scale"
    ])));
    assert!(!only_handed_over(&conflict(&["kube-controller-manager"])));
    assert!(!only_handed_over(&conflict(&[])));
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
        handed_over: false,
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

/// A download Job rendered as applied is applied as any child; one rendered differently is
/// replaced, unless it already downloaded the source we want.
#[test]
fn a_download_job_of_another_source_is_replaced_not_updated() {
    let job = |source: &str| {
        Child::Job(
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "demo-model", "annotations": {MODEL_SOURCE_ANNOTATION: source}},
                "spec": {"template": {"spec": {"containers": [{"name": "download", "args": [source]}]}}},
            }))
            .expect("a job"),
        )
    };
    let live = |applied: &Child, source: &str, succeeded: i64| {
        let hash = hex(hash(&serde_json::to_value(applied).expect("json")));
        let mut object = DynamicObject::new(
            "demo-model",
            &kube::core::ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&()),
        )
        .data(serde_json::json!({"status": {"succeeded": succeeded}}));
        object.metadata.annotations = Some(
            [
                (APPLIED_HASH.to_string(), hash),
                (MODEL_SOURCE_ANNOTATION.to_string(), source.to_string()),
            ]
            .into(),
        );
        Live::from(object)
    };
    let (v1, v2) = ("hf://Qwen/Qwen3-0.6B@v1", "hf://Qwen/Qwen3-0.6B@v2");
    assert_eq!(
        job_change(&job(v1), &live(&job(v1), v1, 0)),
        JobChange::Apply
    );
    assert_eq!(
        job_change(&job(v2), &live(&job(v1), v1, 0)),
        JobChange::Replace
    );
    assert_eq!(
        job_change(&job(v2), &live(&job(v1), v1, 1)),
        JobChange::Replace
    );
    // An operator that renders the same source differently leaves a finished download be.
    let mut restyled = job(v1);
    if let Child::Job(j) = &mut restyled {
        j.spec.get_or_insert_default().backoff_limit = Some(3);
    }
    assert_eq!(
        job_change(&restyled, &live(&job(v1), v1, 1)),
        JobChange::Keep
    );
    assert_eq!(
        job_change(&restyled, &live(&job(v1), v1, 0)),
        JobChange::Replace
    );
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
        version(&Live::from(live(Some(2), "100")), false),
        version(&Live::from(live(Some(2), "101")), false)
    );
    assert_eq!(
        version(&Live::from(live(Some(2), "100")), false).as_deref(),
        Some("generation 2")
    );
    assert_ne!(
        version(&Live::from(live(Some(2), "100")), false),
        version(&Live::from(live(Some(3), "101")), false)
    );
}

#[test]
fn an_object_without_a_generation_moves_with_its_resource_version() {
    assert_eq!(
        version(&Live::from(live(None, "100")), false).as_deref(),
        Some("100")
    );
    assert_ne!(
        version(&Live::from(live(None, "100")), false),
        version(&Live::from(live(None, "101")), false)
    );
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

/// A Deployment's container list, as rendered.
fn rendered() -> Value {
    serde_json::json!({
        "metadata": {"labels": {"app": "calm"}, "annotations": {APPLIED_HASH: "0"}},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "worker", "image": "rocm/infera", "ports": [{"containerPort": 8000}]},
        ]}}},
    })
}

#[test]
fn a_field_we_set_held_by_another_writer_is_found_through_maps_and_list_items() {
    let holds = |fields: Value| holds_any(&fields, &rendered());
    assert!(holds(serde_json::json!({"f:spec": {"f:replicas": {}}})));
    assert!(holds(
        serde_json::json!({"f:metadata": {"f:labels": {"f:app": {}}}})
    ));
    assert!(holds(
        serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            r#"k:{"name":"worker"}"#: {".": {}, "f:image": {}},
        }}}}})
    ));
    assert!(holds(
        serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            r#"k:{"name":"worker"}"#: {"f:ports": {"i:0": {}}},
        }}}}})
    ));
}

#[test]
fn fields_we_do_not_set_and_bare_nodes_are_not_ours() {
    let holds = |fields: Value| holds_any(&fields, &rendered());
    // The Deployment controller's revision annotation, beside ours.
    assert!(!holds(serde_json::json!({"f:metadata": {"f:annotations": {
        ".": {}, "f:deployment.kubernetes.io/revision": {},
    }}})));
    assert!(!holds(
        serde_json::json!({"f:metadata": {"f:labels": {"f:team": {}}}})
    ));
    // Another container, or a field of ours it does not hold.
    assert!(!holds(
        serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            r#"k:{"name":"sidecar"}"#: {".": {}, "f:image": {}},
            r#"k:{"name":"worker"}"#: {".": {}, "f:env": {}},
        }}}}})
    ));
    assert!(!holds(serde_json::json!({"f:spec": {"f:paused": {}}})));
}

#[test]
fn a_child_is_adopted_when_it_carries_our_hash_and_no_other_writer_holds_our_fields() {
    let body = rendered();
    let mut live = live(Some(4), "100");
    assert_eq!(
        adopt(&Live::from(live.clone()), 7, &body, false),
        None,
        "no hash: never applied by us"
    );
    live.metadata.annotations = Some([(APPLIED_HASH.to_string(), hex(7))].into());
    assert_eq!(
        adopt(&Live::from(live.clone()), 8, &body, false),
        None,
        "we render something else now"
    );
    assert_eq!(
        adopt(&Live::from(live.clone()), 7, &body, false),
        Some(record(7, "generation 4"))
    );
    live.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("kubectl-edit".into()),
        operation: Some("Update".into()),
        fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
            serde_json::json!({"f:spec": {"f:replicas": {}}}),
        )),
        ..ManagedFieldsEntry::default()
    }]);
    assert_eq!(
        adopt(&Live::from(live.clone()), 7, &body, false),
        None,
        "another writer took spec.replicas"
    );
}

#[test]
fn only_a_workload_rendered_without_replicas_is_autoscaled() {
    let spec = |spec: Value| serde_json::json!({ "spec": spec });
    assert!(autoscaled(
        ChildKind::Deployment,
        &spec(serde_json::json!({}))
    ));
    assert!(autoscaled(
        ChildKind::LeaderWorkerSet,
        &spec(serde_json::json!({}))
    ));
    assert!(!autoscaled(
        ChildKind::Deployment,
        &spec(serde_json::json!({"replicas": 2}))
    ));
    assert!(!autoscaled(
        ChildKind::HorizontalPodAutoscaler,
        &spec(serde_json::json!({}))
    ));
}

/// A Deployment as the watch stores it, with `replicas` and an image.
fn watched(replicas: i64, image: &str, generation: i64) -> Live {
    let object = live(Some(generation), "100").data(serde_json::json!({
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "engine", "image": image}]}}},
        "status": {"observedGeneration": generation, "readyReplicas": replicas},
    }));
    Live::from(object)
}

#[test]
fn an_autoscaled_workload_moves_with_its_spec_besides_replicas() {
    let scaled = watched(5, "rocm/infera:a", 3);
    let version = |object: &Live| version(object, true);
    assert_eq!(version(&watched(2, "rocm/infera:a", 2)), version(&scaled));
    assert_ne!(version(&scaled), version(&watched(5, "rocm/infera:b", 4)));
    // Not autoscaled: the generation, which the scale moved.
    assert_ne!(
        records::version(&watched(2, "rocm/infera:a", 2), false),
        records::version(&scaled, false)
    );
}

#[test]
fn replicas_are_held_by_another_writer_of_spec_replicas_only() {
    let entry = |manager: &str, subresource: Option<&str>, fields: Value| ManagedFieldsEntry {
        manager: Some(manager.into()),
        operation: Some("Update".into()),
        subresource: subresource.map(Into::into),
        fields_v1: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
            fields,
        )),
        ..ManagedFieldsEntry::default()
    };
    let replicas = serde_json::json!({"f:spec": {"f:replicas": {}}});
    let mut object = live(Some(1), "100");
    assert!(!replicas_held(&Live::from(object.clone())), "no writer");
    object.metadata.managed_fields = Some(vec![
        entry(OPERATOR_MANAGER, None, replicas.clone()),
        entry("kube-controller-manager", Some("status"), replicas.clone()),
        entry(
            "kubectl-edit",
            None,
            serde_json::json!({"f:spec": {"f:paused": {}}}),
        ),
    ]);
    assert!(
        !replicas_held(&Live::from(object.clone())),
        "ours, a status writer's, another field"
    );
    object
        .metadata
        .managed_fields
        .get_or_insert_default()
        .push(entry("kube-controller-manager", Some("scale"), replicas));
    assert!(
        replicas_held(&Live::from(object.clone())),
        "the HPA through the scale subresource"
    );
}

#[test]
fn a_paused_rollout_holds_a_live_workload_of_another_revision() {
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
    let rendered = |revision: &str| {
        let mut spec = DeploymentSpec::default();
        spec.template.metadata = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            labels: Some(
                [(
                    infera_core::naming::LABEL_REVISION.to_string(),
                    revision.to_string(),
                )]
                .into(),
            ),
            ..Default::default()
        });
        let mut deployment = Deployment {
            spec: Some(spec),
            ..Default::default()
        };
        deployment.metadata.name = Some("demo-worker".into());
        Child::Deployment(deployment)
    };
    let mut snapshot = Snapshot::default();
    assert_eq!(held(&snapshot, &rendered("new")), None, "not created yet");
    let object = serde_json::from_value::<DynamicObject>(
        serde_json::to_value(rendered("old")).expect("json"),
    )
    .expect("an object");
    snapshot.children.insert(
        (ChildKind::Deployment, "demo-worker".into()),
        std::sync::Arc::new(Live::from(object)),
    );
    assert_eq!(held(&snapshot, &rendered("new")).as_deref(), Some("old"));
    assert_eq!(held(&snapshot, &rendered("old")), None, "nothing to hold");
}

#[test]
fn the_applied_hash_is_16_hex_digits() {
    assert_eq!(hex(0xaf63_dc4c_8601_ec8c), "af63dc4c8601ec8c");
    assert_eq!(hex(1), "0000000000000001");
}

fn outgoing(kind: ChildKind, name: &str) -> Outgoing {
    Outgoing {
        kind,
        name: name.into(),
        body: Value::Null,
        hash: 0,
        live_version: None,
        role: None,
        autoscaled: false,
        hand_over_at_creation: false,
        handed_over: false,
    }
}

#[test]
fn the_child_written_alone_runs_nothing_when_it_can_and_is_never_a_role_binding() {
    use ChildKind::*;
    let alone = |kinds: &[ChildKind]| {
        let pending: Vec<Outgoing> = kinds.iter().map(|kind| outgoing(*kind, "x")).collect();
        written_alone(&pending).map(|i| kinds[i])
    };
    assert_eq!(
        alone(&[RoleBinding, Deployment, NetworkPolicy, Service]),
        Some(Service)
    );
    assert_eq!(
        alone(&[RoleBinding, ServiceAccount, Role]),
        Some(ServiceAccount)
    );
    // No child that runs nothing: any but a RoleBinding, a workload if it must.
    assert_eq!(alone(&[RoleBinding, Deployment, Job]), Some(Deployment));
    assert_eq!(alone(&[LeaderWorkerSet]), Some(LeaderWorkerSet));
    assert_eq!(alone(&[RoleBinding]), None);
    assert_eq!(alone(&[]), None);
}
