//! Every rule rejects what it should, naming the field path; the seed's example passes.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

use infera_core::{InferaDeployment, validate, yaml};
use serde_json::{Value, json};

fn seed() -> Value {
    let text = std::fs::read_to_string(format!(
        "{}/../examples/pd.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("example");
    let deployments = yaml::parse_deployments(&text).expect("parses");
    serde_json::to_value(&deployments[0]).expect("json")
}

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

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(&key);
                } else {
                    merge(target.entry(key).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch,
    }
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
            json!({"spec": {"services": {"router2": {"componentType": "server"}}}}),
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
                "spec.services.nats: the names nats, nats-headless, epp, discovery, pool, route are reserved",
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
            json!({"spec": {"services": {"server": {"args": ["--router-mode=direct"]}}}}),
            vec!["spec.services.server.args[0]: --router-mode is injected by the operator"],
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
            json!({"spec": {"backendFramework": "vllm", "services": {"decode": {"resources": {"gpu": 8}, "numberOfNodes": 2, "args": ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "4"]}}}}),
            vec![
                "spec.services.decode.args: --tensor-parallel-size 8 × --pipeline-parallel-size 4 uses 32 GPUs but resources.gpu × numberOfNodes is 16",
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
            "nats external without url",
            json!({"spec": {"nats": {"deploy": false, "storageSize": null}}}),
            vec!["spec.nats.url: is required when deploy is false"],
        ),
        (
            "nats deploy with url",
            json!({"spec": {"nats": {"url": "nats://x:4222"}}}),
            vec!["spec.nats.url: is only used when deploy is false"],
        ),
        (
            "nats storage without deploy",
            json!({"spec": {"nats": {"deploy": false, "url": "nats://x:4222"}}}),
            vec!["spec.nats.storageSize: is only used when deploy is true"],
        ),
        (
            "bad gateway name",
            json!({"spec": {"gaie": {"gatewayName": "My Gateway"}}}),
            vec!["spec.gaie.gatewayName: must be the name of a Gateway"],
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
