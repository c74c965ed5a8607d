//! Tier 3 (issue 27): upstream's router, wrappers and Endpoint Picker run in real pods from the
//! stand-ins for the `rocm/infera` images (tests/upstream/image.sh: Debian, upstream's dependencies
//! and its `infera` package, the engine's own argument parser, a stand-in engine in place of the
//! model), with exactly the command, args and environment the operator renders, on nodes that
//! advertise GPUs through a device plugin.
//!
//! Runs on a tier-3 cluster with the operator image and the stand-ins loaded (tests/run-e2e.sh).

use std::time::Duration;

use infera_core::{PodHealth, naming::LABEL_SERVICE};
use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::{
        api::{core::v1::Pod, discovery::v1::EndpointSlice},
        jiff::Timestamp,
    },
    kube::{Api, ResourceExt, api::ListParams},
    plugin::{Pty, deploy_ready, kubectl, namespace_with},
};

/// A server and Infera's Endpoint Picker behind the stand-in image's tokenizer, a worker on one GPU
/// and one that asks for more GPUs than a node has.
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
    huge:
      componentType: worker
      resources: {gpu: 9}
      args: [--model-path, Qwen/Qwen3-0.6B]
"#;

/// The seed's PD example and the README's MI300X worked example, as users apply them.
const SEED: &str = include_str!("../../../examples/pd.yaml");
const MI300X: &str = include_str!("../../../examples/pd-mi300x.yaml");

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

/// The router is Ready on its own `/health`, lists workers through the Kubernetes API as the
/// discovery ServiceAccount (the Role we render) and reaches the managed NATS by its Service name
/// (CoreDNS). The worker's wrapper launches the stand-in engine, registers, and a completion sent
/// to the server's Service comes back from it. Infera's Endpoint Picker (`python3 -m infera.gaie`)
/// runs with the rendered flags, Ready on its probe, serving ext_proc and gRPC health. A worker
/// asking for more GPUs than a node has stays Pending and `status` says why.
#[tokio::test]
async fn tier3_upstreams_router_runs_from_the_standin_image_as_rendered() -> anyhow::Result<()> {
    let (ns, path) = namespace_with("t3-router", SPEC).await?;
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
            "k8s (re)list: ",
            // With the deployment's NATS credentials, which upstream logs with the URL
            // (`infera/common/nats_request.py:296`; docs/security.md).
            "NATS request transport connected: nats://infera:",
            "@router-nats.",
            "GET /health HTTP/1.1\" 200",
        ],
    )
    .await?;
    // The worker registers (its wrapper's Kubernetes registration) and answers through the router.
    ready_and_logged(
        &pods,
        ns.name(),
        "worker",
        &["worker ready: model=Qwen/Qwen3-0.6B"],
    )
    .await?;
    let workers_uri = format!(
        "/api/v1/namespaces/{}/services/http:router-server:8000/proxy/v1/workers",
        ns.name()
    );
    eventually(Duration::from_secs(120), || async {
        let workers = kubectl(&["get", "--raw", &workers_uri])
            .await?
            .expect_code(0)?;
        let workers: serde_json::Value = serde_json::from_str(&workers.stdout)?;
        anyhow::ensure!(
            workers["workers"].as_array().is_some_and(|w| w.len() == 1),
            "{workers}"
        );
        Ok(())
    })
    .await?;
    let answer = complete(ns.name(), "router-server", MODEL, "hello infera router").await?;
    anyhow::ensure!(
        answer.starts_with("[stand-in sglang on router-worker-")
            && answer.ends_with("you said: hello infera router"),
        "{answer}"
    );

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

    // Nine GPUs on nodes of eight: that worker waits, and status says why.
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

/// The model the examples' workers serve, as they register it (`--model-path`).
pub(crate) const MODEL: &str = "Qwen/Qwen3-0.6B";

/// POSTs `body` (JSON) to `path` of `server`'s port 8000 (a Service) through the API server's service
/// proxy and returns the answer.
pub(crate) async fn post(
    namespace: &str,
    server: &str,
    path: &str,
    body: &serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("{namespace}-request.json"));
    std::fs::create_dir_all(file.parent().unwrap_or(&file))?;
    std::fs::write(&file, body.to_string())?;
    let uri = format!("/api/v1/namespaces/{namespace}/services/http:{server}:8000/proxy{path}");
    let run = kubectl(&["create", "--raw", &uri, "-f", &file.display().to_string()])
        .await?
        .expect_code(0)?;
    Ok(serde_json::from_str(&run.stdout)?)
}

/// Sends one chat completion for `model` to `server` and returns the answer's text.
async fn complete(
    namespace: &str,
    server: &str,
    model: &str,
    prompt: &str,
) -> anyhow::Result<String> {
    let request = serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 8,
    });
    let answer = post(namespace, server, "/v1/chat/completions", &request).await?;
    answer["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("no answer in {answer}"))
}

