//! One service: what every service's pods share (an image, a replica count, engine arguments
//! without injected flags, sizes), what the server must not have, and what a worker pool needs.

use super::rules::{
    DEFAULT_GPU_TYPE, EXTRA_POD_SPEC_ALONE, EXTRA_POD_SPEC_CONTAINER, SERVER_GPU,
    SERVER_GPU_PRODUCT, SERVER_NODES, SERVER_ROLE, SERVER_TOKENIZER, SKIP_PROBES_HEALTH,
    TOKENIZER_FLAG, WORKER_GPU,
};
use super::{
    Errors, Pod, PodOverlay, PoolBounds, Rdma, Worker, autoscaling, health,
    limits::{
        MAX_ARG_LENGTH, MAX_ARGS, MAX_GPU_PRODUCT_LENGTH, MAX_GPUS, MAX_NODES,
        MAX_REFERENCE_LENGTH, MAX_REPLICAS,
    },
    network, overlay,
    parallelism::parallelism,
    rollout,
    syntax::{
        check_length, check_max_length, check_quantity, check_range, is_gpu_product,
        is_resource_name,
    },
};
use crate::{
    flags,
    gpu_product::PRODUCT_LABEL,
    types::{
        BackendFramework, ComponentType, InferaDeploymentSpec, ResourcesSpec, Role, ServiceSpec,
    },
};

/// The container names upstream treats as the main container of an `extraPodSpec`
/// (`deploy/operator/internal/controller/builders.go:366-368, 453-461`); else the first.
pub const MAIN_CONTAINER_NAMES: [&str; 2] = ["main", "infera"];

/// Index of the main container of an `extraPodSpec`: the first named as in
/// [`MAIN_CONTAINER_NAMES`], else the first (upstream `builders.go:453-461`).
pub fn main_container(spec: &k8s_openapi::api::core::v1::PodSpec) -> usize {
    spec.containers
        .iter()
        .position(|c| MAIN_CONTAINER_NAMES.contains(&c.name.as_str()))
        .unwrap_or(0)
}

/// Whether a service with `extraPodSpec` sets a field the pod would not use.
pub(super) fn extra_pod_spec_fields_set(svc: &ServiceSpec) -> bool {
    svc.image.is_some()
        || svc.command.is_some()
        || !svc.args.is_empty()
        || !svc.env.is_empty()
        || svc.resources.is_some()
        || !svc.node_selector.is_empty()
        || !svc.tolerations.is_empty()
        || svc.health.is_some()
        || svc.model.is_some()
        || svc.network.is_some()
        || svc.pod_template.is_some()
}

/// The server (the last, if the topology rules found several) and the worker pools of `spec`.
pub(super) fn server_and_workers(
    errors: &mut Errors,
    spec: &InferaDeploymentSpec,
) -> (Option<Pod>, Vec<Worker>) {
    if let Some(image) = &spec.image {
        check_length(errors, "spec.image", image, MAX_REFERENCE_LENGTH);
    }
    let mut server = None;
    let mut workers = Vec::new();
    for (service, svc) in &spec.services {
        let path = format!("spec.services.{service}");
        let pod = pod(errors, &path, service, svc, spec);
        let gpu = svc.resources.as_ref().and_then(|r| r.gpu).unwrap_or(0);
        let deployment_rdma = spec.network.as_ref().and_then(|n| n.rdma.as_ref());
        let rdma = network::of_service(
            errors,
            &path,
            svc,
            deployment_rdma,
            spec.backend_framework,
            gpu,
        );
        match svc.component_type {
            ComponentType::Server => {
                server_rules(errors, &path, svc);
                rollout::server(errors, &path, svc.rollout.as_ref());
                server = Some(pod);
            }
            ComponentType::Worker => {
                let bounds =
                    rollout::pool(errors, &path, svc.rollout.as_ref(), spec.rollout.as_ref());
                if spec.backend_framework == BackendFramework::Vllm {
                    vllm_kv_role(errors, &path, svc.role.unwrap_or_default(), &svc.args);
                }
                workers.push(worker(errors, &path, svc, pod, rdma, bounds));
            }
        }
    }
    (server, workers)
}

