//! The plugin's and the operator's rules (infera-core) and the CRD's admission (schema and CEL)
//! agree, tested differentially: seeded random combinations of mutations of the seed's example —
//! valid ones and subtly invalid ones — go to both, and every spec admission refuses, infera-core
//! refuses at the same field path; every spec infera-core accepts, admission accepts.
//! infera-core may refuse more (the parallelism rule cannot be written in CEL).
//!
//! `INFERA_DIFFERENTIAL_CASES` (default 300) and `INFERA_DIFFERENTIAL_SEED` (default 1) choose the
//! run; a failure prints the seed, the case number and the spec.

use crate::common::{merge, seed};
use infera_e2e::{TestNamespace, admin, operator::install, rng::Rng};
use serde_json::{Value, json};

/// Mutations of the seed, each a JSON merge patch; some keep it valid, most break one rule.
fn mutations() -> Vec<(&'static str, Value)> {
    let decode = |service: Value| json!({"spec": {"services": {"decode": service}}});
    let server = |service: Value| json!({"spec": {"services": {"server": service}}});
    let overlay = |overlay: Value| decode(json!({ "podTemplate": overlay }));
    let digest = format!("rocm/infera@sha256:{}", "a".repeat(64));
    let autoscale =
        |autoscaling: Value| decode(json!({"replicas": null, "autoscaling": autoscaling}));
    let metric = json!({"type": "Pods", "pods": {
        "metric": {"name": "sglang_num_queue_reqs"},
        "target": {"type": "AverageValue", "averageValue": "4"},
    }});
    let trigger = json!({"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}});
    let planner = |planner: Value| {
        let mut planner = planner;
        merge(
            &mut planner,
            json!({"slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40}}),
        );
        json!({"spec": {"planner": planner}})
    };
    vec![
        ("injected flag", decode(json!({"args": ["--port=1"]}))),
        (
            "monitoring",
            json!({"spec": {"monitoring": {"interval": "30s", "labels": {"release": "kps"}}}}),
        ),
        (
            "scrape interval too long",
            json!({"spec": {"monitoring": {"interval": "61m"}}}),
        ),
        (
            "scrape interval not a duration",
            json!({"spec": {"monitoring": {"interval": "1m30s"}}}),
        ),
        (
            "monitoring label of ours",
            json!({"spec": {"monitoring": {"labels": {"app.kubernetes.io/name": "x"}}}}),
        ),
        ("negative replicas", decode(json!({"replicas": -1}))),
        ("too many replicas", decode(json!({"replicas": 1001}))),
        (
            "worker without GPU",
            decode(json!({"resources": {"gpu": 0}})),
        ),
        ("too many GPUs", decode(json!({"resources": {"gpu": 65}}))),
        (
            "bad gpuType",
            decode(json!({"resources": {"gpuType": "/gpu"}})),
        ),
        ("too many nodes", decode(json!({"numberOfNodes": 65}))),
        (
            "GPU product",
            decode(json!({"resources": {"gpuProduct": "MI300X"}})),
        ),
        (
            "bad GPU product",
            decode(json!({"resources": {"gpuProduct": "MI300X_"}})),
        ),
        (
            "deployment RDMA with device",
            json!({"spec": {"network": {"rdma": {"resourceName": "rdma/hca", "networks": ["rdma-net"], "device": "rdma0"}}}}),
        ),
        (
            "deployment RDMA without device",
            json!({"spec": {"network": {"rdma": {"resourceName": "rdma/hca"}}}}),
        ),
        (
            "pool RDMA with device",
            decode(
                json!({"network": {"rdma": {"resourceName": "amd.com/vnic", "perPod": 2, "device": "rdma1"}}}),
            ),
        ),
        ("pool without network", decode(json!({"network": {}}))),
        (
            "server with RDMA",
            server(json!({"network": {"rdma": {"resourceName": "rdma/hca"}}})),
        ),
        (
            "bad RDMA network",
            json!({"spec": {"network": {"rdma": {"resourceName": "rdma/hca", "networks": ["a/b/c"]}}}}),
        ),
        ("vllm", json!({"spec": {"backendFramework": "vllm"}})),
        (
            "args without IB device",
            decode(json!({"args": ["--model-path", "m", "--tp-size", "1"]})),
        ),
        (
            "pool model",
            decode(json!({"model": {"source": "pvc://weights/qwen"}, "args": ["--tp-size", "1"]})),
        ),
        (
            "pool model beside the model flag",
            decode(json!({"model": {"source": "hostPath:///data/qwen"}})),
        ),
        (
            "pool hf model without a cache",
            decode(
                json!({"model": {"source": "hf://Qwen/Qwen3-0.6B"}, "args": ["--tp-size", "1"]}),
            ),
        ),
        (
            "server with model",
            server(json!({"model": {"source": "pvc://weights"}})),
        ),
        (
            "server with GPU product",
            server(json!({"resources": {"gpuProduct": "MI300X"}})),
        ),
        ("server with GPU", server(json!({"resources": {"gpu": 1}}))),
        ("server with role", server(json!({"role": "decode"}))),
        ("server on two nodes", server(json!({"numberOfNodes": 2}))),
        (
            "server without a tokenizer",
            server(json!({"args": ["--router-policy", "kv-aware"]})),
        ),
        ("no server", server(Value::Null)),
        ("prefill without decode", decode(Value::Null)),
        (
            "second server",
            json!({"spec": {"services": {"router": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}}}}),
        ),
        (
            "reserved service name",
            json!({"spec": {"services": {"nats": {"componentType": "worker", "resources": {"gpu": 1}}}}}),
        ),
        (
            "service name not a DNS label",
            json!({"spec": {"services": {"Decode_2": {"componentType": "worker", "resources": {"gpu": 1}}}}}),
        ),
        ("empty image", json!({"spec": {"image": ""}})),
        ("long image", json!({"spec": {"image": "r".repeat(513)}})),
        ("pinned image", json!({"spec": {"image": digest}})),
        (
            "require digest",
            json!({"spec": {"imagePolicy": {"requireDigest": true}}}),
        ),
        (
            "name not a DNS label",
            json!({"metadata": {"name": "Demo"}}),
        ),
        ("long name", json!({"metadata": {"name": "d".repeat(43)}})),
        (
            "etcd without endpoint",
            json!({"spec": {"discoveryBackend": "etcd"}}),
        ),
        (
            "etcd",
            json!({"spec": {"discoveryBackend": "etcd", "etcdEndpoint": "http://etcd:2379"}}),
        ),
        (
            "nats without url",
            json!({"spec": {"nats": {"deploy": false}}}),
        ),
        (
            "external nats",
            json!({"spec": {"nats": {"deploy": false, "url": "nats://nats:4222"}}}),
        ),
        (
            "autoscaling",
            autoscale(json!({"minReplicas": 2, "maxReplicas": 4, "metrics": [metric.clone()]})),
        ),
        (
            "autoscaling beside replicas",
            decode(json!({"autoscaling": {"maxReplicas": 4, "metrics": [metric.clone()]}})),
        ),
        (
            "autoscaling min above max",
            autoscale(json!({"minReplicas": 5, "maxReplicas": 4, "metrics": [metric.clone()]})),
        ),
        (
            "autoscaling with keda",
            autoscale(json!({"provider": "keda", "maxReplicas": 4, "metrics": [metric.clone()]})),
        ),
        (
            "autoscaling with keda triggers",
            autoscale(json!({"provider": "keda", "maxReplicas": 4, "triggers": [trigger.clone()]})),
        ),
        (
            "autoscaling with keda and no triggers",
            autoscale(json!({"provider": "keda", "maxReplicas": 4})),
        ),
        (
            "autoscaling triggers without keda",
            autoscale(
                json!({"maxReplicas": 4, "metrics": [metric.clone()], "triggers": [trigger.clone()]}),
            ),
        ),
        (
            "autoscaling keda trigger without a type",
            autoscale(
                json!({"provider": "keda", "maxReplicas": 4, "triggers": [{"type": "", "metadata": {}}]}),
            ),
        ),
        (
            "autoscaling without metrics",
            autoscale(json!({"maxReplicas": 4, "metrics": []})),
        ),
        (
            "autoscaling with keda and empty metrics",
            autoscale(
                json!({"provider": "keda", "maxReplicas": 4, "metrics": [], "triggers": [trigger.clone()]}),
            ),
        ),
        (
            "autoscaling with empty triggers",
            autoscale(json!({"maxReplicas": 4, "metrics": [metric.clone()], "triggers": []})),
        ),
        (
            "autoscaling to zero",
            autoscale(json!({"minReplicas": 0, "maxReplicas": 4, "metrics": [metric.clone()]})),
        ),
        (
            "lockstep",
            json!({"spec": {"rollout": {"strategy": "Lockstep", "maxSurge": 2, "maxUnavailable": 1}}}),
        ),
        (
            "lockstep without prefill",
            json!({"spec": {"rollout": {"strategy": "Lockstep"}, "services": {"prefill": null, "decode": {"role": null}}}}),
        ),
        (
            "independent",
            json!({"spec": {"rollout": {"strategy": "Independent", "progressDeadlineSeconds": 60}}}),
        ),
        (
            "rollout that cannot progress",
            json!({"spec": {"rollout": {"maxSurge": 0}}}),
        ),
        (
            "pool rollout that cannot progress",
            decode(json!({"rollout": {"maxSurge": 0, "maxUnavailable": 0}})),
        ),
        (
            "pool rollout over the graph's",
            json!({"spec": {"rollout": {"maxSurge": 0, "maxUnavailable": 1}, "services": {"decode": {"rollout": {"maxSurge": 1}}}}}),
        ),
        (
            "negative max surge",
            decode(json!({"rollout": {"maxSurge": -1}})),
        ),
        (
            "deadline 0",
            json!({"spec": {"rollout": {"progressDeadlineSeconds": 0}}}),
        ),
        (
            "no revision history",
            json!({"spec": {"revisionHistoryLimit": 0}}),
        ),
        (
            "negative revision history",
            json!({"spec": {"revisionHistoryLimit": -1}}),
        ),
        (
            "revision history above the limit",
            json!({"spec": {"revisionHistoryLimit": 101}}),
        ),
        (
            "server rollout",
            server(json!({"rollout": {"maxSurge": 1}})),
        ),
        (
            "startup 0s",
            decode(json!({"health": {"startupTimeout": "0s"}})),
        ),
        (
            "startup 25h",
            decode(json!({"health": {"startupTimeout": "25h"}})),
        ),
        (
            "startup 90s",
            decode(json!({"health": {"startupTimeout": "90s"}})),
        ),
        (
            "startup not a duration",
            decode(json!({"health": {"startupTimeout": "1h30m"}})),
        ),
        (
            "liveness none",
            decode(json!({"health": {"livenessPath": "none"}})),
        ),
        (
            "liveness off",
            decode(json!({"health": {"livenessPath": "off"}})),
        ),
        (
            "drain too long",
            decode(json!({"health": {"drainSeconds": 3601}})),
        ),
        (
            "parallelism mismatch",
            decode(json!({"args": ["--model-path", "m", "--tp-size", "2"]})),
        ),
        (
            "command",
            decode(json!({"command": ["python3", "-m", "sglang.launch_server"]})),
        ),
        (
            "model volume",
            overlay(json!({"spec": {
                "containers": [{"name": "engine", "volumeMounts": [{"name": "m", "mountPath": "/models"}]}],
                "volumes": [{"name": "m", "persistentVolumeClaim": {"claimName": "m"}}],
            }})),
        ),
        (
            "volume named model",
            overlay(json!({"spec": {"volumes": [{"name": "model", "emptyDir": {}}]}})),
        ),
        (
            "engine mount at /models",
            json!({"spec": {"podTemplate": {"spec": {"containers": [{"name": "engine", "volumeMounts": [{"name": "m", "mountPath": "/models"}]}]}}}}),
        ),
        (
            "deployment model",
            json!({"spec": {"model": {"source": "pvc://weights"}, "services": {"prefill": {"args": ["--tp-size", "1"]}, "decode": {"args": ["--tp-size", "1"]}}}}),
        ),
        (
            "owned label",
            json!({"spec": {"podTemplate": {"metadata": {"labels": {"app.kubernetes.io/name": "x"}}}}}),
        ),
        (
            "engine image in podTemplate",
            overlay(json!({"spec": {"containers": [{"name": "engine", "image": "x"}]}})),
        ),
        (
            "GPU in podTemplate",
            overlay(
                json!({"spec": {"containers": [{"name": "engine", "resources": {"limits": {"amd.com/gpu": "1"}}}]}}),
            ),
        ),
        (
            "GPU in the deployment's podTemplate",
            json!({"spec": {"podTemplate": {"spec": {"containers": [{"name": "s", "image": "x", "resources": {"requests": {"amd.com/gpu": "1"}}}]}}}}),
        ),
        (
            "ServiceAccount in podTemplate",
            overlay(json!({"spec": {"serviceAccountName": "mine"}})),
        ),
        (
            "container without image",
            overlay(json!({"spec": {"containers": [{"name": "side"}]}})),
        ),
        (
            "shm volume",
            json!({"spec": {"podTemplate": {"spec": {"volumes": [{"name": "dshm", "emptyDir": {}}]}}}}),
        ),
        (
            "planner",
            planner(json!({"mode": "Act", "pools": {"decode": {"min": 1, "max": 4}}})),
        ),
        (
            "planner on two pools",
            planner(
                json!({"pools": {"prefill": {"min": 1, "max": 2}, "decode": {"min": 2, "max": 8}}, "intervalSeconds": 60, "cooldownSeconds": 0, "maxStep": 2}),
            ),
        ),
        (
            "planner on the server",
            planner(json!({"pools": {"server": {"min": 1, "max": 2}}})),
        ),
        (
            "planner on no such pool",
            planner(json!({"pools": {"nope": {"min": 1, "max": 2}}})),
        ),
        ("planner without pools", planner(json!({"pools": {}}))),
        (
            "planner min above max",
            planner(json!({"pools": {"decode": {"min": 3, "max": 2}}})),
        ),
        (
            "planner interval too short",
            planner(json!({"pools": {"decode": {"min": 1, "max": 2}}, "intervalSeconds": 1})),
        ),
        (
            "planner SLO 0",
            json!({"spec": {"planner": {"slo": {"ttftP95Milliseconds": 0}}}}),
        ),
        (
            "gateway",
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "inference-gateway", "tokenizerPath": "Qwen/Qwen3-0.6B"}}}),
        ),
    ]
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `spec.services[decode].args` → `spec.services.decode.args`, as infera-core writes paths.
fn normalized(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_key = false;
    for c in path.chars() {
        match c {
            '[' if !out.is_empty() => {
                in_key = true;
                out.push('.');
            }
            ']' if in_key => in_key = false,
            c => out.push(c),
        }
    }
    out
}