/// The seed's PD example, unchanged, on the stand-in image: the engines start (their startup time is
/// a real wait, behind real probes), register through the Kubernetes API, and a completion sent to
/// the server's Service is routed by upstream's router to both legs with one bootstrap room; the
/// decode engine fetches the prompt's state from the prefill engine at the address the prefill
/// wrapper registered (its pod IP) and answers. The workers are Ready only once registered (the
/// readiness gate the operator sets from the registration).
#[tokio::test]
async fn tier3_seed_pd_example_answers_through_router_prefill_and_decode() -> anyhow::Result<()> {
    let (ns, path) = namespace_with("t3-pd", SEED).await?;
    deploy_ready(&ns, &path).await?;

    // Ready only once the engine serves: no earlier than the stand-in's startup time after start.
    let pods: Api<Pod> = ns.api();
    for role in ["prefill", "decode"] {
        let list = pods
            .list(&ListParams::default().labels(&format!("infera.amd.com/role={role}")))
            .await?;
        let pod = list
            .items
            .first()
            .ok_or_else(|| anyhow::anyhow!("no {role} pod"))?;
        let status = pod.status.clone().unwrap_or_default();
        let started = status
            .container_statuses
            .iter()
            .flatten()
            .find_map(|c| c.state.as_ref()?.running.as_ref()?.started_at.clone())
            .ok_or_else(|| anyhow::anyhow!("{role} is not running"))?;
        let ready = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready" && c.status == "True")
            .and_then(|c| c.last_transition_time.clone())
            .ok_or_else(|| anyhow::anyhow!("{role} is not Ready"))?;
        let waited = ready.0.as_second() - started.0.as_second();
        anyhow::ensure!(
            waited >= 5,
            "{role} Ready {waited}s after its container started"
        );
        // And only once the router can route to it: the operator set the readiness gate from
        // the wrapper's registration, and Ready came no earlier.
        anyhow::ensure!(
            pod.annotations().contains_key("infera.amd.com/worker-info"),
            "{role} is Ready without a registration"
        );
        let registered = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "infera.amd.com/registered" && c.status == "True")
            .and_then(|c| c.last_transition_time.clone())
            .ok_or_else(|| anyhow::anyhow!("{role}'s readiness gate is not set"))?;
        anyhow::ensure!(
            ready.0 >= registered.0,
            "{role} Ready at {} before its registration at {}",
            ready.0,
            registered.0
        );
        let marked_by_operator = pod.managed_fields().iter().any(|f| {
            f.manager.as_deref() == Some("infera-operator")
                && f.subresource.as_deref() == Some("status")
        });
        anyhow::ensure!(
            marked_by_operator,
            "{role}'s status has no field of infera-operator"
        );
    }

    // Routed as upstream routes PD: both legs, one room, decode reaching prefill by its pod IP.
    let answer = eventually(Duration::from_secs(120), || async {
        let answer = complete(ns.name(), "demo-server", MODEL, "Say hello").await?;
        anyhow::ensure!(answer.contains("KV from demo-prefill-"), "{answer}");
        Ok(answer)
    })
    .await?;
    anyhow::ensure!(
        answer.starts_with("[stand-in sglang on demo-decode-")
            && answer.ends_with("you said: Say hello"),
        "{answer}"
    );
    graph_load(&ns).await?;
    graph_logs(&ns).await?;
    ns.cleanup().await
}

/// `status --load=6s` while completions flow: the router's requests in flight and end-to-end
/// percentiles (upstream's `infera_request_duration_seconds`), the engines' running requests and
/// generated tokens per second (the stand-in's series, under SGLang's names), every pod read
/// through the API server's proxy; and under `--watch`, read again every window.
async fn graph_load(ns: &TestNamespace) -> anyhow::Result<()> {
    let n = ns.name().to_string();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let traffic = tokio::spawn({
        let (n, stop) = (n.clone(), stop.clone());
        async move {
            let mut sent = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                complete(&n, "demo-server", MODEL, "load").await?;
                sent += 1;
            }
            anyhow::Ok(sent)
        }
    });
    // Under a saturated CPU (four tier-3 tests on two cores) a pod may miss its 3 s read, which
    // status reports as it should (`unanswered`), and a 6 s window may see no request finish
    // (CI of afc6513: one in flight the whole window): the figures are checked on the first of at
    // most five reads where every pod answered and the router and decode saw traffic.
    let positive = |v: &serde_json::Value| v.as_f64().is_some_and(|v| v > 0.0);
    let saw_traffic = |load: &serde_json::Value| {
        let pools = load["pools"].as_array().into_iter().flatten();
        let rate = |name: &str, field: &str| {
            pools
                .clone()
                .any(|p| p["pool"] == name && positive(&p[field]))
        };
        rate("server", "requestsPerSecond") && rate("decode", "tokensPerSecond")
    };
    let mut load = serde_json::Value::Null;
    for _ in 0..5 {
        let status = kubectl(&[
            "infera",
            "status",
            "demo",
            "-n",
            &n,
            "--load=6s",
            "-o",
            "json",
        ])
        .await?
        .expect_code(0)?;
        load = serde_json::from_str::<serde_json::Value>(&status.stdout)?["load"].take();
        if every_pod_answered(&load) && saw_traffic(&load) {
            break;
        }
    }
    // The same under --watch: read again every 3 s, the rates over the time between two reads.
    // A window can see no request at the router (a busy pod may miss the 3 s read), so the
    // documents are read until one shows the server's rate, for at most 90 s.
    let watched = watch_load(&n).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let sent = traffic.await??;
    watched?;
    let pool = |name: &str| {
        load["pools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["pool"] == name)
            .cloned()
            .unwrap_or_default()
    };
    let (server, decode, prefill) = (pool("server"), pool("decode"), pool("prefill"));
    anyhow::ensure!(
        load["windowSeconds"] == 6.0
            && sent > 0
            && every_pod_answered(&load)
            && [&server, &decode, &prefill]
                .iter()
                .all(|p| p["pods"].as_u64() >= Some(1))
            && server["inFlight"].is_number()
            && positive(&server["requestsPerSecond"])
            && positive(&server["e2e"]["p50"])
            && decode["running"].is_number()
            && positive(&decode["tokensPerSecond"]),
        "{sent} completions sent; the load:\n{load:#}"
    );
    // One sample, as text: the server line counts both routers as answered (again at most three
    // reads).
    let mut text = String::new();
    for _ in 0..3 {
        text = kubectl(&["infera", "status", "demo", "-n", &n, "--load"])
            .await?
            .expect_code(0)?
            .stdout;
        if text
            .lines()
            .any(|l| l.trim_start().starts_with("server ") && l.contains(" 2/2 "))
        {
            break;
        }
    }
    anyhow::ensure!(
        text.contains("Load (one sample;")
            && text
                .lines()
                .any(|l| l.trim_start().starts_with("server ") && l.contains(" 2/2 ")),
        "{text}"
    );
    Ok(())
}

