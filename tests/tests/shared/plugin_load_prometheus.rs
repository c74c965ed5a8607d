//! `kubectl infera status NAME --prometheus URL`: the load section from a real Prometheus
//! (v3.5.0, built from its Go module by `tests/cluster/build.sh`) scraping, every second, two
//! targets labelled as the graph's PodMonitor labels them — a router (`server`) and an SGLang
//! decode engine — whose exposition grows at known rates (`infera_e2e::prometheus`).
//! The figures the plugin prints are Prometheus's: gauges as served, rates within the
//! extrapolation Prometheus applies, percentiles exactly as `histogram_quantile` interpolates
//! them. With `--watch` it asks again every window. An unreachable Prometheus is exit 5
//! naming it.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually, operator::free_port, plugin::kubectl,
    prometheus::Prometheus,
};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

/// `pool`'s entry of the load section.
fn pool<'a>(status: &'a Value, name: &str) -> anyhow::Result<&'a Value> {
    status["load"]["pools"]
        .as_array()
        .and_then(|pools| pools.iter().find(|p| p["pool"] == name))
        .with_context(|| format!("no pool {name} in {}", status["load"]))
}

/// `value` as a number within `tolerance` (a fraction) of `expected`.
fn near(value: &Value, expected: f64, tolerance: f64) -> anyhow::Result<()> {
    let got = value
        .as_f64()
        .with_context(|| format!("{value} is no number"))?;
    anyhow::ensure!(
        (got - expected).abs() <= expected * tolerance,
        "{got} is not {expected} ± {:.0}%",
        tolerance * 100.0
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn status_reads_the_pools_load_from_prometheus() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "load-prometheus").await?;
    let n = ns.name();
    let seed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml"))?;
    apply_yaml_in(&admin, n, &seed).await?;

    let prometheus = Prometheus::start(n).await?;
    let url = prometheus.url.clone();
    // `kubectl infera status demo --prometheus AT ARGS…`, ending with `code`.
    let status_from = |at: &str, args: &[&str], code| {
        let all: Vec<String> = ["infera", "status", "demo", "-n", n, "--prometheus", at]
            .iter()
            .chain(args)
            .map(|a| a.to_string())
            .collect();
        async move {
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            kubectl(&all).await?.expect_code(code)
        }
    };

    // Once Prometheus holds five seconds of samples: every figure as served.
    let status = eventually(Duration::from_secs(60), || async {
        let run = status_from(&url, &["--load=5s", "-o", "json"], 0).await?;
        let status: Value = serde_json::from_str(&run.stdout)?;
        let decode = pool(&status, "decode")?;
        // Until Prometheus holds a whole window, its rates extrapolate short of it.
        near(&decode["tokensPerSecond"], 100.0, 0.1)?;
        near(&decode["requestsPerSecond"], 2.0, 0.1)?;
        near(&pool(&status, "server")?["requestsPerSecond"], 2.0, 0.1)?;
        anyhow::Ok(status)
    })
    .await?;
    let load = &status["load"];
    anyhow::ensure!(
        load["prometheus"] == url.as_str() && load["windowSeconds"] == 5.0,
        "{load}"
    );
    let (server, decode) = (pool(&status, "server")?, pool(&status, "decode")?);
    anyhow::ensure!(
        load["pools"].as_array().map(Vec::len) == Some(2),
        "only the pools Prometheus scrapes (prefill has no target): {load}"
    );
    for (figure, expected) in [
        ("pods", 1.0),
        ("answered", 1.0),
        ("running", 4.0),
        ("waiting", 1.0),
        ("kvUsage", 0.25),
    ] {
        anyhow::ensure!(decode[figure] == expected, "decode {figure}: {decode}");
    }
    anyhow::ensure!(
        server["inFlight"] == 3.0 && server["pods"] == 1.0,
        "{server}"
    );
    near(&decode["promptTokensPerSecond"], 400.0, 0.15)?;
    near(&decode["requestsPerSecond"], 2.0, 0.15)?;
    near(&server["requestsPerSecond"], 2.0, 0.15)?;
    // Half of the requests in the lower bucket: the median at its bound, the p95 interpolated
    // 90% into the upper bucket.
    for (pool, figure, low, high) in [
        (server, "e2e", 0.5, 1.0),
        (decode, "ttft", 0.1, 0.2),
        (decode, "itl", 0.01, 0.02),
    ] {
        near(&pool[figure]["p50"], low, 1e-9).context(figure)?;
        near(&pool[figure]["p95"], low + 0.9 * (high - low), 1e-9).context(figure)?;
    }

    // The table says where the figures come from; the window defaults to a minute.
    let table = status_from(&url, &[], 0).await?;
    anyhow::ensure!(
        table
            .stdout
            .contains(&format!("Load (over 60 s, from Prometheus {url}):")),
        "{}",
        table.stdout
    );

    // No Prometheus there: exit 5, naming it.
    let gone = format!("http://127.0.0.1:{}", free_port()?);
    let refused = status_from(&gone, &[], 5).await?;
    anyhow::ensure!(
        refused.stderr.contains(&format!("Prometheus {gone}")),
        "{}",
        refused.stderr
    );
    // --watch: the figures again every window, one JSON document per change.
    let mut watch = tokio::process::Command::new("kubectl")
        .args([
            "infera",
            "status",
            "demo",
            "-n",
            n,
            "--prometheus",
            &url,
            "--load=2s",
            "--watch",
            "-o",
            "json",
        ])
        .env("PATH", infera_e2e::plugin::path_with_plugin()?)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = watch.stdout.take().context("stdout")?;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let mut windows = Vec::new();
    while windows.len() < 2 {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .context("no document within 30 s")??
            .context("the watch ended")?;
        let document: Value = serde_json::from_str(&line)?;
        if document["load"]["prometheus"] == url.as_str() {
            windows.push(document["load"]["windowSeconds"].clone());
        }
    }
    anyhow::ensure!(windows.iter().all(|w| *w == 2.0), "{windows:?}");
    watch.kill().await?;
    ns.cleanup().await
}
