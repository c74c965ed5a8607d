//! Upstream Infera's v1alpha1 manifests are ours too: every InferaDeployment of upstream's
//! `examples/k8s-deployments/` (read from the pinned snapshot at test time, never copied into
//! this tree) parses, validates and renders, or is refused with the documented reason
//! (`docs/upstream-fields.md`); and upstream's defaults and `extraPodSpec` additions hold exactly.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

use std::path::Path;

use infera_core::{
    render::{Child, render},
    types::{BackendFramework, InferaDeployment},
    validate,
    validate::{NATS_IMAGE, Nats},
    yaml,
};
use k8s_openapi::api::core::v1::{EnvVar, PodSpec, PodTemplateSpec};
use serde_json::{Value, json};

#[path = "common/snapshot.rs"]
mod snapshot;
use snapshot::{fill_placeholders, upstream};

/// The InferaDeployments of one upstream example file, through our parser (unknown fields are
/// errors there), the other kinds (a Gateway, PersistentVolumeClaims) left out. Its `<NAME>`
/// placeholders are filled in, as the examples ask their reader to.
fn deployments_of(path: &Path) -> Vec<InferaDeployment> {
    let text = std::fs::read_to_string(path).expect("the upstream example");
    let text = fill_placeholders(&text);
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML");
    documents
        .into_iter()
        .filter(|d| d["kind"] == "InferaDeployment")
        .flat_map(|d| {
            let json = serde_json::to_string(&d).expect("JSON");
            yaml::parse_deployments(&json).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect()
}

/// The pod templates of the server and worker workloads, by workload name.
fn pods(children: &[Child]) -> Vec<(String, PodTemplateSpec)> {
    let mut pods = Vec::new();
    for child in children {
        let value = serde_json::to_value(child).expect("json");
        let name = value["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let component = &value["metadata"]["labels"]["app.kubernetes.io/component"];
        if !(component == "server" || component == "worker") {
            continue;
        }
        match value["kind"].as_str() {
            Some("Deployment") => pods.push((
                name,
                serde_json::from_value(value["spec"]["template"].clone()).expect("a template"),
            )),
            Some("LeaderWorkerSet") => {
                for template in ["leaderTemplate", "workerTemplate"] {
                    let t = &value["spec"]["leaderWorkerTemplate"][template];
                    if !t.is_null() {
                        pods.push((
                            format!("{name}/{template}"),
                            serde_json::from_value(t.clone()).expect("a template"),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    pods
}

#[test]
fn every_upstream_example_is_accepted_or_refused_with_the_documented_reason() {
    let dir = upstream().join("examples/k8s-deployments");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the upstream snapshot)", dir.display()))
        .map(|entry| entry.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    // 12 InferaDeployment manifests and `pvc-models.yaml`, a model volume for them.
    assert_eq!(files.len(), 13, "upstream's example manifests");
    let mut outcomes = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let deployments = deployments_of(file);
        if deployments.is_empty() {
            outcomes.push((name.to_string(), "no InferaDeployment".to_string()));
        }
        for idep in deployments {
            let outcome = match validate(&idep) {
                Ok(valid) => {
                    let children = render(&valid);
                    // Every pod keeps what upstream's template says and runs as the discovery
                    // ServiceAccount; the main container's command is the example's own.
                    for (workload, pod) in pods(&children) {
                        let spec = pod.spec.expect("a pod spec");
                        let main = &spec.containers[validate::main_container(&spec)];
                        assert!(
                            main.command.as_ref().is_some_and(|c| !c.is_empty()),
                            "{name} {workload}: the example's command"
                        );
                        assert_eq!(
                            spec.service_account_name.as_deref(),
                            Some(format!("{}-discovery", valid.name).as_str()),
                            "{name} {workload}"
                        );
                    }
                    "accepted".to_string()
                }
                Err(errors) => errors.to_string(),
            };
            outcomes.push((name.to_string(), outcome));
        }
    }
    let accepted = |file: &str| (file.to_string(), "accepted".to_string());
    assert_eq!(
        outcomes,
        [
            accepted("glm5.2-sglang.yaml"),
            accepted("kgateway-gaie-aggregated.yaml"),
            accepted("kimi-k3-vllm.yaml"),
            accepted("mixed-kvd-vllm.yaml"),
            accepted("mixed-kvd.yaml"),
            accepted("multinode-tp-aggregated.yaml"),
            accepted("pd-1p1d-mooncake.yaml"),
            accepted("pd-disaggregated.yaml"),
            accepted("pd-kvd.yaml"),
            (
                "pvc-models.yaml".to_string(),
                "no InferaDeployment".to_string()
            ),
            accepted("single-node-aggregated.yaml"),
            accepted("single-node-qwen-sglang.yaml"),
            accepted("single-node-qwen-vllm.yaml"),
        ]
    );
}

/// A deployment from its JSON form.
fn idep(spec: Value) -> InferaDeployment {
    yaml::from_value(json!({
        "apiVersion": "infera.amd.com/v1alpha1",
        "kind": "InferaDeployment",
        "metadata": {"name": "demo", "namespace": "ns"},
        "spec": spec,
    }))
    .expect("a deployment")
}

#[test]
fn upstream_defaults_hold() {
    let valid = validate(&idep(json!({
        "image": "rocm/infera:sglang-v0.1.1",
        "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "resources": {"gpu": 1}},
        },
    })))
    .expect("valid");
    assert_eq!(valid.backend, BackendFramework::Sglang);
    assert_eq!(
        valid.nats,
        Nats::Managed {
            storage: k8s_openapi::apimachinery::pkg::api::resource::Quantity("4Gi".into()),
            image: NATS_IMAGE.into(),
            storage_class_name: None,
            credentials: "demo-nats-auth".into(),
        }
    );
    assert_eq!(
        (valid.server.map(|s| s.port), valid.workers[0].pod.port),
        (Some(8000), 30000)
    );
    let none = validate(&idep(json!({
        "image": "i", "backendFramework": "vllm", "nats": {"deploy": false},
        "services": {
            "server": {"componentType": "server", "port": 9000, "args": ["--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "resources": {"gpu": 1}, "port": 30000},
        },
    })))
    .expect("valid");
    assert_eq!(none.nats, Nats::None);
    assert_eq!(
        (none.server.map(|s| s.port), none.workers[0].pod.port),
        (Some(9000), 30000)
    );
    let disabled = validate(&idep(json!({
        "image": "i", "gaie": {"enabled": false, "gatewayName": "gw", "tokenizerPath": "m"},
        "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "resources": {"gpu": 1}},
        },
    })))
    .expect("valid");
    assert_eq!(disabled.gaie, None);
    // `enabled` defaults to false, as upstream's (types.go:152-154): the block alone is off.
    let absent = validate(&idep(json!({
        "image": "i", "gaie": {"gatewayName": "gw", "tokenizerPath": "m"},
        "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "resources": {"gpu": 1}},
        },
    })))
    .expect("valid");
    assert_eq!(absent.gaie, None);
}

/// Behind a gateway without a server (upstream's `kgateway-gaie-aggregated.yaml`), an
/// `extraPodSpec` worker's frontend sidecar waits out the drain its main container asks for, and
/// the grace period covers it (the API server refuses a preStop sleep as long as the grace).
#[test]
fn a_serverless_gateway_workers_frontend_drains_within_the_grace_period() {
    for (command, sleep, grace) in [
        ("exec python3 -m infera.engine.sglang", 15 + 30, 120),
        (
            "exec python3 -m infera.engine.sglang --drain-timeout 300",
            15 + 300,
            365,
        ),
    ] {
        let valid = validate(&idep(json!({
            "image": "eng:1",
            "gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "m"},
            "services": {"worker": {"componentType": "worker", "extraPodSpec": {"containers": [
                {"name": "main", "image": "eng:1", "command": ["sh", "-c", command]},
            ]}}},
        })))
        .expect("valid without a server");
        assert_eq!(valid.server, None);
        assert_eq!(infera_core::render::endpoint(&valid), None);
        let children = render(&valid);
        let pods = pods(&children);
        let [(name, worker)] = pods.as_slice() else {
            panic!("one worker pod and no server: {pods:?}");
        };
        assert_eq!(name, "demo-worker");
        let spec = worker.spec.as_ref().expect("a spec");
        let frontend = spec
            .containers
            .iter()
            .find(|c| c.name == "infera-frontend")
            .expect("the frontend sidecar");
        let slept = frontend
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_stop.as_ref())
            .and_then(|h| h.sleep.as_ref())
            .map(|s| s.seconds);
        assert_eq!(
            (slept, spec.termination_grace_period_seconds),
            (Some(sleep), Some(grace)),
            "{command}"
        );
    }
}

fn env_names(env: &[EnvVar]) -> Vec<&str> {
    env.iter().map(|e| e.name.as_str()).collect()
}

#[test]
fn extra_pod_spec_gets_upstreams_additions_on_its_main_container_only() {
    let valid = validate(&idep(json!({
        "envs": [{"name": "HF_HOME", "value": "/cache"}],
        "services": {
            "server": {
                "componentType": "server",
                "podLabels": {"team": "a"},
                "extraPodSpec": {"containers": [{"name": "main", "image": "srv:1",
                    "command": ["python3", "-m", "infera.server"],
                    "env": [{"name": "POD_NAME", "value": "mine"}]}]},
            },
            "worker": {
                "componentType": "worker",
                "port": 30001,
                "extraPodSpec": {
                    "serviceAccountName": "own",
                    "terminationGracePeriodSeconds": 30,
                    "containers": [
                        {"name": "sidecar", "image": "side:1"},
                        {"name": "infera", "image": "eng:1",
                         "command": ["sh", "-c", "exec python3 -m infera.engine.sglang --drain-timeout 300"],
                         "resources": {"limits": {"amd.com/gpu": "2"}}},
                    ],
                },
            },
        },
    })))
    .expect("valid");
    assert_eq!(valid.workers[0].gpu, 2);
    let children = render(&valid);
    let pods = pods(&children);
    let (_, server) = pods
        .iter()
        .find(|(n, _)| n == "demo-server")
        .expect("the server");
    let labels = server
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref())
        .expect("labels");
    assert_eq!(labels.get("team").map(String::as_str), Some("a"));
    let spec: &PodSpec = server.spec.as_ref().expect("a spec");
    let main = &spec.containers[0];
    // The template's POD_NAME stays; the rest follow in upstream's order (`builders.go:312-337`).
    assert_eq!(
        env_names(main.env.as_deref().unwrap_or_default()),
        [
            "POD_NAME",
            "HF_HOME",
            "NATS_SERVER",
            "POD_NAMESPACE",
            "POD_IP",
            "INFERA_K8S_LABEL_SELECTOR"
        ]
    );
    assert_eq!(
        main.env.as_ref().expect("env")[0].value.as_deref(),
        Some("mine")
    );
    assert_eq!(
        main.ports
            .as_ref()
            .map(|p| p.iter().map(|p| p.container_port).collect::<Vec<_>>()),
        Some(vec![8000])
    );
    assert_eq!(
        (main.readiness_probe.is_none(), main.lifecycle.is_none()),
        (true, true)
    );
    assert_eq!(spec.termination_grace_period_seconds, None);
    assert_eq!(spec.service_account_name.as_deref(), Some("demo-discovery"));

    let (_, worker) = pods
        .iter()
        .find(|(n, _)| n == "demo-worker")
        .expect("the worker");
    let spec = worker.spec.as_ref().expect("a spec");
    let (sidecar, main) = (&spec.containers[0], &spec.containers[1]);
    assert_eq!(
        (sidecar.env.is_none(), sidecar.ports.is_none()),
        (true, true)
    );
    assert_eq!(
        env_names(main.env.as_deref().unwrap_or_default()),
        [
            "HF_HOME",
            "NATS_SERVER",
            "POD_NAME",
            "POD_NAMESPACE",
            "POD_IP",
            "INFERA_REVISION"
        ]
    );
    let readiness = main.readiness_probe.as_ref().expect("a readiness probe");
    let get = readiness.http_get.as_ref().expect("an HTTP probe");
    assert_eq!(
        (get.path.as_deref(), &get.port, readiness.timeout_seconds),
        (
            Some("/health"),
            &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(30001),
            Some(25)
        )
    );
    let pre_stop = main.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref());
    assert_eq!(
        pre_stop.and_then(|p| p.sleep.as_ref()).map(|s| s.seconds),
        Some(15)
    );
    // 15 s preStop + the container's 300 s drain + 50 s teardown, raised from its 30.
    assert_eq!(spec.termination_grace_period_seconds, Some(365));
    assert_eq!(spec.service_account_name.as_deref(), Some("own"));
}

#[test]
fn skip_readiness_probe_leaves_the_engine_unprobed() {
    let valid = validate(&idep(json!({
        "image": "i",
        "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "resources": {"gpu": 1}, "skipReadinessProbe": true},
        },
    })))
    .expect("valid");
    let pods = pods(&render(&valid));
    let (_, worker) = pods
        .iter()
        .find(|(n, _)| n == "demo-worker")
        .expect("the worker");
    let engine = &worker.spec.as_ref().expect("a spec").containers[0];
    assert_eq!(
        (
            engine.startup_probe.is_none(),
            engine.readiness_probe.is_none(),
            engine.liveness_probe.is_none()
        ),
        (true, true, true)
    );
}
