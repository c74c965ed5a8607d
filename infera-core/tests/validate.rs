//! Every rule rejects what it should, naming the field path; the seed's example passes.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use std::collections::BTreeMap;

use common::{merge, seed};
use infera_core::{
    InferaDeployment, flags,
    naming::{self, MAX_DNS_LABEL, MAX_DNS_SUBDOMAIN},
    validate,
    validate::DIGEST_PATTERN,
    validate::limits::{
        DURATION_PATTERN, GPU_PRODUCT_PATTERN, HOSTNAME_PATTERN, HTTP_URL_PATTERN,
        IB_DEVICE_PATTERN, LIVENESS_PATH_PATTERN, MAX_ARG_LENGTH, MAX_ARGS, MAX_DRAIN_SECONDS,
        MAX_DURATION_LENGTH, MAX_EGRESS_RULES, MAX_GPU_PRODUCT_LENGTH, MAX_GPUS, MAX_HOSTNAMES,
        MAX_IB_DEVICE_LENGTH, MAX_METRICS, MAX_METRICS_FROM, MAX_NETWORK_NAME_LENGTH, MAX_NODES,
        MAX_OVERLAY_CONTAINERS, MAX_OVERLAY_ENTRIES, MAX_PLANNER_COOLDOWN_SECONDS,
        MAX_PLANNER_INTERVAL_SECONDS, MAX_PROBE_PATH_LENGTH, MAX_PROBE_TIMEOUT,
        MAX_PROGRESS_DEADLINE_SECONDS, MAX_RDMA_NETWORKS, MAX_REFERENCE_LENGTH, MAX_REPLICAS,
        MAX_REVISION_HISTORY_LIMIT, MAX_SERVICES, MAX_SLO_MILLISECONDS, MAX_STARTUP_SECONDS,
        MAX_TRIGGER_METADATA, MAX_TRIGGER_TYPE_LENGTH, MAX_TRIGGERS, MIN_PLANNER_INTERVAL_SECONDS,
        MIN_SERVICES, MODEL_SOURCE_PATTERN, MOUNT_PATH_PATTERN, NETWORK_NAME_PATTERN,
        PROBE_PATH_PATTERN, RESOURCE_NAME_PATTERN,
    },
    yaml,
};
use serde_json::{Value, json};

/// Applies a JSON merge patch (RFC 7386) to the seed and validates the result.
fn errors_after(patch: Value) -> Vec<String> {
    let mut spec = seed();
    merge(&mut spec, patch);
    let idep: InferaDeployment = yaml::from_value(spec).expect("still deserializes");
    match validate(&idep) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.0.iter().map(ToString::to_string).collect(),
    }
}

/// A Pods metric of SGLang's queue length, as `autoscaling.metrics` takes it.
fn metric() -> Value {
    json!({"type": "Pods", "pods": {
        "metric": {"name": "sglang_num_queue_reqs"},
        "target": {"type": "AverageValue", "averageValue": "4"},
    }})
}

fn worker(extra: Value) -> Value {
    let mut w = json!({"componentType": "worker", "resources": {"gpu": 1}});
    merge(&mut w, extra);
    w
}

#[test]
fn the_seed_example_is_valid() {
    assert_eq!(errors_after(json!({})), Vec::<String>::new());
}