/// Whether every pool of a `status -o json` document's `load` has as many pods answered as it has.
fn every_pod_answered(load: &serde_json::Value) -> bool {
    load["pools"]
        .as_array()
        .is_some_and(|pools| !pools.is_empty() && pools.iter().all(|p| p["answered"] == p["pods"]))
}

/// Follows `status --watch --load=3s -o json` (one document per line) until a document's window
/// is 3–10 s and the server pool's request rate is positive; the last document read is in the error.
async fn watch_load(n: &str) -> anyhow::Result<()> {
    let watch = Pty::spawn(&format!(
        "kubectl infera status demo -n {n} --watch --load=3s -o json"
    ))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let mut last = serde_json::Value::Null;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let screen = watch.screen();
        let complete = screen.rsplit_once('\n').map_or("", |(lines, _)| lines);
        for line in complete.lines().filter(|l| l.contains("\"windowSeconds\"")) {
            let doc: serde_json::Value = serde_json::from_str(line.trim())?;
            let window = doc["load"]["windowSeconds"].as_f64().unwrap_or_default();
            let server_rate = doc["load"]["pools"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["pool"] == "server")
                .and_then(|p| p["requestsPerSecond"].as_f64())
                .unwrap_or_default();
            if (3.0..10.0).contains(&window) && server_rate > 0.0 {
                return Ok(());
            }
            last = doc;
        }
    }
    let screen = watch.screen();
    let tail = &screen[screen.floor_char_boundary(screen.len().saturating_sub(2000))..];
    anyhow::bail!(
        "--watch --load=3s: no window with requests at the server within 90 s; the last:\n{last:#}\nthe end of the screen:\n{tail}"
    )
}

/// `kubectl infera logs` on the seed's graph: every pool's pods in one timeline, each line
/// prefixed by pool/pod, the NATS password that upstream's router logs with its URL
/// (`infera/common/nats_request.py:296`) shown as `***`, the operator's lines about the
/// deployment, colour only on a terminal; `-f` follows a pod that replaces a deleted one.
async fn graph_logs(ns: &TestNamespace) -> anyhow::Result<()> {
    let n = ns.name();
    let logs = kubectl(&[
        "infera",
        "logs",
        "demo",
        "-n",
        n,
        "--tail=-1",
        "--timestamps",
        "--operator",
    ])
    .await?
    .expect_code(0)?;
    let out = &logs.stdout;
    for expected in [
        "[server/demo-server-",
        "[prefill/demo-prefill-",
        "[decode/demo-decode-",
        "[nats/demo-nats-0",
        "NATS request transport connected: nats://infera:***@demo-nats.",
    ] {
        anyhow::ensure!(out.contains(expected), "no {expected:?} in\n{out}");
    }
    let password = nats_password(ns, "demo-nats-auth").await?;
    anyhow::ensure!(
        !out.contains(&password),
        "the NATS password is printed:\n{out}"
    );
    anyhow::ensure!(!out.contains('\x1b'), "colour without a terminal:\n{out}");
    anyhow::ensure!(
        out.lines()
            .any(|l| l.starts_with("[operator/infera-operator-") && l.contains(" INFO Ready: ")),
        "no operator line about demo's Ready in\n{out}"
    );
    // One timeline: the API server's times never go back from one line to the next.
    let times: Vec<Timestamp> = out
        .lines()
        .filter_map(|l| {
            l.split_once("] ")?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect();
    anyhow::ensure!(
        times.len() == out.lines().count() && times.is_sorted(),
        "not one timeline:\n{out}"
    );

    // The support bundle holds every container's log, the operator's too, with the password
    // hidden the same way.
    let bundle = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("report-{n}.tar.gz"))
        .display()
        .to_string();
    kubectl(&["infera", "report", "demo", "-n", n, "-o", &bundle])
        .await?
        .expect_code(0)?;
    let tar = |flags: &'static str| {
        let bundle = bundle.clone();
        async move {
            let out = tokio::process::Command::new("tar")
                .args([flags, &bundle])
                .output()
                .await?;
            anyhow::Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
    };
    let listed = tar("-tzf").await?;
    for part in [
        "/logs/demo-server-",
        "/logs/demo-decode-",
        "/operator/logs/infera-operator-",
    ] {
        anyhow::ensure!(listed.contains(part), "no {part} in\n{listed}");
    }
    let contents = tar("-xzOf").await?;
    anyhow::ensure!(
        contents.contains("NATS request transport connected: nats://infera:***@demo-nats.")
            && !contents.contains(&password),
        "the router's log in the bundle:\n{contents}"
    );

    // -f on a terminal: colour per pool, and the pod that replaces a deleted one joins.
    let pods: Api<Pod> = ns.api();
    let decode = |list: &[Pod]| -> Vec<String> { list.iter().map(ResourceExt::name_any).collect() };
    let selector = ListParams::default().labels("infera.amd.com/service=decode");
    let before = decode(&pods.list(&selector).await?.items);
    let mut follow = Pty::spawn(&format!("kubectl infera logs demo decode -f -n {n}"))?;
    follow
        .expect("[decode/demo-decode-", Duration::from_secs(30))
        .await?;
    anyhow::ensure!(
        follow.raw().contains("\x1b[36m[decode/demo-decode-"),
        "{}",
        follow.raw()
    );
    let mut delete = vec!["delete", "pod", "-n", n, "--wait=false"];
    delete.extend(before.iter().map(String::as_str));
    kubectl(&delete).await?.expect_code(0)?;
    let new = eventually(Duration::from_secs(60), || async {
        let now = decode(&pods.list(&selector).await?.items);
        now.into_iter()
            .find(|pod| !before.contains(pod))
            .ok_or_else(|| anyhow::anyhow!("no new decode pod yet"))
    })
    .await?;
    follow
        .expect(&format!("[decode/{new}]"), Duration::from_secs(120))
        .await
}

/// Two workers behind upstream's kv-aware router, which weighs a cached prefix at 4 blocks of load
/// per block (`--kv-overlap-weight`, infera/server/args.py), with restricted egress.
const KV_SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: kv}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  networkPolicy:
    egress:
      restrict: true
      # The Hub's stand-in, where the router's tokenizer and the engines' configs come from, runs
      # on the host behind the Service default/hf-hub (tests/cluster/nodes.sh), on its own port
      # (the API server is on the same address: only the egress policy's own rule lets it in).
      allow: [{to: [{ipBlock: {cidr: HUB_ADDRESS/32}}], ports: [{port: HUB_PORT}]}]
  services:
    server:
      componentType: server
      args: [--router-policy, kv-aware, --router-tokenizer-path, Qwen/Qwen3-0.6B, --kv-overlap-weight, "4"]
    worker:
      componentType: worker
      replicas: 2
      resources: {gpu: 1}
      args: [--model-path, Qwen/Qwen3-0.6B]