/// What every service's pods share, with what the deployment gives every service.
fn pod(
    errors: &mut Errors,
    path: &str,
    service: &str,
    svc: &ServiceSpec,
    spec: &InferaDeploymentSpec,
) -> Pod {
    let default_image = spec.image.as_deref();
    let extra = svc.extra_pod_spec.as_deref();
    let extra_image = extra
        .and_then(|e| e.containers.get(main_container(e)))
        .and_then(|c| c.image.as_deref());
    pod_settings(errors, path, svc);
    overlay::check_labels(errors, &format!("{path}.podLabels"), &svc.pod_labels);
    match &svc.image {
        Some(image) => check_length(
            errors,
            &format!("{path}.image"),
            image,
            MAX_REFERENCE_LENGTH,
        ),
        None if extra.is_some() => {}
        None if default_image.is_none() => errors.push(
            format!("{path}.image"),
            "no image is set; set spec.image or an image for this service",
        ),
        None => {}
    }
    let autoscaling = autoscaling::settings(errors, path, svc.replicas, svc.autoscaling.as_deref());
    let replicas = autoscaling
        .as_ref()
        .map_or(svc.replicas.unwrap_or(1), |a| a.min_replicas);
    check_range(
        errors,
        &format!("{path}.replicas"),
        replicas,
        0..=MAX_REPLICAS,
        "must be 0 or more; set a non-negative number",
    );
    args(errors, path, &svc.args);
    if let Some(command) = &svc.command {
        command_limits(errors, path, command);
    }
    let resources = svc.resources.clone().unwrap_or_default();
    check_resources(errors, path, &resources);
    let health = health::settings(errors, &format!("{path}.health"), svc.health.as_deref());
    let port = svc.port.unwrap_or(match svc.component_type {
        ComponentType::Server => flags::SERVER_PORT,
        ComponentType::Worker => flags::WORKER_PORT,
    });
    Pod {
        service: service.to_string(),
        image: svc
            .image
            .as_deref()
            .or(extra_image)
            .or(default_image)
            .unwrap_or_default()
            .to_string(),
        port,
        skip_probes: svc.skip_readiness_probe,
        labels: svc.pod_labels.clone(),
        extra: svc.extra_pod_spec.clone(),
        replicas,
        autoscaling,
        command: svc.command.clone(),
        args: svc.args.clone(),
        env: svc.env.clone(),
        node_selector: svc.node_selector.clone(),
        tolerations: svc.tolerations.clone(),
        cpu: resources.cpu,
        memory: resources.memory,
        health,
        overlay: PodOverlay::merged(spec.pod_template.as_ref(), svc.pod_template.as_deref()),
    }
}

/// The settings of a service's pods that stand alone: `extraPodSpec` without the fields it
/// replaces and with a container, no `health` beside `skipReadinessProbe`, a port number.
fn pod_settings(errors: &mut Errors, path: &str, svc: &ServiceSpec) {
    if let Some(extra) = svc.extra_pod_spec.as_deref() {
        if extra_pod_spec_fields_set(svc) {
            errors.push(format!("{path}.extraPodSpec"), EXTRA_POD_SPEC_ALONE);
        }
        if extra.containers.is_empty() {
            errors.push(
                format!("{path}.extraPodSpec.containers"),
                EXTRA_POD_SPEC_CONTAINER,
            );
        }
    }
    if svc.skip_readiness_probe
        && svc.health.as_deref().is_some_and(|h| {
            h.startup_timeout.is_some()
                || h.readiness_path.is_some()
                || h.liveness_path.is_some()
                || h.timeout_seconds.is_some()
        })
    {
        errors.push(format!("{path}.skipReadinessProbe"), SKIP_PROBES_HEALTH);
    }
    if let Some(port) = svc.port {
        check_range(
            errors,
            &format!("{path}.port"),
            port,
            1..=65535,
            "must be a port number from 1 to 65535; fix it",
        );
    }
}

/// A service's `resources`: quantities that parse, an extended resource name, a GPU product.
fn check_resources(errors: &mut Errors, path: &str, resources: &ResourcesSpec) {
    for (field, quantity) in [
        ("cpu", &resources.cpu),
        ("memory", &resources.memory),
        ("sharedMemory", &resources.shared_memory),
    ] {
        if let Some(q) = quantity {
            check_quantity(errors, &format!("{path}.resources.{field}"), q);
        }
    }
    if let Some(gpu_type) = &resources.gpu_type
        && !is_resource_name(gpu_type)
    {
        errors.push(
            format!("{path}.resources.gpuType"),
            "must be an extended resource name such as amd.com/gpu; fix the name",
        );
    }
    if let Some(product) = &resources.gpu_product {
        gpu_product(errors, &format!("{path}.resources.gpuProduct"), product);
    }
}

