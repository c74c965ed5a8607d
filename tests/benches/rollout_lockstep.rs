//! Benchmark: a Lockstep rollout of a 2-prefill/4-decode graph against the time its slower pool
//! (decode, 4 replicas) takes to roll out alone as a plain Deployment with the same `maxSurge`
//! and `maxUnavailable` — it fails above 1.2×, the goal of docs/rollouts.md — and, as the middle term, the same graph with
//! `strategy: Independent` (the operator in the loop, no lockstep).
//!
//!   cargo build --release -p infera-operator
//!   KUBECONFIG=... cargo bench -p infera-e2e --bench rollout_lockstep   # needs a tier-2 cluster
//!
//! Every pod runs on one dedicated kwok node with GPUs for all three at once plus their surge, and
//! kwok makes it Ready `INFERA_BENCH_READY_DELAY` (default `1s`) after it starts (the pod
//! annotation `pod-ready.stage.kwok.x-k8s.io/delay`, tests/cluster/README.md). Each round changes
//! the image of the three in turn and times each from its patch to the moment a pod watch sees
//! every worker pod of the new image Ready and no other worker pod left (one rule for all three).
//! Environment: `INFERA_BENCH_ROUNDS` (default 3), `INFERA_BENCH_READY_DELAY`,
//! `INFERA_E2E_OPERATOR` (another operator binary, e.g. the release's static build).

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use futures::{StreamExt, TryStreamExt};
use infera_core::{
    InferaDeployment,
    naming::{ENGINE_CONTAINER, LABEL_DEPLOYMENT, LABEL_SERVICE},
};
use infera_e2e::{
    FakeNode, TestNamespace, admin, apply_yaml_in,
    kube::{
        Api, Resource, ResourceExt,
        api::{Patch, PatchParams},
        runtime::{WatchStreamExt, watcher},
    },
    operator::{Operator, install},
};
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
use serde_json::json;

const IMAGES: [&str; 2] = ["rocm/infera:sglang-v0.1.1", "rocm/infera:sglang-v0.1.2"];
const TIMEOUT: Duration = Duration::from_secs(300);
/// Replicas of the prefill and the decode pool; the plain Deployment has the decode pool's.
const PREFILL: usize = 2;
const DECODE: usize = 4;
const PLAIN: &str = "plain";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rounds: usize = std::env::var("INFERA_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let delay = std::env::var("INFERA_BENCH_READY_DELAY").unwrap_or_else(|_| "1s".into());
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "bench-rollout").await?;
    // Both graphs and the plain Deployment at once, each with its surge.
    let gpus = 2 * (PREFILL + DECODE + 2) + DECODE + 1;
    let node = FakeNode::create(&admin, "bench-rollout", u32::try_from(gpus)?).await?;
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, ns.name()).await?;
    println!(
        "rollout_lockstep: {} cores, kwok readiness delay {delay}, {rounds} rounds; \
         {PREFILL} prefill + {DECODE} decode, maxSurge 1, maxUnavailable 0",
        std::thread::available_parallelism().map_or(0, usize::from)
    );

    let ideps: Api<InferaDeployment> = ns.api();
    let deployments: Api<Deployment> = ns.api();
    let pods: Api<Pod> = ns.api();
    let workers =
        |name: &str| format!("{LABEL_DEPLOYMENT}={name},{LABEL_SERVICE} in (prefill,decode)");
    let plain_pods = format!("app=bench-{PLAIN}");
    let graphs = [("independent", "Independent"), ("lockstep", "Lockstep")];
    apply_yaml_in(&admin, ns.name(), &plain(&node, &delay, IMAGES[0])).await?;
    for (name, strategy) in graphs {
        apply_yaml_in(
            &admin,
            ns.name(),
            &graph(name, strategy, &node, &delay, IMAGES[0]),
        )
        .await?;
    }
    // Everything runs the first image before the first round.
    rolled(&pods, &plain_pods, DECODE, IMAGES[0], || async { Ok(()) }).await?;
    for (name, _) in graphs {
        rolled(
            &pods,
            &workers(name),
            PREFILL + DECODE,
            IMAGES[0],
            || async { Ok(()) },
        )
        .await?;
    }

    let mut times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for round in 1..=rounds {
        let image = IMAGES[round % 2];
        let plain_took = rolled(&pods, &plain_pods, DECODE, image, || async {
            let patch = json!({"spec": {"template": {"spec": {"containers": [
                {"name": ENGINE_CONTAINER, "image": image},
            ]}}}});
            deployments
                .patch(PLAIN, &PatchParams::default(), &Patch::Strategic(&patch))
                .await?;
            Ok(())
        })
        .await?;
        times
            .entry(PLAIN)
            .or_default()
            .push(plain_took.as_secs_f64());
        let mut line = format!("round {round}: plain Deployment {plain_took:.2?}");
        for (name, strategy) in graphs {
            let change = || async {
                let patch = json!({"spec": {"image": image}});
                ideps
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
                Ok(())
            };
            let took = rolled(&pods, &workers(name), PREFILL + DECODE, image, change).await?;
            times.entry(strategy).or_default().push(took.as_secs_f64());
            line += &format!("; {strategy} graph {took:.2?}");
        }
        println!("{line}");
    }
    let median = |name: &str| -> f64 {
        let mut values = times.get(name).cloned().unwrap_or_default();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let base = median(PLAIN);
    println!("median: plain Deployment {base:.2} s");
    for (_, strategy) in graphs {
        let took = median(strategy);
        println!(
            "median: {strategy} graph {took:.2} s ({:.2}× the plain Deployment)",
            took / base
        );
    }
    ns.cleanup().await?;
    node.delete(&admin).await?;
    // The goal of docs/rollouts.md: Lockstep costs what the slower pool's own rollout costs.
    let ratio = median("Lockstep") / base;
    anyhow::ensure!(
        ratio <= GOAL,
        "goal of docs/rollouts.md missed: the Lockstep graph took {ratio:.2}× the plain Deployment (goal ≤ {GOAL}×)"
    );
    Ok(())
}

