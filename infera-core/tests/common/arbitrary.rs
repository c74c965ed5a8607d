//! The property tests' generator of arbitrary InferaDeployments, shared by `properties.rs` and,
//! through `#[path]`, by the upstream-parser proof in `tests/tests/isolated/upstream_parsers.rs`.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]
#![allow(dead_code, reason = "each including test uses its part")]

use std::collections::BTreeMap;

use infera_core::{
    BackendFramework, ComponentType, DiscoveryBackend, HealthSpec, InferaDeployment,
    InferaDeploymentSpec, LatencySlo, MonitoringSpec, NatsSpec, PlannerMode, PlannerPool,
    PlannerSpec, PodTemplateOverlay, ResourcesSpec, Role, SecretKeyRef, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use proptest::prelude::*;

pub fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z][a-z0-9-]{0,30}[a-z0-9]",
        1 => "[a-zA-Z0-9_.-]{0,70}",
        1 => Just("nats".to_string()),
        1 => Just(String::new()),
    ]
}

pub fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("--tp-size".to_string()),
        Just("--tensor-parallel-size".to_string()),
        Just("--pp-size".to_string()),
        Just("--port".to_string()),
        Just("--tp=4".to_string()),
        "[0-9]{1,3}",
        "-{0,2}[a-z=-]{0,12}",
    ]
}

/// Health overrides, mostly well-formed, some not (durations, paths and numbers out of range).
pub fn health() -> impl Strategy<Value = HealthSpec> {
    (
        proptest::option::of(prop_oneof!["[0-9]{1,7}[smhd]", "[0-9a-zé ]{0,9}"]),
        proptest::option::of(prop_oneof!["/[a-z_/]{0,12}", "[a-z /é]{0,6}"]),
        proptest::option::of(prop_oneof![
            Just("none".to_string()),
            "/[a-z]{0,8}",
            "[a-z ]{0,4}"
        ]),
        proptest::option::of(-1i32..400),
        proptest::option::of(-1i32..4000),
    )
        .prop_map(
            |(startup_timeout, readiness_path, liveness_path, timeout_seconds, drain_seconds)| {
                HealthSpec {
                    startup_timeout,
                    readiness_path,
                    liveness_path,
                    timeout_seconds,
                    drain_seconds,
                }
            },
        )
}

pub fn service() -> impl Strategy<Value = ServiceSpec> {
    (
        prop_oneof![Just(ComponentType::Server), Just(ComponentType::Worker)],
        proptest::option::of(prop_oneof![
            Just(Role::Mixed),
            Just(Role::Prefill),
            Just(Role::Decode)
        ]),
        proptest::option::of(-2i32..5),
        proptest::option::of(-1i32..5),
        proptest::option::of(-1i32..9),
        proptest::collection::vec(arg(), 0..6),
        proptest::option::of(prop_oneof![
            Just("64Gi".to_string()),
            Just("x".to_string()),
            Just("1.5e3".to_string())
        ]),
        proptest::option::of(health()),
        proptest::option::of(overlay()),
    )
        .prop_map(
            |(component_type, role, replicas, nodes, gpu, args, memory, health, pod_template)| {
                ServiceSpec {
                    component_type,
                    role,
                    replicas,
                    autoscaling: None,
                    number_of_nodes: nodes,
                    resources: Some(Box::new(ResourcesSpec {
                        gpu,
                        shared_memory: memory.clone().map(Quantity),
                        memory: memory.map(Quantity),
                        ..Default::default()
                    })),
                    args,
                    command: None,
                    image: None,
                    env: Vec::new(),
                    node_selector: BTreeMap::new(),
                    tolerations: Vec::new(),
                    health: health.map(Box::new),
                    pod_template: pod_template.map(Box::new),
                    network: None,
                    model: None,
                    rollout: None,
                    port: None,
                    skip_readiness_probe: false,
                    pod_labels: BTreeMap::new(),
                    extra_pod_spec: None,
                }
            },
        )
}

/// A `podTemplate`: what users add, and what the operator owns.
pub fn overlay() -> impl Strategy<Value = PodTemplateOverlay> {
    let from = |json: serde_json::Value| {
        serde_json::from_value::<PodTemplateOverlay>(json).expect("an overlay")
    };
    prop_oneof![
        Just(from(serde_json::json!({
            "metadata": {"labels": {"team": "a"}},
            "spec": {
                "containers": [{"name": "engine", "volumeMounts": [{"name": "m", "mountPath": "/models"}]}],
                "volumes": [{"name": "m", "persistentVolumeClaim": {"claimName": "m"}}],
            },
        }))),
        Just(from(
            serde_json::json!({"metadata": {"labels": {"infera.amd.com/role": "x"}}})
        )),
        Just(from(serde_json::json!({"spec": {"containers": [
            {"name": "engine", "resources": {"limits": {"amd.com/gpu": "1"}}},
        ]}}))),
        Just(from(
            serde_json::json!({"spec": {"serviceAccountName": "mine"}})
        )),
    ]
}