/// (what is wrong, patch, the path every expected error names, a word of the fix)
#[test]
fn every_rule_rejects_with_the_field_path() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "no server",
            json!({"spec": {"services": {"server": null}}}),
            vec!["spec.services: exactly one service must have componentType: server"],
        ),
        (
            "two servers",
            json!({"spec": {"services": {"router2": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}}}}),
            vec![
                "spec.services: exactly one service must have componentType: server, found router2, server",
            ],
        ),
        (
            "no worker",
            json!({"spec": {"services": {"prefill": null, "decode": null}}}),
            vec!["spec.services: at least one service must have componentType: worker"],
        ),
        (
            "prefill without decode",
            json!({"spec": {"services": {"decode": null}}}),
            vec!["spec.services: prefill pools need decode pools"],
        ),
        (
            "decode without prefill",
            json!({"spec": {"services": {"prefill": null}}}),
            vec!["spec.services: decode pools need prefill pools"],
        ),
        (
            "server with a GPU",
            json!({"spec": {"services": {"server": {"resources": {"gpu": 1}}}}}),
            vec!["spec.services.server.resources.gpu: the server runs no model"],
        ),
        (
            "server with a role",
            json!({"spec": {"services": {"server": {"role": "mixed"}}}}),
            vec!["spec.services.server.role: only workers have a role"],
        ),
        (
            "server on two nodes",
            json!({"spec": {"services": {"server": {"numberOfNodes": 2}}}}),
            vec!["spec.services.server.numberOfNodes: the server runs on one node"],
        ),
        (
            "etcd without endpoint",
            json!({"spec": {"discoveryBackend": "etcd"}}),
            vec!["spec.etcdEndpoint: is required when discoveryBackend is etcd"],
        ),
        (
            "endpoint without etcd",
            json!({"spec": {"etcdEndpoint": "http://etcd:2379"}}),
            vec!["spec.etcdEndpoint: is only used when discoveryBackend is etcd"],
        ),
        (
            "service name not a DNS label",
            json!({"spec": {"services": {"Decode_2": worker(json!({"role": "decode"}))}}}),
            vec!["spec.services.Decode_2: service names must be DNS labels"],
        ),
        (
            "service name starting with a digit",
            json!({"spec": {"services": {"2decode": worker(json!({"role": "decode"}))}}}),
            vec!["spec.services.2decode: service names must be DNS labels"],
        ),
        (
            "reserved service name",
            json!({"spec": {"services": {"nats": worker(json!({}))}}}),
            vec![
                "spec.services.nats: the names nats, nats-headless, epp, discovery, pool, route, model are reserved",
            ],
        ),
        (
            "names too long together",
            json!({"metadata": {"name": "a-deployment-name-of-31-chars-x"}, "spec": {"services": {"decode-pool-number-one": worker(json!({"role": "decode"}))}}}),
            vec![
                "spec.services.decode-pool-number-one: the deployment name plus a service name must be at most 46 characters",
            ],
        ),
        (
            "deployment name too long",
            json!({"metadata": {"name": "x".repeat(43)}}),
            vec!["metadata.name: must be a DNS label of at most 42 characters"],
        ),
        (
            "deployment name with capitals",
            json!({"metadata": {"name": "Demo"}}),
            vec!["metadata.name: must be a DNS label"],
        ),
        (
            "injected flag in args",
            json!({"spec": {"services": {"decode": {"args": ["--port", "9000"]}}}}),
            vec!["spec.services.decode.args[0]: --port is injected by the operator"],
        ),
        (
            "injected flag with =",
            json!({"spec": {"services": {"server": {"args": ["--router-mode=direct", "--router-tokenizer-path", "m"]}}}}),
            vec!["spec.services.server.args[0]: --router-mode is injected by the operator"],
        ),
        (
            "server without a tokenizer",
            json!({"spec": {"services": {"server": {"args": ["--router-policy", "kv-aware"]}}}}),
            vec!["spec.services.server.args: the router needs the workers' tokenizer"],
        ),
        (
            "disaggregation mode set by hand",
            json!({"spec": {"services": {"prefill": {"args": ["--tp-size", "1", "--disaggregation-mode", "prefill"]}}}}),
            vec!["spec.services.prefill.args[2]: --disaggregation-mode is injected"],
        ),
        (
            "tp does not match GPUs",
            json!({"spec": {"services": {"decode": {"args": ["--tp-size", "2"]}}}}),
            vec![
                "spec.services.decode.args: --tp-size 2 uses 2 GPUs but resources.gpu × numberOfNodes is 1",
            ],
        ),
        (
            "vllm tp × pp does not match",
            json!({"spec": {"backendFramework": "vllm", "services": {
                "prefill": {"args": ["--kv-transfer-config", r#"{"kv_connector":"MoRIIOConnector","kv_role":"kv_producer"}"#]},
                "decode": {"resources": {"gpu": 8}, "numberOfNodes": 2, "args": ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "4", r#"--kv-transfer-config={"kv_role":"kv_consumer"}"#]}}}}),
            vec![
                "spec.services.decode.args: --tensor-parallel-size 8 × --pipeline-parallel-size 4 uses 32 GPUs but resources.gpu × numberOfNodes is 16",
            ],
        ),
        (
            "vllm prefill/decode without their kv_role",
            json!({"spec": {"backendFramework": "vllm", "services": {
                "prefill": {"args": ["--kv-transfer-config", r#"{"kv_role":"kv_consumer"}"#]},
                "decode": {"args": ["--tensor-parallel-size", "1"]}}}}),
            vec![
                "spec.services.decode.args: a vLLM decode pool takes its role from --kv-transfer-config (vLLM has no --disaggregation-mode); set --kv-transfer-config",
                "spec.services.prefill.args[0]: kv_role kv_consumer makes the vLLM wrapper register this pool as decode, but its role is prefill; set --kv-transfer-config",
            ],
        ),
        (
            "tp with a non-integer value",
            json!({"spec": {"services": {"decode": {"args": ["--tp-size=two"]}}}}),
            vec!["spec.services.decode.args[0]: --tp-size needs a positive integer value"],
        ),
        (
            "worker without GPU",
            json!({"spec": {"services": {"decode": {"resources": {"gpu": null}}}}}),
            vec!["spec.services.decode.resources.gpu: a worker needs at least one GPU per pod"],
        ),
        (
            "bad gpuType",
            json!({"spec": {"services": {"decode": {"resources": {"gpuType": "amd.com/"}}}}}),
            vec!["spec.services.decode.resources.gpuType: must be an extended resource name"],
        ),
        (
            "no image anywhere",
            json!({"spec": {"image": null}}),
            vec![
                "spec.services.decode.image: no image is set",
                "spec.services.prefill.image: no image is set",
                "spec.services.server.image: no image is set",
            ],
        ),
        (
            "negative replicas",
            json!({"spec": {"services": {"decode": {"replicas": -1}}}}),
            vec!["spec.services.decode.replicas: must be 0 or more"],
        ),
        (
            "zero nodes",
            json!({"spec": {"services": {"decode": {"numberOfNodes": 0}}}}),
            vec!["spec.services.decode.numberOfNodes: must be at least 1"],
        ),
        (
            "bad memory quantity",
            json!({"spec": {"services": {"decode": {"resources": {"memory": "64 GB"}}}}}),
            vec!["spec.services.decode.resources.memory: \"64 GB\" is not a size"],
        ),
        (
            "negative shared memory",
            json!({"spec": {"services": {"prefill": {"resources": {"sharedMemory": "-1Gi"}}}}}),
            vec!["spec.services.prefill.resources.sharedMemory: \"-1Gi\" is not a size"],
        ),
        (
            "nats deploy with url",
            json!({"spec": {"nats": {"deploy": true, "url": "nats://x:4222"}}}),
            vec!["spec.nats.url: is only used when deploy is false"],
        ),
        (
            "nats storage and image with an external nats",
            json!({"spec": {"nats": {"deploy": null, "url": "nats://x:4222", "image": "nats:2"}}}),
            vec![
                "spec.nats.image: is only used when the operator deploys NATS",
                "spec.nats.storageSize: is only used when the operator deploys NATS",
            ],
        ),
        (
            "extraPodSpec with fields it makes unused",
            json!({"spec": {"services": {"decode": {"extraPodSpec": {"containers": [{"name": "main", "image": "x"}]}}}}}),
            vec!["spec.services.decode.extraPodSpec: extraPodSpec is the whole pod"],
        ),
        (
            "extraPodSpec without a container",
            json!({"spec": {"services": {"server": {"extraPodSpec": {"containers": []}}}}}),
            vec![
                "spec.services.server.extraPodSpec: extraPodSpec is the whole pod",
                "spec.services.server.extraPodSpec.containers: extraPodSpec needs at least one container",
            ],
        ),
        (
            "skipReadinessProbe with probe settings",
            json!({"spec": {"services": {"decode": {"skipReadinessProbe": true, "health": {"readinessPath": "/health"}}}}}),
            vec![
                "spec.services.decode.skipReadinessProbe: skipReadinessProbe leaves the engine container without probes",
            ],
        ),
        (
            "podLabels of the operator",
            json!({"spec": {"services": {"server": {"podLabels": {"infera.amd.com/role": "x"}}}}}),
            vec![
                "spec.services.server.podLabels: app.kubernetes.io/name, instance, component, managed-by and every infera.amd.com/ label are the operator's",
            ],
        ),
        (
            "bad gateway name",
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "My Gateway", "tokenizerPath": "t"}}}),
            vec!["spec.gaie.gatewayName: must be the name of a Gateway"],
        ),
        (
            "startup timeout that is not a duration",
            json!({"spec": {"services": {"decode": {"health": {"startupTimeout": "1h30m"}}}}}),
            vec!["spec.services.decode.health.startupTimeout: \"1h30m\" is not a duration"],
        ),
        (
            "startup timeout of zero",
            json!({"spec": {"services": {"decode": {"health": {"startupTimeout": "0m"}}}}}),
            vec!["spec.services.decode.health.startupTimeout: must be from 1s to 24h"],
        ),
        (
            "startup timeout above a day",
            json!({"spec": {"services": {"server": {"health": {"startupTimeout": "2000m"}}}}}),
            vec!["spec.services.server.health.startupTimeout: must be from 1s to 24h"],
        ),
        (
            "readiness path without a slash",
            json!({"spec": {"services": {"decode": {"health": {"readinessPath": "ready"}}}}}),
            vec!["spec.services.decode.health.readinessPath: \"ready\" is not an HTTP path"],
        ),
        (
            "liveness path that is neither a path nor none",
            json!({"spec": {"services": {"decode": {"health": {"livenessPath": "off"}}}}}),
            vec![
                "spec.services.decode.health.livenessPath: \"off\" is neither an HTTP path nor none",
            ],
        ),
        (
            "probe timeout of zero",
            json!({"spec": {"services": {"decode": {"health": {"timeoutSeconds": 0}}}}}),
            vec!["spec.services.decode.health.timeoutSeconds: must be at least 1"],
        ),
        (
            "negative drain",
            json!({"spec": {"services": {"prefill": {"health": {"drainSeconds": -5}}}}}),
            vec!["spec.services.prefill.health.drainSeconds: must be 0 or more"],
        ),
        (
            "several problems at once",
            json!({"spec": {"discoveryBackend": "etcd", "services": {"server": {"resources": {"gpu": 2}}, "decode": {"args": ["--host", "x"]}}}}),
            vec![
                "spec.etcdEndpoint: is required",
                "spec.services.decode.args[0]: --host is injected",
                "spec.services.server.resources.gpu: the server runs no model",
            ],
        ),
        (
            "server with a GPU product",
            json!({"spec": {"services": {"server": {"resources": {"gpuProduct": "MI300X"}}}}}),
            vec!["spec.services.server.resources.gpuProduct: the server runs no model"],
        ),
        (
            "GPU product with a space",
            json!({"spec": {"services": {"decode": {"resources": {"gpuProduct": "MI 300X"}}}}}),
            vec!["spec.services.decode.resources.gpuProduct: must be a GPU product such as MI300X"],
        ),
        (
            "RDMA on the server",
            json!({"spec": {"services": {"server": {"network": {"rdma": {"resourceName": "rdma/hca"}}}}}}),
            vec![
                "spec.services.server.network.rdma: only prefill, decode and multi-node worker pools use RDMA",
            ],
        ),
        (
            "RDMA on a single-node mixed pool",
            json!({"spec": {"services": {"prefill": null, "decode": null, "worker": worker(json!({"network": {"rdma": {"resourceName": "rdma/hca"}}}))}}}),
            vec![
                "spec.services.worker.network.rdma: only prefill, decode and multi-node worker pools use RDMA",
            ],
        ),
        (
            "IB device in args with spec.network.rdma.device",
            json!({"spec": {"network": {"rdma": {"resourceName": "rdma/hca", "device": "rdma0"}}}}),
            vec![
                "spec.services.decode.args[7]: --disaggregation-ib-device is injected from network.rdma.device",
                "spec.services.prefill.args[7]: --disaggregation-ib-device is injected from network.rdma.device",
            ],
        ),
        (
            "IB device in args with the pool's own rdma.device",
            json!({"spec": {"services": {"decode": {"network": {"rdma": {"resourceName": "rdma/hca", "device": "rdma0"}}}}}}),
            vec![
                "spec.services.decode.args[7]: --disaggregation-ib-device is injected from network.rdma.device",
            ],
        ),
        (
            "IB device with vLLM",
            json!({"spec": {"backendFramework": "vllm", "network": {"rdma": {"resourceName": "rdma/hca", "device": "rdma0"}}, "services": {"prefill": {"args": ["--model", "m", "--kv-transfer-config", r#"{"kv_role":"kv_producer"}"#]}, "decode": {"args": ["--model", "m", "--kv-transfer-config", r#"{"kv_role":"kv_consumer"}"#]}}}}),
            vec!["spec.network.rdma.device: vLLM has no IB-device flag"],
        ),
        (
            "RDMA resource and network not names",
            json!({"spec": {"network": {"rdma": {"resourceName": "/hca", "networks": ["Net"]}}}}),
            vec![
                "spec.network.rdma.networks[0]: must name a NetworkAttachmentDefinition",
                "spec.network.rdma.resourceName: must be an extended resource name",
            ],
        ),
        (
            "model flag in args with spec.model",
            json!({"spec": {"model": {"source": "pvc://weights/qwen"}}}),
            vec![
                "spec.services.decode.args[0]: --model-path is injected from spec.model",
                "spec.services.prefill.args[0]: --model-path is injected from spec.model",
            ],
        ),
        (
            "model flag in args with a pool's own model",
            json!({"spec": {"services": {"decode": {"model": {"source": "hostPath:///data/qwen"}}}}}),
            vec![
                "spec.services.decode.args[0]: --model-path is injected from spec.services.decode.model; remove it from args or remove spec.services.decode.model",
            ],
        ),
        (
            "a model on the server, a pool's hf:// model without a cache",
            json!({"spec": {"services": {
                "server": {"model": {"source": "pvc://weights"}},
                "decode": {"args": ["--tp-size", "1"], "model": {"source": "hf://Qwen/Qwen3-0.6B"}},
            }}}),
            vec![
                "spec.services.decode.model.cache: is required with an hf:// source",
                "spec.services.server.model: the server serves no model (it routes to the workers); remove model from the server",
            ],
        ),
        (
            "podTemplate volume and engine mount colliding with the model",
            json!({"spec": {
                "model": {"source": "pvc://weights"},
                "podTemplate": {"spec": {"containers": [{"name": "engine", "volumeMounts": [{"name": "cache", "mountPath": "/models"}]}]}},
                "services": {
                    "prefill": {"args": ["--tp-size", "1"]},
                    "decode": {"args": ["--tp-size", "1"], "model": {"source": "pvc://other", "mountPath": "/weights"},
                        "podTemplate": {"spec": {"volumes": [{"name": "model", "emptyDir": {}}],
                            "containers": [{"name": "engine", "volumeMounts": [{"name": "model", "mountPath": "/weights"}]}]}}},
                },
            }}),
            vec![
                "spec.podTemplate.spec.containers: the engine container's mount at the model's mountPath is the operator's (the model weights); mount at another path or change model.mountPath (now /models)",
                "spec.services.decode.podTemplate.spec.containers: the engine container's mount at the model's mountPath is the operator's (the model weights); mount at another path or change model.mountPath (now /weights)",
                "spec.services.decode.podTemplate.spec.volumes: model is the operator's volume of the model weights (spec.model or the service's model); give the volume another name",
            ],
        ),
        (
            "hf:// model without a cache",
            json!({"spec": {"model": {"source": "hf://Qwen/Qwen3-0.6B"}, "services": {"prefill": {"args": ["--tp-size", "1"]}, "decode": {"args": ["--tp-size", "1"]}}}}),
            vec!["spec.model.cache: is required with an hf:// source"],
        ),
        (
            "cache and token with a pvc:// model",
            json!({"spec": {"model": {"source": "pvc://weights", "cache": {"size": "10Gi"}, "tokenSecretRef": {"name": "hf"}}, "services": {"prefill": {"args": ["--tp-size", "1"]}, "decode": {"args": ["--tp-size", "1"]}}}}),
            vec![
                "spec.model: tokenSecretRef and downloadImage are only used with an hf:// source",
                "spec.model.cache: is required with an hf:// source and only allowed with one",
            ],
        ),
        (
            "model source of no known form",
            json!({"spec": {"model": {"source": "s3://bucket/qwen", "mountPath": "models"}, "services": {"prefill": {"args": ["--tp-size", "1"]}, "decode": {"args": ["--tp-size", "1"]}}}}),
            vec![
                "spec.model.mountPath: must be an absolute path",
                "spec.model.source: must be pvc://CLAIM[/SUBPATH], hostPath:///PATH or hf://ORG/NAME[@REVISION]",
            ],
        ),
        (
            "requireDigest with a tag",
            json!({"spec": {"imagePolicy": {"requireDigest": true}, "services": {"decode": {"image": "rocm/infera"}}}}),
            vec![
                "spec.image: must be pinned by digest because imagePolicy.requireDigest is true",
                "spec.services.decode.image: must be pinned by digest because imagePolicy.requireDigest is true",
            ],
        ),
    ];
    assert!(cases.len() >= 25);
    for (what, patch, expected) in cases {
        let errors = errors_after(patch);
        assert_eq!(
            errors.len(),
            expected.len(),
            "{what}: expected {expected:#?}, got {errors:#?}"
        );
        for (error, prefix) in errors.iter().zip(&expected) {
            assert!(
                error.starts_with(prefix),
                "{what}: expected an error starting with {prefix:?}, got {errors:#?}"
            );
            assert!(
                error.contains(';'),
                "{what}: every message says how to fix it: {error}"
            );
        }
    }
}

#[test]
fn a_malformed_deployment_name_is_not_called_too_long() {
    let not_a_label = "metadata.name: must be a DNS label (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit); rename the deployment";
    for name in ["Demo_Bad", "demo.x", "2demo", "demo-"] {
        assert_eq!(
            errors_after(json!({"metadata": {"name": name}})),
            [not_a_label],
            "{name}"
        );
    }
    assert_eq!(
        errors_after(json!({"metadata": {"name": "Demo_Bad".repeat(6)}})),
        [
            not_a_label,
            "metadata.name: must be a DNS label of at most 42 characters; choose a shorter name",
        ]
    );
}

/// Every limit of the generated CRD's spec schema (`max*`, `min*`, `pattern`): its value is the
/// shared constant, and the Rust validation refuses a spec that breaks it, naming the field.
#[test]
fn every_schema_limit_of_the_crd_has_a_rust_counterpart() {
    let crd = serde_json::to_value(infera_core::crd::crd()).expect("json");
    let mut found = BTreeMap::new();
    schema_limits(
        &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"],
        "spec",
        &mut found,
    );
    let reference = "r".repeat(MAX_REFERENCE_LENGTH + 1);
    let worker = |extra| json!({"spec": {"services": {"decode": extra}}});
    let gpu_type = |gpu_type: &str| worker(json!({"resources": {"gpuType": gpu_type}}));
    let gpu_product = |product: &str| worker(json!({"resources": {"gpuProduct": product}}));
    let autoscaling =
        |autoscaling: Value| worker(json!({"replicas": null, "autoscaling": autoscaling}));
    let keda = |triggers: Value| {
        autoscaling(json!({"provider": "keda", "maxReplicas": 2, "triggers": triggers}))
    };
    let trigger = |fields: Value| {
        let mut trigger =
            json!({"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}});
        merge(&mut trigger, fields);
        trigger
    };
    let health = |health| worker(json!({ "health": health }));
    let planner = |fields: Value| {
        let mut planner = json!({
            "mode": "Advise",
            "slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40},
            "pools": {"decode": {"min": 1, "max": 4}},
        });
        merge(&mut planner, fields);
        json!({"spec": {"planner": planner}})
    };
    let too_many_pools: serde_json::Map<String, Value> = (0..=MAX_SERVICES)
        .map(|i| (format!("p{i}"), json!({"min": 1, "max": 1})))
        .collect();
    let long_path = format!("/{}", "p".repeat(MAX_PROBE_PATH_LENGTH));
    let many_services: serde_json::Map<String, Value> = (0..MAX_SERVICES)
        .map(|i| {
            (
                format!("w{i}"),
                json!({"componentType": "worker", "resources": {"gpu": 1}}),
            )
        })
        .collect();
    let labels: serde_json::Map<String, Value> = (0..=MAX_OVERLAY_ENTRIES)
        .map(|i| (format!("l{i}"), json!("x")))
        .collect();
    let containers: Vec<Value> = (0..=MAX_OVERLAY_CONTAINERS)
        .map(|i| json!({"name": format!("c{i}"), "image": "x"}))
        .collect();
    let volumes: Vec<Value> = (0..=MAX_OVERLAY_ENTRIES)
        .map(|i| json!({"name": format!("v{i}"), "emptyDir": {}}))
        .collect();
    let overlays = |limit: &str, value: usize, overlay: Value, expected: &str| {
        [
            (
                format!("spec.podTemplate.{limit}"),
                json!(value),
                json!({"spec": {"podTemplate": overlay.clone()}}),
                format!("spec.podTemplate.{expected}"),
            ),
            (
                format!("spec.services.*.podTemplate.{limit}"),
                json!(value),
                worker(json!({ "podTemplate": overlay })),
                format!("spec.services.decode.podTemplate.{expected}"),
            ),
        ]
    };
    let rdma_at = |limit: &str, value: Value, rdma: Value, expected: &str| {
        [
            (
                format!("spec.network.rdma.{limit}"),
                value.clone(),
                json!({"spec": {"network": {"rdma": rdma.clone()}}}),
                format!("spec.network.rdma.{expected}"),
            ),
            (
                format!("spec.services.*.network.rdma.{limit}"),
                value,
                worker(json!({"network": {"rdma": rdma}})),
                format!("spec.services.decode.network.rdma.{expected}"),
            ),
        ]
    };
    let rdma = |field: &str, value: Value| {
        let mut rdma = json!({"resourceName": "rdma/hca"});
        rdma[field] = value;
        rdma
    };
    let not_a_network = "must name a NetworkAttachmentDefinition";
    let rdma_cases: Vec<(String, Value, Value, String)> = [
        rdma_at(
            "device maxLength",
            json!(MAX_IB_DEVICE_LENGTH),
            rdma("device", json!("d".repeat(MAX_IB_DEVICE_LENGTH + 1))),
            "device: must be at most 256 characters",
        ),
        rdma_at(
            "device minLength",
            json!(1),
            rdma("device", json!("")),
            "device: must not be empty",
        ),
        rdma_at(
            "device pattern",
            json!(IB_DEVICE_PATTERN),
            rdma("device", json!("rdma0,")),
            "device: must be IB device names",
        ),
        rdma_at(
            "networks maxItems",
            json!(MAX_RDMA_NETWORKS),
            rdma("networks", json!(vec!["n"; MAX_RDMA_NETWORKS + 1])),
            "networks: at most 16 networks",
        ),
        rdma_at(
            "networks[] maxLength",
            json!(MAX_NETWORK_NAME_LENGTH),
            rdma("networks", json!(["n".repeat(MAX_NETWORK_NAME_LENGTH + 1)])),
            &format!("networks[0]: {not_a_network}"),
        ),
        rdma_at(
            "networks[] minLength",
            json!(1),
            rdma("networks", json!([""])),
            &format!("networks[0]: {not_a_network}"),
        ),
        rdma_at(
            "networks[] pattern",
            json!(NETWORK_NAME_PATTERN),
            rdma("networks", json!(["a/b/c"])),
            &format!("networks[0]: {not_a_network}"),
        ),
        rdma_at(
            "perPod maximum",
            json!(MAX_GPUS),
            rdma("perPod", json!(MAX_GPUS + 1)),
            "perPod: must be at most 64",
        ),
        rdma_at(
            "perPod minimum",
            json!(1),
            rdma("perPod", json!(0)),
            "perPod: must be at least 1",
        ),
        rdma_at(
            "resourceName maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"resourceName": format!("{}.com/hca", "a".repeat(246))}),
            "resourceName: must be an extended resource name",
        ),
        rdma_at(
            "resourceName minLength",
            json!(1),
            json!({"resourceName": ""}),
            "resourceName: must be an extended resource name",
        ),
        rdma_at(
            "resourceName pattern",
            json!(RESOURCE_NAME_PATTERN),
            json!({"resourceName": "/hca"}),
            "resourceName: must be an extended resource name",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    let model = |extra: Value| {
        let mut model = json!({"source": "hf://Qwen/Qwen3-0.6B", "cache": {"size": "10Gi"}});
        merge(&mut model, extra);
        json!({"spec": {"model": model}})
    };
    let subdomain = "s".repeat(MAX_DNS_SUBDOMAIN + 1);
    let model_cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "spec.model.source maxLength",
            json!(MAX_REFERENCE_LENGTH),
            model(json!({"source": format!("pvc://{}", "w".repeat(MAX_REFERENCE_LENGTH))})),
            "spec.model.source: must be at most 512 characters",
        ),
        (
            "spec.model.source minLength",
            json!(1),
            model(json!({"source": ""})),
            "spec.model.source: must not be empty",
        ),
        (
            "spec.model.source pattern",
            json!(MODEL_SOURCE_PATTERN),
            model(json!({"source": "hf://Qwen"})),
            "spec.model.source: must be pvc://",
        ),
        (
            "spec.model.mountPath maxLength",
            json!(MAX_PROBE_PATH_LENGTH),
            model(json!({"mountPath": format!("/{}", "m".repeat(MAX_PROBE_PATH_LENGTH))})),
            "spec.model.mountPath: must be at most 256 characters",
        ),
        (
            "spec.model.mountPath minLength",
            json!(1),
            model(json!({"mountPath": ""})),
            "spec.model.mountPath: must not be empty",
        ),
        (
            "spec.model.mountPath pattern",
            json!(MOUNT_PATH_PATTERN),
            model(json!({"mountPath": "/a:b"})),
            "spec.model.mountPath: must be an absolute path",
        ),
        (
            "spec.model.cache.storageClassName maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            model(json!({"cache": {"storageClassName": subdomain}})),
            "spec.model.cache.storageClassName: must be at most 253 characters",
        ),
        (
            "spec.model.cache.storageClassName minLength",
            json!(1),
            model(json!({"cache": {"storageClassName": ""}})),
            "spec.model.cache.storageClassName: must not be empty",
        ),
        (
            "spec.model.tokenSecretRef.name maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            model(json!({"tokenSecretRef": {"name": subdomain}})),
            "spec.model.tokenSecretRef.name: must be at most 253 characters",
        ),
        (
            "spec.model.tokenSecretRef.name minLength",
            json!(1),
            model(json!({"tokenSecretRef": {"name": ""}})),
            "spec.model.tokenSecretRef.name: must not be empty",
        ),
        (
            "spec.model.tokenSecretRef.key maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            model(json!({"tokenSecretRef": {"name": "hf", "key": subdomain}})),
            "spec.model.tokenSecretRef.key: must be at most 253 characters",
        ),
        (
            "spec.model.tokenSecretRef.key minLength",
            json!(1),
            model(json!({"tokenSecretRef": {"name": "hf", "key": ""}})),
            "spec.model.tokenSecretRef.key: must not be empty",
        ),
        (
            "spec.model.downloadImage maxLength",
            json!(MAX_REFERENCE_LENGTH),
            model(json!({"downloadImage": reference.clone()})),
            "spec.model.downloadImage: must be at most 512 characters",
        ),
        (
            "spec.model.downloadImage minLength",
            json!(1),
            model(json!({"downloadImage": ""})),
            "spec.model.downloadImage: must not be empty",
        ),
    ];
    let overlay_cases: Vec<(String, Value, Value, String)> = [
        overlays(
            "metadata.labels maxProperties",
            MAX_OVERLAY_ENTRIES,
            json!({"metadata": {"labels": labels}}),
            "metadata.labels: at most 64 entries",
        ),
        overlays(
            "spec.containers maxItems",
            MAX_OVERLAY_CONTAINERS,
            json!({"spec": {"containers": containers}}),
            "spec.containers: at most 16 entries",
        ),
        overlays(
            "spec.initContainers maxItems",
            MAX_OVERLAY_CONTAINERS,
            json!({"spec": {"initContainers": containers}}),
            "spec.initContainers: at most 16 entries",
        ),
        overlays(
            "spec.volumes maxItems",
            MAX_OVERLAY_ENTRIES,
            json!({"spec": {"volumes": volumes}}),
            "spec.volumes: at most 64 entries",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "spec.services.*.command maxItems",
            json!(MAX_ARGS),
            worker(json!({"command": vec!["sh"; MAX_ARGS + 1]})),
            "spec.services.decode.command: at most 128 items are allowed",
        ),
        (
            "spec.services.*.command[] maxLength",
            json!(MAX_ARG_LENGTH),
            worker(json!({"command": ["a".repeat(MAX_ARG_LENGTH + 1)]})),
            "spec.services.decode.command[0]: must be at most 2048 characters",
        ),
        (
            "spec.image minLength",
            json!(1),
            json!({"spec": {"image": ""}}),
            "spec.image: must not be empty",
        ),
        (
            "spec.image maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"image": reference}}),
            "spec.image: must be at most 512 characters",
        ),
        (
            "spec.etcdEndpoint minLength",
            json!(1),
            json!({"spec": {"discoveryBackend": "etcd", "etcdEndpoint": ""}}),
            "spec.etcdEndpoint: must not be empty",
        ),
        (
            "spec.etcdEndpoint maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"discoveryBackend": "etcd", "etcdEndpoint": reference}}),
            "spec.etcdEndpoint: must be at most 512 characters",
        ),
        (
            "spec.gaie.eppImage minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "eppImage": ""}}}),
            "spec.gaie.eppImage: must not be empty",
        ),
        (
            "spec.gaie.eppImage maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "eppImage": reference}}}),
            "spec.gaie.eppImage: must be at most 512 characters",
        ),
        (
            "spec.gaie.gatewayName minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "", "tokenizerPath": "t"}}}),
            "spec.gaie.gatewayName: must be the name of a Gateway",
        ),
        (
            "spec.gaie.gatewayName maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "g".repeat(254), "tokenizerPath": "t"}}}),
            "spec.gaie.gatewayName: must be the name of a Gateway",
        ),
        (
            "spec.gaie.gatewayNamespace minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "gatewayNamespace": ""}}}),
            "spec.gaie.gatewayNamespace: must be a namespace name",
        ),
        (
            "spec.gaie.gatewayNamespace maxLength",
            json!(MAX_DNS_LABEL),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "gatewayNamespace": "n".repeat(64)}}}),
            "spec.gaie.gatewayNamespace: must be a namespace name",
        ),
        (
            "spec.gaie.gatewaySectionName minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "gatewaySectionName": ""}}}),
            "spec.gaie.gatewaySectionName: must be the name of a listener",
        ),
        (
            "spec.gaie.gatewaySectionName maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "gatewaySectionName": "s".repeat(254)}}}),
            "spec.gaie.gatewaySectionName: must be the name of a listener",
        ),
        (
            "spec.nats.image minLength",
            json!(1),
            json!({"spec": {"nats": {"image": ""}}}),
            "spec.nats.image: must not be empty",
        ),
        (
            "spec.nats.image maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"nats": {"image": reference}}}),
            "spec.nats.image: must be at most 512 characters",
        ),
        (
            "spec.nats.storageClassName minLength",
            json!(1),
            json!({"spec": {"nats": {"storageClassName": ""}}}),
            "spec.nats.storageClassName: must not be empty",
        ),
        (
            "spec.nats.storageClassName maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"spec": {"nats": {"storageClassName": "s".repeat(254)}}}),
            "spec.nats.storageClassName: must be at most 253 characters",
        ),
        (
            "spec.gaie.frontendPort minimum",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "frontendPort": 0}}}),
            "spec.gaie.frontendPort: must be a port number from 1 to 65535",
        ),
        (
            "spec.gaie.frontendPort maximum",
            json!(65535),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "frontendPort": 65536}}}),
            "spec.gaie.frontendPort: must be at most 65535",
        ),
        (
            "spec.gaie.hostnames maxItems",
            json!(MAX_HOSTNAMES),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "hostnames": vec!["a.example.com"; MAX_HOSTNAMES + 1]}}}),
            "spec.gaie.hostnames: at most 16 hostnames are allowed",
        ),
        (
            "spec.monitoring.interval maxLength",
            json!(MAX_DURATION_LENGTH),
            json!({"spec": {"monitoring": {"interval": "1000000s"}}}),
            "spec.monitoring.interval: must be at most 7 characters",
        ),
        (
            "spec.monitoring.interval pattern",
            json!(DURATION_PATTERN),
            json!({"spec": {"monitoring": {"interval": "1d"}}}),
            "spec.monitoring.interval: \"1d\" is not a duration",
        ),
        (
            "spec.monitoring.labels maxProperties",
            json!(MAX_OVERLAY_ENTRIES),
            json!({"spec": {"monitoring": {"labels": (0..=MAX_OVERLAY_ENTRIES)
                .map(|i| (format!("k{i}"), json!("v")))
                .collect::<serde_json::Map<_, _>>()}}}),
            "spec.monitoring.labels: at most 64",
        ),
        (
            "spec.monitoring.slo.itlP95Milliseconds maximum",
            json!(MAX_SLO_MILLISECONDS),
            json!({"spec": {"monitoring": {"slo": {"itlP95Milliseconds": MAX_SLO_MILLISECONDS + 1, "ttftP95Milliseconds": 50}}}}),
            "spec.monitoring.slo.itlP95Milliseconds: must be at most 600000",
        ),
        (
            "spec.monitoring.slo.itlP95Milliseconds minimum",
            json!(1),
            json!({"spec": {"monitoring": {"slo": {"itlP95Milliseconds": 0, "ttftP95Milliseconds": 50}}}}),
            "spec.monitoring.slo.itlP95Milliseconds: must be 1 or more",
        ),
        (
            "spec.monitoring.slo.ttftP95Milliseconds maximum",
            json!(MAX_SLO_MILLISECONDS),
            json!({"spec": {"monitoring": {"slo": {"ttftP95Milliseconds": MAX_SLO_MILLISECONDS + 1, "itlP95Milliseconds": 50}}}}),
            "spec.monitoring.slo.ttftP95Milliseconds: must be at most 600000",
        ),
        (
            "spec.monitoring.slo.ttftP95Milliseconds minimum",
            json!(1),
            json!({"spec": {"monitoring": {"slo": {"ttftP95Milliseconds": 0, "itlP95Milliseconds": 50}}}}),
            "spec.monitoring.slo.ttftP95Milliseconds: must be 1 or more",
        ),
        (
            "spec.networkPolicy.metricsFrom maxItems",
            json!(MAX_METRICS_FROM),
            json!({"spec": {"networkPolicy": {"metricsFrom": vec![json!({"namespaceSelector": {}}); MAX_METRICS_FROM + 1]}}}),
            "spec.networkPolicy.metricsFrom: at most 16 peers are allowed",
        ),
        (
            "spec.networkPolicy.egress.allow maxItems",
            json!(MAX_EGRESS_RULES),
            json!({"spec": {"networkPolicy": {"egress": {"restrict": true, "allow": vec![json!({}); MAX_EGRESS_RULES + 1]}}}}),
            "spec.networkPolicy.egress.allow: at most 16 rules are allowed",
        ),
        (
            "spec.networkPolicy.egress.allow[].to maxItems",
            json!(MAX_EGRESS_RULES),
            json!({"spec": {"networkPolicy": {"egress": {"restrict": true, "allow": [{"to": vec![json!({"namespaceSelector": {}}); MAX_EGRESS_RULES + 1]}]}}}}),
            "spec.networkPolicy.egress.allow[0].to: at most 16 peers are allowed",
        ),
        (
            "spec.networkPolicy.egress.allow[].ports maxItems",
            json!(MAX_EGRESS_RULES),
            json!({"spec": {"networkPolicy": {"egress": {"restrict": true, "allow": [{"ports": vec![json!({"port": 443}); MAX_EGRESS_RULES + 1]}]}}}}),
            "spec.networkPolicy.egress.allow[0].ports: at most 16 ports are allowed",
        ),
        (
            "spec.gaie.hostnames[] minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "hostnames": [""]}}}),
            "spec.gaie.hostnames[0]: must be a hostname",
        ),
        (
            "spec.gaie.hostnames[] maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "hostnames": ["h".repeat(254)]}}}),
            "spec.gaie.hostnames[0]: must be a hostname",
        ),
        (
            "spec.gaie.hostnames[] pattern",
            json!(HOSTNAME_PATTERN),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "hostnames": ["Chat"]}}}),
            "spec.gaie.hostnames[0]: must be a hostname",
        ),
        (
            "spec.gaie.modelName minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "modelName": ""}}}),
            "spec.gaie.modelName: must not be empty",
        ),
        (
            "spec.gaie.modelName maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": "t", "modelName": reference}}}),
            "spec.gaie.modelName: must be at most 512 characters",
        ),
        (
            "spec.gaie.tokenizerPath minLength",
            json!(1),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": ""}}}),
            "spec.gaie.tokenizerPath: must not be empty",
        ),
        (
            "spec.gaie.tokenizerPath maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"gaie": {"enabled": true, "gatewayName": "gw", "tokenizerPath": reference}}}),
            "spec.gaie.tokenizerPath: must be at most 512 characters",
        ),
        (
            "spec.services.*.port minimum",
            json!(1),
            worker(json!({"port": 0})),
            "spec.services.decode.port: must be a port number from 1 to 65535",
        ),
        (
            "spec.services.*.port maximum",
            json!(65535),
            worker(json!({"port": 65536})),
            "spec.services.decode.port: must be at most 65535",
        ),
        (
            "spec.services.*.podLabels maxProperties",
            json!(MAX_OVERLAY_ENTRIES),
            worker(json!({"podLabels": (0..=MAX_OVERLAY_ENTRIES)
                .map(|i| (format!("k{i}"), json!("v")))
                .collect::<serde_json::Map<_, _>>()})),
            "spec.services.decode.podLabels: at most 64",
        ),
        (
            "spec.nats.url minLength",
            json!(1),
            json!({"spec": {"nats": {"deploy": false, "storageSize": null, "url": ""}}}),
            "spec.nats.url: must not be empty",
        ),
        (
            "spec.nats.url maxLength",
            json!(MAX_REFERENCE_LENGTH),
            json!({"spec": {"nats": {"deploy": false, "storageSize": null, "url": reference}}}),
            "spec.nats.url: must be at most 512 characters",
        ),
        (
            "spec.nats.urlSecretRef.name maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"spec": {"nats": {"deploy": false, "storageSize": null, "urlSecretRef": {"name": "s".repeat(MAX_DNS_SUBDOMAIN + 1)}}}}),
            "spec.nats.urlSecretRef.name: must be at most 253 characters",
        ),
        (
            "spec.nats.urlSecretRef.name minLength",
            json!(1),
            json!({"spec": {"nats": {"deploy": false, "storageSize": null, "urlSecretRef": {"name": ""}}}}),
            "spec.nats.urlSecretRef.name: must not be empty",
        ),
        (
            "spec.nats.urlSecretRef.key maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            json!({"spec": {"nats": {"deploy": false, "storageSize": null, "urlSecretRef": {"name": "s", "key": "k".repeat(MAX_DNS_SUBDOMAIN + 1)}}}}),
            "spec.nats.urlSecretRef.key: must be at most 253 characters",
        ),
        (
            "spec.nats.urlSecretRef.key minLength",
            json!(1),
            json!({"spec": {"nats": {"deploy": false, "storageSize": null, "urlSecretRef": {"name": "s", "key": ""}}}}),
            "spec.nats.urlSecretRef.key: must not be empty",
        ),
        (
            "spec.rollout.maxSurge minimum",
            json!(0),
            json!({"spec": {"rollout": {"maxSurge": -1}}}),
            "spec.rollout.maxSurge: must be 0 or more",
        ),
        (
            "spec.rollout.maxSurge maximum",
            json!(MAX_REPLICAS),
            json!({"spec": {"rollout": {"maxSurge": MAX_REPLICAS + 1}}}),
            "spec.rollout.maxSurge: must be at most 1000",
        ),
        (
            "spec.rollout.maxUnavailable minimum",
            json!(0),
            json!({"spec": {"rollout": {"maxUnavailable": -1}}}),
            "spec.rollout.maxUnavailable: must be 0 or more",
        ),
        (
            "spec.rollout.maxUnavailable maximum",
            json!(MAX_REPLICAS),
            json!({"spec": {"rollout": {"maxUnavailable": MAX_REPLICAS + 1}}}),
            "spec.rollout.maxUnavailable: must be at most 1000",
        ),
        (
            "spec.services.*.rollout.maxSurge minimum",
            json!(0),
            worker(json!({"rollout": {"maxSurge": -1}})),
            "spec.services.decode.rollout.maxSurge: must be 0 or more",
        ),
        (
            "spec.services.*.rollout.maxSurge maximum",
            json!(MAX_REPLICAS),
            worker(json!({"rollout": {"maxSurge": MAX_REPLICAS + 1}})),
            "spec.services.decode.rollout.maxSurge: must be at most 1000",
        ),
        (
            "spec.services.*.rollout.maxUnavailable minimum",
            json!(0),
            worker(json!({"rollout": {"maxUnavailable": -1}})),
            "spec.services.decode.rollout.maxUnavailable: must be 0 or more",
        ),
        (
            "spec.services.*.rollout.maxUnavailable maximum",
            json!(MAX_REPLICAS),
            worker(json!({"rollout": {"maxUnavailable": MAX_REPLICAS + 1}})),
            "spec.services.decode.rollout.maxUnavailable: must be at most 1000",
        ),
        (
            "spec.planner.cooldownSeconds maximum",
            json!(MAX_PLANNER_COOLDOWN_SECONDS),
            planner(json!({"cooldownSeconds": MAX_PLANNER_COOLDOWN_SECONDS + 1})),
            "spec.planner.cooldownSeconds: must be at most 86400",
        ),
        (
            "spec.planner.cooldownSeconds minimum",
            json!(0),
            planner(json!({"cooldownSeconds": -1})),
            "spec.planner.cooldownSeconds: must be 0 or more",
        ),
        (
            "spec.planner.intervalSeconds maximum",
            json!(MAX_PLANNER_INTERVAL_SECONDS),
            planner(json!({"intervalSeconds": MAX_PLANNER_INTERVAL_SECONDS + 1})),
            "spec.planner.intervalSeconds: must be at most 3600",
        ),
        (
            "spec.planner.intervalSeconds minimum",
            json!(MIN_PLANNER_INTERVAL_SECONDS),
            planner(json!({"intervalSeconds": MIN_PLANNER_INTERVAL_SECONDS - 1})),
            "spec.planner.intervalSeconds: must be 5 or more",
        ),
        (
            "spec.planner.maxStep maximum",
            json!(MAX_REPLICAS),
            planner(json!({"maxStep": MAX_REPLICAS + 1})),
            "spec.planner.maxStep: must be at most 1000",
        ),
        (
            "spec.planner.maxStep minimum",
            json!(1),
            planner(json!({"maxStep": 0})),
            "spec.planner.maxStep: must be 1 or more",
        ),
        (
            "spec.planner.pools maxProperties",
            json!(MAX_SERVICES),
            planner(json!({"pools": Value::Object(too_many_pools)})),
            "spec.planner.pools: must name at most 32 pools",
        ),
        (
            "spec.planner.pools minProperties",
            json!(1),
            json!({"spec": {"planner": {"slo": {"ttftP95Milliseconds": 800, "itlP95Milliseconds": 40}, "pools": {}}}}),
            "spec.planner.pools: must name at least one worker pool",
        ),
        (
            "spec.planner.pools.*.max maximum",
            json!(MAX_REPLICAS),
            planner(json!({"pools": {"decode": {"max": MAX_REPLICAS + 1}}})),
            "spec.planner.pools.decode.max: must be at most 1000",
        ),
        (
            "spec.planner.pools.*.max minimum",
            json!(1),
            planner(json!({"pools": {"decode": {"min": 0, "max": 0}}})),
            "spec.planner.pools.decode.max: must be 1 or more",
        ),
        (
            "spec.planner.pools.*.min maximum",
            json!(MAX_REPLICAS),
            planner(json!({"pools": {"decode": {"min": MAX_REPLICAS + 1}}})),
            "spec.planner.pools.decode.min: must be at most 1000",
        ),
        (
            "spec.planner.pools.*.min minimum",
            json!(1),
            planner(json!({"pools": {"decode": {"min": 0}}})),
            "spec.planner.pools.decode.min: must be 1 or more",
        ),
        (
            "spec.planner.prometheus maxLength",
            json!(MAX_REFERENCE_LENGTH),
            planner(json!({"prometheus": format!("http://{}", "p".repeat(MAX_REFERENCE_LENGTH))})),
            "spec.planner.prometheus: must be at most 512 characters",
        ),
        (
            "spec.planner.prometheus minLength",
            json!(1),
            planner(json!({"prometheus": ""})),
            "spec.planner.prometheus: must not be empty",
        ),
        (
            "spec.planner.prometheus pattern",
            json!(HTTP_URL_PATTERN),
            planner(json!({"prometheus": "prometheus:9090"})),
            "spec.planner.prometheus: \"prometheus:9090\" is not an HTTP URL",
        ),
        (
            "spec.planner.slo.itlP95Milliseconds maximum",
            json!(MAX_SLO_MILLISECONDS),
            planner(json!({"slo": {"itlP95Milliseconds": MAX_SLO_MILLISECONDS + 1}})),
            "spec.planner.slo.itlP95Milliseconds: must be at most 600000",
        ),
        (
            "spec.planner.slo.itlP95Milliseconds minimum",
            json!(1),
            planner(json!({"slo": {"itlP95Milliseconds": 0}})),
            "spec.planner.slo.itlP95Milliseconds: must be 1 or more",
        ),
        (
            "spec.planner.slo.ttftP95Milliseconds maximum",
            json!(MAX_SLO_MILLISECONDS),
            planner(json!({"slo": {"ttftP95Milliseconds": MAX_SLO_MILLISECONDS + 1}})),
            "spec.planner.slo.ttftP95Milliseconds: must be at most 600000",
        ),
        (
            "spec.planner.slo.ttftP95Milliseconds minimum",
            json!(1),
            planner(json!({"slo": {"ttftP95Milliseconds": 0}})),
            "spec.planner.slo.ttftP95Milliseconds: must be 1 or more",
        ),
        (
            "spec.revisionHistoryLimit minimum",
            json!(0),
            json!({"spec": {"revisionHistoryLimit": -1}}),
            "spec.revisionHistoryLimit: must be at least 0",
        ),
        (
            "spec.revisionHistoryLimit maximum",
            json!(MAX_REVISION_HISTORY_LIMIT),
            json!({"spec": {"revisionHistoryLimit": MAX_REVISION_HISTORY_LIMIT + 1}}),
            "spec.revisionHistoryLimit: must be at most 100",
        ),
        (
            "spec.rollout.progressDeadlineSeconds minimum",
            json!(1),
            json!({"spec": {"rollout": {"progressDeadlineSeconds": 0}}}),
            "spec.rollout.progressDeadlineSeconds: must be at least 1",
        ),
        (
            "spec.rollout.progressDeadlineSeconds maximum",
            json!(MAX_PROGRESS_DEADLINE_SECONDS),
            json!({"spec": {"rollout": {"progressDeadlineSeconds": MAX_PROGRESS_DEADLINE_SECONDS + 1}}}),
            "spec.rollout.progressDeadlineSeconds: must be at most 86400",
        ),
        (
            "spec.services maxProperties",
            json!(MAX_SERVICES),
            json!({"spec": {"services": many_services}}),
            "spec.services: at most 32 services are allowed (now 35)",
        ),
        (
            "spec.services minProperties",
            json!(MIN_SERVICES),
            json!({"spec": {"services": {"prefill": null, "decode": null}}}),
            "spec.services: at least one service must have componentType: worker",
        ),
        (
            "spec.services.*.args maxItems",
            json!(MAX_ARGS),
            worker(json!({"args": vec!["-v"; MAX_ARGS + 1]})),
            "spec.services.decode.args: at most 128 arguments are allowed",
        ),
        (
            "spec.services.*.args[] maxLength",
            json!(MAX_ARG_LENGTH),
            worker(json!({"args": ["a".repeat(MAX_ARG_LENGTH + 1)]})),
            "spec.services.decode.args[0]: must be at most 2048 characters",
        ),
        (
            "spec.services.*.health.drainSeconds minimum",
            json!(0),
            health(json!({"drainSeconds": -1})),
            "spec.services.decode.health.drainSeconds: must be 0 or more",
        ),
        (
            "spec.services.*.health.drainSeconds maximum",
            json!(MAX_DRAIN_SECONDS),
            health(json!({"drainSeconds": MAX_DRAIN_SECONDS + 1})),
            "spec.services.decode.health.drainSeconds: must be at most 3600",
        ),
        (
            "spec.services.*.health.livenessPath maxLength",
            json!(MAX_PROBE_PATH_LENGTH),
            health(json!({"livenessPath": long_path})),
            "spec.services.decode.health.livenessPath: must be at most 256 characters",
        ),
        (
            "spec.services.*.health.livenessPath pattern",
            json!(LIVENESS_PATH_PATTERN),
            health(json!({"livenessPath": "None"})),
            "spec.services.decode.health.livenessPath: \"None\" is neither an HTTP path nor none",
        ),
        (
            "spec.services.*.health.readinessPath maxLength",
            json!(MAX_PROBE_PATH_LENGTH),
            health(json!({"readinessPath": long_path})),
            "spec.services.decode.health.readinessPath: must be at most 256 characters",
        ),
        (
            "spec.services.*.health.readinessPath pattern",
            json!(PROBE_PATH_PATTERN),
            health(json!({"readinessPath": "/a b"})),
            "spec.services.decode.health.readinessPath: \"/a b\" is not an HTTP path",
        ),
        (
            "spec.services.*.health.startupTimeout maxLength",
            json!(MAX_DURATION_LENGTH),
            health(json!({"startupTimeout": "1000000s"})),
            "spec.services.decode.health.startupTimeout: must be at most 7 characters",
        ),
        (
            "spec.services.*.health.startupTimeout pattern",
            json!(DURATION_PATTERN),
            health(json!({"startupTimeout": "2d"})),
            "spec.services.decode.health.startupTimeout: \"2d\" is not a duration",
        ),
        (
            "spec.services.*.health.timeoutSeconds minimum",
            json!(1),
            health(json!({"timeoutSeconds": 0})),
            "spec.services.decode.health.timeoutSeconds: must be at least 1",
        ),
        (
            "spec.services.*.health.timeoutSeconds maximum",
            json!(MAX_PROBE_TIMEOUT),
            health(json!({"timeoutSeconds": MAX_PROBE_TIMEOUT + 1})),
            "spec.services.decode.health.timeoutSeconds: must be at most 300",
        ),
        (
            "spec.services.*.image minLength",
            json!(1),
            worker(json!({"image": ""})),
            "spec.services.decode.image: must not be empty",
        ),
        (
            "spec.services.*.image maxLength",
            json!(MAX_REFERENCE_LENGTH),
            worker(json!({"image": reference})),
            "spec.services.decode.image: must be at most 512 characters",
        ),
        (
            "spec.services.*.numberOfNodes minimum",
            json!(1),
            worker(json!({"numberOfNodes": 0})),
            "spec.services.decode.numberOfNodes: must be at least 1",
        ),
        (
            "spec.services.*.numberOfNodes maximum",
            json!(MAX_NODES),
            worker(json!({"numberOfNodes": MAX_NODES + 1})),
            "spec.services.decode.numberOfNodes: must be at most 64",
        ),
        (
            "spec.services.*.replicas minimum",
            json!(0),
            worker(json!({"replicas": -1})),
            "spec.services.decode.replicas: must be 0 or more",
        ),
        (
            "spec.services.*.replicas maximum",
            json!(MAX_REPLICAS),
            worker(json!({"replicas": MAX_REPLICAS + 1})),
            "spec.services.decode.replicas: must be at most 1000",
        ),
        (
            "spec.services.*.autoscaling.minReplicas minimum",
            json!(1),
            autoscaling(json!({"minReplicas": 0, "maxReplicas": 2, "metrics": [metric()]})),
            "spec.services.decode.autoscaling.minReplicas: must be 1 or more",
        ),
        (
            "spec.services.*.autoscaling.minReplicas maximum",
            json!(MAX_REPLICAS),
            autoscaling(json!({"minReplicas": 1001, "maxReplicas": 1000, "metrics": [metric()]})),
            "spec.services.decode.autoscaling.minReplicas: must be at most 1000",
        ),
        (
            "spec.services.*.autoscaling.maxReplicas minimum",
            json!(1),
            autoscaling(json!({"maxReplicas": 0, "metrics": [metric()]})),
            "spec.services.decode.autoscaling.maxReplicas: must be 1 or more",
        ),
        (
            "spec.services.*.autoscaling.maxReplicas maximum",
            json!(MAX_REPLICAS),
            autoscaling(json!({"maxReplicas": 1001, "metrics": [metric()]})),
            "spec.services.decode.autoscaling.maxReplicas: must be at most 1000",
        ),
        (
            "spec.services.*.autoscaling.metrics minItems",
            json!(1),
            autoscaling(json!({"maxReplicas": 2, "metrics": []})),
            "spec.services.decode.autoscaling.metrics: needs at least one metric",
        ),
        (
            "spec.services.*.autoscaling.metrics maxItems",
            json!(MAX_METRICS),
            autoscaling(json!({"maxReplicas": 2, "metrics": vec![metric(); MAX_METRICS + 1]})),
            "spec.services.decode.autoscaling.metrics: at most 8 metrics are allowed",
        ),
        (
            "spec.services.*.autoscaling.triggers minItems",
            json!(1),
            keda(json!([])),
            "spec.services.decode.autoscaling.triggers: provider: keda needs at least one trigger",
        ),
        (
            "spec.services.*.autoscaling.triggers maxItems",
            json!(MAX_TRIGGERS),
            keda(json!(vec![trigger(json!({})); MAX_TRIGGERS + 1])),
            "spec.services.decode.autoscaling.triggers: at most 8 triggers are allowed",
        ),
        (
            "spec.services.*.autoscaling.triggers[].type minLength",
            json!(1),
            keda(json!([trigger(json!({"type": ""}))])),
            "spec.services.decode.autoscaling.triggers[0].type: must name a KEDA scaler",
        ),
        (
            "spec.services.*.autoscaling.triggers[].type maxLength",
            json!(MAX_TRIGGER_TYPE_LENGTH),
            keda(json!([trigger(
                json!({"type": "t".repeat(MAX_TRIGGER_TYPE_LENGTH + 1)})
            )])),
            "spec.services.decode.autoscaling.triggers[0].type: must be at most 63 characters",
        ),
        (
            "spec.services.*.autoscaling.triggers[].name maxLength",
            json!(MAX_TRIGGER_TYPE_LENGTH),
            keda(json!([trigger(
                json!({"name": "n".repeat(MAX_TRIGGER_TYPE_LENGTH + 1)})
            )])),
            "spec.services.decode.autoscaling.triggers[0].name: must be at most 63 characters",
        ),
        (
            "spec.services.*.autoscaling.triggers[].metadata maxProperties",
            json!(MAX_TRIGGER_METADATA),
            keda(json!([trigger(
                json!({"metadata": (0..=MAX_TRIGGER_METADATA)
                .map(|i| (format!("k{i}"), json!("v")))
                .collect::<serde_json::Map<_, _>>()})
            )])),
            "spec.services.decode.autoscaling.triggers[0].metadata: at most 32 settings are allowed",
        ),
        (
            "spec.services.*.autoscaling.triggers[].authenticationRef.name minLength",
            json!(1),
            keda(json!([trigger(json!({"authenticationRef": {"name": ""}}))])),
            "spec.services.decode.autoscaling.triggers[0].authenticationRef.name: must not be empty",
        ),
        (
            "spec.services.*.autoscaling.triggers[].authenticationRef.name maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            keda(json!([trigger(
                json!({"authenticationRef": {"name": "a".repeat(MAX_DNS_SUBDOMAIN + 1)}})
            )])),
            "spec.services.decode.autoscaling.triggers[0].authenticationRef.name: must be at most 253 characters",
        ),
        (
            "spec.services.*.resources.gpu minimum",
            json!(0),
            worker(json!({"resources": {"gpu": -1}})),
            "spec.services.decode.resources.gpu: a worker needs at least one GPU",
        ),
        (
            "spec.services.*.resources.gpu maximum",
            json!(MAX_GPUS),
            worker(json!({"resources": {"gpu": MAX_GPUS + 1}})),
            "spec.services.decode.resources.gpu: must be at most 64",
        ),
        (
            "spec.services.*.resources.gpuType minLength",
            json!(1),
            gpu_type(""),
            "spec.services.decode.resources.gpuType: must be an extended resource name",
        ),
        (
            "spec.services.*.resources.gpuType maxLength",
            json!(MAX_DNS_SUBDOMAIN),
            gpu_type(&format!("{}.com/gpu", "a".repeat(246))),
            "spec.services.decode.resources.gpuType: must be an extended resource name",
        ),
        (
            "spec.services.*.resources.gpuProduct minLength",
            json!(1),
            gpu_product(""),
            "spec.services.decode.resources.gpuProduct: must be a GPU product",
        ),
        (
            "spec.services.*.resources.gpuProduct maxLength",
            json!(MAX_GPU_PRODUCT_LENGTH),
            gpu_product(&"M".repeat(MAX_GPU_PRODUCT_LENGTH + 1)),
            "spec.services.decode.resources.gpuProduct: must be a GPU product",
        ),
        (
            "spec.services.*.resources.gpuProduct pattern",
            json!(GPU_PRODUCT_PATTERN),
            gpu_product("MI300X_"),
            "spec.services.decode.resources.gpuProduct: must be a GPU product",
        ),
        (
            "spec.services.*.resources.gpuType pattern",
            json!(RESOURCE_NAME_PATTERN),
            gpu_type("/gpu"),
            "spec.services.decode.resources.gpuType: must be an extended resource name",
        ),
    ];
    // The same limits on a pool's own model, at its path.
    let service_model_cases: Vec<(String, Value, Value, String)> = model_cases
        .iter()
        .map(|(limit, value, patch, expected)| {
            let at_service = |s: &str| s.replacen("spec.model", "spec.services.*.model", 1);
            (
                at_service(limit),
                value.clone(),
                json!({"spec": {"services": {"decode": {"model": patch["spec"]["model"]}}}}),
                expected.replacen("spec.model", "spec.services.decode.model", 1),
            )
        })
        .collect();
    cases.extend(model_cases);
    cases.extend(
        overlay_cases
            .iter()
            .chain(&rdma_cases)
            .chain(&service_model_cases)
            .map(|(limit, value, patch, expected)| {
                (
                    limit.as_str(),
                    value.clone(),
                    patch.clone(),
                    expected.as_str(),
                )
            }),
    );
    let covered: BTreeMap<String, Value> = cases
        .iter()
        .map(|(limit, value, ..)| (limit.to_string(), value.clone()))
        .collect();
    let as_numbers = |limits: &BTreeMap<String, Value>| -> Vec<(String, String)> {
        limits
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_f64().map_or(v.to_string(), |n| n.to_string()),
                )
            })
            .collect()
    };
    assert_eq!(
        as_numbers(&found),
        as_numbers(&covered),
        "every schema limit, with its value"
    );
    for (limit, _, patch, expected) in cases {
        let errors = errors_after(patch);
        assert!(
            errors.iter().any(|e| e.starts_with(expected)),
            "{limit}: expected an error starting with {expected:?}, got {errors:#?}"
        );
    }
}

