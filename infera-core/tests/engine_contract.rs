//! The engine contract (the README's "Probes and draining" table), row by row: every rendered
//! engine container is probed and stopped as its engine's source says it answers. The facts are
//! stated here again, independently of the renderer's table, so a wrong row fails.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::collections::BTreeSet;

use common::{merge, seed};
use infera_core::{InferaDeployment, render, validate, yaml};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec, Probe};
use serde_json::{Value, json};

/// SGLang 0.5.15.post1's endpoints that run a one-token generation, up to
/// `SGLANG_HEALTH_CHECK_TIMEOUT` = 20 s plus 1 s (sglang/srt/entrypoints/http_server.py:186,
/// 578-640). It serves no `/ready`.
const SGLANG_GENERATING: [&str; 2] = ["/health", "/health_generate"];
/// The longest a generating SGLang health check takes, in seconds.
const SGLANG_GENERATION_WORST_CASE: i32 = 21;
/// The shortest startup budget a worker may get: a prefill/decode SGLang warm-up alone may take
/// 1800 s (http_server.py:2360-2530), after the weights are loaded.
const WORKER_STARTUP_AT_LEAST: i32 = 1800;
/// `preStop` sleep while routing stops, the time to exit after draining and the least grace
/// period (upstream deploy/operator/internal/controller/builders.go:38-45).
const STOP_ROUTING: i64 = 15;
const EXIT: i64 = 50;
const MIN_GRACE: i64 = 120;
/// Default `health.drainSeconds`.
const DRAIN: i64 = 120;

/// Which pods of a pool a template is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Single,
    Leader,
    Follower,
}

/// One rendered pod template.
#[derive(Debug)]
struct Template {
    component: String,
    role: String,
    rank: Rank,
    spec: PodSpec,
}

impl Template {
    fn engine(&self) -> &Container {
        self.spec
            .containers
            .iter()
            .find(|c| c.name == "engine")
            .expect("an engine container")
    }

    fn serves(&self) -> bool {
        self.rank != Rank::Follower
    }
}

/// The graphs every row is checked on: the seed's prefill/decode example, as is and with decode
/// in groups of two, and two mixed pools (`big` in groups of two, `small` on one node).
const TOPOLOGIES: [&str; 3] = ["pd", "pd-multinode", "aggregated"];

/// `topology` of [`TOPOLOGIES`] on `backend`, with `patch` applied last.
fn graph(backend: &str, topology: &str, patch: Value) -> Value {
    let mut spec = seed();
    merge(&mut spec, json!({"spec": {"backendFramework": backend}}));
    let group = json!({"numberOfNodes": 2, "args": ["--model-path", "m", "--tp-size", "2"]});
    match topology {
        "pd" => {}
        "pd-multinode" => merge(&mut spec, json!({"spec": {"services": {"decode": group}}})),
        _ => {
            let mut big = json!({"componentType": "worker", "resources": {"gpu": 1}});
            merge(&mut big, group);
            merge(
                &mut spec,
                json!({"spec": {"services": {
                    "prefill": null, "decode": null, "big": big,
                    "small": {"componentType": "worker", "resources": {"gpu": 1}},
                }}}),
            );
        }
    }
    merge(&mut spec, patch);
    spec
}

/// Every child of `spec`, as JSON.
fn children(spec: Value) -> Vec<Value> {
    let mut idep: InferaDeployment = yaml::from_value(spec).expect("deserializes");
    common::with_kv_roles(&mut idep);
    let valid = validate(&idep).expect("valid");
    render(&valid)
        .iter()
        .map(|c| serde_json::to_value(c).expect("json"))
        .collect()
}

