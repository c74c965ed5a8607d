//! The detail as a pure function: fixtures shared with `status`'s tests, and what the view decides
//! (which warnings are ours, which are still news).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

/// `examples/multinode.yaml` in namespace team-a, created at second 1000, with a status in `state`.
pub fn idep(state: &str) -> InferaDeployment {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/multinode.yaml"
    ))
    .unwrap_or_default();
    let mut idep = infera_core::yaml::parse_deployments(&text)
        .unwrap_or_default()
        .remove(0);
    idep.metadata.namespace = Some("team-a".into());
    idep.metadata.generation = Some(2);
    idep.metadata.creation_timestamp =
        Some(Time(Timestamp::from_second(1_000).unwrap_or_default()));
    idep.status = serde_json::from_value(serde_json::json!({
        "state": state, "observedGeneration": 2, "servicesReady": "1/2", "endpoint": "http://big-server.team-a.svc.cluster.local:8000", "updateRevision": "e9ec9c994b",
        "conditions": [{"type": "Ready", "status": "False", "reason": "PodsNotReady", "message": "worker: 1/2 groups ready", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "services": {
            "server": {"kind": "Deployment", "desiredReplicas": 1, "readyReplicas": 1},
            "worker": {"kind": "LeaderWorkerSet", "desiredReplicas": 2, "readyReplicas": 1, "readyGroups": 1}
        }
    }))
    .ok();
    idep
}

/// [`idep`] as a list reads it: parsed from the JSON the API server would send, `managedFields`
/// and all.
pub fn listed(state: &str) -> Listed {
    let mut json = serde_json::to_value(idep(state)).unwrap_or_default();
    json["metadata"]["managedFields"] = serde_json::json!([{
        "manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:image": {}}},
    }]);
    serde_json::from_value(json).unwrap_or_default()
}

/// [`idep`] Ready since second 1320 (00:22:00).
pub fn ready_idep() -> InferaDeployment {
    let mut ready = idep("Ready");
    if let Some(status) = ready.status.as_mut() {
        status.conditions = serde_json::from_value(serde_json::json!([{
            "type": "Ready", "status": "True", "reason": "AllReplicasReady", "message": "",
            "lastTransitionTime": "1970-01-01T00:22:00Z"}]))
        .unwrap_or_default();
    }
    ready
}

/// A pod of the worker pool in LeaderWorkerSet group `group`, waiting with `waiting` if given.
pub fn pod(name: &str, group: &str, ready: bool, waiting: Option<&str>) -> Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "creationTimestamp": "1970-01-01T00:20:00Z", "labels": {
            "infera.amd.com/deployment": "big", "infera.amd.com/service": "worker", naming::LWS_LABEL_GROUP_INDEX: group}},
        "spec": {"nodeName": "gpu-node-0", "containers": [{"name": "engine"}]},
        "status": {"phase": if ready { "Running" } else { "Pending" }, "containerStatuses": [{
            "name": "engine", "image": "img", "imageID": "", "ready": ready, "restartCount": 0,
            "state": match waiting { Some(r) => serde_json::json!({"waiting": {"reason": r}}), None => serde_json::json!({"running": {}}) }}]}
    }))
    .unwrap_or_default()
}

/// A warning event about `object` (a Pod), last seen at `last`.
pub fn warning(object: &str, reason: &str, last: &str) -> Event {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("e-{object}-{reason}")}, "type": "Warning", "reason": reason,
        "message": "m", "lastTimestamp": last,
        "involvedObject": {"kind": "Pod", "name": object}}))
    .unwrap_or_default()
}

#[test]
fn warnings_of_a_deployment_with_a_longer_name_are_not_ours() {
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let pods = [pod("big-worker-0", "0", true, None)];
    let at = "1970-01-01T00:21:00Z";
    let events = vec![
        warning("big-x-worker-0", "BackOff", at),
        warning("big-x", "BackOff", at),
        warning("big-worker-0", "BackOff", at),
        warning("big-worker", "BackOff", at),
    ];
    let d = detail(&idep("Deploying"), &pods, &events, now);
    let objects: Vec<&str> = d.warnings.iter().map(|w| w.object.as_str()).collect();
    assert_eq!(objects.len(), 2, "{objects:?}");
    assert!(objects.contains(&"Pod/big-worker-0"), "{objects:?}");
    assert!(objects.contains(&"Pod/big-worker"), "{objects:?}");
}

