//! Tier 3 (issue 28 item 4): `kubectl infera bench` measures for real. inference-perf 0.7.0 runs
//! in its Job (tier 3's image of it, `tests/cluster/bench-image.sh`, under the default image's
//! name) and streams completions through upstream's router to the stand-in engine, whose tokens
//! take `INFERA_STANDIN_TOKEN_SECONDS` each (20 ms): the figures printed are inference-perf's own
//! (its summary, kept in the run's ConfigMap), and the inter-token latency they show is the
//! stand-in's. A second, longer run, of prompts that share prefixes, is compared with the first. `tests/run-e2e.sh` runs it alone:
//! latencies measured on a saturated CPU are the CPU's.

use infera_e2e::{
    k8s_openapi::api::core::v1::ConfigMap,
    kube::Api,
    plugin::{deploy_ready, kubectl, namespace_with},
};

/// One aggregated pool on the stand-in: one request at a time per token slot is not needed here,
/// so the default latency model (every token 20 ms, more with many running) holds.
const SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: measured}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server:
      componentType: server
      args: [--router-policy, round-robin, --router-tokenizer-path, Qwen/Qwen3-0.6B]
    worker:
      componentType: worker
      resources: {gpu: 1}
      args: [--model-path, Qwen/Qwen3-0.6B]
"#;

/// `kubectl infera bench measured ARGS -o json`, expected to succeed; its JSON.
async fn bench(namespace: &str, args: &[&str]) -> anyhow::Result<serde_json::Value> {
    let mut all = vec![
        "infera",
        "bench",
        "measured",
        "-n",
        namespace,
        "-o",
        "json",
        "--timeout",
        "8m",
    ];
    all.extend_from_slice(args);
    let run = kubectl(&all).await?;
    anyhow::ensure!(
        run.code == 0,
        "bench {args:?}: exit {}:\n{}\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    Ok(serde_json::from_str(&run.stdout)?)
}

#[tokio::test]
async fn tier3_bench_measures_the_stand_ins_latencies_through_the_router_and_compares_runs()
-> anyhow::Result<()> {
    let (ns, path) = namespace_with("t3-bench", SPEC).await?;
    deploy_ready(&ns, &path).await?;
    let n = ns.name();

    let first = bench(
        n,
        &[
            "--rate",
            "2",
            "--duration",
            "10s",
            "--input-tokens",
            "64",
            "--output-tokens",
            "16",
            "--slo-ttft",
            "2s",
            "--slo-itl",
            "100ms",
        ],
    )
    .await?;
    let figures = &first["figures"];
    let p50 = |name: &str| figures[name]["p50"].as_f64().unwrap_or_default();
    anyhow::ensure!(
        first["state"] == "Succeeded"
            && figures["succeeded"].as_u64().is_some_and(|n| n >= 15)
            && figures["failed"] == 0,
        "{first:#}"
    );
    // Every token of the stand-in takes 20 ms: so do its first token and the time between
    // tokens, as inference-perf saw them through the router, and the 16 of a request take at
    // least 320 ms end to end (more under the shared CPU; a relay that falls behind may deliver
    // two chunks at once, a gap of 0, so the time between tokens is bounded at its p95).
    let itl_p95 = figures["itlSeconds"]["p95"].as_f64().unwrap_or_default();
    anyhow::ensure!(
        p50("ttftSeconds") >= 0.02
            && itl_p95 >= 0.015
            && p50("itlSeconds") < 1.0
            && p50("e2eSeconds") >= 0.32,
        "{first:#}"
    );
    anyhow::ensure!(
        figures["goodputPercent"].as_f64().is_some_and(|g| g > 0.0)
            && figures["outputTokensPerSecond"]
                .as_f64()
                .is_some_and(|t| t > 0.0),
        "{first:#}"
    );
    let run = first["run"].as_str().unwrap_or_default().to_string();
    let maps: Api<ConfigMap> = ns.api();
    let kept = maps.get(&run).await?.data.unwrap_or_default();
    let summary = kept.get("summary.json").cloned().unwrap_or_default();
    anyhow::ensure!(summary.contains("\"time_to_first_token\""), "{kept:?}");
    // The fixture of the plugin's unit tests is such a summary.
    std::fs::write(
        infera_e2e::target_dir()
            .join("e2e-logs")
            .join("inference-perf-summary.json"),
        &summary,
    )?;

    // Four times the tokens out: the requests take a second longer end to end; compare says so.
    // Its prompts share prefixes (inference-perf's shared_prefix dataset: 2 groups of 5 prompts,
    // 32 of their 64 tokens their group's).
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let second = bench(
        n,
        &[
            "--rate",
            "2",
            "--duration",
            "10s",
            "--input-tokens",
            "64",
            "--output-tokens",
            "64",
            "--shared-prefix",
            "32",
            "--prefix-groups",
            "2",
            "--prompts-per-group",
            "5",
        ],
    )
    .await?;
    let other = second["run"].as_str().unwrap_or_default().to_string();
    anyhow::ensure!(
        second["figures"]["e2eSeconds"]["p50"]
            .as_f64()
            .unwrap_or_default()
            > p50("e2eSeconds")
            && second["figures"]["succeeded"]
                .as_u64()
                .is_some_and(|n| n >= 15)
            && second["load"]["sharedPrefix"]
                == serde_json::json!({"tokens": 32, "groups": 2, "promptsPerGroup": 5}),
        "{first:#}\n{second:#}"
    );
    let listed = kubectl(&["infera", "bench", "list", "measured", "-n", n])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        listed.stdout.lines().count() == 3
            && listed.stdout.contains(&run)
            && listed.stdout.contains(&other),
        "{}",
        listed.stdout
    );
    let compared = kubectl(&["infera", "bench", "compare", &run, &other, "-n", n])
        .await?
        .expect_code(0)?;
    let e2e = compared
        .stdout
        .lines()
        .find(|l| l.starts_with("E2E p50"))
        .unwrap_or_default()
        .to_string();
    anyhow::ensure!(
        e2e.trim_end().ends_with('%') && e2e.contains('+'),
        "{}",
        compared.stdout
    );
    ns.cleanup().await
}