/// Whether infera-core's `path` is admission's `refused` or a field inside it (list indexes
/// aside: `args[0]` is inside `args`).
fn covers(path: &str, refused: &str) -> bool {
    let path = normalized(path);
    path == refused
        || path.starts_with(&format!("{refused}."))
        || path.starts_with(&format!("{refused}["))
        || normalized(&path.replace(|c: char| c.is_ascii_digit(), "")) == refused
}

#[tokio::test(flavor = "multi_thread")]
async fn infera_core_refuses_everything_admission_refuses_at_the_same_path() -> anyhow::Result<()> {
    let admin = admin().await?;
    install(&admin).await?;
    let ns = TestNamespace::new(&admin, "layers").await?;
    let (api, dry_run) = infera_e2e::admission_dry_run(&admin, ns.name());
    let cases = env_number("INFERA_DIFFERENTIAL_CASES", 300);
    let seed_number = env_number("INFERA_DIFFERENTIAL_SEED", 1);
    let mut rng = Rng(seed_number);
    let mutations = mutations();
    let (mut refused_by_both, mut accepted_by_both, mut only_infera_core) = (0, 0, 0);
    for case in 0..cases {
        let mut spec = seed();
        let mut applied = Vec::new();
        for _ in 0..rng.below(4) {
            let (what, patch) = &mutations[rng.below(mutations.len())];
            merge(&mut spec, patch.clone());
            applied.push(*what);
        }
        let context = || {
            format!(
                "seed {seed_number}, case {case} ({}):\n{}",
                applied.join(", "),
                serde_json::to_string_pretty(&spec).unwrap_or_default()
            )
        };
        // As the plugin reads a file: parse (a missing required field is refused there, at the
        // object that lacks it), then validate.
        let mut parse_error = false;
        let core: Vec<String> = match infera_core::yaml::parse_deployments(&spec.to_string()) {
            Ok(deployments) => match deployments.first().map(infera_core::validate) {
                Some(Ok(_)) => Vec::new(),
                Some(Err(errors)) => errors.0.into_iter().map(|e| e.path).collect(),
                None => anyhow::bail!("no deployment parsed: {}", context()),
            },
            Err(infera_core::yaml::YamlError::Shape { message, .. }) => {
                parse_error = true;
                vec![message.split(':').next().unwrap_or_default().to_string()]
            }
            Err(other) => anyhow::bail!("{other}: {}", context()),
        };
        let admission: Vec<String> = match api
            .create(&dry_run, &serde_json::from_value(spec.clone())?)
            .await
        {
            Ok(_) => Vec::new(),
            Err(infera_e2e::kube::Error::Api(status)) if status.code == 422 => {
                let paths = refused_paths(&status);
                anyhow::ensure!(!paths.is_empty(), "a 422 without causes: {status:?}");
                paths
            }
            Err(other) => return Err(anyhow::anyhow!("{other}: {}", context())),
        };
        match (core.is_empty(), admission.is_empty()) {
            (true, true) => accepted_by_both += 1,
            (false, true) => only_infera_core += 1,
            (true, false) => anyhow::bail!(
                "admission refused {admission:?}, infera-core accepted: {}",
                context()
            ),
            (false, false) => {
                refused_by_both += 1;
                let related = |refused: &String| {
                    core.iter()
                        .any(|path| covers(path, refused) || covers(refused, path))
                };
                // The parser stops at the first error; validation reports every one.
                let agree = if parse_error {
                    admission.iter().any(related)
                } else {
                    admission.iter().all(related)
                };
                anyhow::ensure!(
                    agree,
                    "admission refused {admission:?}, infera-core {core:?}: {}",
                    context()
                );
            }
        }
    }
    eprintln!(
        "{cases} cases (seed {seed_number}): {refused_by_both} refused by both, {accepted_by_both} accepted by both, {only_infera_core} refused by infera-core only"
    );
    anyhow::ensure!(
        refused_by_both > 0 && accepted_by_both > 0,
        "the generator must produce both verdicts"
    );
    ns.cleanup().await
}

