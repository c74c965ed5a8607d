use super::*;

fn exprs(dashboard: &Value) -> Vec<String> {
    dashboard["panels"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_queries_select_the_deployments_series_by_the_pod_monitors_labels() {
    let d = dashboard("team-a", "demo", BackendFramework::Sglang);
    let exprs = exprs(&d);
    assert_eq!(exprs.len(), 13);
    assert!(exprs.contains(
        &r#"histogram_quantile(0.95, sum by (le, infera_service) (rate(sglang:time_to_first_token_seconds_bucket{namespace="team-a", infera_deployment="demo"}[$__rate_interval])))"#
            .to_string()
    ), "{exprs:#?}");
    assert!(exprs.contains(
        &r#"sum by (outcome) (rate(infera_request_duration_seconds_count{namespace="team-a", infera_deployment="demo"}[$__rate_interval]))"#
            .to_string()
    ), "{exprs:#?}");
    assert!(exprs.contains(
        &r#"count by (infera_service, infera_revision) (up{namespace="team-a", infera_deployment="demo"} == 1)"#
            .to_string()
    ), "{exprs:#?}");
    for expr in &exprs {
        assert!(
            expr.contains(r#"{namespace="team-a", infera_deployment="demo"}"#),
            "{expr}"
        );
    }
}

#[test]
fn vllm_graphs_query_vllms_names() {
    let exprs = exprs(&dashboard("ns", "v", BackendFramework::Vllm)).join("\n");
    for name in [
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:generation_tokens_total",
        "vllm:kv_cache_usage_perc",
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
    ] {
        assert!(exprs.contains(name), "{name} in {exprs}");
    }
    assert!(!exprs.contains("sglang:"), "{exprs}");
}

#[test]
fn panels_tile_two_to_a_row_with_one_ref_id_per_query() {
    let d = dashboard("ns", "demo", BackendFramework::Sglang);
    let panels = d["panels"].as_array().expect("panels");
    assert_eq!(panels.len(), 8);
    for (i, panel) in panels.iter().enumerate() {
        assert_eq!(panel["id"], i + 1);
        assert_eq!(panel["gridPos"]["x"], (i % 2) * 12, "{panel}");
        assert_eq!(panel["gridPos"]["y"], (i / 2) * 8, "{panel}");
        let refs: Vec<&str> = panel["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .filter_map(|t| t["refId"].as_str())
            .collect();
        let expected: Vec<String> = ('A'..).take(refs.len()).map(String::from).collect();
        assert_eq!(refs, expected, "{panel}");
        assert_eq!(panel["datasource"]["uid"], "${datasource}");
    }
    assert_eq!(d["title"], "Infera ns/demo");
    assert_eq!(d["templating"]["list"][0]["type"], "datasource");
}

#[test]
fn the_uid_is_stable_per_deployment_and_fits_grafanas_40_characters() {
    let uid = |ns: &str, name: &str| {
        dashboard(ns, name, BackendFramework::Sglang)["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(uid("a", "demo"), uid("a", "demo"));
    assert_ne!(uid("a", "demo"), uid("b", "demo"));
    let long = uid(&"n".repeat(63), &"d".repeat(42));
    assert_eq!(long.len(), "infera-".len() + 16, "{long}");
}