/// Latency targets, in range or not.
fn slo() -> impl Strategy<Value = LatencySlo> {
    (-1..700_000i32, -1..700_000i32).prop_map(|(ttft, itl)| LatencySlo {
        ttft_p95_milliseconds: ttft,
        itl_p95_milliseconds: itl,
    })
}

/// `spec.monitoring`, its interval well formed or not, in range or not.
fn monitoring() -> impl Strategy<Value = MonitoringSpec> {
    (
        proptest::option::of(any::<bool>()),
        proptest::option::of(prop_oneof![
            Just("30s".to_string()),
            Just("0s".to_string()),
            Just("2h".to_string()),
            Just("1m30s".to_string())
        ]),
        proptest::collection::btree_map("[a-z]{1,8}", "[a-z]{0,8}", 0..3),
        proptest::option::of(slo()),
    )
        .prop_map(|(enabled, interval, labels, slo)| MonitoringSpec {
            enabled,
            interval,
            labels,
            slo,
        })
}

/// A planner on pools that may or may not exist, with values in and out of range.
fn planner() -> impl Strategy<Value = PlannerSpec> {
    (
        proptest::option::of(prop_oneof![
            Just(PlannerMode::Off),
            Just(PlannerMode::Advise),
            Just(PlannerMode::Act)
        ]),
        slo(),
        proptest::collection::btree_map(
            prop_oneof![
                Just("decode".to_string()),
                Just("prefill".to_string()),
                name()
            ],
            (-1..1_002i32, -1..1_002i32),
            0..3,
        ),
        proptest::option::of(-1..4_000i32),
        proptest::option::of(-1..100_000i32),
        proptest::option::of(-1..1_002i32),
        proptest::option::of(prop_oneof![
            Just("http://prometheus-operated.monitoring:9090".to_string()),
            Just("https://prom.example.com/sub/path".to_string()),
            Just("prometheus:9090".to_string()),
            Just("http://".to_string()),
            Just(String::new()),
        ]),
    )
        .prop_map(
            |(mode, slo, pools, interval_seconds, cooldown_seconds, max_step, prometheus)| {
                PlannerSpec {
                    mode,
                    slo,
                    pools: pools
                        .into_iter()
                        .map(|(pool, (min, max))| (pool, PlannerPool { min, max }))
                        .collect(),
                    interval_seconds,
                    cooldown_seconds,
                    max_step,
                    prometheus,
                }
            },
        )
}

pub fn deployment() -> impl Strategy<Value = InferaDeployment> {
    (
        name(),
        proptest::collection::btree_map(name(), service().prop_map(Box::new), 0..5),
        prop_oneof![Just(BackendFramework::Sglang), Just(BackendFramework::Vllm)],
        proptest::option::of(prop_oneof![
            Just(DiscoveryBackend::Kubernetes),
            Just(DiscoveryBackend::Etcd)
        ]),
        proptest::option::of("http://[a-z]{1,8}:2379"),
        proptest::option::of((
            proptest::option::of(any::<bool>()),
            proptest::option::of("nats://[a-z]{1,8}:4222"),
            any::<bool>(),
        )),
        proptest::option::of(overlay()),
        proptest::option::of(monitoring()),
        proptest::option::of(planner()),
    )
        .prop_map(
            |(
                name,
                services,
                backend,
                discovery,
                etcd,
                nats,
                pod_template,
                monitoring,
                planner,
            )| {
                let mut idep = InferaDeployment::new(
                    &name,
                    InferaDeploymentSpec {
                        rollout: None,
                        revision_history_limit: None,
                        backend_framework: backend,
                        image: Some("rocm/infera:test".into()),
                        discovery_backend: discovery,
                        etcd_endpoint: etcd,
                        nats: nats.map(|(deploy, url, secret)| NatsSpec {
                            deploy,
                            storage_size: None,
                            url,
                            url_secret_ref: secret.then(|| SecretKeyRef {
                                name: "nats-url".into(),
                                key: None,
                            }),
                            image: None,
                            storage_class_name: None,
                        }),
                        gaie: None,
                        envs: Vec::new(),
                        image_policy: None,
                        pod_template,
                        model: None,
                        network: None,
                        network_policy: None,
                        monitoring,
                        planner,
                        services,
                    },
                );
                idep.metadata.namespace = Some("ns".into());
                idep
            },
        )
}