/// Every pod template of the server and the workers of `spec`.
fn templates(spec: Value) -> Vec<Template> {
    let mut found = Vec::new();
    for child in children(spec) {
        let labels = &child["metadata"]["labels"];
        let component = labels["app.kubernetes.io/component"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !matches!(component.as_str(), "server" | "worker") {
            continue;
        }
        let role = labels["infera.amd.com/role"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let spec = &child["spec"];
        let ranked = match child["kind"].as_str() {
            Some("Deployment") => vec![(Rank::Single, &spec["template"])],
            Some("LeaderWorkerSet") => vec![
                (
                    Rank::Leader,
                    &spec["leaderWorkerTemplate"]["leaderTemplate"],
                ),
                (
                    Rank::Follower,
                    &spec["leaderWorkerTemplate"]["workerTemplate"],
                ),
            ],
            _ => continue,
        };
        for (rank, template) in ranked {
            let template: PodTemplateSpec =
                serde_json::from_value(template.clone()).expect("a pod template");
            found.push(Template {
                component: component.clone(),
                role: role.clone(),
                rank,
                spec: template.spec.expect("a pod spec"),
            });
        }
    }
    found
}

/// The worker templates of `backend` in both topologies, with every role and rank present.
fn workers(backend: &str) -> Vec<Template> {
    let all: Vec<Template> = TOPOLOGIES
        .into_iter()
        .flat_map(|topology| templates(graph(backend, topology, json!({}))))
        .filter(|t| t.component == "worker")
        .collect();
    let seen: BTreeSet<(&str, Rank)> = all.iter().map(|t| (t.role.as_str(), t.rank)).collect();
    for role in ["mixed", "prefill", "decode"] {
        assert!(
            seen.contains(&(role, Rank::Single)),
            "{role} single: {seen:?}"
        );
    }
    for role in ["mixed", "decode"] {
        for rank in [Rank::Leader, Rank::Follower] {
            assert!(seen.contains(&(role, rank)), "{role} {rank:?}: {seen:?}");
        }
    }
    all
}

fn path(probe: &Probe) -> &str {
    probe
        .http_get
        .as_ref()
        .and_then(|h| h.path.as_deref())
        .expect("an HTTP probe")
}

/// The longest a probe keeps failing before it gives up, in seconds.
fn window(probe: &Probe) -> i32 {
    probe.failure_threshold.expect("explicit") * probe.period_seconds.expect("explicit")
}

fn timeout(probe: &Probe) -> i32 {
    probe.timeout_seconds.expect("an explicit timeout")
}

fn has_flag(engine: &Container, flag: &str, value: Option<&str>) -> bool {
    let args = engine.args.as_deref().unwrap_or_default();
    args.iter()
        .position(|a| a == flag)
        .is_some_and(|i| value.is_none_or(|v| args.get(i + 1).map(String::as_str) == Some(v)))
}

/// SGLang single pods and leaders, every role: ready on `/health` (503 while starting) with a
/// timeout above its 21 s generation, alive on `/ping`, which never generates, and a startup
/// budget for a cold load and warm-up.
#[test]
fn sglang_serving_pods_are_ready_on_health_and_live_without_generating() {
    for t in workers("sglang").iter().filter(|t| t.serves()) {
        let engine = t.engine();
        let readiness = engine.readiness_probe.as_ref().expect("readiness");
        assert_eq!(path(readiness), "/health", "{t:?}");
        assert!(timeout(readiness) > SGLANG_GENERATION_WORST_CASE);
        let liveness = engine.liveness_probe.as_ref().expect("liveness");
        assert_eq!(path(liveness), "/ping", "{t:?}");
        assert!(!SGLANG_GENERATING.contains(&path(liveness)));
        assert!(window(liveness) >= 60, "generous: {liveness:?}");
        let startup = engine.startup_probe.as_ref().expect("startup");
        assert_eq!(path(startup), "/health");
        assert!(window(startup) >= WORKER_STARTUP_AT_LEAST, "{startup:?}");
        assert!(
            !has_flag(engine, "--shutdown-timeout", None),
            "SGLang has no such flag"
        );
    }
}

/// SGLang rank > 0 pods run a dummy health server only: no port, no probe.
#[test]
fn sglang_rank_above_zero_has_no_probe_and_no_port() {
    for t in workers("sglang").iter().filter(|t| !t.serves()) {
        let engine = t.engine();
        assert!(engine.ports.is_none(), "{t:?}");
        assert!(
            engine.readiness_probe.is_none()
                && engine.liveness_probe.is_none()
                && engine.startup_probe.is_none(),
            "{t:?}"
        );
        assert!(!has_flag(engine, "--headless", None));
    }
}

/// vLLM single pods and leaders, every role: `/health`, which never generates, for all three
/// probes, and a startup budget for a cold load (the port refuses connections until then).
#[test]
fn vllm_serving_pods_probe_health_which_never_generates() {
    for t in workers("vllm").iter().filter(|t| t.serves()) {
        let engine = t.engine();
        let readiness = engine.readiness_probe.as_ref().expect("readiness");
        let liveness = engine.liveness_probe.as_ref().expect("liveness");
        let startup = engine.startup_probe.as_ref().expect("startup");
        for probe in [readiness, liveness, startup] {
            assert_eq!(path(probe), "/health", "{t:?}");
            assert!(timeout(probe) >= 1);
        }
        assert!(window(liveness) >= 60, "generous: {liveness:?}");
        assert!(window(startup) >= WORKER_STARTUP_AT_LEAST, "{startup:?}");
        assert!(!has_flag(engine, "--headless", None), "{t:?}");
    }
}

/// vLLM rank > 0 pods run their engine `--headless` (a follower with an API server fails,
/// vllm/v1/executor/multiproc_executor.py:352-354): no port and no probe, and the wrapper's wait
/// for the `/health` a headless engine never serves does not end (infera/engine/vllm/worker.py:27-32).
#[test]
fn vllm_rank_above_zero_runs_headless_and_is_not_probed() {
    let followers: Vec<_> = workers("vllm")
        .into_iter()
        .filter(|t| !t.serves())
        .collect();
    assert!(!followers.is_empty());
    for t in followers {
        let engine = t.engine();
        assert!(has_flag(engine, "--headless", None), "{t:?}");
        let timeouts: Vec<_> = engine
            .env
            .iter()
            .flatten()
            .filter(|e| e.name == "INFERA_ENGINE_READY_TIMEOUT")
            .map(|e| e.value.as_deref())
            .collect();
        assert_eq!(timeouts, [Some("315360000")], "{t:?}");
        assert!(engine.ports.is_none());
        assert!(
            engine.readiness_probe.is_none()
                && engine.liveness_probe.is_none()
                && engine.startup_probe.is_none()
        );
    }
}

/// A user's `INFERA_ENGINE_READY_TIMEOUT` (slow storage) stays where an engine serves `/health`
/// and gives way on a headless rank, which would otherwise exit when it ran out.
#[test]
fn a_users_engine_ready_timeout_gives_way_on_headless_ranks_only() {
    let envs =
        json!({"spec": {"envs": [{"name": "INFERA_ENGINE_READY_TIMEOUT", "value": "7200"}]}});
    let ranks: Vec<(Rank, Vec<String>)> = templates(graph("vllm", "pd-multinode", envs))
        .iter()
        .filter(|t| t.component == "worker")
        .map(|t| {
            let values = t
                .engine()
                .env
                .iter()
                .flatten()
                .filter(|e| e.name == "INFERA_ENGINE_READY_TIMEOUT")
                .filter_map(|e| e.value.clone())
                .collect();
            (t.rank, values)
        })
        .collect();
    assert!(ranks.iter().any(|(rank, _)| *rank == Rank::Follower));
    for (rank, values) in ranks {
        let expected = if rank == Rank::Follower {
            "315360000"
        } else {
            "7200"
        };
        assert_eq!(values, [expected], "{rank:?}");
    }
}

/// The server runs the image's router: `/health` with an explicit timeout, a startup budget of
/// minutes, no liveness probe (its cost is the image's contract).
#[test]
fn the_server_keeps_health_with_a_timeout_and_no_liveness_probe() {
    for backend in ["sglang", "vllm"] {
        let server = templates(graph(backend, "pd", json!({})))
            .into_iter()
            .find(|t| t.component == "server")
            .expect("the server");
        let engine = server.engine();
        let readiness = engine.readiness_probe.as_ref().expect("readiness");
        assert_eq!(path(readiness), "/health");
        assert!(timeout(readiness) > 1);
        let startup = engine.startup_probe.as_ref().expect("startup");
        assert_eq!(path(startup), "/health");
        assert!((60..=30 * 60).contains(&window(startup)), "{startup:?}");
        assert!(engine.liveness_probe.is_none());
        assert!(!has_flag(engine, "--shutdown-timeout", None));
    }
}

/// On deletion every pod sleeps while routing stops, then drains; the grace period covers both
/// and the teardown. Every worker's wrapper drains for `--drain-timeout` (infera/engine/drain.py);
/// the server gets none. Rank > 0 pods outlive their leader's drain.
#[test]
fn every_pod_stops_routing_then_drains_within_its_grace_period() {
    for backend in ["sglang", "vllm"] {
        for topology in TOPOLOGIES {
            for t in templates(graph(backend, topology, json!({}))) {
                assert_eq!(
                    t.spec.termination_grace_period_seconds,
                    Some((STOP_ROUTING + DRAIN + EXIT).max(MIN_GRACE)),
                    "{t:?}"
                );
                let engine = t.engine();
                let sleep = engine
                    .lifecycle
                    .as_ref()
                    .and_then(|l| l.pre_stop.as_ref())
                    .and_then(|h| h.sleep.as_ref())
                    .map(|s| s.seconds);
                let expected = if t.serves() {
                    STOP_ROUTING
                } else {
                    STOP_ROUTING + DRAIN
                };
                assert_eq!(sleep, Some(expected), "{t:?}");
                let drains = has_flag(engine, "--drain-timeout", Some(&DRAIN.to_string()));
                assert_eq!(drains, t.component == "worker", "{t:?}");
                assert!(!has_flag(engine, "--shutdown-timeout", None), "{t:?}");
            }
        }
    }
}

/// `services.X.health` replaces the contract's defaults: a generating readiness endpoint gets its
/// worst case as timeout, `none` removes the liveness probe, the startup budget and the drain
/// follow the fields.
#[test]
fn health_overrides_replace_the_defaults() {
    let health = json!({"startupTimeout": "2h", "readinessPath": "/health", "livenessPath": "none", "drainSeconds": 300});
    for backend in ["sglang", "vllm"] {
        let patch = json!({"spec": {"services": {"decode": {"health": health}}}});
        let decode: Vec<Template> = templates(graph(backend, "pd-multinode", patch))
            .into_iter()
            .filter(|t| t.role == "decode")
            .collect();
        assert_eq!(decode.len(), 2);
        for t in &decode {
            assert_eq!(t.spec.termination_grace_period_seconds, Some(365));
            let engine = t.engine();
            assert!(has_flag(engine, "--drain-timeout", Some("300")));
            if !t.serves() {
                continue;
            }
            let readiness = engine.readiness_probe.as_ref().expect("readiness");
            assert_eq!(path(readiness), "/health");
            if backend == "sglang" {
                assert!(timeout(readiness) > SGLANG_GENERATION_WORST_CASE);
            }
            let startup = engine.startup_probe.as_ref().expect("startup");
            assert!(window(startup) >= 2 * 3600, "{startup:?}");
            assert!(engine.liveness_probe.is_none());
        }
    }

    let patch = json!({"spec": {"services": {"server": {"health": {"timeoutSeconds": 40, "livenessPath": "/alive"}}}}});
    let server = templates(graph("sglang", "pd", patch))
        .into_iter()
        .find(|t| t.component == "server")
        .expect("the server");
    let engine = server.engine();
    let liveness = engine.liveness_probe.as_ref().expect("liveness");
    assert_eq!(path(liveness), "/alive");
    let startup = engine.startup_probe.as_ref().expect("startup");
    for probe in [
        engine.readiness_probe.as_ref().expect("readiness"),
        liveness,
        startup,
    ] {
        assert_eq!(timeout(probe), 40);
        assert!(
            probe.period_seconds >= Some(40),
            "a call ends before the next: {probe:?}"
        );
    }
    assert!(window(startup) >= 5 * 60);
}

/// Every probe of every child — engines, frontend sidecars, the Endpoint Picker, NATS, of both
/// engines, both topologies, with the Inference Gateway and managed NATS — says how long a call
/// may take: Kubernetes' default of 1 s fails a slow endpoint forever.
#[test]
fn every_rendered_probe_has_an_explicit_timeout() {
    let mut probes = Vec::new();
    for backend in ["sglang", "vllm"] {
        for topology in TOPOLOGIES {
            let spec = graph(
                backend,
                topology,
                json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "Qwen/Qwen3-0.6B", "frontendPort": 8080}, "nats": {"deploy": true}}}),
            );
            for child in children(spec) {
                collect_probes(&child, "", &mut probes);
            }
        }
    }
    let kinds: BTreeSet<&str> = probes
        .iter()
        .map(|(_, p)| {
            if p.get("tcpSocket").is_some() {
                "epp"
            } else {
                path_kind(p)
            }
        })
        .collect();
    for expected in ["epp", "nats", "frontend", "engine"] {
        assert!(
            kinds.contains(expected),
            "no {expected} probe among {kinds:?}"
        );
    }
    for (where_, probe) in &probes {
        assert!(
            probe["timeoutSeconds"].as_i64().is_some_and(|t| t >= 1),
            "{where_} has no explicit timeoutSeconds: {probe}"
        );
    }
}

/// What an HTTP probe is of, by its port: NATS monitoring, the GAIE frontend (`frontendPort`
/// 8080 in these graphs) or an engine.
fn path_kind(probe: &Value) -> &'static str {
    match probe["httpGet"]["port"].as_i64() {
        Some(8222) => "nats",
        Some(8080) => "frontend",
        _ => "engine",
    }
}

/// Every `*Probe` object in `value`, with where it was found.
fn collect_probes(value: &Value, at: &str, found: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                let here = format!("{at}.{key}");
                if key.ends_with("Probe") {
                    found.push((here, value.clone()));
                } else {
                    collect_probes(value, &here, found);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_probes(item, &format!("{at}[{i}]"), found);
            }
        }
        _ => {}
    }
}