"#;

/// The samples of `name` in a Prometheus text exposition, as (labels, value).
fn samples<'a>(text: &'a str, name: &str) -> Vec<(&'a str, f64)> {
    text.lines()
        .filter_map(|line| {
            let (labels, value) = line.strip_prefix(name)?.rsplit_once(' ')?;
            (labels.is_empty() || labels.starts_with('{')).then_some(())?;
            Some((labels, value.parse().ok()?))
        })
        .collect()
}

/// The router's `/metrics` behind `server` (a Service), through the API server's service proxy.
async fn router_metrics(namespace: &str, server: &str) -> anyhow::Result<String> {
    let uri = format!("/api/v1/namespaces/{namespace}/services/http:{server}:8000/proxy/metrics");
    Ok(kubectl(&["get", "--raw", &uri])
        .await?
        .expect_code(0)?
        .stdout)
}

/// Waits until the router behind `server` holds at least `blocks` KV blocks for one worker
/// (`infera_policy_cache_view_size`, set from its view when /metrics is read, infera/server/
/// app.py:611-616).
///
/// Upstream's router subscribes to the KV events once, in a task of its own, when it tracks its
/// first worker (`infera/router/kv_event/nats_client.py:55-105`), and never again: a JetStream
/// request of that task timing out (nats-py's 5 s, seen on this loaded 2-core machine) leaves it
/// without events for good. That one failure, named in its log, is met as a user would meet it:
/// the router's pod is restarted, and its new subscription replays the stream from the start.
/// On a timeout otherwise, the KV plane's log lines come with the error, to tell which side lost
/// the events.
async fn router_view_reaches(namespace: &str, server: &str, blocks: f64) -> anyhow::Result<()> {
    let reached = |within| {
        eventually(within, || async {
            let text = router_metrics(namespace, server).await?;
            let views = samples(&text, "infera_policy_cache_view_size");
            anyhow::ensure!(
                views.iter().any(|(_, held)| *held >= blocks),
                "the router's KV views: {views:?}"
            );
            Ok(())
        })
    };
    let Err(error) = reached(Duration::from_secs(60)).await else {
        return Ok(());
    };
    let logs = kv_plane_logs(namespace).await;
    if !logs.contains("name='kv-nats-start'") {
        return Err(error.context(logs));
    }
    eprintln!(
        "{namespace}: upstream's router lost its KV-event subscription (nats_client.py does not retry it); restarting its pod"
    );
    let selector = format!("{LABEL_SERVICE}=server");
    kubectl(&[
        "delete",
        "pod",
        "-n",
        namespace,
        "-l",
        &selector,
        "--wait=false",
    ])
    .await?
    .expect_code(0)?;
    // A new router starts, finds the workers and replays the stream.
    match reached(Duration::from_secs(180)).await {
        Ok(()) => Ok(()),
        Err(error) => Err(error.context(kv_plane_logs(namespace).await)),
    }
}

/// The lines of the graph's pods' logs (router, workers' relays, NATS) that speak of KV events,
/// NATS or an error.
async fn kv_plane_logs(namespace: &str) -> String {
    let logs = kubectl(&[
        "logs",
        "-n",
        namespace,
        "-l",
        "infera.amd.com/deployment",
        "--all-containers",
        "--prefix",
        "--tail=-1",
        "--max-log-requests=20",
    ])
    .await;
    let text = match logs {
        Ok(run) => run.stdout + &run.stderr,
        Err(error) => return format!("no logs: {error:#}"),
    };
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| {
            let line = line.to_lowercase();
            ["kv", "nats", "jetstream", "error", "exception", "traceback"]
                .iter()
                .any(|word| line.contains(word))
        })
        .collect();
    format!("the KV plane's log lines:\n{}", lines.join("\n"))
}

/// 48 tokens of the test tokenizer (tests/upstream/discovery.py: a WordLevel vocabulary).
const PROMPT_48: &str = "hello world the a infera router hello world the a infera router \
    hello world the a infera router hello world the a infera router hello world the a infera router \
    hello world the a infera router hello world the a infera router hello world the a infera router";