/// `path keyword` → value of every size and pattern limit in `schema`; `*` stands for any map
/// key and `[]` for any list item.
fn schema_limits(schema: &Value, path: &str, found: &mut BTreeMap<String, Value>) {
    for keyword in [
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxProperties",
        "minProperties",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "pattern",
        "multipleOf",
    ] {
        if let Some(value) = schema.get(keyword) {
            found.insert(format!("{path} {keyword}"), value.clone());
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        schema_limits(property, &format!("{path}.{name}"), found);
    }
    if let Some(items) = schema.get("items") {
        schema_limits(items, &format!("{path}[]"), found);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        schema_limits(values, &format!("{path}.*"), found);
    }
}

/// The CEL rules are built from the constants the Rust rules use: each reserved flag, each
/// reserved service name, each name-length limit, the DNS-label pattern, the startup
/// timeout's form and limit and the digest pattern of every image is in the rule text.
#[test]
fn the_crd_cel_rules_name_every_shared_constant() {
    let crd = serde_json::to_value(infera_core::crd::crd()).expect("json");
    let mut rules = Vec::new();
    cel_rules(&crd, &mut rules);
    let text = rules.join("\n");
    for flag in flags::RESERVED {
        assert!(
            text.contains(&format!("'{flag}'")),
            "reserved flag {flag} is not in {text}"
        );
    }
    for name in naming::RESERVED_SERVICE_NAMES {
        assert!(
            text.contains(&format!("'{name}'")),
            "reserved name {name} is not in {text}"
        );
    }
    for limit in [
        format!(
            "size(self.metadata.name) <= {}",
            naming::MAX_DEPLOYMENT_NAME
        ),
        format!(
            "size(self.metadata.name) + size(s) <= {}",
            naming::MAX_DEPLOYMENT_PLUS_SERVICE
        ),
        format!(
            "self.metadata.name.matches('{}')",
            naming::DNS_LABEL_PATTERN
        ),
        format!("s.matches('{}')", naming::DNS_LABEL_PATTERN),
        format!("self.startupTimeout.matches('{DURATION_PATTERN}')"),
        format!("<= duration('{MAX_STARTUP_SECONDS}s')"),
        format!("self.image.matches('{DIGEST_PATTERN}')"),
        format!("self.services[s].image.matches('{DIGEST_PATTERN}')"),
        format!("self.gaie.eppImage.matches('{DIGEST_PATTERN}')"),
    ] {
        assert!(text.contains(&limit), "{limit} is not in {text}");
    }
}

/// The `rule` of every `x-kubernetes-validations` entry in `value`.
fn cel_rules(value: &Value, rules: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                if key == "x-kubernetes-validations" {
                    rules.extend(
                        value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|r| r["rule"].as_str())
                            .map(String::from),
                    );
                } else {
                    cel_rules(value, rules);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| cel_rules(item, rules)),
        _ => {}
    }
}