/// A GPU product is a short name or a label value of at most [`MAX_GPU_PRODUCT_LENGTH`].
fn gpu_product(errors: &mut Errors, path: &str, product: &str) {
    if product.is_empty() || product.len() > MAX_GPU_PRODUCT_LENGTH || !is_gpu_product(product) {
        errors.push(
            path,
            format!("must be a GPU product such as MI300X, or a value of the node label {PRODUCT_LABEL} such as AMD_Instinct_MI300X_HF (letters, digits, '-', '_', '.', at most {MAX_GPU_PRODUCT_LENGTH} characters); fix the name"),
        );
    }
}

/// `command` fits the schema's limits (those of `args`).
fn command_limits(errors: &mut Errors, path: &str, command: &[String]) {
    if command.len() > MAX_ARGS {
        errors.push(
            format!("{path}.command"),
            format!(
                "at most {MAX_ARGS} items are allowed (now {}); shorten it",
                command.len()
            ),
        );
    }
    for (i, item) in command.iter().enumerate() {
        check_max_length(
            errors,
            &format!("{path}.command[{i}]"),
            item,
            MAX_ARG_LENGTH,
        );
    }
}

/// `args` sets no flag the operator injects, and fits the schema's limits.
fn args(errors: &mut Errors, path: &str, args: &[String]) {
    if args.len() > MAX_ARGS {
        errors.push(
            format!("{path}.args"),
            format!(
                "at most {MAX_ARGS} arguments are allowed (now {}); remove some",
                args.len()
            ),
        );
    }
    for (i, arg) in args.iter().enumerate() {
        let path = format!("{path}.args[{i}]");
        if let Some(flag) = flags::flag_name(arg).filter(|f| flags::RESERVED.contains(f)) {
            errors.push(
                &path,
                format!("{flag} is injected by the operator; remove it (see the injected-flag table in the README)"),
            );
        }
        check_max_length(errors, &path, arg, MAX_ARG_LENGTH);
    }
}

/// A vLLM pool's role is the `kv_role` of its `--kv-transfer-config` (`kv_producer` prefill,
/// `kv_consumer` decode, none or `kv_both` mixed: `infera/engine/vllm/args.py:21-25, 87-97`);
/// vLLM has no `--disaggregation-mode`. The operator does not inject the config: its
/// `kv_connector` and the connector's own settings are the user's choice (upstream
/// `manual/features/pd_disaggregation.md:124-153`), and upstream's operator injects none either.
/// So `args` must hold it, as JSON, with the pool's role; else the pool would register as mixed.
fn vllm_kv_role(errors: &mut Errors, path: &str, role: Role, args: &[String]) {
    let (want, example) = match role {
        Role::Prefill => (Some("kv_producer"), "kv_producer"),
        Role::Decode => (Some("kv_consumer"), "kv_consumer"),
        Role::Mixed => (None, "kv_both"),
    };
    let fix = format!(
        "set --kv-transfer-config '{{\"kv_connector\":\"MoRIIOConnector\",\"kv_role\":\"{example}\"}}' (any RDMA connector: MooncakeConnector, MoRIIOConnector, NixlConnector)"
    );
    let mut found = false;
    for (i, arg) in args.iter().enumerate() {
        let value = match arg.split_once('=') {
            Some((flags::KV_TRANSFER_CONFIG, value)) => value,
            _ if arg == flags::KV_TRANSFER_CONFIG => match args.get(i + 1) {
                Some(value) => value.as_str(),
                None => continue,
            },
            _ => continue,
        };
        found = true;
        let at = format!("{path}.args[{i}]");
        let kv_role = match serde_json::from_str::<serde_json::Value>(value) {
            Ok(serde_json::Value::Object(config)) => config
                .get("kv_role")
                .map(|r| r.as_str().unwrap_or_default().to_string()),
            _ => {
                errors.push(
                    at,
                    format!("--kv-transfer-config must be a JSON object; {fix}"),
                );
                continue;
            }
        };
        let matches = match want {
            Some(want) => kv_role.as_deref() == Some(want),
            None => matches!(kv_role.as_deref(), None | Some("kv_both")),
        };
        if !matches {
            errors.push(
                at,
                format!(
                    "kv_role {} makes the vLLM wrapper register this pool as {}, but its role is {role}; {fix}, or change role",
                    kv_role.as_deref().unwrap_or("(none)"),
                    match kv_role.as_deref() {
                        Some("kv_producer") => "prefill",
                        Some("kv_consumer") => "decode",
                        _ => "mixed",
                    },
                ),
            );
        }
    }
    if !found && want.is_some() {
        errors.push(
            format!("{path}.args"),
            format!(
                "a vLLM {role} pool takes its role from --kv-transfer-config (vLLM has no --disaggregation-mode); {fix}"
            ),
        );
    }
}