/// KV-aware routing on real KV events: the stand-in engine publishes its prefix cache with SGLang's
/// own publisher on the endpoint the wrapper gave it, upstream's relay in the worker forwards it to
/// the managed NATS, and the router's view of that worker fills. A prompt sent again then goes back
/// to the worker that holds it, every time; without the events the router would count no hits and
/// send the second one to the other worker (the first one's load outweighs nothing).
#[tokio::test]
async fn tier3_kv_events_bring_a_repeated_prompt_back_to_the_worker_that_cached_it()
-> anyhow::Result<()> {
    let hub: EndpointSlice = Api::namespaced(admin().await?, "default")
        .get("hf-hub")
        .await?;
    let hub_port = hub.ports.iter().flatten().find_map(|p| p.port);
    let hub_address = hub.endpoints.iter().flat_map(|e| &e.addresses).next();
    let (Some(hub_port), Some(hub_address)) = (hub_port, hub_address) else {
        anyhow::bail!("EndpointSlice default/hf-hub lists no address or port: {hub:?}");
    };
    let spec = KV_SPEC
        .replace("HUB_ADDRESS", hub_address)
        .replace("HUB_PORT", &hub_port.to_string());
    let (ns, path) = namespace_with("t3-kv", &spec).await?;
    deploy_ready(&ns, &path).await?;
    // Both workers registered with the router before the first pick.
    eventually(Duration::from_secs(120), || async {
        let text = router_metrics(ns.name(), "kv-server").await?;
        let active = samples(&text, "infera_active_workers");
        anyhow::ensure!(
            active.contains(&(r#"{disagg_mode="mixed"}"#, 2.0)),
            "active workers: {active:?}"
        );
        Ok(())
    })
    .await?;

    // One KV block per token (SGLang's page size on ROCm).
    const BLOCKS: f64 = 48.0;
    let request = serde_json::json!({"model": MODEL, "prompt": PROMPT_48, "max_tokens": 4});
    let answered_by = || async {
        let answer = post(ns.name(), "kv-server", "/v1/completions", &request).await?;
        let text = answer["choices"][0]["text"].as_str().unwrap_or_default();
        text.strip_prefix("[stand-in sglang on ")
            .and_then(|rest| rest.split(']').next())
            .map(str::to_owned)
            .ok_or_else(|| anyhow::anyhow!("no worker named in {answer}"))
    };
    let first = answered_by().await?;
    router_view_reaches(ns.name(), "kv-server", BLOCKS).await?;
    for _ in 0..4 {
        let again = answered_by().await?;
        anyhow::ensure!(again == first, "cached on {first}, sent to {again}");
    }
    let text = router_metrics(ns.name(), "kv-server").await?;
    let hits = samples(&text, "infera_router_pick_cache_hits_sum");
    anyhow::ensure!(
        hits.contains(&(r#"{role="mixed"}"#, 4.0 * BLOCKS)),
        "cache hits: {hits:?}"
    );
    // The events came over NATS with the deployment's credentials; without them, NATS says no.
    let answer = nats_session(&ns, "kv", None, "").await?;
    anyhow::ensure!(
        answer.contains("-ERR 'Authorization Violation'"),
        "NATS answered an anonymous client: {answer}"
    );
    let password = nats_password(&ns, "kv-nats-auth").await?;
    let events = kv_event_messages(&ns, "kv", &password).await?;
    anyhow::ensure!(events > 0, "no KV event in JetStream");

    // All of this ran under the graph's NetworkPolicies, enforced (kube-router on tier 3), egress
    // restricted: the router found its workers through the API server, which each worker's
    // registration patched, and reached NATS by its Service's DNS name. A pod of the namespace
    // outside the graph reaches neither NATS nor a worker, and the same pod with the graph's label
    // reaches both (so the refusal is the policies', not the probe's).
    let pods: Api<Pod> = ns.api();
    let ip = |pod: Pod| pod.status.and_then(|s| s.pod_ip).unwrap_or_default();
    let nats = ip(pods.get("kv-nats-0").await?);
    let workers = pods
        .list(
            &ListParams::default()
                .labels("infera.amd.com/deployment=kv,infera.amd.com/service=worker"),
        )
        .await?;
    let worker = workers.items.into_iter().next().map(ip).unwrap_or_default();
    let targets = [(nats.as_str(), 4222), (worker.as_str(), 30000)];
    let probes = [
        ("stranger", None, 1, false),
        ("member", Some("kv"), 30, true),
    ];
    for (who, label, attempts, expected) in probes {
        for (i, &(ip, port)) in targets.iter().enumerate() {
            let reached = connects(&ns, &format!("{who}-{i}"), label, (ip, port), attempts).await?;
            anyhow::ensure!(
                reached == expected,
                "{who} pod connecting to {ip}:{port}: reached {reached}, expected {expected}"
            );
        }
    }
    // And the other way: a pod outside the graph that listens is reached by a pod outside the
    // graph (egress is open there), and not by a pod of the graph.
    let listener = serde_json::json!({
        "metadata": {"name": "outside"},
        "spec": {
            "nodeSelector": {"infera.amd.com/test-node": "real"},
            "containers": [{"name": "listen", "image": "rocm/infera:sglang-v0.1.1",
                "command": ["python3", "-m", "http.server", "8080"]}],
        },
    });
    pods.create(&Default::default(), &serde_json::from_value(listener)?)
        .await?;
    let outside = eventually(Duration::from_secs(120), || async {
        let ip = ip(pods.get("outside").await?);
        anyhow::ensure!(!ip.is_empty(), "the listener has no IP yet");
        anyhow::Ok(ip)
    })
    .await?;
    let target = (outside.as_str(), 8080);
    anyhow::ensure!(
        connects(&ns, "stranger-out", None, target, 30).await?,
        "a pod outside the graph cannot reach the listener at {outside}:8080"
    );
    anyhow::ensure!(
        !connects(&ns, "member-out", Some("kv"), target, 3).await?,
        "a pod of the graph reached {outside}:8080 past restricted egress"
    );

    ns.cleanup().await
}

/// Whether a pod of `ns` (with `infera.amd.com/deployment=<deployment>` when given) on a real node
/// opens a TCP connection to `ip:port` in one of `attempts` tries of 5 s each: the stand-in
/// image's Python, its exit code. (A pod of the graph tries again: the policy engine admits a new
/// pod's address a moment after the pod starts.)
async fn connects(
    ns: &TestNamespace,
    name: &str,
    deployment: Option<&str>,
    (ip, port): (&str, u16),
    attempts: u32,
) -> anyhow::Result<bool> {
    let labels = deployment.map(|d| serde_json::json!({"infera.amd.com/deployment": d}));
    let script = format!(
        "import socket, sys, time\n\
         for _ in range({attempts}):\n\
         \x20   try:\n\
         \x20       socket.create_connection(('{ip}', {port}), timeout=5); sys.exit(0)\n\
         \x20   except OSError:\n\
         \x20       time.sleep(1)\n\
         sys.exit(1)\n"
    );
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"infera.amd.com/test-node": "real"},
            "containers": [{"name": "probe", "image": "rocm/infera:sglang-v0.1.1",
                "command": ["python3", "-c", script]}],
        },
    }))?;
    let pods: Api<Pod> = ns.api();
    pods.create(&Default::default(), &pod).await?;
    let phase = eventually(Duration::from_secs(120), || async {
        let pod = pods.get(name).await?;
        match pod.status.and_then(|s| s.phase).as_deref() {
            Some(phase @ ("Succeeded" | "Failed")) => Ok(phase.to_owned()),
            other => Err(anyhow::anyhow!("pod {name} is {other:?}")),
        }
    })
    .await?;
    Ok(phase == "Succeeded")
}