/// The normalized field paths of a 422's causes; a cause without a field (a rule on the root)
/// names its field at the start of its message, as our CEL messages do.
fn refused_paths(status: &infera_e2e::kube::core::Status) -> Vec<String> {
    let causes = status.details.iter().flat_map(|d| &d.causes);
    causes
        // Not a refusal of its own: the CEL rules skipped because the schema already refused.
        .filter(|cause| {
            !cause
                .message
                .contains("some validation rules were not checked")
        })
        .map(|cause| {
            let field = if cause.field.is_empty() || cause.field == "<nil>" {
                let message = cause.message.trim_start_matches("Invalid value: ");
                let message = message.trim_start_matches("\"object\": ");
                message.split(':').next().unwrap_or_default()
            } else {
                &cause.field
            };
            normalized(field)
        })
        .collect()
}

#[test]
fn paths_are_compared_as_infera_core_writes_them() {
    assert_eq!(
        normalized("spec.services[decode].podTemplate.spec"),
        "spec.services.decode.podTemplate.spec"
    );
    assert!(covers(
        "spec.services.decode.args[0]",
        "spec.services.decode.args"
    ));
    assert!(covers(
        "spec.services.decode.args",
        "spec.services.decode.args"
    ));
    assert!(!covers("spec.services.decoder", "spec.services.decode"));
}
