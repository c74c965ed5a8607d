use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};

use super::*;

fn pod(yaml: &str) -> Pod {
    serde_saphyr::from_str(yaml).expect("a pod")
}

#[test]
fn a_prefix_names_pool_and_pod_and_the_container_and_rank_only_when_there_are_several() {
    let source = |container: Option<&str>, rank: Option<&str>| Source {
        pool: "decode".into(),
        pod: "demo-decode-7f9c-x2k4p".into(),
        container: container.map(String::from),
        rank: rank.map(String::from),
    };
    assert_eq!(
        source(None, None).prefix(),
        "[decode/demo-decode-7f9c-x2k4p]"
    );
    assert_eq!(
        source(Some("epp"), None).prefix(),
        "[decode/demo-decode-7f9c-x2k4p/epp]"
    );
    assert_eq!(
        source(None, Some("1")).prefix(),
        "[decode/demo-decode-7f9c-x2k4p rank 1]"
    );
}

#[test]
fn containers_are_the_started_init_containers_then_every_container_with_its_state() {
    let group = pod(r#"
metadata:
  name: group-worker-0-1
  labels: {infera.amd.com/service: worker, leaderworkerset.sigs.k8s.io/worker-index: "1"}
spec:
  initContainers: [{name: wait-model}, {name: never-ran}]
  containers: [{name: engine}]
status:
  initContainerStatuses:
    - {name: wait-model, image: i, imageID: "", ready: false, restartCount: 0, state: {terminated: {exitCode: 0}}}
    - {name: never-ran, image: i, imageID: "", ready: false, restartCount: 0, state: {waiting: {reason: PodInitializing}}}
  containerStatuses:
    - {name: engine, image: i, imageID: "", ready: false, restartCount: 2, state: {waiting: {reason: CrashLoopBackOff}}}
"#);
    let found = containers(&group, Some("operator"));
    let summary: Vec<_> = found
        .iter()
        .map(|c| (c.source.prefix(), c.started, c.waiting.clone(), c.restarts))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "[worker/group-worker-0-1/wait-model rank 1]".to_string(),
                true,
                None,
                0
            ),
            (
                "[worker/group-worker-0-1/engine rank 1]".to_string(),
                false,
                Some("CrashLoopBackOff".to_string()),
                2
            ),
        ]
    );
    // A pod without the pool label (the operator's) takes the pool given; one container is unnamed.
    let operator = pod(r#"
metadata: {name: infera-operator-5d8f, labels: {app.kubernetes.io/name: infera-operator}}
spec: {containers: [{name: operator}]}
status:
  containerStatuses: [{name: operator, image: i, imageID: "", ready: true, restartCount: 0, state: {running: {}}}]
"#);
    let found = containers(&operator, Some("operator"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].source.prefix(), "[operator/infera-operator-5d8f]");
    assert!(found[0].started);
}

#[test]
fn the_api_servers_timestamp_is_split_off_and_a_line_without_one_is_kept_whole() {
    let (time, text) = split_timestamp("2026-12-06T06:39:17.123456789Z INFO router ready");
    assert_eq!(
        time,
        Some("2026-12-06T06:39:17.123456789Z".parse().expect("time"))
    );
    assert_eq!(text, "INFO router ready");
    assert_eq!(split_timestamp("no time here"), (None, "no time here"));
    let (time, text) = split_timestamp("2026-12-06T06:39:17Z");
    assert!(time.is_some());
    assert_eq!(text, "");
}

fn line(time: Option<&str>, source: usize, raw: &str) -> Line {
    Line {
        time: time.map(|t| t.parse::<Timestamp>().expect("time")),
        source,
        raw: raw.into(),
    }
}

#[test]
fn tails_merge_by_time_with_nanosecond_precision_and_each_containers_order_kept() {
    // RFC 3339 with trimmed nanoseconds does not sort as text: as text, .1234Z comes after .12345Z.
    let server = vec![
        line(Some("2026-12-06T06:39:17.1234Z"), 0, "s1"),
        line(None, 0, "s1 continued"),
        line(Some("2026-12-06T06:39:19Z"), 0, "s2"),
    ];
    let decode = vec![
        line(Some("2026-12-06T06:39:17.12345Z"), 1, "d1"),
        line(Some("2026-12-06T06:39:18Z"), 1, "d2"),
    ];
    let merged: Vec<String> = merge(vec![server, decode])
        .into_iter()
        .map(|l| l.raw)
        .collect();
    assert_eq!(merged, ["s1", "s1 continued", "d1", "d2", "s2"]);
}

#[test]
fn passwords_in_urls_are_hidden_and_other_text_is_untouched() {
    assert_eq!(
        redact("Connecting to NATS at nats://infera:s3cr3t@demo-nats:4222 now"),
        "Connecting to NATS at nats://infera:***@demo-nats:4222 now"
    );
    assert_eq!(
        redact("servers=['nats://infera:pw@a:4222', 'nats://infera:pw2@b:4222/x']"),
        "servers=['nats://infera:***@a:4222', 'nats://infera:***@b:4222/x']"
    );
    for untouched in [
        "GET http://demo-server:8000/v1/completions",
        "nats://user@host:4222 (no password)",
        "ratio 3:1 at 12:00",
        "http://:@host",
    ] {
        assert!(
            matches!(redact(untouched), std::borrow::Cow::Borrowed(_)),
            "{untouched}"
        );
    }
}

#[test]
fn the_operators_lines_about_one_deployment_are_chosen_by_their_fields() {
    let json = r#"{"timestamp":"2026-12-06T06:39:17Z","level":"WARN","message":"reconcile error","target":"infera_operator::controller","namespace":"team","deployment":"demo","error":"quota exceeded","attempt":3}"#;
    assert_eq!(
        operator_line(json, "team", "demo").as_deref(),
        Some("WARN reconcile error attempt=3 error=quota exceeded")
    );
    assert_eq!(operator_line(json, "team", "demo2"), None);
    let several = r#"{"level":"INFO","message":"Pending: pool decode: 1 pod unschedulable\npool nats: 1 pod unschedulable","namespace":"team","deployment":"demo","reason":"InsufficientCapacity"}"#;
    assert_eq!(
        operator_line(several, "team", "demo").as_deref(),
        Some(
            "INFO Pending: pool decode: 1 pod unschedulable; pool nats: 1 pod unschedulable reason=InsufficientCapacity"
        )
    );
    assert_eq!(operator_line(json, "other", "demo"), None);
    let about_nothing = r#"{"level":"INFO","message":"acquired leadership"}"#;
    assert_eq!(operator_line(about_nothing, "team", "demo"), None);
    // --log-format text: the fields as words.
    let text =
        "WARN infera_operator::controller: reconcile error namespace=team deployment=demo error=x";
    assert_eq!(operator_line(text, "team", "demo").as_deref(), Some(text));
    assert_eq!(operator_line(text, "team", "dem"), None);
}

#[test]
fn the_selector_narrows_to_pools_then_to_one_rank() {
    assert_eq!(
        selector("demo", &[], None),
        "infera.amd.com/deployment=demo"
    );
    assert_eq!(
        selector("demo", &["decode".into(), "nats".into()], Some(1)),
        "infera.amd.com/deployment=demo,infera.amd.com/service in (decode,nats),leaderworkerset.sigs.k8s.io/worker-index=1"
    );
}