/// The most a Lockstep rollout may take, as a multiple of its slower pool's own (docs/rollouts.md).
const GOAL: f64 = 1.2;

/// The plain Deployment: the graph's decode pool as kubernetes rolls it out on its own.
fn plain(node: &FakeNode, delay: &str, image: &str) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": PLAIN},
        "spec": {
            "replicas": DECODE,
            "selector": {"matchLabels": {"app": format!("bench-{PLAIN}")}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {
                    "labels": {"app": format!("bench-{PLAIN}")},
                    "annotations": {"pod-ready.stage.kwok.x-k8s.io/delay": delay},
                },
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": node.name()},
                    "tolerations": [node.toleration()],
                    "containers": [{
                        "name": ENGINE_CONTAINER, "image": image,
                        "resources": {"limits": {"amd.com/gpu": 1}},
                    }],
                },
            },
        },
    })
    .to_string()
}

/// The graph `name`: a server, and prefill and decode pools of one GPU a replica.
fn graph(name: &str, strategy: &str, node: &FakeNode, delay: &str, image: &str) -> String {
    let worker = |role: &str, replicas: usize| {
        json!({
            "componentType": "worker", "role": role, "replicas": replicas,
            "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"],
            "tolerations": [node.toleration()],
            "nodeSelector": {"kubernetes.io/hostname": node.name()},
        })
    };
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
        "spec": {
            "backendFramework": "sglang", "image": image,
            "rollout": {"strategy": strategy, "maxSurge": 1, "maxUnavailable": 0},
            "podTemplate": {"metadata": {"annotations": {
                "pod-ready.stage.kwok.x-k8s.io/delay": delay,
            }}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
                "prefill": worker("prefill", PREFILL),
                "decode": worker("decode", DECODE),
            },
        },
    })
    .to_string()
}

/// Runs `change` once a pod watch on `selector` has listed, then returns how long after it the
/// watch sees `desired` pods with `image` Ready and no other one left (terminating pods aside:
/// kubernetes' rollout does not wait for them either; never judged during a relist).
async fn rolled<F>(
    pods: &Api<Pod>,
    selector: &str,
    desired: usize,
    image: &str,
    change: impl FnOnce() -> F,
) -> anyhow::Result<Duration>
where
    F: Future<Output = anyhow::Result<()>>,
{
    let done = |pods: &BTreeMap<String, Pod>| {
        let live = || {
            pods.values()
                .filter(|pod| pod.meta().deletion_timestamp.is_none())
        };
        live().all(|pod| engine_image(pod) == Some(image))
            && live().filter(|pod| ready(pod)).count() == desired
    };
    let config = watcher::Config::default().labels(selector);
    let mut stream = watcher(pods.clone(), config).default_backoff().boxed();
    let mut seen = BTreeMap::new();
    let mut listing = BTreeMap::new();
    let mut change = Some(change);
    let mut start = None;
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while let Some(event) = tokio::time::timeout_at(deadline, stream.try_next())
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "not done after {TIMEOUT:?}: {:?}",
                seen.keys().collect::<Vec<_>>()
            )
        })??
    {
        match event {
            watcher::Event::Init => {
                listing.clear();
                continue;
            }
            watcher::Event::InitApply(pod) => {
                listing.insert(pod.name_any(), pod);
                continue;
            }
            watcher::Event::InitDone => seen = std::mem::take(&mut listing),
            watcher::Event::Apply(pod) => {
                seen.insert(pod.name_any(), pod);
            }
            watcher::Event::Delete(pod) => {
                seen.remove(&pod.name_any());
            }
        }
        if let Some(change) = change.take() {
            change().await?;
            start = Some(Instant::now());
        }
        if let Some(start) = start
            && done(&seen)
        {
            return Ok(start.elapsed());
        }
    }
    anyhow::bail!("the watch ended")
}

/// The engine container's image.
fn engine_image(pod: &Pod) -> Option<&str> {
    let spec = pod.spec.as_ref()?;
    let engine = spec
        .containers
        .iter()
        .find(|c| c.name == ENGINE_CONTAINER)?;
    engine.image.as_deref()
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}