/// What the managed NATS of `deployment` answers `lines` sent after `CONNECT` with `credentials`
/// (user and password; none: anonymous, as any pod of the cluster could connect), then `PING`:
/// everything it sends until it closes the connection (as on an authorization error), a `MSG`
/// arrived whole, or 10 s passed (NATS client protocol, docs.nats.io "Client Protocol").
async fn nats_session(
    ns: &TestNamespace,
    deployment: &str,
    credentials: Option<(&str, &str)>,
    lines: &str,
) -> anyhow::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let pods: Api<Pod> = ns.api();
    let pod = pods.get(&format!("{deployment}-nats-0")).await?;
    let ip = pod
        .status
        .and_then(|s| s.pod_ip)
        .ok_or_else(|| anyhow::anyhow!("the NATS pod has no IP"))?;
    let mut connect = serde_json::json!({"verbose": false, "pedantic": false});
    if let Some((user, pass)) = credentials {
        connect["user"] = user.into();
        connect["pass"] = pass.into();
    }
    let mut stream = tokio::net::TcpStream::connect((ip.as_str(), 4222)).await?;
    stream
        .write_all(format!("CONNECT {connect}\r\n{lines}PING\r\n").as_bytes())
        .await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut answer = Vec::new();
    let mut buffer = vec![0u8; 1 << 16];
    while let Ok(read) = tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
        let n = read?;
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
        if message(&String::from_utf8_lossy(&answer)).is_some() {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// The payload of the first whole `MSG` in what a NATS server sent.
fn message(text: &str) -> Option<&str> {
    let at = text.find("MSG ")?;
    let (header, rest) = text[at..].split_once("\r\n")?;
    let length: usize = header.split_whitespace().last()?.parse().ok()?;
    rest.get(..length)
}

/// How many messages the stream upstream's relay publishes KV events to holds
/// (`infera/kv/nats_bus.py:36`, JetStream's `STREAM.INFO` API), asked with `password`.
async fn kv_event_messages(
    ns: &TestNamespace,
    deployment: &str,
    password: &str,
) -> anyhow::Result<u64> {
    let request =
        "SUB _INBOX.test 1\r\nPUB $JS.API.STREAM.INFO.INFERA_KV_EVENTS _INBOX.test 0\r\n\r\n";
    let answer = nats_session(ns, deployment, Some(("infera", password)), request).await?;
    let info: serde_json::Value = serde_json::from_str(
        message(&answer).ok_or_else(|| anyhow::anyhow!("no answer: {answer}"))?,
    )?;
    info["state"]["messages"]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("no stream state: {info}"))
}

/// The password in the managed NATS's credentials `secret`.
async fn nats_password(ns: &TestNamespace, secret: &str) -> anyhow::Result<String> {
    use infera_e2e::k8s_openapi::api::core::v1::Secret;
    let secrets: Api<Secret> = ns.api();
    let data = secrets.get(secret).await?.data.unwrap_or_default();
    let password = data
        .get(infera_core::naming::NATS_PASSWORD_KEY)
        .map(|value| String::from_utf8_lossy(&value.0).into_owned());
    password.ok_or_else(|| anyhow::anyhow!("{secret} has no password"))
}

const REFUSED_SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: refused}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server:
      componentType: server
      args: [--router-policy, round-robin, --router-tokenizer-path, /opt/infera/tokenizer]
    worker:
      componentType: worker
      resources: {gpu: 1}
      args: [--model-path, Qwen/Qwen3-0.6B, --no-such-flag]
    missing:
      componentType: worker
      resources: {gpu: 1}
      args: [--model-path, Qwen/No-Such-Model]
"#;

