//! `status` rendering: the list table and the detail text (snapshots), from the view's fixtures.

use k8s_openapi::jiff::Timestamp;

use super::text::{detail_text, list_table};
use crate::{
    gateway_api::ParentsStatus,
    printer::Printer,
    view::{
        detail, summarize,
        tests::{idep, listed, pod, ready_idep, warning},
    },
};

#[test]
fn list_table_shows_state_and_ready_services() {
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let rows = [summarize(&listed("Deploying"), now)];
    assert_eq!(
        list_table(&Printer::plain(), &rows, true, false),
        "NAMESPACE   NAME   BACKEND   STATE       SERVICES   AGE\nteam-a      big    sglang    Deploying   1/2        5m\n"
    );
    assert_eq!(
        list_table(&Printer::plain(), &rows, false, true),
        "NAME   BACKEND   STATE       SERVICES   AGE   REASON         ENDPOINT                                          REVISION\nbig    sglang    Deploying   1/2        5m    PodsNotReady   http://big-server.team-a.svc.cluster.local:8000   e9ec9c994b\n"
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

/// [`idep`] behind Gateway infra/gw, listener http.
fn gaie_idep() -> infera_core::InferaDeployment {
    let mut gaie = idep("Ready");
    gaie.spec.gaie = Some(infera_core::GaieSpec {
        enabled: Some(true),
        gateway_name: "gw".into(),
        gateway_namespace: Some("infra".into()),
        gateway_section_name: Some("http".into()),
        epp_image: None,
        tokenizer_path: Some("Qwen/Qwen3-0.6B".into()),
        ..Default::default()
    });
    gaie
}

/// The detail of [`gaie_idep`] with its Gateway section built from these reads.
fn gaie_detail(
    route: Result<Option<ParentsStatus>, String>,
    pool: Result<Option<ParentsStatus>, String>,
) -> crate::view::Detail {
    let now = Timestamp::from_second(1_300).unwrap_or_default();
    let mut d = detail(&gaie_idep(), &[], &[], now);
    d.gateway = crate::view::gateway_section(&gaie_idep(), route, pool);
    d
}

#[test]
fn the_gateway_section_shows_each_parents_conditions() {
    let route: ParentsStatus = serde_json::from_value(serde_json::json!({"parents": [{
        "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "infra", "sectionName": "http"},
        "controllerName": "example.com/gateway",
        "conditions": [
            {"type": "Accepted", "status": "True", "reason": "Accepted", "message": ""},
            {"type": "ResolvedRefs", "status": "False", "reason": "InvalidKind", "message": "InferencePool is not supported"}
        ]}]}))
    .unwrap_or_default();
    let d = gaie_detail(Ok(Some(route)), Ok(Some(ParentsStatus::default())));
    let text = detail_text(&Printer::plain(), &d);
    let gateway = text
        .split_once("\nGateway:\n")
        .and_then(|(_, rest)| rest.split_once("\n\n"))
        .map(|(section, _)| section)
        .unwrap_or_default();
    assert_eq!(
        gateway,
        "  Gateway:       infra/gw (listener http)
  HTTPRoute:     big-route
                 infra/gw (listener http): Accepted, ResolvedRefs=False (InvalidKind: InferencePool is not supported)
  InferencePool: big-pool
                 no Gateway has reported on it yet"
    );
    let json = serde_json::to_value(&d).unwrap_or_default();
    assert_eq!(
        json["gateway"],
        serde_json::json!({
            "namespace": "infra", "name": "gw", "sectionName": "http",
            "httpRoute": {"name": "big-route", "state": "Found", "parents": [{
                "parent": "infra/gw (listener http)",
                "conditions": [
                    {"type": "Accepted", "status": "True", "reason": "Accepted", "message": ""},
                    {"type": "ResolvedRefs", "status": "False", "reason": "InvalidKind", "message": "InferencePool is not supported"}
                ]}]},
            "inferencePool": {"name": "big-pool", "state": "Found", "parents": []}
        })
    );
}

/// Without a server the gateway is the way in, and the endpoint line says so.
#[test]
fn a_serverless_graphs_endpoint_is_its_gateway() {
    let endpoint = |d: &crate::view::Detail| {
        detail_text(&Printer::plain(), d)
            .lines()
            .find_map(|l| l.strip_prefix("Endpoint:").map(|e| e.trim().to_string()))
            .unwrap_or_default()
    };
    let mut d = gaie_detail(Ok(None), Ok(None));
    d.summary.endpoint.clear();
    assert_eq!(
        endpoint(&d),
        "<none yet>",
        "a server that has not reported yet"
    );
    d.services.retain(|r| r.role != "server");
    assert_eq!(endpoint(&d), "through Gateway infra/gw (no server)");
}

#[test]
fn a_missing_or_unreadable_gateway_object_is_shown_as_such() {
    let d = gaie_detail(
        Ok(None),
        Err(
            "forbidden: inferencepools.inference.networking.k8s.io \"big-pool\" is forbidden"
                .into(),
        ),
    );
    let text = detail_text(&Printer::plain(), &d);
    assert!(
        text.contains(
            "\nGateway:\n  Gateway:       infra/gw (listener http)\n  HTTPRoute:     big-route: not found\n  InferencePool: big-pool: cannot read: forbidden: inferencepools.inference.networking.k8s.io \"big-pool\" is forbidden\n\n"
        ),
        "{text}"
    );
    // Without spec.gaie there is no section, in text or JSON.
    let plain = detail(
        &idep("Ready"),
        &[],
        &[],
        Timestamp::from_second(1_300).unwrap_or_default(),
    );
    assert!(crate::view::gateway_section(&idep("Ready"), Ok(None), Ok(None)).is_none());
    assert!(!detail_text(&Printer::plain(), &plain).contains("Gateway:"));
    assert!(
        serde_json::to_value(&plain)
            .unwrap_or_default()
            .get("gateway")
            .is_none()
    );
}

#[test]
fn warnings_line_up_in_columns() {
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let events = [
        warning("big-worker-1", "BackOff", "1970-01-01T00:21:00Z"),
        warning("big-worker-0-1", "FailedScheduling", "1970-01-01T00:19:00Z"),
    ];
    let pods = [
        pod("big-worker-0-1", "0", false, None),
        pod("big-worker-1", "1", false, None),
    ];
    let text = detail_text(
        &Printer::plain(),
        &detail(&idep("Deploying"), &pods, &events, now),
    );
    let warnings = text
        .split_once("Recent warnings:\n")
        .and_then(|(_, w)| w.split_once("\n\n"))
        .map(|(w, _)| w)
        .unwrap_or_default();
    insta::assert_snapshot!("warnings_columns", warnings);
}

/// `status.models` is shown after the conditions: each download Job, its source and the commit
/// it got, or that it has not got one yet.
#[test]
fn the_models_section_shows_each_download_and_its_resolved_revision() {
    let now = Timestamp::from_second(1_500).unwrap_or_default();
    let mut idep = ready_idep();
    let status = idep.status.get_or_insert_with(Default::default);
    for (job, source, revision) in [
        (
            "big-model",
            "hf://Qwen/Qwen3-0.6B",
            Some("c1e7ed4b1f4ea4bd5e1c41f8bb25c8b8d7f0e2a1"),
        ),
        ("big-decode-model", "hf://Qwen/Qwen3-1.7B@main", None),
    ] {
        status.models.insert(
            job.into(),
            infera_core::ModelStatus {
                source: source.into(),
                resolved_revision: revision.map(String::from),
            },
        );
    }
    let text = detail_text(&Printer::plain(), &detail(&idep, &[], &[], now));
    let models = text
        .split_once("\nModels:\n")
        .and_then(|(_, rest)| rest.split_once("\n\n"))
        .map(|(models, _)| models)
        .unwrap_or_default();
    assert_eq!(
        models,
        "  JOB                SOURCE                      RESOLVED REVISION\n  big-decode-model   hf://Qwen/Qwen3-1.7B@main   <not downloaded yet>\n  big-model          hf://Qwen/Qwen3-0.6B        c1e7ed4b1f4ea4bd5e1c41f8bb25c8b8d7f0e2a1"
    );
    assert!(
        !detail_text(&Printer::plain(), &detail(&ready_idep(), &[], &[], now)).contains("Models:")
    );
}

#[test]
fn the_load_section_has_a_row_per_pool_and_says_which_pods_did_not_answer() {
    use infera_core::load::{Percentiles, PoolLoad};

    use crate::view::LoadSection;
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let mut d = detail(&idep("Ready"), &[], &[], now);
    d.load = Some(LoadSection {
        window_seconds: Some(10.0),
        prometheus: None,
        pools: vec![
            PoolLoad {
                pool: "server".into(),
                pods: 1,
                answered: 1,
                in_flight: Some(4.0),
                requests_per_second: Some(2.0),
                e2e: Some(Percentiles {
                    p50: 0.75,
                    p95: 1.2345,
                }),
                ..PoolLoad::default()
            },
            PoolLoad {
                pool: "decode".into(),
                pods: 3,
                answered: 2,
                running: Some(5.0),
                waiting: Some(2.0),
                kv_usage: Some(0.5),
                tokens_per_second: Some(100.0),
                requests_per_second: Some(1.5),
                unanswered: vec!["big-decode-2: no answer within 3s".into()],
                ..PoolLoad::default()
            },
        ],
    });
    let text = detail_text(&Printer::plain(), &d);
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Load"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        section,
        [
            "Load (over 10 s):",
            "  POOL     PODS   IN FLIGHT   RUNNING   WAITING   KV    TOKENS/S   REQ/S   E2E P50/P95   TTFT P50/P95   ITL P50/P95",
            "  server   1/1    4           -         -         -     -          2.0     750ms/1.23s   -              -",
            "  decode   2/3    -           5         2         50%   100.0      1.5     -             -              -",
            "  decode: big-decode-2: no answer within 3s",
        ]
    );
}

#[test]
fn the_planner_section_shows_latencies_against_targets_pools_and_decisions() {
    use infera_core::{PlannerDecision, PlannerMode, PlannerPoolStatus, PlannerStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use crate::view::PlannerSection;
    let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
    let at = Time(Timestamp::from_second(1_000 + 269).unwrap_or_default());
    let section = PlannerSection {
        mode: PlannerMode::Act,
        ttft_p95_target_seconds: 0.8,
        itl_p95_target_seconds: 0.04,
        status: Some(PlannerStatus {
            mode: PlannerMode::Act,
            ttft_p95_seconds: Some(0.41),
            itl_p95_seconds: Some(0.052),
            pools: [(
                "decode".to_string(),
                PlannerPoolStatus {
                    replicas: 2,
                    recommended: 3,
                    reason: "ITL p95 misses its target (130% of it)".into(),
                    load: Some(1210.0),
                    unit: "output tokens/s".into(),
                    capacity: Some(502.25),
                    last_change_time: Some(at.clone()),
                },
            )]
            .into(),
            decisions: vec![PlannerDecision {
                time: at,
                pool: "decode".into(),
                from: 1,
                to: 2,
                reason: "ITL p95 misses its target (145% of it)".into(),
                acted: true,
            }],
            ..PlannerStatus::default()
        }),
    };
    let text = super::text::planner(&Printer::plain(), &section, Some(now));
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    assert_eq!(
        lines,
        [
            "",
            "Planner (Act; TTFT p95 410ms of 800ms, ITL p95 52ms of 40ms):",
            "  POOL     REPLICAS   RECOMMENDED   LOAD                     PER REPLICA   REASON",
            "  decode   2          3             1210.0 output tokens/s   502.2         ITL p95 misses its target (130% of it)",
            "",
            "Decisions (newest first):",
            "  AGE   POOL     REPLICAS   ACTION   REASON",
            "  31s   decode   1 → 2      scaled   ITL p95 misses its target (145% of it)",
        ]
    );
    // Without a status yet: the section says when the first decision comes.
    let empty = PlannerSection {
        status: None,
        ..section
    };
    assert!(
        super::text::planner(&Printer::plain(), &empty, None).contains(
            "<no decision yet: the planner decides one interval after its first reading>"
        )
    );
}