#[test]
fn unknown_fields_are_rejected_with_their_path() {
    let text = "apiVersion: infera.amd.com/v1alpha1\nkind: InferaDeployment\nmetadata: {name: x}\nspec:\n  backendFramework: sglang\n  services:\n    server: {componentType: server, replica: 2}\n";
    let error = yaml::parse_deployments(text).expect_err("typo").to_string();
    assert!(
        error.contains("spec.services.server.replica: unknown field"),
        "{error}"
    );
}

#[test]
fn wrong_kind_and_broken_yaml_are_clear_errors() {
    let error = yaml::parse_deployments("apiVersion: v1\nkind: Pod\n")
        .expect_err("pod")
        .to_string();
    assert!(
        error.contains("expected apiVersion: infera.amd.com/v1alpha1 and kind: InferaDeployment"),
        "{error}"
    );
    let error = yaml::parse_deployments("spec: [unclosed")
        .expect_err("syntax")
        .to_string();
    assert!(error.starts_with("not valid YAML"), "{error}");
}

#[test]
fn require_digest_accepts_a_spec_pinned_by_digest() {
    let pinned = format!("rocm/infera@sha256:{}", "0123456789abcdef".repeat(4));
    assert_eq!(
        errors_after(json!({"spec": {"imagePolicy": {"requireDigest": true}, "image": pinned}})),
        Vec::<String>::new()
    );
}