/// Bad input on real pods, in the pods' own words: a flag the engine refuses (SGLang's own parser,
/// in the wrapper, exits with its message) and a model that is not there (the engine dies loading
/// its config, the wrapper gives up waiting for it). The kubelet keeps each log's tail as the
/// termination message (the rendered `terminationMessagePolicy`), and `deploy --wait` and
/// `status` quote it.
#[tokio::test]
async fn tier3_a_refused_flag_and_a_crashing_engine_reach_status_in_their_own_words()
-> anyhow::Result<()> {
    const REFUSED: &str = "unrecognized arguments: --no-such-flag";
    const CRASHED: &str = "sglang subprocess exited with code 1 before reporting ready";
    let (ns, path) = namespace_with("t3-refused", REFUSED_SPEC).await?;
    kubectl(&["infera", "deploy", "-f", &path, "-n", ns.name()])
        .await?
        .expect_code(0)?;
    // However long the images take to pull and the engines to fail: status quotes both.
    eventually(Duration::from_secs(300), || async {
        let status = kubectl(&["infera", "status", "refused", "-n", ns.name()]).await?;
        anyhow::ensure!(
            status.stdout.contains(REFUSED) && status.stdout.contains(CRASHED),
            "{}",
            status.stdout
        );
        Ok(())
    })
    .await?;
    // Waiting on it (the same spec again, which changes nothing) ends in the same words.
    let wait = kubectl(&[
        "infera",
        "deploy",
        "-f",
        &path,
        "-n",
        ns.name(),
        "--wait",
        "--timeout",
        "30s",
    ])
    .await?;
    anyhow::ensure!(wait.code != 0, "deploy --wait succeeded:\n{}", wait.stdout);
    let said = format!("{}{}", wait.stdout, wait.stderr);
    anyhow::ensure!(
        said.contains(REFUSED) && said.contains(CRASHED),
        "deploy --wait:\n{said}"
    );
    ns.cleanup().await
}

/// A Lockstep rollout of the seed's PD example (a new revision of prefill and decode) while
/// completions stream through the server's Service without pause: every one is answered. The old
/// pods leave the router's view when they are deleted, wait out their preStop, and their wrappers
/// deregister and drain the engine before it stops (upstream's shutdown), so no request is cut.
#[tokio::test]
async fn tier3_a_lockstep_rollout_under_steady_requests_loses_none() -> anyhow::Result<()> {
    let (ns, path) = namespace_with("t3-lockstep", SEED).await?;
    deploy_ready(&ns, &path).await?;
    let namespace = ns.name().to_string();
    eventually(Duration::from_secs(120), || {
        complete(&namespace, "demo-server", MODEL, "warm up")
    })
    .await?;
    let pods: Api<Pod> = ns.api();
    let workers = ListParams::default().labels("app.kubernetes.io/component=worker");
    let before: Vec<String> = pods
        .list(&workers)
        .await?
        .iter()
        .map(|p| p.name_any())
        .collect();

    // A steady stream, one request after another, until the rollout is over.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stream = tokio::spawn({
        let (stop, namespace) = (stop.clone(), namespace.clone());
        async move {
            let (mut answered, mut lost) = (0_usize, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match complete(
                    &namespace,
                    "demo-server",
                    MODEL,
                    &format!("request {answered}"),
                )
                .await
                {
                    Ok(answer) if answer.contains("KV from demo-prefill-") => answered += 1,
                    Ok(answer) => lost.push(answer),
                    Err(error) => lost.push(format!("{error:#}")),
                }
            }
            (answered, lost)
        }
    });
    let patch = r#"{"spec": {"services": {
        "prefill": {"env": [{"name": "ROLLOUT", "value": "2"}]},
        "decode": {"env": [{"name": "ROLLOUT", "value": "2"}]}}}}"#;
    kubectl(&[
        "patch",
        "idep",
        "demo",
        "-n",
        ns.name(),
        "--type",
        "merge",
        "-p",
        patch,
    ])
    .await?
    .expect_code(0)?;
    // Done when every old worker pod is gone and the new ones are Ready.
    eventually(Duration::from_secs(300), || async {
        let list = pods.list(&workers).await?;
        let old = list
            .items
            .iter()
            .filter(|p| before.contains(&p.name_any()))
            .count();
        let ready = list.items.iter().filter(|p| PodHealth::of(p).ready).count();
        anyhow::ensure!(
            old == 0 && ready == 2,
            "{old} old worker pods, {ready} ready"
        );
        Ok(())
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (answered, lost) = stream.await?;
    eprintln!(
        "{answered} answered, {} lost during the rollout",
        lost.len()
    );
    anyhow::ensure!(
        lost.is_empty(),
        "{} of {} requests lost: {lost:?}",
        lost.len(),
        answered + lost.len()
    );
    anyhow::ensure!(
        answered >= 20,
        "only {answered} requests during the rollout"
    );
    ns.cleanup().await
}

/// The README's MI300X worked example, unchanged: the download Job runs `hf download` against the
/// cluster's Hub (tests/cluster/hub.py) into the model volume, the GPU pools are created only once
/// it has completed, on nodes labelled MI300X with an RDMA NIC each, and they serve the downloaded
/// model (`--model-path /models`).
#[tokio::test]
async fn tier3_mi300x_example_downloads_the_model_before_its_gpu_pools_start() -> anyhow::Result<()>
{
    use infera_e2e::k8s_openapi::api::batch::v1::Job;
    let (ns, path) = namespace_with("t3-mi300x", MI300X).await?;
    deploy_ready(&ns, &path).await?;

    let jobs: Api<Job> = ns.api();
    let job = jobs.get("mi300x-model").await?;
    let done = job
        .status
        .and_then(|s| s.completion_time)
        .ok_or_else(|| anyhow::anyhow!("the download Job has not completed"))?;
    let pods: Api<Pod> = ns.api();
    let workers = pods
        .list(&ListParams::default().labels("app.kubernetes.io/component=worker"))
        .await?;
    anyhow::ensure!(
        workers.items.len() == 2,
        "{} worker pods",
        workers.items.len()
    );
    for pod in &workers.items {
        let created = pod.metadata.creation_timestamp.clone().map(|t| t.0);
        anyhow::ensure!(
            created.is_some_and(|c| c >= done.0),
            "{} created at {created:?}, before the download completed at {}",
            pod.name_any(),
            done.0
        );
        let resources = pod.spec.as_ref().map(|s| s.containers[0].resources.clone());
        let limits = resources
            .flatten()
            .and_then(|r| r.limits)
            .unwrap_or_default();
        anyhow::ensure!(
            limits.contains_key("rdma/hca"),
            "{}: {limits:?}",
            pod.name_any()
        );
    }
    let status = kubectl(&["infera", "status", "mi300x", "-n", ns.name()])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        status.stdout.contains("hf://Qwen/Qwen3-0.6B") && status.stdout.contains("Downloaded"),
        "{}",
        status.stdout
    );
    let answer = eventually(Duration::from_secs(120), || {
        complete(ns.name(), "mi300x-server", "/models", "Say hello")
    })
    .await?;
    anyhow::ensure!(answer.contains("KV from mi300x-prefill-"), "{answer}");
    ns.cleanup().await
}

