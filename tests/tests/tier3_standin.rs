//! Tier 3 (issue 27): upstream's router runs in a real pod from the stand-in for the `rocm/infera`
//! images (tests/upstream/image.sh: Debian, upstream's dependencies and its `infera` package), with
//! exactly the command, args and environment the operator renders. Its readiness probe is its real
//! `/health`; it lists workers through the Kubernetes API as the discovery ServiceAccount (the
//! Role we render), reaches the managed NATS by its Service name (CoreDNS) for the request
//! transport, and answers `/v1/workers` through its Service. Infera's Endpoint Picker
//! (`python3 -m infera.gaie`) runs with the rendered flags, Ready on its probe, serving ext_proc
//! and gRPC health. The worker, asking for a GPU the real nodes do not have, stays Pending and
//! `status` says why.
//!
//! Runs on a tier-3 cluster with the operator image and the stand-in loaded (tests/run-e2e.sh).

use std::time::Duration;

use infera_core::PodHealth;
use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::api::core::v1::Pod,
    kube::{Api, api::ListParams},
    plugin::kubectl,
};

/// A server and Infera's Endpoint Picker behind the stand-in image's tokenizer, and one worker that
/// needs a GPU.
const SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: router}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  gaie: {enabled: true, gatewayName: inference-gateway, tokenizerPath: /opt/infera/tokenizer}
  services:
    server:
      componentType: server
      args: [--router-policy, kv-aware, --router-tokenizer-path, /opt/infera/tokenizer]
    worker:
      componentType: worker
      resources: {gpu: 1}
      args: [--model-path, Qwen/Qwen3-0.6B]
"#;

/// Waits for a Ready pod of `component` (the Deployment `router-<component>`), then checks that
/// its log holds every one of `lines`; the containers' states say why when it is not Ready.
async fn ready_and_logged(
    pods: &Api<Pod>,
    namespace: &str,
    component: &str,
    lines: &[&str],
) -> anyhow::Result<()> {
    let selector = format!("app.kubernetes.io/component={component}");
    eventually(Duration::from_secs(120), || async {
        let list = pods.list(&ListParams::default().labels(&selector)).await?;
        let states: Vec<_> = list
            .items
            .iter()
            .flat_map(|p| {
                p.status
                    .iter()
                    .flat_map(|s| s.container_statuses.iter().flatten())
            })
            .map(|c| (c.restart_count, c.state.clone(), c.last_state.clone()))
            .collect();
        anyhow::ensure!(
            list.items.iter().any(|p| PodHealth::of(p).ready),
            "{component} containers: {states:?}"
        );
        Ok(())
    })
    .await?;
    let deployment = format!("deploy/router-{component}");
    let logs = kubectl(&["logs", "-n", namespace, &deployment, "--tail=-1"])
        .await?
        .expect_code(0)?;
    for line in lines {
        anyhow::ensure!(
            logs.stdout.contains(line),
            "no {line:?} in\n{}",
            logs.stdout
        );
    }
    Ok(())
}

#[tokio::test]
async fn tier3_upstreams_router_runs_from_the_standin_image_as_rendered() -> anyhow::Result<()> {
    let admin = admin().await?;
    kubectl(&["infera", "init", "--wait", "--timeout", "3m"])
        .await?
        .expect_code(0)?;
    let ns = TestNamespace::new(&admin, "t3-router").await?;
    let spec = infera_e2e::target_dir()
        .join("e2e-logs")
        .join("t3-router.yaml");
    std::fs::create_dir_all(spec.parent().unwrap_or(&spec))?;
    std::fs::write(&spec, SPEC)?;
    let path = spec.display().to_string();
    kubectl(&["infera", "deploy", "-f", &path, "-n", ns.name()])
        .await?
        .expect_code(0)?;

    // Ready on its own /health, once the router has started.
    let pods: Api<Pod> = ns.api();
    ready_and_logged(
        &pods,
        ns.name(),
        "server",
        &[
            "using kubernetes discovery: selector='infera.amd.com/deployment=router'",
            "k8s (re)list: 0 worker(s)",
            "NATS request transport connected: nats://router-nats.",
            "GET /health HTTP/1.1\" 200",
        ],
    )
    .await?;
    let workers = kubectl(&[
        "get",
        "--raw",
        &format!(
            "/api/v1/namespaces/{}/services/http:router-server:8000/proxy/v1/workers",
            ns.name()
        ),
    ])
    .await?
    .expect_code(0)?;
    let workers: serde_json::Value = serde_json::from_str(&workers.stdout)?;
    anyhow::ensure!(workers["workers"].is_array(), "{workers}");

    // The Endpoint Picker: Ready on its probe, discovering workers and serving gRPC.
    ready_and_logged(
        &pods,
        ns.name(),
        "epp",
        &[
            "kubernetes discovery: selector='infera.amd.com/deployment=router'",
            "GAIE ext_proc EPP serving on 0.0.0.0:9002",
            "gRPC health serving on 0.0.0.0:9003",
        ],
    )
    .await?;

    // No GPUs on the real nodes yet: the worker waits, and status says why.
    eventually(Duration::from_secs(30), || async {
        let status = kubectl(&["infera", "status", "router", "-n", ns.name()]).await?;
        anyhow::ensure!(
            status.stdout.contains("Unschedulable")
                && status.stdout.contains("Insufficient amd.com/gpu"),
            "{}",
            status.stdout
        );
        Ok(())
    })
    .await?;
    ns.cleanup().await
}