/// The bug: a Ready deployment listed the pull back-off of its way up as a current warning.
#[test]
fn a_ready_deployment_lists_only_warnings_since_it_became_ready() {
    let pods = [pod("big-worker-0", "0", true, None)];
    let events = vec![
        warning("big-worker-0", "BackOff", "1970-01-01T00:21:00Z"),
        warning("big-worker-0", "FailedScheduling", "1970-01-01T00:21:30Z"),
        warning("big-worker-0", "Unhealthy", "1970-01-01T00:23:00Z"),
    ];
    let now = Timestamp::from_second(1_500).unwrap_or_default();
    let d = detail(&ready_idep(), &pods, &events, now);
    let reasons: Vec<&str> = d.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(reasons, ["Unhealthy"]);
    assert_eq!(d.warnings_since.as_deref(), Some("1970-01-01T00:22:00Z"));
    assert_eq!(d.resolved_warnings, 2);
    assert!(d.blocking.is_empty());
    let json = serde_json::to_value(&d).unwrap_or_default();
    assert_eq!(json["warningsSince"], "1970-01-01T00:22:00Z");
    assert_eq!(json["resolvedWarnings"], 2);

    // Not Ready (yet, or any more): every recent warning is current.
    let d = detail(&idep("Deploying"), &pods, &events, now);
    assert_eq!(d.warnings.len(), 3);
    assert_eq!((d.warnings_since, d.resolved_warnings), (None, 0));
}

#[test]
fn pod_rows_read_health_like_the_operator() {
    let unschedulable: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "big-worker-1", "labels": {"infera.amd.com/service": "worker"}},
        "spec": {"containers": [{"name": "engine"}, {"name": "infera-frontend"}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/2 nodes are available: 2 Insufficient amd.com/gpu."}]}
    }))
    .unwrap_or_default();
    let row = pod_row(
        &unschedulable,
        Timestamp::from_second(0).unwrap_or_default(),
    );
    assert_eq!(
        (row.ready.as_str(), row.restarts, row.reason.as_str()),
        ("0/2", 0, "Unschedulable")
    );
}

/// A page of the API server's Table (`includeObject=Metadata`), its columns in another order
/// than the CRD prints them, one row without a status yet: each row is the summary `status`
/// makes of the whole object.
#[test]
fn a_table_row_is_the_summary_of_its_object() {
    let column = |name: &str| serde_json::json!({"name": name, "type": "string"});
    let metadata = |name: &str| {
        serde_json::json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {
            "name": name, "namespace": "team-a", "creationTimestamp": "1970-01-01T00:16:40Z",
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
        }})
    };
    let columns = [
        "Name", "Revision", "Backend", "State", "Services", "Age", "Reason", "Endpoint",
    ]
    .map(column);
    let table: listed::Table = serde_json::from_value(serde_json::json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "7", "continue": "next"},
        "columnDefinitions": columns,
        "rows": [
            {"cells": ["big", "e9ec9c994b", "sglang", "Deploying", "1/2", "5m", "PodsNotReady",
                "http://big-server.team-a.svc.cluster.local:8000"], "object": metadata("big")},
            {"cells": ["new", null, "sglang", null, null, "5m", null, null], "object": metadata("new")},
        ],
    }))
    .unwrap_or_default();
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let rows: Vec<Summary> = table.summaries(now).collect();
    assert_eq!(rows[0], summarize(&listed("Deploying"), now));
    assert_eq!(
        (
            rows[1].state.as_str(),
            rows[1].services_ready.as_str(),
            rows[1].age_seconds
        ),
        ("Pending", "-", 300)
    );
    assert_eq!(table.metadata.continue_.as_deref(), Some("next"));
}

/// No operator has reported on a generation: counted from the newest write of `spec` (not of the
/// status, nor of metadata only), else from the creation; nothing once the status catches up.
#[test]
fn an_unreported_generation_is_counted_from_the_last_spec_write() {
    let at = |second: i64| Timestamp::from_second(second).unwrap_or_default();
    let mut lagging = idep("Pending");
    lagging.metadata.generation = Some(3);
    assert_eq!(
        unreported_seconds(&lagging, at(1_045)),
        Some(45),
        "from creation"
    );
    lagging.metadata.managed_fields = serde_json::from_value(serde_json::json!([
        {"manager": "kubectl", "operation": "Apply", "time": "1970-01-01T00:20:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:image": {}}}},
        {"manager": "infera-operator", "operation": "Apply", "subresource": "status",
         "time": "1970-01-01T00:25:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}},
        {"manager": "kubectl-label", "operation": "Update", "time": "1970-01-01T00:26:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {}}}},
    ]))
    .ok();
    assert_eq!(unreported_seconds(&lagging, at(1_290)), Some(90));
    let d = detail(&lagging, &[], &[], at(1_290));
    assert_eq!(
        d.blocking.first().map(String::as_str),
        Some(
            "no operator has reported on generation 3 for 90s: is one running and reconciling this namespace? check with `kubectl infera doctor`"
        )
    );
    assert!(
        !detail(&lagging, &[], &[], at(1_220))
            .blocking
            .iter()
            .any(|b| b.starts_with("no operator")),
        "20 s is not yet news"
    );
    assert_eq!(
        unreported_seconds(&idep("Pending"), at(9_999)),
        None,
        "reported"
    );
}
