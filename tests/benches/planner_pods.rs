//! Benchmark of the SLO planner on real pods (issue 29 item 5), against fixed provisioning and
//! against a HorizontalPodAutoscaler on the engines' queue, in one run on a tier-3 cluster.
//!
//! Four copies of one graph (upstream's router, a worker pool on the stand-in for
//! `rocm/infera:sglang`, one GPU per replica) get the same load trace at the same time, from
//! this process to each router's pod: one stream at a time for a minute, three for four minutes,
//! one for three. The stand-in's latency model (tests/upstream/standin/fake_engine.py) is SGLang's
//! shape: a token takes 20 ms times the requests running (`INFERA_STANDIN_DECODE_SLOTS=1`), at
//! most two run (`--max-running-requests 2`, SGLang's flag) and the others wait in its queue. So
//! a replica meets the 35 ms inter-token target with one stream and misses it with two, and a
//! queue forms only beyond two. The copies:
//! - `fixed-1`: `replicas: 1`;
//! - `fixed-3`: `replicas: 3`, what the peak needs;
//! - `hpa`: `autoscaling` 1–3 on `sglang_num_queue_reqs` at an average of 0.5 per pod (it scales as
//!   soon as half a request per replica waits), read through prometheus-adapter v0.12.0 from a
//!   Prometheus scraping the engines — the HPA controller of kube-controller-manager with its
//!   defaults (15 s sync, 5 minutes of down-scale stabilisation);
//! - `planner`: `spec.planner` in `Act`, 1–3, targets TTFT p95 1 s and ITL p95 35 ms, 10 s
//!   intervals, 60 s cool-down, one step at a time.
//!
//! Figures per copy, measured by the client on each streamed completion: SLO attainment (the share
//! of requests whose time to first token ≤ 1 s and whose mean inter-token latency ≤ 35 ms; a failed
//! request misses), p95s, and GPU-minutes (worker pods that hold a GPU, sampled every 2 s). The
//! run fails when the planner misses a goal of docs/planner.md ("Benchmark").
//!
//! Needs a tier-3 cluster with the operator, NATS and sglang stand-in images loaded (tests/bench.sh
//! does it all), `$KUBECONFIG`, and Prometheus and prometheus-adapter in `$K8S_TEST_BIN`
//! (`COMPONENTS="promql adapter" tests/cluster/build.sh`):
//!
//!   cargo bench -p infera-e2e --bench planner_pods

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::{client::legacy::Client as HttpClient, rt::TokioExecutor};
use infera_core::{
    InferaDeployment,
    naming::{LABEL_COMPONENT, LABEL_DEPLOYMENT},
};
use infera_e2e::{
    TestNamespace, admin, apply_yaml, eventually, eventually_every,
    k8s_openapi::api::{autoscaling::v2::HorizontalPodAutoscaler, core::v1::Pod},
    kube::{
        Api, Client,
        api::{DeleteParams, ListParams},
        core::{ApiResource, DynamicObject, GroupVersionKind},
    },
    plugin::{deploy_ready, kubectl, namespace_with},
    target_dir, test_bin_dir,
};
use tokio::sync::Mutex;

/// The load trace: (streams in flight, seconds).
const TRACE: [(usize, u64); 3] = [(1, 60), (3, 240), (1, 180)];
/// Output tokens per completion.
const TOKENS: usize = 32;
/// The targets the planner is given and each request is judged by.
const TTFT_TARGET: Duration = Duration::from_millis(1000);
const ITL_TARGET: Duration = Duration::from_millis(35);
/// The most replicas any copy may run (what the peak needs: three streams, one per replica).
const PEAK: i32 = 3;
/// The host's address on tier 3's bridge (tests/cluster/nodes.sh `BRIDGE_ADDR`): the API server
/// reaches prometheus-adapter there.
const BRIDGE_ADDR: &str = "10.88.0.1";
/// The router's port (upstream's server, `--port` as rendered).
const ROUTER_PORT: u16 = 8000;

/// The graph, with `SCALING` (the worker's count or autoscaling) and `PLANNER` filled in.
const SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: slo}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  networkPolicy: {enabled: false}
  services:
    server:
      componentType: server
      args: [--router-policy, round-robin, --router-tokenizer-path, Qwen/Qwen3-0.6B]
    worker:
      componentType: worker
      resources: {gpu: 1}
      args: [--model-path, Qwen/Qwen3-0.6B, --max-running-requests, "2"]
      env:
      - {name: INFERA_STANDIN_DECODE_SLOTS, value: "1"}
