//! `spec.planner.prometheus`: the operator, under its shipped RBAC, takes the planner's figures
//! from a real Prometheus (v3.5.0) that scrapes an exporter of known rates labelled as the
//! graph's PodMonitor labels the pods (`infera_e2e::prometheus`), instead of from the pods (kwok
//! pods serve nothing here): `status.planner` carries the decode pool's load and the
//! deployment's p95s exactly as Prometheus's `histogram_quantile` interpolates them. A
//! Prometheus that does not answer is a look without metrics: the pool holds, saying why.

use std::time::Duration;

use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    operator::{Operator, free_port, install},
    prometheus::Prometheus,
};
use serde_json::{Value, json};

/// The seed's PD graph with an Advise planner on `decode` reading `url` every 5 s.
fn spec(namespace: &str, url: &str) -> anyhow::Result<String> {
    let seed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml"))?;
    let mut spec: Value = serde_saphyr::from_str(&seed).map_err(|e| anyhow::anyhow!("{e}"))?;
    spec["metadata"]["namespace"] = json!(namespace);
    spec["spec"]["planner"] = json!({
        "mode": "Advise", "intervalSeconds": 5, "prometheus": url,
        "slo": {"ttftP95Milliseconds": 500, "itlP95Milliseconds": 50},
        "pools": {"decode": {"min": 1, "max": 4}},
    });
    Ok(spec.to_string())
}

/// `status.planner` of `demo`, once the planner wrote it.
async fn planner_status(ideps: &kube::Api<InferaDeployment>) -> anyhow::Result<Value> {
    let idep = ideps.get("demo").await?;
    let planner = idep.status.and_then(|s| s.planner);
    let planner = planner.ok_or_else(|| anyhow::anyhow!("no status.planner yet"))?;
    Ok(serde_json::to_value(planner)?)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_planner_reads_its_figures_from_prometheus() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "planner-prometheus").await?;
    let n = ns.name();
    let prometheus = Prometheus::start(n).await?;
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    apply_yaml_in(&admin, n, &spec(n, &prometheus.url)?).await?;
    let ideps: kube::Api<InferaDeployment> = ns.api();

    // The exporter's decode engine: half its first tokens under 0.1 s, half under 0.2 s, so the
    // p95 is 0.19 s; between tokens 0.019 s; 100 output tokens per second.
    let status = eventually(Duration::from_secs(90), || async {
        let status = planner_status(&ideps).await?;
        // Until Prometheus holds a whole interval, its rates extrapolate short of it.
        let tokens = status["pools"]["decode"]["load"].as_f64().unwrap_or(0.0);
        anyhow::ensure!(
            (90.0..=110.0).contains(&tokens),
            "decode's load {tokens}: {status}"
        );
        anyhow::Ok(status)
    })
    .await?;
    for (figure, expected) in [("ttftP95Seconds", 0.19), ("itlP95Seconds", 0.019)] {
        let got = status[figure].as_f64().unwrap_or(f64::NAN);
        anyhow::ensure!((got - expected).abs() < 1e-9, "{figure} {got}: {status}");
    }
    anyhow::ensure!(
        status["pools"]["decode"]["unit"] == "output tokens/s",
        "{status}"
    );

    // Prometheus gone: the look has no metrics and the pool holds, saying so.
    let gone = format!("http://127.0.0.1:{}", free_port()?);
    apply_yaml_in(&admin, n, &spec(n, &gone)?).await?;
    let reason = eventually(Duration::from_secs(60), || async {
        let status = planner_status(&ideps).await?;
        let decode = &status["pools"]["decode"];
        anyhow::ensure!(decode["load"].is_null(), "still figures: {status}");
        anyhow::Ok(decode["reason"].as_str().unwrap_or_default().to_string())
    })
    .await?;
    anyhow::ensure!(
        reason == "holding: the pool's token counters did not answer",
        "{reason}"
    );
    drop(prometheus);
    ns.cleanup().await
}
