//! `status` rendering: the list table and the detail text (snapshots), from the view's fixtures.

use k8s_openapi::jiff::Timestamp;

use super::text::{detail_text, list_table};
use crate::{
    printer::Printer,
    view::{
        detail, summarize,
        tests::{idep, pod, ready_idep, warning},
    },
};

#[test]
fn list_table_shows_state_and_ready_services() {
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let rows = [summarize(&idep("Deploying"), now)];
    assert_eq!(
        list_table(&Printer::plain(), &rows, true, false),
        "NAMESPACE   NAME   BACKEND   STATE       SERVICES   AGE\nteam-a      big    vllm      Deploying   1/2        5m\n"
    );
    assert_eq!(
        list_table(&Printer::plain(), &rows, false, true),
        "NAME   BACKEND   STATE       SERVICES   AGE   REASON         ENDPOINT\nbig    vllm      Deploying   1/2        5m    PodsNotReady   http://big-server.team-a.svc.cluster.local:8000\n"
    );
}

#[test]
fn detail_shows_services_groups_pods_conditions_and_why() {
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let pods = [
        pod("big-worker-0", "0", true, None),
        pod("big-worker-0-1", "0", true, None),
        pod("big-worker-1", "1", false, Some("ImagePullBackOff")),
    ];
    let events: Vec<k8s_openapi::api::core::v1::Event> =
        vec![serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e"}, "type": "Warning", "reason": "BackOff", "message": "Back-off pulling image \"img\"",
            "count": 3, "lastTimestamp": "1970-01-01T00:21:00Z",
            "involvedObject": {"kind": "Pod", "name": "big-worker-1"}}))
        .unwrap_or_default()];
    let d = detail(&idep("Deploying"), &pods, &events, now);
    insta::assert_snapshot!("detail_text", detail_text(&Printer::plain(), &d));
    insta::assert_json_snapshot!("detail_json", d);
}

#[test]
fn a_ready_deployment_says_its_older_warnings_are_resolved() {
    let events = [warning("big-worker-0", "BackOff", "1970-01-01T00:21:00Z")];
    let now = Timestamp::from_second(1_500).unwrap_or_default();
    let pods = [pod("big-worker-0", "0", true, None)];
    let text = detail_text(
        &Printer::plain(),
        &detail(&ready_idep(), &pods, &events, now),
    );
    let warnings = text
        .split_once("\nWarnings since")
        .map(|(_, w)| w)
        .unwrap_or_default();
    assert_eq!(
        warnings,
        " it became Ready (1970-01-01T00:22:00Z):\n  <none>\n  (1 older warning(s), from before it became Ready, are resolved and not shown)\n"
    );
}