/// GPUs of `gpu_type` in the limits of an `extraPodSpec`'s main container (0 if none or not a
/// whole number).
fn extra_gpus(extra: &k8s_openapi::api::core::v1::PodSpec, gpu_type: &str) -> i32 {
    extra
        .containers
        .get(main_container(extra))
        .and_then(|c| c.resources.as_ref())
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.get(gpu_type))
        .and_then(|q| q.0.parse().ok())
        .unwrap_or(0)
}

/// The server routes: no role, no GPU, one node, and its router is told the tokenizer (unless
/// `extraPodSpec` writes the whole command line).
fn server_rules(errors: &mut Errors, path: &str, svc: &ServiceSpec) {
    let tokenizer = svc.args.iter().any(|arg| {
        arg == TOKENIZER_FLAG
            || arg
                .strip_prefix(TOKENIZER_FLAG)
                .is_some_and(|rest| rest.starts_with('='))
    });
    if !tokenizer && svc.extra_pod_spec.is_none() {
        errors.push(format!("{path}.args"), SERVER_TOKENIZER);
    }
    if svc.role.is_some() {
        errors.push(format!("{path}.role"), SERVER_ROLE);
    }
    if svc
        .resources
        .as_ref()
        .and_then(|r| r.gpu)
        .is_some_and(|gpu| gpu != 0)
    {
        errors.push(format!("{path}.resources.gpu"), SERVER_GPU);
    }
    if svc.number_of_nodes.is_some_and(|n| n != 1) {
        errors.push(format!("{path}.numberOfNodes"), SERVER_NODES);
    }
    if svc
        .resources
        .as_ref()
        .is_some_and(|r| r.gpu_product.is_some())
    {
        errors.push(format!("{path}.resources.gpuProduct"), SERVER_GPU_PRODUCT);
    }
}

