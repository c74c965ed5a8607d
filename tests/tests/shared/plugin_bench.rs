//! Benchmark, not a timed test (ignored by default; run it on purpose):
//!
//!   KUBECONFIG=... cargo test -p infera-e2e --test shared -- plugin_bench:: --ignored --nocapture
//!
//! Creates 200 InferaDeployments (with a Ready status) in a namespace, then runs
//! `kubectl infera status -A` and `kubectl get idep -A` through the real kubectl, several times
//! each, and reports the median wall time, their ratio, and the API requests each made (from
//! `-v 6` logs: kube-rs's request log for the plugin, round_trippers for kubectl).

use std::time::{Duration, Instant};

use futures::future::try_join_all;
use infera_e2e::{
    TestNamespace, admin,
    kube::{
        Api,
        api::{DynamicObject, Patch, PatchParams, PostParams},
        core::{ApiResource, GroupVersionKind},
    },
    plugin::kubectl,
};

const DEPLOYMENTS: usize = 200;
const RUNS: usize = 7;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::test]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn status_all_namespaces_vs_kubectl_get() -> anyhow::Result<()> {
    let admin = admin().await?;
    kubectl(&["infera", "init"]).await?.expect_code(0)?;
    let ns = TestNamespace::new(&admin, "plugin-bench").await?;
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("infera.amd.com", "v1alpha1", "InferaDeployment"),
        "inferadeployments",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), ns.name(), &resource);
    for chunk in (0..DEPLOYMENTS).collect::<Vec<_>>().chunks(25) {
        try_join_all(chunk.iter().map(|i| {
            let api = api.clone();
            async move {
                let name = format!("bench-{i:03}");
                let object: DynamicObject = serde_json::from_value(serde_json::json!({
                    "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
                    "metadata": {"name": name},
                    "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
                        "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
                        "worker": {"componentType": "worker", "replicas": 2, "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"]}}}
                }))?;
                api.create(&PostParams::default(), &object).await?;
                let status = serde_json::json!({"status": {"state": "Ready", "observedGeneration": 1,
                    "endpoint": format!("http://{name}-server.bench.svc.cluster.local:8000"),
                    "conditions": [{"type": "Ready", "status": "True", "reason": "AllReplicasReady", "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                    "services": {"server": {"kind": "Deployment", "desiredReplicas": 1, "readyReplicas": 1},
                                 "worker": {"kind": "Deployment", "desiredReplicas": 2, "readyReplicas": 2}}}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(status)).await?;
                anyhow::Ok(())
            }
        }))
        .await?;
    }
    let cold = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("kubectl-cache-{}", infera_e2e::unique_suffix()));
    let cold_flag = format!("--cache-dir={}", cold.display());
    let mut results = Vec::new();
    for (label, args, marker) in [
        (
            "kubectl infera status -A",
            vec!["infera", "status", "-A", "-v", "6"],
            " requesting",
        ),
        (
            "kubectl get idep -A",
            vec!["get", "idep", "-A", "-v=6"],
            "round_trippers",
        ),
        (
            "kubectl get idep -A (cold)",
            vec!["get", "idep", "-A", "-v=6", &cold_flag],
            "round_trippers",
        ),
    ] {
        let mut times = Vec::new();
        let mut requests = Vec::new();
        let mut rows = 0;
        for _ in 0..RUNS {
            std::fs::remove_dir_all(&cold).ok();
            let start = Instant::now();
            let run = kubectl(&args).await?.expect_code(0)?;
            times.push(start.elapsed());
            requests.push(run.stderr.lines().filter(|l| l.contains(marker)).count());
            rows = run.stdout.lines().filter(|l| l.contains("bench-")).count();
        }
        anyhow::ensure!(rows >= DEPLOYMENTS, "{label} printed {rows} rows");
        results.push((label, median(times), requests));
    }
    let (ours, theirs) = (&results[0], &results[1]);
    println!(
        "\nbenchmark: {DEPLOYMENTS} InferaDeployments, {RUNS} runs each, median wall time (through the real kubectl)"
    );
    for (label, time, requests) in &results {
        println!(
            "  {label:<26} {:>7.1} ms   API requests per run: {requests:?}",
            time.as_secs_f64() * 1000.0
        );
    }
    println!(
        "  ratio (infera / kubectl get, warm discovery cache): {:.2}",
        ours.1.as_secs_f64() / theirs.1.as_secs_f64()
    );
    println!(
        "  ratio (infera / kubectl get, cold discovery cache): {:.2}",
        ours.1.as_secs_f64() / results[2].1.as_secs_f64()
    );
    anyhow::ensure!(
        ours.2.iter().all(|r| *r == 1),
        "status -A must make exactly one request: {:?}",
        ours.2
    );
    ns.cleanup().await
}
