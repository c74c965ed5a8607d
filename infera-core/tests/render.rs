//! Snapshot tests: the seed's examples render into exactly these objects.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

#[allow(dead_code, reason = "this file uses only with_kv_roles")]
mod common;

use infera_core::{render, validate, yaml};

fn load(file: &str) -> infera_core::InferaDeployment {
    let text =
        std::fs::read_to_string(format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("example");
    let mut deployments = yaml::parse_deployments(&text).expect("parses");
    deployments.remove(0)
}

#[test]
fn seed_pd_example_renders_every_child() {
    let valid = validate(&load("pd.yaml")).expect("the seed's example is valid");
    let children = render(&valid);
    insta::assert_snapshot!(yaml::to_yaml_stream(&children).expect("yaml"));
}

#[test]
fn multi_node_pool_renders_a_leader_worker_set() {
    let valid = validate(&load("multinode.yaml")).expect("valid");
    let children = render(&valid);
    insta::assert_snapshot!(yaml::to_yaml_stream(&children).expect("yaml"));
}

/// `file` with the other engine: every backend × topology has a snapshot.
fn on_backend(file: &str, backend: infera_core::BackendFramework) -> String {
    let mut deployment = load(file);
    deployment.spec.backend_framework = backend;
    common::with_kv_roles(&mut deployment);
    let children = render(&validate(&deployment).expect("valid"));
    yaml::to_yaml_stream(&children).expect("yaml")
}

#[test]
fn pd_example_on_vllm_drains_for_shutdown_timeout() {
    insta::assert_snapshot!(on_backend("pd.yaml", infera_core::BackendFramework::Vllm));
}

/// The multi-node example on vLLM, with vLLM's parallelism flags. Rendered as the engine
/// contract says, though upstream's wrapper cannot start its ranks > 0 (docs/upstream-contract.md).
#[test]
fn multi_node_pool_on_vllm_probes_the_leaders_only() {
    let mut deployment = load("multinode.yaml");
    deployment.spec.backend_framework = infera_core::BackendFramework::Vllm;
    if let Some(worker) = deployment.spec.services.get_mut("worker") {
        worker.args = [
            "--model",
            "meta-llama/Llama-3.1-405B-Instruct",
            "--tensor-parallel-size",
            "8",
            "--pipeline-parallel-size",
            "2",
        ]
        .map(String::from)
        .to_vec();
    }
    let children = render(&validate(&deployment).expect("valid"));
    insta::assert_snapshot!(yaml::to_yaml_stream(&children).expect("yaml"));
}

#[test]
fn the_readme_documents_every_injected_flag() {
    let readme = std::fs::read_to_string(format!("{}/../README.md", env!("CARGO_MANIFEST_DIR")))
        .expect("README");
    let table = readme
        .split("### Injected engine flags")
        .nth(1)
        .expect("the injected-flag section");
    for flag in infera_core::flags::RESERVED {
        assert!(
            table.contains(flag),
            "README's injected-flag table does not mention {flag}"
        );
    }
}

/// `file` with `spec.gaie` naming a Gateway and its `http` listener.
fn with_gaie(file: &str) -> Vec<infera_core::Child> {
    let mut deployment = load(file);
    deployment.spec.gaie = Some(infera_core::GaieSpec {
        enabled: Some(true),
        gateway_name: "inference-gateway".into(),
        gateway_section_name: Some("http".into()),
        tokenizer_path: Some("Qwen/Qwen3-0.6B".into()),
        // Not 8000, the port of vLLM's engine.
        frontend_port: Some(8080),
        ..Default::default()
    });
    render(&validate(&deployment).expect("valid"))
}

#[test]
fn gaie_adds_the_endpoint_picker_pool_route_and_sidecars() {
    insta::assert_snapshot!(yaml::to_yaml_stream(&with_gaie("pd.yaml")).expect("yaml"));
}

#[test]
fn gaie_on_a_multi_node_pool_fronts_the_leaders_only() {
    insta::assert_snapshot!(yaml::to_yaml_stream(&with_gaie("multinode.yaml")).expect("yaml"));
}

/// A worker pool of a test graph: name, role, nodes per replica.
type Pool<'a> = (&'a str, &'a str, i32);

/// A small graph of `workers` on `backend`, fronted by a Gateway.
fn gaie_graph(backend: &str, workers: &[Pool<'_>]) -> String {
    graph(backend, workers, true)
}

/// A small graph of `workers` on `backend`, with or without a Gateway.
fn graph(backend: &str, workers: &[Pool<'_>], gaie: bool) -> String {
    let mut services = serde_json::json!({"server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}});
    for (name, role, nodes) in workers {
        services[*name] = serde_json::json!({
            "componentType": "worker", "role": role, "numberOfNodes": nodes,
            "resources": {"gpu": 1}, "args": ["--tp-size", nodes.to_string()],
        });
    }
    let deployment: infera_core::InferaDeployment = serde_json::from_value(serde_json::json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "gw"},
        "spec": {"backendFramework": backend, "image": "rocm/infera:v0.1.1", "services": services},
    }))
    .expect("an InferaDeployment");
    let mut deployment = deployment;
    if gaie {
        deployment.spec.gaie = Some(infera_core::GaieSpec {
            enabled: Some(true),
            gateway_name: "inference-gateway".into(),
            tokenizer_path: Some("Qwen/Qwen3-0.6B".into()),
            // vLLM's engine listens on 8000, the sidecar's default.
            frontend_port: (backend == "vllm").then_some(8080),
            ..Default::default()
        });
    }
    common::with_kv_roles(&mut deployment);
    yaml::to_yaml_stream(&render(&validate(&deployment).expect("valid"))).expect("yaml")
}

#[test]
fn gaie_on_an_aggregated_sglang_graph() {
    insta::assert_snapshot!(gaie_graph("sglang", &[("worker", "mixed", 1)]));
}

#[test]
fn gaie_on_a_multi_node_pd_vllm_graph() {
    insta::assert_snapshot!(gaie_graph(
        "vllm",
        &[("prefill", "prefill", 1), ("decode", "decode", 2)]
    ));
}

/// `(object, container, imagePullPolicy)` of every container of `children`.
fn pull_policies(children: &[infera_core::Child]) -> Vec<(String, String, Option<String>)> {
    fn walk(
        object: &str,
        value: &serde_json::Value,
        out: &mut Vec<(String, String, Option<String>)>,
    ) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    if let ("containers", serde_json::Value::Array(containers)) =
                        (key.as_str(), value)
                    {
                        for c in containers {
                            out.push((
                                object.to_string(),
                                c["name"].as_str().unwrap_or_default().to_string(),
                                c["imagePullPolicy"].as_str().map(String::from),
                            ));
                        }
                    } else {
                        walk(object, value, out);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(object, v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for child in children {
        walk(
            child.name(),
            &serde_json::to_value(child).expect("json"),
            &mut out,
        );
    }
    out
}

#[test]
fn images_pinned_by_digest_are_pulled_if_not_present_and_tags_by_kubernetes_default() {
    let pinned = format!("rocm/infera@sha256:{}", "0123456789abcdef".repeat(4));
    let mut deployment = load("pd.yaml");
    deployment.spec.image = Some(pinned.clone());
    deployment.spec.gaie = Some(infera_core::GaieSpec {
        enabled: Some(true),
        gateway_name: "inference-gateway".into(),
        epp_image: Some(pinned),
        tokenizer_path: Some("Qwen/Qwen3-0.6B".into()),
        frontend_port: Some(8080),
        ..Default::default()
    });
    if let Some(decode) = deployment.spec.services.get_mut("decode") {
        decode.image = Some("rocm/infera:sglang-v0.1.1".into());
    }
    let if_not_present = Some("IfNotPresent".to_string());
    let row = |object: &str, container: &str, policy: &Option<String>| {
        (object.to_string(), container.to_string(), policy.clone())
    };
    assert_eq!(
        pull_policies(&render(&validate(&deployment).expect("valid"))),
        [
            row("demo-nats", "nats", &None),
            row("demo-server", "engine", &if_not_present),
            row("demo-decode", "engine", &None),
            // The sidecar runs the GAIE image (eppImage), not the service's.
            row("demo-decode", "infera-frontend", &if_not_present),
            row("demo-prefill", "engine", &if_not_present),
            row("demo-prefill", "infera-frontend", &if_not_present),
            row("demo-epp", "epp", &if_not_present),
        ]
    );
}

#[test]
fn pod_templates_add_volumes_mounts_metadata_affinity_and_a_command() {
    let valid = validate(&load("pod-template.yaml")).expect("valid");
    let children = render(&valid);
    insta::assert_snapshot!(yaml::to_yaml_stream(&children).expect("yaml"));
}

/// Every backend × topology (aggregated, prefill/decode, multi-node prefill/decode): the probes,
/// the drain and the leader/worker split of each.
#[test]
fn every_backend_and_topology_is_probed_and_drained_as_its_engine_needs() {
    let topologies: [(&str, &[Pool<'_>]); 3] = [
        ("aggregated", &[("worker", "mixed", 1)]),
        ("pd", &[("prefill", "prefill", 1), ("decode", "decode", 1)]),
        (
            "multi-node-pd",
            &[("prefill", "prefill", 2), ("decode", "decode", 2)],
        ),
    ];
    for backend in ["sglang", "vllm"] {
        for (topology, workers) in topologies {
            insta::assert_snapshot!(
                format!("{backend}_{topology}"),
                graph(backend, workers, false)
            );
        }
    }
}

/// `resources.gpuProduct` requires a node of that product: alone, and on top of the user's own
/// required node affinity (in every one of its terms).
#[test]
fn gpu_product_requires_a_node_labelled_with_the_product() {
    let mut deployment = load("pod-template.yaml");
    for (service, product) in [("prefill", "MI300X"), ("decode", "AMD_Instinct_MI300X_HF")] {
        if let Some(pool) = deployment.spec.services.get_mut(service) {
            pool.resources
                .get_or_insert_with(Default::default)
                .gpu_product = Some(product.into());
        }
    }
    let children = render(&validate(&deployment).expect("valid"));
    let affinities: Vec<(String, serde_json::Value)> = children
        .iter()
        .map(|child| {
            let json = serde_json::to_value(child).expect("json");
            (
                child.name().to_string(),
                json["spec"]["template"]["spec"]["affinity"].clone(),
            )
        })
        .filter(|(_, affinity)| !affinity.is_null())
        .collect();
    insta::assert_yaml_snapshot!(affinities);
}

/// The README's worked example: GPU product affinity, RDMA NICs in limits, the Multus
/// annotation, IPC_LOCK and the injected IB device on the prefill and decode pods.
#[test]
fn pd_on_mi300x_with_rdma_renders_every_child() {
    let valid = validate(&load("pd-mi300x.yaml")).expect("valid");
    insta::assert_snapshot!(yaml::to_yaml_stream(&render(&valid)).expect("yaml"));
}

/// A pool's own `network.rdma` replaces `spec.network.rdma`: its own resource, count and
/// networks, no device and no IPC_LOCK; a multi-node mixed pool takes the deployment's.
#[test]
fn a_pools_own_rdma_replaces_the_deployments_and_multi_node_pools_take_it() {
    let mut deployment = load("pd-mi300x.yaml");
    let decode: infera_core::NetworkSpec = serde_json::from_value(serde_json::json!(
        {"rdma": {"resourceName": "amd.com/vnic", "perPod": 2, "networks": ["team/roce-a", "roce-b"], "ipcLock": false}}
    ))
    .expect("a network");
    if let Some(pool) = deployment.spec.services.get_mut("decode") {
        pool.network = Some(Box::new(decode));
    }
    let valid = validate(&deployment).expect("valid");
    let decode = valid
        .workers
        .iter()
        .find(|w| w.pod.service == "decode")
        .expect("decode");
    let rdma = decode.rdma.clone().expect("rdma");
    assert_eq!(
        (
            rdma.resource_name.as_str(),
            rdma.per_pod,
            rdma.networks,
            rdma.device,
            rdma.ipc_lock
        ),
        (
            "amd.com/vnic",
            2,
            vec!["team/roce-a".to_string(), "roce-b".to_string()],
            None,
            false
        )
    );
    let children = render(&valid);
    let text = yaml::to_yaml_stream(&children).expect("yaml");
    assert!(
        text.contains("k8s.v1.cni.cncf.io/networks: team/roce-a, roce-b"),
        "{text}"
    );
    assert_eq!(
        text.matches("--disaggregation-ib-device").count(),
        1,
        "prefill only: {text}"
    );
    assert_eq!(text.matches("IPC_LOCK").count(), 1, "prefill only: {text}");
}

/// `pvc://` (with a sub-path) on SGLang and `hostPath://` on vLLM: the volume in every worker
/// pod, mounted read-only at the mount path, and the engine's own model flag pointing there.
#[test]
fn model_volumes_mount_into_every_worker_with_the_engines_model_flag() {
    let mut out = Vec::new();
    for (backend, source) in [
        (
            infera_core::BackendFramework::Sglang,
            "pvc://weights/qwen/Qwen3-0.6B",
        ),
        (
            infera_core::BackendFramework::Vllm,
            "hostPath:///data/models/qwen",
        ),
    ] {
        let mut deployment = load("pod-template.yaml");
        deployment.spec.backend_framework = backend;
        deployment.spec.model = Some(infera_core::ModelSpec {
            source: source.into(),
            mount_path: Some("/weights".into()),
            ..Default::default()
        });
        for pool in deployment.spec.services.values_mut() {
            pool.args
                .retain(|a| a != "--model-path" && a != "/models/Qwen3-0.6B");
        }
        common::with_kv_roles(&mut deployment);
        let children = render(&validate(&deployment).expect("valid"));
        for child in &children {
            let json = serde_json::to_value(child).expect("json");
            let pod = &json["spec"]["template"]["spec"];
            if json["kind"] == "Deployment" && child.name() != "overlay-server" {
                out.push(serde_json::json!({
                    "backend": backend.to_string(),
                    "pool": child.name(),
                    "args": pod["containers"][0]["args"],
                    "volumeMounts": pod["containers"][0]["volumeMounts"],
                    "volumes": pod["volumes"],
                }));
            }
        }
    }
    insta::assert_yaml_snapshot!(out);
}

/// An `hf://` model: its volume and download Job come first and the GPU pools stay at zero
/// replicas until the operator has seen the Job succeed.
#[test]
fn an_hf_model_holds_the_gpu_pools_until_its_download_succeeded() {
    let mut valid = validate(&load("pd-mi300x.yaml")).expect("valid");
    let replicas = |children: &[infera_core::Child]| -> Vec<(String, i64)> {
        children
            .iter()
            .filter(|c| c.kind() == infera_core::ChildKind::Deployment)
            .map(|c| {
                let json = serde_json::to_value(c).expect("json");
                (
                    c.name().to_string(),
                    json["spec"]["replicas"].as_i64().unwrap_or(-1),
                )
            })
            .collect()
    };
    let row = |name: &str, n: i64| (name.to_string(), n);
    let held = render(&valid);
    assert_eq!(
        replicas(&held),
        [
            row("mi300x-server", 1),
            row("mi300x-decode", 0),
            row("mi300x-prefill", 0)
        ]
    );
    valid.set_downloaded("mi300x-model");
    assert_eq!(
        replicas(&render(&valid)),
        [
            row("mi300x-server", 1),
            row("mi300x-decode", 1),
            row("mi300x-prefill", 1)
        ]
    );
}

/// A pool's own `model` replaces `spec.model` for that pool alone: its volume, its flag and, for
/// `hf://`, a download of its own (`<deployment>-<service>-model`) that holds only that pool.
#[test]
fn a_pools_own_model_replaces_spec_model_for_that_pool() {
    let mut deployment = load("pd-mi300x.yaml");
    let decode = deployment.spec.services.get_mut("decode").expect("decode");
    decode.model = Some(Box::new(infera_core::ModelSpec {
        source: "hf://Qwen/Qwen3-1.7B@main".into(),
        mount_path: Some("/weights".into()),
        cache: Some(infera_core::ModelCache {
            size: k8s_openapi::apimachinery::pkg::api::resource::Quantity("40Gi".into()),
            ..Default::default()
        }),
        ..Default::default()
    }));
    let mut valid = validate(&deployment).expect("valid");
    assert_eq!(
        valid
            .downloads()
            .iter()
            .map(|m| m.download_name.as_str())
            .collect::<Vec<_>>(),
        ["mi300x-decode-model", "mi300x-model"]
    );
    valid.set_downloaded("mi300x-model");
    let mut out = Vec::new();
    for child in render(&valid) {
        let json = serde_json::to_value(&child).expect("json");
        match child.kind() {
            infera_core::ChildKind::Job => out.push(serde_json::json!({
                "job": child.name(),
                "command": json["spec"]["template"]["spec"]["containers"][0]["command"],
            })),
            infera_core::ChildKind::PersistentVolumeClaim => out.push(serde_json::json!({
                "claim": child.name(),
                "storage": json["spec"]["resources"]["requests"]["storage"],
            })),
            infera_core::ChildKind::Deployment if child.name() != "mi300x-server" => {
                let pod = &json["spec"]["template"]["spec"];
                out.push(serde_json::json!({
                    "pool": child.name(),
                    "replicas": json["spec"]["replicas"],
                    "args": pod["containers"][0]["args"],
                    "volumeMounts": pod["containers"][0]["volumeMounts"],
                    "volumes": pod["volumes"],
                }));
            }
            _ => {}
        }
    }
    insta::assert_yaml_snapshot!(out);
}

/// `file` with the HPA `autoscaling` instead of `replicas` on `service`: the rendered workload of
/// that service, without `replicas`, and its HorizontalPodAutoscaler.
fn autoscaled(file: &str, service: &str) -> String {
    autoscaled_with(
        file,
        service,
        serde_json::json!({
            "minReplicas": 2,
            "maxReplicas": 6,
            "metrics": [{"type": "Pods", "pods": {
                "metric": {"name": "sglang_num_queue_reqs"},
                "target": {"type": "AverageValue", "averageValue": "4"},
            }}],
        }),
    )
}

/// `file` with `autoscaling` instead of `replicas` on `service`: the rendered workload of that
/// service and its autoscaler (HorizontalPodAutoscaler or ScaledObject).
fn autoscaled_with(file: &str, service: &str, autoscaling: serde_json::Value) -> String {
    let mut deployment = load(file);
    let pool = deployment
        .spec
        .services
        .get_mut(service)
        .expect("the service");
    pool.replicas = None;
    pool.autoscaling = Some(serde_json::from_value(autoscaling).expect("autoscaling"));
    let children: Vec<_> = render(&validate(&deployment).expect("valid"))
        .into_iter()
        .filter(|child| {
            child.service() == service
                && matches!(
                    child.kind(),
                    infera_core::ChildKind::Deployment
                        | infera_core::ChildKind::LeaderWorkerSet
                        | infera_core::ChildKind::HorizontalPodAutoscaler
                        | infera_core::ChildKind::ScaledObject
                )
        })
        .collect();
    yaml::to_yaml_stream(&children).expect("yaml")
}

#[test]
fn an_autoscaled_deployment_pool_gets_an_hpa_and_no_replicas() {
    let text = autoscaled("pd.yaml", "decode");
    assert!(!text.contains("replicas: 1"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn an_autoscaled_multi_node_pool_gets_an_hpa_on_its_leader_worker_set() {
    let text = autoscaled("multinode.yaml", "worker");
    insta::assert_snapshot!(text);
}

/// KEDA autoscaling: a Prometheus trigger on the engine's queue length, with its credentials.
fn keda() -> serde_json::Value {
    serde_json::json!({
        "provider": "keda",
        "minReplicas": 1,
        "maxReplicas": 4,
        "triggers": [{
            "type": "prometheus",
            "name": "queue",
            "metadata": {
                "serverAddress": "http://prometheus.monitoring:9090",
                "query": "sum(sglang_num_queue_reqs{service=\"decode\"})",
                "threshold": "4",
            },
            "authenticationRef": {"name": "prometheus", "kind": "ClusterTriggerAuthentication"},
        }, {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "80"}}],
    })
}

#[test]
fn a_keda_pool_gets_a_scaled_object_on_its_deployment_and_no_replicas() {
    let text = autoscaled_with("pd.yaml", "decode", keda());
    assert!(!text.contains("kind: HorizontalPodAutoscaler"), "{text}");
    assert!(!text.contains("replicas: 1\n"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_keda_multi_node_pool_gets_a_scaled_object_on_its_leader_worker_set() {
    let text = autoscaled_with("multinode.yaml", "worker", keda());
    insta::assert_snapshot!(text);
}

#[test]
fn the_revision_moves_with_the_worker_pods_not_with_replicas_or_the_server() {
    let base = load("pd.yaml");
    let revision = |deployment: &infera_core::InferaDeployment| {
        render::revision(
            &validate(deployment).expect("valid"),
            render::Apis::default(),
        )
    };
    let changed = |change: &dyn Fn(&mut infera_core::InferaDeploymentSpec)| {
        let mut deployment = base.clone();
        change(&mut deployment.spec);
        revision(&deployment)
    };
    let service = |spec: &mut infera_core::InferaDeploymentSpec, name: &str| {
        spec.services.get_mut(name).expect("the service").clone()
    };
    let first = revision(&base);
    assert_eq!(first.len(), 10);
    assert_eq!(
        changed(&|spec| {
            let mut decode = service(spec, "decode");
            decode.replicas = Some(4);
            spec.services.insert("decode".into(), decode);
        }),
        first,
        "scaling is no new revision"
    );
    assert_eq!(
        changed(&|spec| {
            let mut server = service(spec, "server");
            server.args.push("--log-level=debug".into());
            spec.services.insert("server".into(), server);
        }),
        first,
        "the server's pods are not worker pods"
    );
    assert_ne!(
        changed(&|spec| spec.image = Some("rocm/infera:sglang-v0.1.2".into())),
        first
    );
    assert_ne!(
        changed(&|spec| {
            let mut decode = service(spec, "decode");
            decode.args.push("--log-level=debug".into());
            spec.services.insert("decode".into(), decode);
        }),
        first
    );
    // Every worker pod carries it, as a label and in its engine's environment.
    let text = yaml::to_yaml_stream(&render(&validate(&base).expect("valid"))).expect("yaml");
    // YAML quotes a revision that reads as a number.
    let lines = |key: &str| {
        text.lines()
            .map(str::trim)
            .filter(|line| {
                line.strip_prefix(key)
                    .is_some_and(|value| value.trim_matches('"') == first)
            })
            .count()
    };
    assert_eq!(lines("infera.amd.com/revision: "), 2);
    assert_eq!(lines("value: "), 2);
}

/// What the operator's rollout and status read of the rendered workloads, from the typed objects:
/// the worker pools carry the revision, the server and NATS none; a LeaderWorkerSet its group size.
#[test]
fn the_workloads_summary_reads_replicas_group_size_and_revision() {
    let summary = |file: &str| {
        let valid = validate(&load(file)).expect("valid");
        let revision = render::revision(&valid, render::Apis::default());
        render::Workload::of(&render(&valid))
            .into_iter()
            .map(|w| {
                let pinned = w.revision.map(|r| r == revision);
                (w.kind, w.name, w.service, w.replicas, w.group_size, pinned)
            })
            .collect::<Vec<_>>()
    };
    use infera_core::ChildKind::{Deployment, LeaderWorkerSet, StatefulSet};
    let row = |kind, name: &str, service: &str, replicas, group, revision| {
        let (name, service) = (name.to_string(), service.to_string());
        (kind, name, service, Some(replicas), group, revision)
    };
    assert_eq!(
        summary("multinode.yaml"),
        [
            row(StatefulSet, "big-nats", "nats", 1, None, None),
            row(Deployment, "big-server", "server", 1, None, None),
            row(
                LeaderWorkerSet,
                "big-worker",
                "worker",
                2,
                Some(2),
                Some(true)
            ),
        ]
    );
    let pd = summary("pd.yaml");
    let pools: Vec<_> = pd.iter().filter(|w| w.5.is_some()).collect();
    assert_eq!(pools.len(), 2, "{pd:?}");
    assert!(pools.iter().all(|w| w.5 == Some(true) && w.0 == Deployment));
}

/// An external NATS whose URL (with its credentials) is in the user's Secret: every pod that talks
/// to NATS reads it as `NATS_SERVER` and passes `--nats-server $(NATS_SERVER)`; no URL is in any
/// child, and there is no managed NATS, its credentials or its NetworkPolicy.
#[test]
fn an_external_nats_url_from_a_secret_reaches_the_pods_by_reference() {
    let mut deployment = load("pd.yaml");
    deployment.spec.nats = Some(infera_core::NatsSpec {
        url_secret_ref: Some(infera_core::SecretKeyRef {
            name: "my-nats".into(),
            key: None,
        }),
        ..Default::default()
    });
    let valid = validate(&deployment).expect("valid");
    assert!(infera_core::render::nats_credentials(&valid, "p").is_none());
    let children = render(&valid);
    let mut pods = 0;
    for child in &children {
        let json = serde_json::to_value(child).expect("JSON");
        assert!(
            !json.to_string().contains("nats://"),
            "{} holds a URL",
            child.name()
        );
        assert!(!child.name().ends_with("-nats"), "{}", child.name());
        let kind = child.kind();
        for (_, template) in infera_core::render::pod_templates(kind, child.name(), &json) {
            let container = &template["spec"]["containers"][0];
            let env: Vec<&serde_json::Value> = container["env"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["name"] == "NATS_SERVER")
                .collect();
            assert_eq!(
                env,
                [&serde_json::json!({"name": "NATS_SERVER",
                    "valueFrom": {"secretKeyRef": {"name": "my-nats", "key": "url"}}})],
                "{}",
                child.name()
            );
            let args: Vec<&str> = container["args"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str())
                .collect();
            let at = args.iter().position(|a| *a == "--nats-server");
            assert_eq!(
                at.map(|i| args[i + 1]),
                Some("$(NATS_SERVER)"),
                "{}",
                child.name()
            );
            pods += 1;
        }
    }
    assert_eq!(pods, 3, "server, prefill and decode");
}

/// `spec.monitoring` adds one PodMonitor, last, and changes no other child (nor the revision:
/// the worker pods do not roll).
#[test]
fn monitoring_adds_a_pod_monitor_of_the_serving_pods_and_changes_nothing_else() {
    let base = load("pd.yaml");
    let mut monitored = base.clone();
    monitored.spec.monitoring = Some(
        serde_json::from_value(
            serde_json::json!({"interval": "15s", "labels": {"release": "kps"}}),
        )
        .expect("monitoring"),
    );
    let before = render(&validate(&base).expect("valid"));
    let mut after = render(&validate(&monitored).expect("valid"));
    let monitor = after.pop().expect("a child");
    assert_eq!(after, before);
    assert_eq!(monitor.kind(), infera_core::ChildKind::PodMonitor);
    insta::assert_snapshot!(yaml::to_yaml_stream(&[monitor]).expect("yaml"));
    let off = {
        let mut off = monitored.clone();
        if let Some(m) = off.spec.monitoring.as_mut() {
            m.enabled = Some(false);
        }
        off
    };
    assert_eq!(render(&validate(&off).expect("valid")), before);
}

/// `spec.monitoring.slo` adds one PrometheusRule after the PodMonitor, with the same labels, and
/// changes nothing else: three burn-rate alerts per objective, each a pair of windows over the
/// histogram of the pools that prefill (time to first token) or decode (between tokens).
#[test]
fn latency_objectives_add_a_prometheus_rule_of_burn_rate_alerts() {
    let base = load("pd.yaml");
    let with = |monitoring: serde_json::Value| {
        let mut d = base.clone();
        d.spec.monitoring = Some(serde_json::from_value(monitoring).expect("monitoring"));
        render(&validate(&d).expect("valid"))
    };
    let monitored = with(serde_json::json!({"labels": {"release": "kps"}}));
    let mut alerted = with(serde_json::json!({
        "labels": {"release": "kps"},
        "slo": {"ttftP95Milliseconds": 500, "itlP95Milliseconds": 50},
    }));
    let rule = alerted.pop().expect("a child");
    assert_eq!(alerted, monitored);
    assert_eq!(rule.kind(), infera_core::ChildKind::PrometheusRule);
    assert_eq!(
        rule.metadata(),
        monitored.last().expect("the PodMonitor").metadata()
    );
    insta::assert_snapshot!(yaml::to_yaml_stream(&[rule]).expect("yaml"));
}

/// Restricted egress is one policy over the pods of the graph — here engines, router, NATS and
/// the model's download Job — that lets them reach one another, DNS, the API server's endpoints
/// and what `allow` adds.
#[test]
fn restricted_egress_lets_the_graphs_pods_reach_one_another_dns_the_api_server_and_what_is_allowed()
{
    let mut deployment = load("pd-mi300x.yaml");
    let allow = serde_json::json!({"restrict": true, "allow": [
        {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}], "ports": [{"port": 443}]},
    ]});
    deployment.spec.network_policy = Some(infera_core::NetworkPolicySpec {
        egress: Some(serde_json::from_value(allow).expect("egress")),
        ..Default::default()
    });
    let valid = validate(&deployment).expect("valid");
    let apis = render::Apis {
        api_server: Some(render::ApiServer {
            addresses: vec!["172.18.0.2".into(), "fd00::2".into()],
            ports: vec![6443],
        }),
        ..render::Apis::default()
    };
    let children = render::render_for(&valid, apis);
    let name = format!("{}-egress", valid.name);
    let policy = children
        .iter()
        .find(|c| c.kind() == render::ChildKind::NetworkPolicy && c.name() == name)
        .expect("the egress policy");
    insta::assert_snapshot!(yaml::to_yaml_stream(std::slice::from_ref(policy)).expect("yaml"));
    // Its selector, the deployment's label, is on every pod the graph runs.
    let mut pods = Vec::new();
    for child in &children {
        let json = serde_json::to_value(child).expect("json");
        for (_, template) in render::pod_templates(child.kind(), child.name(), &json) {
            let label = &template["metadata"]["labels"]["infera.amd.com/deployment"];
            assert_eq!(
                label.as_str(),
                Some(valid.name.as_str()),
                "{}",
                child.name()
            );
            pods.push(child.kind());
        }
    }
    for kind in [
        render::ChildKind::Job,
        render::ChildKind::StatefulSet,
        render::ChildKind::Deployment,
    ] {
        assert!(pods.contains(&kind), "{kind:?} among {pods:?}");
    }
}