/// A worker pool: 1 to [`MAX_GPUS`] GPUs per pod, 1 to [`MAX_NODES`] nodes per replica, and
/// parallelism flags that use exactly those GPUs.
fn worker(
    errors: &mut Errors,
    path: &str,
    svc: &ServiceSpec,
    pod: Pod,
    rdma: Option<Rdma>,
    rollout: PoolBounds,
) -> Worker {
    let resources = svc.resources.clone().unwrap_or_default();
    let gpu_type = resources
        .gpu_type
        .unwrap_or_else(|| DEFAULT_GPU_TYPE.into());
    // With extraPodSpec the GPUs are the main container's limit, as the user wrote it, and the
    // parallelism flags are in its command, which is not checked.
    // spec.network does not reach a pod written whole.
    let rdma = rdma.filter(|_| pod.extra.is_none());
    let (gpu, gpu_ok) = match pod.extra.as_deref() {
        Some(extra) => (extra_gpus(extra, &gpu_type), false),
        None => {
            let gpu = resources.gpu.unwrap_or(0);
            let ok = check_range(
                errors,
                &format!("{path}.resources.gpu"),
                gpu,
                1..=MAX_GPUS,
                WORKER_GPU,
            );
            (gpu, ok)
        }
    };
    let nodes = svc.number_of_nodes.unwrap_or(1);
    let nodes_ok = check_range(
        errors,
        &format!("{path}.numberOfNodes"),
        nodes,
        1..=MAX_NODES,
        "must be at least 1; set the number of nodes per replica",
    );
    // Only within the limits, where gpu × nodes cannot overflow.
    if gpu_ok && nodes_ok {
        parallelism(errors, path, &svc.args, gpu * nodes);
    }
    Worker {
        pod,
        role: svc.role.unwrap_or_default(),
        nodes,
        gpu,
        gpu_type,
        rdma,
        rollout,
        gpu_product: resources.gpu_product,
        shared_memory: resources.shared_memory,
        model: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{super::found, *};
    use crate::types::Role;

    /// The server, the workers and the errors of a spec with these services.
    fn services_of(image: Option<&str>, named: Value) -> (Option<Pod>, Vec<Worker>, Vec<String>) {
        let spec: InferaDeploymentSpec = serde_json::from_value(
            json!({"backendFramework": "sglang", "image": image, "services": named}),
        )
        .expect("a spec");
        let mut built = (None, Vec::new());
        let errors = found(|e| built = server_and_workers(e, &spec));
        (built.0, built.1, errors)
    }

    /// The errors of a spec with an image, a good server and this service as `s`.
    fn errors_of(service: Value) -> Vec<String> {
        services_of(
            Some("img"),
            json!({"router": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}, "s": service}),
        )
        .2
    }

    fn worker(extra: Value) -> Value {
        let mut worker = json!({"componentType": "worker", "resources": {"gpu": 1}});
        for (key, value) in extra.as_object().expect("an object") {
            worker[key] = value.clone();
        }
        worker
    }

    #[test]
    fn defaults_are_resolved() {
        let (server, workers, errors) = services_of(
            Some("img"),
            json!({"router": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}, "w": worker(json!({"image": "own"}))}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        let server = server.expect("a server");
        assert_eq!(
            (
                server.service.as_str(),
                server.image.as_str(),
                server.replicas
            ),
            ("router", "img", 1)
        );
        let [worker] = &workers[..] else {
            panic!("one worker: {workers:?}")
        };
        assert_eq!(worker.pod.image, "own");
        assert_eq!((worker.role, worker.nodes, worker.gpu), (Role::Mixed, 1, 1));
        assert_eq!(worker.gpu_type, "amd.com/gpu");
    }

    #[test]
    fn every_service_needs_an_image() {
        assert_eq!(
            services_of(
                None,
                json!({"router": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}, "w": worker(json!({"image": "own"}))})
            )
            .2,
            [
                "spec.services.router.image: no image is set; set spec.image or an image for this service"
            ]
        );
    }

    #[test]
    fn images_are_not_empty_nor_too_long() {
        assert_eq!(
            services_of(Some(""), json!({"router": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}})).2,
            ["spec.image: must not be empty; set a value or remove the field"]
        );
        assert_eq!(
            errors_of(worker(json!({"image": "i".repeat(513)}))),
            ["spec.services.s.image: must be at most 512 characters (now 513); shorten it"]
        );
    }

    #[test]
    fn replicas_are_0_to_1000() {
        assert!(errors_of(worker(json!({"replicas": 0}))).is_empty());
        assert_eq!(
            errors_of(worker(json!({"replicas": -1}))),
            ["spec.services.s.replicas: must be 0 or more; set a non-negative number"]
        );
        assert_eq!(
            errors_of(worker(json!({"replicas": 1001}))),
            ["spec.services.s.replicas: must be at most 1000 (now 1001); lower it"]
        );
    }

    #[test]
    fn args_set_no_injected_flag() {
        assert_eq!(
            errors_of(worker(
                json!({"args": ["--model-path", "m", "--port=1", "--host", "x"]})
            )),
            [
                "spec.services.s.args[2]: --port is injected by the operator; remove it (see the injected-flag table in the README)",
                "spec.services.s.args[3]: --host is injected by the operator; remove it (see the injected-flag table in the README)",
            ]
        );
    }

    #[test]
    fn args_fit_the_schema() {
        assert_eq!(
            errors_of(worker(json!({"args": vec!["-v"; 129]}))),
            ["spec.services.s.args: at most 128 arguments are allowed (now 129); remove some"]
        );
        assert_eq!(
            errors_of(worker(json!({"args": ["", "a".repeat(2049)]}))),
            ["spec.services.s.args[1]: must be at most 2048 characters (now 2049); shorten it"]
        );
    }

    #[test]
    fn sizes_are_quantities() {
        assert_eq!(
            errors_of(worker(
                json!({"resources": {"gpu": 1, "cpu": "2", "memory": "64 GB", "sharedMemory": "-1Gi"}})
            )),
            [
                r#"spec.services.s.resources.memory: "64 GB" is not a size; write a non-negative quantity like 64Gi or 500m"#,
                r#"spec.services.s.resources.sharedMemory: "-1Gi" is not a size; write a non-negative quantity like 64Gi or 500m"#,
            ]
        );
    }

    #[test]
    fn gpu_types_are_resource_names_on_every_service() {
        assert!(
            errors_of(worker(
                json!({"resources": {"gpu": 1, "gpuType": "amd.com/cpx_nps4"}})
            ))
            .is_empty()
        );
        let message = "must be an extended resource name such as amd.com/gpu; fix the name";
        assert_eq!(
            errors_of(worker(
                json!({"resources": {"gpu": 1, "gpuType": "amd.com/"}})
            )),
            [format!("spec.services.s.resources.gpuType: {message}")]
        );
        assert_eq!(
            errors_of(
                json!({"componentType": "server", "args": ["--router-tokenizer-path", "m"],
                "resources": {"gpuType": "amd com"}})
            ),
            [format!("spec.services.s.resources.gpuType: {message}")]
        );
    }

    #[test]
    fn the_server_has_no_role_gpu_or_second_node() {
        assert_eq!(
            errors_of(
                json!({"componentType": "server", "role": "mixed", "resources": {"gpu": 1}, "numberOfNodes": 2,
                    "args": ["--router-tokenizer-path", "m"]})
            ),
            [
                "spec.services.s.role: only workers have a role; remove it from the server",
                "spec.services.s.resources.gpu: the server runs no model and gets no GPU; remove resources.gpu",
                "spec.services.s.numberOfNodes: the server runs on one node; remove numberOfNodes",
            ]
        );
        assert!(
            errors_of(
                json!({"componentType": "server", "resources": {"gpu": 0}, "numberOfNodes": 1,
                    "args": ["--router-tokenizer-path=m"]})
            )
            .is_empty()
        );
    }

    /// Upstream's router exits without `--router-tokenizer-path`; a pod written whole is the
    /// user's.
    #[test]
    fn the_server_names_its_tokenizer() {
        let missing = format!("spec.services.s.args: {SERVER_TOKENIZER}");
        for args in [
            json!([]),
            json!(["--router-policy", "round-robin"]),
            json!(["--router-tokenizer-path-x=m"]),
        ] {
            assert_eq!(
                errors_of(json!({"componentType": "server", "args": args})),
                std::slice::from_ref(&missing),
                "{args}"
            );
        }
        for args in [
            json!(["--router-tokenizer-path", "m"]),
            json!(["--router-tokenizer-path=m"]),
        ] {
            assert!(
                errors_of(json!({"componentType": "server", "args": args})).is_empty(),
                "{args}"
            );
        }
        let extra = json!({"componentType": "server", "extraPodSpec": {"containers": [{"name": "main", "image": "i"}]}});
        assert!(errors_of(extra).is_empty());
    }

    #[test]
    fn a_worker_has_1_to_64_gpus() {
        assert_eq!(
            errors_of(worker(json!({"resources": {}}))),
            [
                "spec.services.s.resources.gpu: a worker needs at least one GPU per pod; set resources.gpu"
            ]
        );
        assert_eq!(
            errors_of(worker(json!({"resources": {"gpu": 65}}))),
            ["spec.services.s.resources.gpu: must be at most 64 (now 65); lower it"]
        );
    }

    #[test]
    fn a_worker_has_1_to_64_nodes() {
        assert_eq!(
            errors_of(worker(json!({"numberOfNodes": 0}))),
            [
                "spec.services.s.numberOfNodes: must be at least 1; set the number of nodes per replica"
            ]
        );
        assert_eq!(
            errors_of(worker(json!({"numberOfNodes": 65}))),
            ["spec.services.s.numberOfNodes: must be at most 64 (now 65); lower it"]
        );
    }

    #[test]
    fn a_worker_uses_its_gpus_for_parallelism() {
        assert!(
            errors_of(worker(
                json!({"resources": {"gpu": 8}, "numberOfNodes": 2, "args": ["--tp", "16"]})
            ))
            .is_empty()
        );
        assert_eq!(
            errors_of(worker(json!({"args": ["--tp", "2"]}))),
            [
                "spec.services.s.args: --tp 2 uses 2 GPUs but resources.gpu × numberOfNodes is 1; make the parallelism flags multiply to 1 or change resources.gpu / numberOfNodes"
            ]
        );
    }

    #[test]
    fn huge_gpu_and_node_counts_are_refused_without_overflow() {
        assert_eq!(
            errors_of(worker(
                json!({"resources": {"gpu": i32::MAX}, "numberOfNodes": i32::MAX, "args": ["--tp", "2"]})
            )),
            [
                "spec.services.s.resources.gpu: must be at most 64 (now 2147483647); lower it",
                "spec.services.s.numberOfNodes: must be at most 64 (now 2147483647); lower it",
            ]
        );
    }
}