SCALING
PLANNER
"#;

/// The four ways to size the pool: a name, the worker's scaling and the planner's section.
fn strategies() -> [(&'static str, String, String); 4] {
    let replicas = |n: i32| format!("      replicas: {n}");
    let hpa = format!(
        r#"      autoscaling:
        minReplicas: 1
        maxReplicas: {PEAK}
        metrics:
        - type: Pods
          pods:
            metric: {{name: sglang_num_queue_reqs}}
            target: {{type: AverageValue, averageValue: 500m}}"#
    );
    let planner = format!(
        r#"  planner:
    mode: Act
    slo: {{ttftP95Milliseconds: {}, itlP95Milliseconds: {}}}
    pools:
      worker: {{min: 1, max: {PEAK}}}
    intervalSeconds: 10
    cooldownSeconds: 60"#,
        TTFT_TARGET.as_millis(),
        ITL_TARGET.as_millis()
    );
    [
        ("fixed-1", replicas(1), String::new()),
        ("fixed-3", replicas(PEAK), String::new()),
        ("hpa", hpa, String::new()),
        ("planner", String::new(), planner),
    ]
}

/// One completion as the client saw it.
#[derive(Clone, Copy, Debug)]
struct Sample {
    ttft: Duration,
    /// Mean time between the streamed tokens.
    itl: Duration,
    ok: bool,
}

impl Sample {
    fn meets_slo(&self) -> bool {
        self.ok && self.ttft <= TTFT_TARGET && self.itl <= ITL_TARGET
    }
}

type Http = HttpClient<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// Sends one streamed completion to the router at `addr` and times its tokens.
async fn complete(http: &Http, addr: &str) -> Sample {
    let failed = Sample {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        ok: false,
    };
    let body = serde_json::json!({
        "model": "Qwen/Qwen3-0.6B",
        "prompt": "a benchmark of the planner on real pods",
        "max_tokens": TOKENS,
        "stream": true,
    });
    let Ok(request) = hyper::Request::post(format!("http://{addr}/v1/completions"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
    else {
        return failed;
    };
    let start = Instant::now();
    let Ok(Ok(response)) =
        tokio::time::timeout(Duration::from_secs(60), http.request(request)).await
    else {
        return failed;
    };
    if !response.status().is_success() {
        return failed;
    }
    let mut body = response.into_body();
    let (mut first, mut last, mut tokens) = (None, start, 0usize);
    while let Ok(Some(Ok(frame))) =
        tokio::time::timeout(Duration::from_secs(30), body.frame()).await
    {
        let Some(data) = frame.data_ref() else {
            continue;
        };
        // One SSE event per token, each with its finish_reason (null until the last).
        let n = String::from_utf8_lossy(data)
            .matches("\"finish_reason\"")
            .count();
        if n > 0 {
            let now = Instant::now();
            first.get_or_insert(now);
            last = now;
            tokens += n;
        }
    }
    let Some(first) = first else {
        return failed;
    };
    let gaps = u32::try_from(tokens.saturating_sub(1).max(1)).unwrap_or(u32::MAX);
    Sample {
        ttft: first - start,
        itl: (last - first) / gaps,
        ok: tokens == TOKENS,
    }
}

/// A copy of the graph under load: its namespace, the router's address, what it measured.
struct Copy {
    name: &'static str,
    ns: TestNamespace,
    router: String,
    samples: Mutex<Vec<Sample>>,
    gpu_seconds: Mutex<f64>,
    replicas: Mutex<Vec<usize>>,
}

/// One stream: completions sent to `copy` one after the other until `end`.
async fn stream(http: Http, copy: Arc<Copy>, end: Instant) {
    while Instant::now() < end {
        let sample = complete(&http, &copy.router).await;
        copy.samples.lock().await.push(sample);
        if !sample.ok {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// The worker pods that hold a GPU: scheduled, not finished, not being deleted.
async fn workers_holding_gpus(pods: &Api<Pod>) -> anyhow::Result<usize> {
    let selector = format!("{LABEL_COMPONENT}=worker,{LABEL_DEPLOYMENT}=slo");
    Ok(pods
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some()))
        .filter(|p| {
            !matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            )
        })
        .count())
}

/// Every 2 s until `end`: each copy's GPUs in use.
async fn sample_gpus(copies: Vec<Arc<Copy>>, end: Instant) {
    let every = Duration::from_secs(2);
    while Instant::now() < end {
        let tick = Instant::now();
        for copy in &copies {
            if let Ok(n) = workers_holding_gpus(&copy.ns.api()).await {
                *copy.gpu_seconds.lock().await += n as f64 * every.as_secs_f64();
                copy.replicas.lock().await.push(n);
            }
        }
        tokio::time::sleep(every.saturating_sub(tick.elapsed())).await;
    }
}

/// Every 3 s until `end`: the planner's status after each of its looks that changed it (a new
/// `lastLookTime`: the operator writes none that differs only in its time),
/// written to `file` as a JSON array — the recorded trace that
/// `tests/tests/isolated/planner_replay.rs` replays through the pure model.
async fn record_looks(copy: Arc<Copy>, end: Instant, file: std::path::PathBuf) {
    let api: Api<InferaDeployment> = copy.ns.api();
    let mut looks: Vec<serde_json::Value> = Vec::new();
    while Instant::now() < end {
        if let Ok(idep) = api.get("slo").await
            && let Some(planner) = idep.status.and_then(|s| s.planner)
            && let Ok(look) = serde_json::to_value(&planner)
            && looks.last().map(|l| &l["lastLookTime"]) != Some(&look["lastLookTime"])
        {
            looks.push(look);
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    let _ = std::fs::write(
        &file,
        serde_json::to_string_pretty(&looks).unwrap_or_default(),
    );
}

/// Starts `binary` of `$K8S_TEST_BIN`, its stderr in `log`; killed when dropped.
fn spawn(
    binary: &str,
    args: &[String],
    log: &std::path::Path,
) -> anyhow::Result<tokio::process::Child> {
    let path = test_bin_dir()?.join(binary);
    tokio::process::Command::new(&path)
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log)?)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| {
            format!(
                "{} (COMPONENTS=\"promql adapter\" tests/cluster/build.sh builds it)",
                path.display()
            )
        })
}

/// Prometheus scraping every engine pod (`/metrics` on the port named `http`, as the graph's
/// PodMonitor does) every 2 s, labelled with namespace and pod; its URL and process.
fn prometheus(dir: &std::path::Path) -> anyhow::Result<(String, tokio::process::Child)> {
    let kubeconfig = infera_e2e::kubeconfig_path()?;
    let config = serde_json::json!({
        "global": {"scrape_interval": "2s", "evaluation_interval": "2s"},
        "scrape_configs": [{
            "job_name": "engines",
            "kubernetes_sd_configs": [{"role": "pod", "kubeconfig_file": kubeconfig}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_component"], "regex": "worker", "action": "keep"},
                {"source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": "http", "action": "keep"},
                {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
            ],
        }],
    });
    let file = dir.join("prometheus.yml");
    std::fs::write(&file, config.to_string())?;
    let port = infera_e2e::operator::free_port()?;
    let process = spawn(
        "prometheus",
        &[
            format!("--config.file={}", file.display()),
            format!("--storage.tsdb.path={}", dir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
        ],
        &dir.join("prometheus.log"),
    )?;
    Ok((format!("http://127.0.0.1:{port}"), process))
}

/// prometheus-adapter serving `custom.metrics.k8s.io/v1beta1` on the bridge: the engines' queue as
/// the pod metric `sglang_num_queue_reqs`, registered as an APIService.
async fn adapter(
    client: &Client,
    dir: &std::path::Path,
    prometheus: &str,
) -> anyhow::Result<tokio::process::Child> {
    let rules = r#"rules:
- seriesQuery: 'sglang:num_queue_reqs{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {matches: "^sglang:num_queue_reqs$", as: "sglang_num_queue_reqs"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
"#;
    let config = dir.join("adapter.yaml");
    std::fs::write(&config, rules)?;
    let kubeconfig = infera_e2e::kubeconfig_path()?.display().to_string();
    let port = {
        let listener = std::net::TcpListener::bind((BRIDGE_ADDR, 0))?;
        listener.local_addr()?.port()
    };
    let process = spawn(
        "prometheus-adapter",
        &[
            format!("--secure-port={port}"),
            format!("--bind-address={BRIDGE_ADDR}"),
            format!("--cert-dir={}", dir.join("adapter-certs").display()),
            format!("--lister-kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            format!("--prometheus-url={prometheus}"),
            format!("--config={}", config.display()),
            "--metrics-relist-interval=10s".into(),
        ],
        &dir.join("adapter.log"),
    )?;
    apply_yaml(
        client,
        &format!(
            r#"
apiVersion: v1
kind: Namespace
metadata: {{name: infera-bench-metrics}}
---
apiVersion: v1
kind: Service
metadata: {{name: prometheus-adapter, namespace: infera-bench-metrics}}
spec:
  ports: [{{name: https, port: 443, targetPort: {port}}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: prometheus-adapter
  namespace: infera-bench-metrics
  labels: {{kubernetes.io/service-name: prometheus-adapter}}
addressType: IPv4
endpoints: [{{addresses: ["{BRIDGE_ADDR}"]}}]
ports: [{{name: https, port: {port}, protocol: TCP}}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1beta1.custom.metrics.k8s.io}}
spec:
  group: custom.metrics.k8s.io
  version: v1beta1
  service: {{name: prometheus-adapter, namespace: infera-bench-metrics, port: 443}}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
"#
        ),
    )
    .await?;
    Ok(process)
}

/// Deploys one copy and waits for it to be Ready; returns its router's address.
async fn deploy(name: &'static str, scaling: &str, planner: &str) -> anyhow::Result<Copy> {
    let spec = SPEC.replace("SCALING", scaling).replace("PLANNER", planner);
    let (ns, path) = namespace_with(&format!("bench-{name}"), &spec).await?;
    deploy_ready(&ns, &path).await?;
    let pods: Api<Pod> = ns.api();
    let selector = format!("{LABEL_COMPONENT}=server,{LABEL_DEPLOYMENT}=slo");
    let ip = pods
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .into_iter()
        .find_map(|p| p.status?.pod_ip)
        .ok_or_else(|| anyhow::anyhow!("{name}: no router pod with an address"))?;
    Ok(Copy {
        name,
        ns,
        router: format!("{ip}:{ROUTER_PORT}"),
        samples: Mutex::default(),
        gpu_seconds: Mutex::default(),
        replicas: Mutex::default(),
    })
}

/// The HPA reads the queue through the adapter (its `ScalingActive` condition is True).
async fn hpa_reads_its_metric(copy: &Copy) -> anyhow::Result<()> {
    let hpas: Api<HorizontalPodAutoscaler> = copy.ns.api();
    eventually_every(Duration::from_secs(180), Duration::from_secs(5), || async {
        let hpa = hpas.get("slo-worker").await?;
        let conditions = hpa.status.and_then(|s| s.conditions).unwrap_or_default();
        anyhow::ensure!(
            conditions
                .iter()
                .any(|c| c.type_ == "ScalingActive" && c.status == "True"),
            "the HPA reads no metric yet: {conditions:?}"
        );
        Ok(())
    })
    .await
}

fn percentile(mut values: Vec<Duration>, p: f64) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    values.sort();
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// One copy's figures.
struct Figures {
    requests: usize,
    failed: usize,
    attainment: f64,
    ttft_p95: Duration,
    itl_p95: Duration,
    gpu_minutes: f64,
    replicas: (usize, usize),
}

async fn figures(copy: &Copy) -> Figures {
    let samples = copy.samples.lock().await.clone();
    let ok: Vec<_> = samples.iter().filter(|s| s.ok).collect();
    let met = samples.iter().filter(|s| s.meets_slo()).count();
    let replicas = copy.replicas.lock().await.clone();
    Figures {
        requests: samples.len(),
        failed: samples.len() - ok.len(),
        attainment: if samples.is_empty() {
            0.0
        } else {
            100.0 * met as f64 / samples.len() as f64
        },
        ttft_p95: percentile(ok.iter().map(|s| s.ttft).collect(), 0.95),
        itl_p95: percentile(ok.iter().map(|s| s.itl).collect(), 0.95),
        gpu_minutes: *copy.gpu_seconds.lock().await / 60.0,
        replicas: (
            replicas.iter().copied().min().unwrap_or_default(),
            replicas.iter().copied().max().unwrap_or_default(),
        ),
    }
}

/// The goals of docs/planner.md ("Benchmark", on real pods); the misses, named.
fn missed(all: &BTreeMap<&str, Figures>) -> Vec<String> {
    let (Some(planner), Some(peak), Some(one)) =
        (all.get("planner"), all.get("fixed-3"), all.get("fixed-1"))
    else {
        return vec!["a copy has no figures".into()];
    };
    let mut missed = Vec::new();
    if planner.attainment < 90.0 {
        missed.push(format!(
            "the planner's SLO attainment {:.1}% < 90%",
            planner.attainment
        ));
    }
    if planner.attainment <= one.attainment {
        missed.push(format!(
            "the planner's SLO attainment {:.1}% is not above fixed-1's {:.1}%",
            planner.attainment, one.attainment
        ));
    }
    if planner.gpu_minutes > 0.85 * peak.gpu_minutes {
        missed.push(format!(
            "the planner's {:.1} GPU-minutes > 85% of fixed-3's {:.1}",
            planner.gpu_minutes, peak.gpu_minutes
        ));
    }
    missed
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    anyhow::ensure!(
        infera_e2e::cluster_tier() == 3,
        "planner_pods runs on a tier-3 cluster (tests/bench.sh brings one up)"
    );
    let client = admin().await?;
    let dir = target_dir().join("planner-pods");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let (prometheus_url, _prometheus) = prometheus(&dir)?;
    let _adapter = adapter(&client, &dir, &prometheus_url).await?;
    let services: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "apiregistration.k8s.io",
            "v1",
            "APIService",
        )),
    );
    eventually(Duration::from_secs(120), || async {
        let service = services.get("v1beta1.custom.metrics.k8s.io").await?;
        let available = service.data["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Available" && c["status"] == "True");
        anyhow::ensure!(
            available,
            "APIService not Available: {}",
            service.data["status"]
        );
        Ok(())
    })
    .await
    .context("prometheus-adapter (its log: target/planner-pods/adapter.log)")?;

    println!("deploying the four copies");
    let deployed = futures::future::join_all(
        strategies()
            .iter()
            .map(|(name, scaling, planner)| deploy(name, scaling, planner)),
    )
    .await;
    let copies: Vec<Arc<Copy>> = deployed
        .into_iter()
        .map(|c| c.map(Arc::new))
        .collect::<anyhow::Result<_>>()?;
    for copy in copies.iter().filter(|c| c.name == "hpa") {
        hpa_reads_its_metric(copy).await?;
    }

    let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
    let start = Instant::now();
    let total: u64 = TRACE.iter().map(|(_, s)| s).sum();
    println!("the trace: {TRACE:?} (streams, seconds), {total} s");
    let gpus = tokio::spawn(sample_gpus(
        copies.clone(),
        start + Duration::from_secs(total),
    ));
    let mut senders = Vec::new();
    for copy in copies.iter().filter(|c| c.name == "planner") {
        senders.push(tokio::spawn(record_looks(
            copy.clone(),
            start + Duration::from_secs(total),
            dir.join("planner-looks.json"),
        )));
    }
    let mut at = start;
    for (streams, seconds) in TRACE {
        tokio::time::sleep_until(at.into()).await;
        let end = at + Duration::from_secs(seconds);
        for copy in &copies {
            for _ in 0..streams {
                senders.push(tokio::spawn(stream(http.clone(), copy.clone(), end)));
            }
        }
        at = end;
    }
    for sender in senders {
        sender.await?;
    }
    gpus.await?;

    let mut all = BTreeMap::new();
    println!(
        "{:<8} {:>8} {:>6} {:>10} {:>9} {:>9} {:>11} {:>8}",
        "copy",
        "requests",
        "failed",
        "attainment",
        "TTFT p95",
        "ITL p95",
        "GPU-minutes",
        "replicas"
    );
    for copy in &copies {
        let f = figures(copy).await;
        println!(
            "{:<8} {:>8} {:>6} {:>9.1}% {:>7.0}ms {:>7.1}ms {:>11.1} {:>5}–{}",
            copy.name,
            f.requests,
            f.failed,
            f.attainment,
            f.ttft_p95.as_secs_f64() * 1e3,
            f.itl_p95.as_secs_f64() * 1e3,
            f.gpu_minutes,
            f.replicas.0,
            f.replicas.1
        );
        all.insert(copy.name, f);
    }
    for copy in copies.iter().filter(|c| c.name == "planner") {
        let explain =
            kubectl(&["infera", "planner", "explain", "slo", "-n", copy.ns.name()]).await?;
        println!("{}", explain.stdout);
    }

    services
        .delete("v1beta1.custom.metrics.k8s.io", &DeleteParams::default())
        .await?;
    for copy in copies {
        if let Ok(copy) = Arc::try_unwrap(copy) {
            copy.ns.cleanup().await?;
        }
    }
    let missed = missed(&all);
    if missed.is_empty() {
        println!("every goal met");
        Ok(())
    } else {
        anyhow::bail!("missed: {}", missed.join("; "))
    }
}