const GROUP_SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: group}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server:
      componentType: server
      args: [--router-policy, round-robin, --router-tokenizer-path, /opt/infera/tokenizer]
    worker:
      componentType: worker
      numberOfNodes: 2
      resources: {gpu: 5}
      args: [--model-path, Qwen/Qwen3-0.6B, --tp-size, "10"]
"#;

/// A multi-node pool (a LeaderWorkerSet group of two pods, five GPUs each, so on two nodes): the
/// rank-1 pod's engine joins rank 0 at the address the operator renders
/// (`--dist-init-addr $(LWS_LEADER_ADDRESS):5000`, resolved by the cluster's DNS), rank 0 serves
/// only once it has, its wrapper registers, and a completion comes back from it.
#[tokio::test]
async fn tier3_a_multi_node_groups_rank_1_joins_its_leader_across_nodes() -> anyhow::Result<()> {
    let (ns, path) = namespace_with("t3-group", GROUP_SPEC).await?;
    kubectl(&[
        "infera",
        "deploy",
        "-f",
        &path,
        "-n",
        ns.name(),
        "--wait",
        "--timeout",
        "5m",
    ])
    .await?
    .expect_code(0)?;
    let pods: Api<Pod> = ns.api();
    let group = pods
        .list(&ListParams::default().labels("app.kubernetes.io/component=worker"))
        .await?;
    let nodes: std::collections::BTreeSet<_> = group
        .items
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    anyhow::ensure!(
        group.items.len() == 2 && nodes.len() == 2,
        "group on {nodes:?}"
    );
    let leader = format!("group-worker-0.group-worker.{}:5000", ns.name());
    let follower = kubectl(&[
        "infera",
        "logs",
        "group",
        "worker",
        "--rank",
        "1",
        "-n",
        ns.name(),
        "--tail=-1",
    ])
    .await?
    .expect_code(0)?;
    let prefix = "[worker/group-worker-0-1 rank 1] ";
    let joined = format!("rank 1 of 2: joined rank 0 at {leader}");
    anyhow::ensure!(
        follower.stdout.lines().all(|l| l.starts_with(prefix))
            && follower.stdout.lines().any(|l| l.contains(&joined)),
        "{}",
        follower.stdout
    );
    let rank0 = kubectl(&["logs", "-n", ns.name(), "group-worker-0", "--tail=-1"])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(rank0.stdout.contains("rank 1 at "), "{}", rank0.stdout);
    let answer = eventually(Duration::from_secs(120), || {
        complete(ns.name(), "group-server", MODEL, "hello group")
    })
    .await?;
    anyhow::ensure!(answer.contains("on group-worker-0]"), "{answer}");
    ns.cleanup().await
}

const VLLM_SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: vl}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server:
      componentType: server
      args: [--router-policy, kv-aware, --router-tokenizer-path, Qwen/Qwen3-0.6B]
    worker:
      componentType: worker
      numberOfNodes: 2
      resources: {gpu: 1}
      args: [--model, Qwen/Qwen3-0.6B, --tensor-parallel-size, "2"]
"#;

/// The vLLM stand-in under upstream's vLLM wrapper, as a two-node group: rank 0 serves and
/// registers (the router downloads its tokenizer from the cluster's Hub), rank 1 runs `vllm serve
/// --headless` and stays up (issue 26's contract on a real pod), and a completion comes back. Its KV
/// events (vLLM's own publisher, paged at the block size the wrapper reads from /metrics) reach the
/// router's view through the relay and NATS.
#[tokio::test]
async fn tier3_a_vllm_group_serves_with_a_headless_rank_1() -> anyhow::Result<()> {
    let (ns, path) = namespace_with("t3-vllm", VLLM_SPEC).await?;
    deploy_ready(&ns, &path).await?;
    let answer = eventually(Duration::from_secs(120), || {
        complete(ns.name(), "vl-server", MODEL, "hello vllm")
    })
    .await?;
    anyhow::ensure!(
        answer.starts_with("[stand-in vllm on vl-worker-0]"),
        "{answer}"
    );
    // Rank 1 logs its command once its wrapper gets there, which on a saturated CPU can come after
    // rank 0 has answered.
    eventually(Duration::from_secs(60), || async {
        let follower = kubectl(&["logs", "-n", ns.name(), "vl-worker-0-1", "--tail=-1"])
            .await?
            .expect_code(0)?;
        anyhow::ensure!(
            follower.stdout.contains("--headless"),
            "{}",
            follower.stdout
        );
        Ok(())
    })
    .await?;
    let request = serde_json::json!({"model": MODEL, "prompt": PROMPT_48, "max_tokens": 4});
    post(ns.name(), "vl-server", "/v1/completions", &request).await?;
    router_view_reaches(ns.name(), "vl-server", 3.0).await?; // 48 tokens in blocks of 16
    ns.cleanup().await
}
