//! Pod templates of the server and the workers, and how their engine containers are probed and
//! stopped: the engine contract (docs/reference.md, "Probes and draining"), one table-like function
//! per engine.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        Affinity, Capabilities, Container, ContainerPort, EmptyDirVolumeSource, EnvVar,
        EnvVarSource, Lifecycle, LifecycleHandler, NodeSelectorRequirement, NodeSelectorTerm,
        ObjectFieldSelector, PodReadinessGate, PodSpec, PodTemplateSpec, Probe,
        ResourceRequirements, SecurityContext, SleepAction, Volume, VolumeMount,
    },
    apimachinery::pkg::api::resource::Quantity,
};

use super::{
    Context, LOGS_ON_ERROR, injection, meta,
    probes::{Contract, IMAGE_TIMEOUT, Probes, SERVER, readiness_probe, sglang, vllm},
    pull_policy,
};
use crate::{
    flags::{self, Rank, SERVER_MODULE},
    gpu_product::{self, PRODUCT_LABEL},
    naming::{
        Component, ENGINE_CONTAINER, FRONTEND_CONTAINER, FRONTEND_PORT, HTTP_PORT, LABEL_ENDPOINT,
        LABEL_GAIE_FRONTEND, LABEL_REVISION, REGISTERED_CONDITION, REVISION_ENV, SHM_VOLUME,
    },
    types::BackendFramework,
    validate::{Health, Pod, Rdma, Worker, merge_engine},
};

/// Seconds between a pod's deletion and its container's SIGTERM (a `preStop` sleep), for the
/// EndpointSlices, the router's pod watch and the Endpoint Picker to stop sending it requests:
/// upstream's `workerPreStopDrainSeconds` (`builders.go:38, 413-418`).
const STOP_ROUTING_SECONDS: i64 = 15;
/// Seconds a worker may take to exit once it has drained: the wrapper stops its KV plane and the
/// engine, whose process group gets up to 30 s before SIGKILL (upstream
/// `workerTeardownHeadroomSeconds`, `builders.go:40-43`).
const TEARDOWN_SECONDS: i64 = 50;
/// The least grace period, so a short drain still leaves a slow engine room to exit (upstream
/// `workerTerminationGraceSeconds`, `builders.go:44-45`).
const MIN_GRACE_SECONDS: i64 = 120;

/// The server's pod template.
pub fn server(cx: &Context<'_>, server: &Pod) -> PodTemplateSpec {
    let component = Component::Server(&server.service);
    if let Some(extra) = &server.extra {
        return extra_template(cx, component, server, extra, None);
    }
    let mut args = server.args.clone();
    args.extend(cx.injection.server(server.port));
    let container = Container {
        resources: resources(server, None),
        ..engine(cx, server, SERVER_MODULE, args, server.port, Some(&SERVER))
    };
    template(cx, component, server, vec![container], Vec::new())
}

/// A worker's pod template. Pods that serve requests (single-node pods and group leaders) get the
/// HTTP port, the engine's probes, the GAIE frontend sidecar and the endpoint label; rank > 0 pods
/// get none of them. Every pod of a group reads its rank from the LeaderWorkerSet environment.
pub fn worker(cx: &Context<'_>, worker: &Worker, rank: Rank) -> PodTemplateSpec {
    let component = Component::Worker(&worker.pod.service, worker.role);
    let port = worker.pod.port;
    let contract = match cx.deployment.backend {
        BackendFramework::Sglang => sglang(rank),
        BackendFramework::Vllm => vllm(rank),
    };
    let serves = contract.is_some();
    if let Some(extra) = &worker.pod.extra {
        let mut template =
            extra_template(cx, component, &worker.pod, extra, Some((contract, rank)));
        worker_labels(cx, &mut template, serves);
        gate_on_registration(cx, &mut template, serves);
        return template;
    }
    let mut args = worker.pod.args.clone();
    args.extend(cx.injection.worker(worker, rank));
    let mut engine = Container {
        resources: resources(&worker.pod, Some((&worker.gpu_type, worker.gpu))),
        ..engine(
            cx,
            &worker.pod,
            injection::worker_module(cx.deployment.backend),
            args,
            port,
            contract.as_ref(),
        )
    };
    if rank == Rank::Follower && cx.deployment.backend == BackendFramework::Vllm {
        wait_forever_for_headless(&mut engine);
    }
    if let Some(rdma) = &worker.rdma {
        attach_rdma_nics(&mut engine, rdma);
    }
    let mut volumes = Vec::new();
    if let Some(size) = &worker.shared_memory {
        engine.volume_mounts = Some(vec![VolumeMount {
            name: SHM_VOLUME.into(),
            mount_path: "/dev/shm".into(),
            ..Default::default()
        }]);
        volumes.push(Volume {
            name: SHM_VOLUME.into(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".into()),
                size_limit: Some(size.clone()),
            }),
            ..Default::default()
        });
    }
    if let Some(model) = &worker.model {
        let (volume, mount) = super::model::volume(model);
        engine
            .volume_mounts
            .get_or_insert_with(Vec::new)
            .push(mount);
        volumes.push(volume);
    }
    let mut containers = vec![engine];
    let drain = i64::from(worker.pod.health.drain_seconds);
    containers.extend(frontend(cx, drain).filter(|_| serves));
    let mut template = template(cx, component, &worker.pod, containers, volumes);
    if let (Some(product), Some(spec)) = (&worker.gpu_product, template.spec.as_mut()) {
        spec.affinity = Some(require_product(spec.affinity.take(), product));
    }
    if let (Some(rdma), Some(metadata)) = (&worker.rdma, template.metadata.as_mut())
        && !rdma.networks.is_empty()
    {
        metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(NETWORKS_ANNOTATION.into(), rdma.networks.join(", "));
    }
    worker_labels(cx, &mut template, serves);
    gate_on_registration(cx, &mut template, serves);
    let engine = template.spec.as_mut().and_then(|spec| {
        spec.containers
            .iter_mut()
            .find(|c| c.name == ENGINE_CONTAINER)
    });
    if let Some(engine) = engine {
        add_revision_env(cx, engine);
    }
    template
}

/// A vLLM rank > 0 runs its engine headless, which serves no `/health`, and the wrapper gives up
/// on an engine without one after `INFERA_ENGINE_READY_TIMEOUT` (`infera/engine/vllm/worker.py:178-208`):
/// the timeout is set out of reach, replacing the user's, so the wrapper supervises the engine
/// until it exits.
fn wait_forever_for_headless(engine: &mut Container) {
    let env = engine.env.get_or_insert_default();
    env.retain(|e| e.name != flags::ENGINE_READY_TIMEOUT_ENV);
    env.push(EnvVar {
        name: flags::ENGINE_READY_TIMEOUT_ENV.into(),
        value: Some(flags::FOLLOWER_READY_TIMEOUT.into()),
        ..Default::default()
    });
}

/// The endpoint label of a pod that serves (and with GAIE the frontend label of its sidecar), and
/// the revision label of every worker pod.
fn worker_labels(cx: &Context<'_>, template: &mut PodTemplateSpec, serves: bool) {
    let labels = template.metadata.as_mut().and_then(|m| m.labels.as_mut());
    if let Some(labels) = labels {
        if serves {
            labels.insert(LABEL_ENDPOINT.into(), "true".into());
            if cx.deployment.gaie.is_some() {
                labels.insert(LABEL_GAIE_FRONTEND.into(), "true".into());
            }
        }
        if let Some(revision) = &cx.revision {
            labels.insert(LABEL_REVISION.into(), revision.clone());
        }
    }
}

/// A worker pod that registers with the router (one that serves, with Kubernetes discovery) is
/// Ready only once it has: the readiness gate [`REGISTERED_CONDITION`], which the operator sets
/// when the wrapper's registration appears on the pod. Without it a pod is Ready at the engine's
/// `/health`, up to seconds before the router routes to it, and a rollout that counts it would
/// drain the old pods while the router has no new one (docs/rollouts.md).
fn gate_on_registration(cx: &Context<'_>, template: &mut PodTemplateSpec, serves: bool) {
    if !serves || cx.deployment.discovery != flags::DiscoveryFlags::Kubernetes {
        return;
    }
    if let Some(spec) = template.spec.as_mut() {
        let gates = spec.readiness_gates.get_or_insert_default();
        if !gates
            .iter()
            .any(|g| g.condition_type == REGISTERED_CONDITION)
        {
            gates.push(PodReadinessGate {
                condition_type: REGISTERED_CONDITION.into(),
            });
        }
    }
}

/// The revision a worker pod runs, in its engine container's environment.
fn add_revision_env(cx: &Context<'_>, engine: &mut Container) {
    if let Some(revision) = &cx.revision {
        engine.env.get_or_insert_default().push(EnvVar {
            name: REVISION_ENV.into(),
            value: Some(revision.clone()),
            ..Default::default()
        });
    }
}

/// The wrapper's drain when neither `--drain-timeout` nor `INFERA_DRAIN_TIMEOUT` sets it
/// (`infera/engine/sglang/args.py:132-142`, `infera/engine/vllm/args.py:272-282`).
const WRAPPER_DRAIN_SECONDS: i64 = 30;

/// The drain an `extraPodSpec` container asks of the wrapper: its `--drain-timeout` (in
/// `command` or `args`, also inside an `sh -c` string), else `INFERA_DRAIN_TIMEOUT`, else the
/// wrapper's default; a fraction rounds up, as upstream's `drainSeconds` (`builders.go:61-75`).
fn container_drain(container: &Container) -> i64 {
    let seconds = |value: &str| {
        value
            .trim_matches(|c| c == '"' || c == '\'')
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && *f > 0.0)
            .map(|f| {
                f.ceil()
                    .min(f64::from(crate::validate::limits::MAX_DRAIN_SECONDS))
                    as i64
            })
    };
    let words: Vec<&str> = container
        .command
        .iter()
        .chain(container.args.iter())
        .flatten()
        .flat_map(|item| item.split_whitespace())
        .collect();
    let flag = words
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, word)| match word.split_once('=') {
            Some((flags::DRAIN_TIMEOUT, value)) => seconds(value),
            _ if *word == flags::DRAIN_TIMEOUT => words.get(i + 1).and_then(|v| seconds(v)),
            _ => None,
        });
    let env = || {
        container
            .env
            .iter()
            .flatten()
            .filter(|e| e.name == DRAIN_TIMEOUT_ENV)
            .find_map(|e| e.value.as_deref().and_then(seconds))
    };
    flag.or_else(env).unwrap_or(WRAPPER_DRAIN_SECONDS)
}

/// The wrapper's drain variable (`infera/engine/sglang/args.py:132-142`).
const DRAIN_TIMEOUT_ENV: &str = "INFERA_DRAIN_TIMEOUT";

/// A service's `extraPodSpec`, used as written, with what upstream adds to it
/// (`deploy/operator/internal/controller/builders.go:450-513`): our pod labels, the discovery
/// ServiceAccount when it names none, and into the main container (named `main` or `infera`,
/// else the first) each variable of the environment the images read that it does not set, and
/// the service port when it does not list it. A worker pod (`worker`: its engine's contract and
/// rank) also gets, where absent, a readiness probe when it serves and is not part of a
/// multi-node group (upstream probes no pod of a group) nor `skipReadinessProbe`, a preStop
/// pause, and a grace period at least long enough for the drain its container asks for
/// (`builders.go:375-425`). The Inference Gateway's frontend sidecar joins a pod that serves.
fn extra_template(
    cx: &Context<'_>,
    component: Component<'_>,
    pod: &Pod,
    extra: &PodSpec,
    worker: Option<(Option<Contract>, Rank)>,
) -> PodTemplateSpec {
    let mut spec = extra.clone();
    let main = crate::validate::main_container(&spec);
    let server = worker.is_none();
    if let Some(container) = spec.containers.get_mut(main) {
        let env = container.env.get_or_insert_default();
        for variable in injected_env(cx, server) {
            if !env.iter().any(|e| e.name == variable.name) {
                env.push(variable);
            }
        }
        let ports = container.ports.get_or_insert_default();
        if !ports.iter().any(|p| p.container_port == pod.port) {
            ports.push(ContainerPort {
                container_port: pod.port,
                protocol: Some("TCP".into()),
                ..Default::default()
            });
        }
        container
            .termination_message_policy
            .get_or_insert_with(|| LOGS_ON_ERROR.into());
        if let Some((contract, rank)) = worker {
            if let Some(contract) = contract.filter(|_| rank == Rank::Single && !pod.skip_probes)
                && container.readiness_probe.is_none()
            {
                container.readiness_probe = Some(contract.readiness(pod.port));
            }
            let lifecycle = container.lifecycle.get_or_insert_default();
            if lifecycle.pre_stop.is_none() {
                lifecycle.pre_stop = pre_stop_sleep(STOP_ROUTING_SECONDS).pre_stop;
            }
            let grace = (STOP_ROUTING_SECONDS + container_drain(container) + TEARDOWN_SECONDS)
                .max(MIN_GRACE_SECONDS);
            if spec
                .termination_grace_period_seconds
                .is_none_or(|g| g < grace)
            {
                spec.termination_grace_period_seconds = Some(grace);
            }
            if let Some(container) = spec.containers.get_mut(main) {
                add_revision_env(cx, container);
            }
        }
    }
    let serves = worker.is_some_and(|(contract, _)| contract.is_some());
    // The sidecar stays for the drain the main container asks for, within the grace set above.
    let drain = spec
        .containers
        .get(main)
        .map_or(WRAPPER_DRAIN_SECONDS, container_drain);
    spec.containers
        .extend(frontend(cx, drain).filter(|_| serves));
    if cx.deployment.discovery == flags::DiscoveryFlags::Kubernetes
        && spec.service_account_name.is_none()
    {
        spec.service_account_name = Some(Component::Discovery.object_name(&cx.deployment.name));
    }
    let mut metadata = meta::pod_meta(cx.deployment, component);
    if let Some(labels) = metadata.labels.as_mut() {
        for (key, value) in &pod.labels {
            labels.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    PodTemplateSpec {
        metadata: Some(metadata),
        spec: Some(spec),
    }
}

/// Multus's pod annotation naming the NetworkAttachmentDefinitions to attach, comma-separated
/// `name` or `namespace/name` (k8snetworkplumbingwg/multus-cni docs/how-to-use.md, "Launch pod
/// with text annotation").
pub const NETWORKS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";

/// The RDMA NICs in the engine's limits, and `IPC_LOCK`, which RDMA needs to pin memory.
fn attach_rdma_nics(engine: &mut Container, rdma: &Rdma) {
    let resources = engine.resources.get_or_insert_with(Default::default);
    resources
        .limits
        .get_or_insert_with(Default::default)
        .insert(
            rdma.resource_name.clone(),
            Quantity(rdma.per_pod.to_string()),
        );
    if rdma.ipc_lock {
        engine.security_context = Some(SecurityContext {
            capabilities: Some(Capabilities {
                add: Some(vec!["IPC_LOCK".into()]),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
}

/// `affinity` (the user's, if any) that also requires a node of GPU `product`: the product's
/// label values join every required node selector term, as the terms are alternatives and the
/// expressions of a term all must hold.
fn require_product(affinity: Option<Affinity>, product: &str) -> Affinity {
    let expression = NodeSelectorRequirement {
        key: PRODUCT_LABEL.into(),
        operator: "In".into(),
        values: Some(gpu_product::label_values(product)),
    };
    let mut affinity = affinity.unwrap_or_default();
    let node = affinity.node_affinity.get_or_insert_with(Default::default);
    let required = node
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(Default::default);
    if required.node_selector_terms.is_empty() {
        required
            .node_selector_terms
            .push(NodeSelectorTerm::default());
    }
    for term in &mut required.node_selector_terms {
        term.match_expressions
            .get_or_insert_with(Vec::new)
            .push(expression.clone());
    }
    affinity
}

/// A pod template of `containers` (the engine first) and `volumes`, with what the user adds on
/// top.
fn template(
    cx: &Context<'_>,
    component: Component<'_>,
    pod: &Pod,
    mut containers: Vec<Container>,
    mut volumes: Vec<Volume>,
) -> PodTemplateSpec {
    let overlay = &pod.overlay;
    if let Some(entry) = &overlay.engine
        && let Some(engine) = containers.iter_mut().find(|c| c.name == ENGINE_CONTAINER)
    {
        merge_engine(engine, entry);
    }
    containers.extend(overlay.containers.iter().cloned());
    volumes.extend(overlay.volumes.iter().cloned());
    let mut metadata = meta::pod_meta(cx.deployment, component);
    if let Some(labels) = metadata.labels.as_mut() {
        labels.extend(overlay.labels.clone());
        labels.extend(pod.labels.clone());
    }
    if !overlay.annotations.is_empty() {
        metadata.annotations = Some(overlay.annotations.clone());
    }
    // With Kubernetes discovery the pods run as the discovery ServiceAccount; with etcd, as the
    // user's (validation allows one only then) or the namespace's default, without a token.
    let kubernetes_discovery = cx.deployment.discovery == flags::DiscoveryFlags::Kubernetes;
    let (service_account_name, automount_service_account_token) =
        match &overlay.service_account_name {
            Some(name) => (Some(name.clone()), None),
            None if kubernetes_discovery => (
                Some(Component::Discovery.object_name(&cx.deployment.name)),
                Some(true),
            ),
            None => (None, Some(false)),
        };
    PodTemplateSpec {
        metadata: Some(metadata),
        spec: Some(PodSpec {
            containers,
            init_containers: non_empty(&overlay.init_containers),
            volumes: (!volumes.is_empty()).then_some(volumes),
            service_account_name,
            automount_service_account_token,
            node_selector: (!pod.node_selector.is_empty()).then(|| pod.node_selector.clone()),
            tolerations: (!pod.tolerations.is_empty()).then(|| pod.tolerations.clone()),
            affinity: overlay.affinity.clone(),
            image_pull_secrets: non_empty(&overlay.image_pull_secrets),
            topology_spread_constraints: non_empty(&overlay.topology_spread_constraints),
            priority_class_name: overlay.priority_class_name.clone(),
            scheduler_name: overlay.scheduler_name.clone(),
            runtime_class_name: overlay.runtime_class_name.clone(),
            host_ipc: overlay.host_ipc,
            termination_grace_period_seconds: Some(grace_period(&pod.health)),
            ..Default::default()
        }),
    }
}

/// `list`, or `None` for an empty one (as the API server stores it).
fn non_empty<T: Clone>(list: &[T]) -> Option<Vec<T>> {
    (!list.is_empty()).then(|| list.to_vec())
}

/// The engine container, running `python3 -m <module>` (or the service's own `command`) with
/// `args`. With a `contract` it serves HTTP on `port` and is probed as the contract and the
/// service's `health` say; without one (rank > 0) it has neither port nor probes.
fn engine(
    cx: &Context<'_>,
    pod: &Pod,
    module: &str,
    args: Vec<String>,
    port: i32,
    contract: Option<&Contract>,
) -> Container {
    let mut env = injected_env(cx, module == SERVER_MODULE);
    env.extend(pod.env.iter().cloned());
    let probes = contract
        .filter(|_| !pod.skip_probes)
        .map(|contract| Probes::of(contract, &pod.health, port));
    let drain = i64::from(pod.health.drain_seconds);
    Container {
        name: ENGINE_CONTAINER.into(),
        image: Some(pod.image.clone()),
        image_pull_policy: pull_policy(&pod.image),
        termination_message_policy: Some(LOGS_ON_ERROR.into()),
        command: Some(
            pod.command
                .clone()
                .unwrap_or_else(|| flags::command(module)),
        ),
        args: Some(args),
        env: Some(env),
        ports: contract.map(|_| {
            vec![ContainerPort {
                name: Some(HTTP_PORT.into()),
                container_port: port,
                protocol: Some("TCP".into()),
                ..Default::default()
            }]
        }),
        startup_probe: probes.as_ref().map(|p| p.startup.clone()),
        readiness_probe: probes.as_ref().map(|p| p.readiness.clone()),
        liveness_probe: probes.and_then(|p| p.liveness),
        // A pod that serves stops when routing to it has stopped; a rank > 0 pod outlives its
        // leader's drain, which needs it.
        lifecycle: Some(pre_stop_sleep(match contract {
            Some(_) => STOP_ROUTING_SECONDS,
            None => STOP_ROUTING_SECONDS + drain,
        })),
        ..Default::default()
    }
}

/// The variables the images read, in upstream's order (`builders.go:312-337`): `NATS_SERVER`;
/// with Kubernetes discovery `POD_NAME`, `POD_NAMESPACE` and `POD_IP` from the downward API (a
/// worker patches its own pod, `infera/common/registration_k8s.py:61-62`, and advertises its pod
/// IP, `infera/engine/sglang/__main__.py:195-196`) and, on the server, the worker selector.
pub(super) fn injected_env(cx: &Context<'_>, server: bool) -> Vec<EnvVar> {
    let value = |name: &str, value: String| EnvVar {
        name: name.into(),
        value: Some(value),
        ..Default::default()
    };
    let field = |name: &str, path: &str| EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut env = cx.deployment.envs.clone();
    env.extend(super::nats::server_env(cx.deployment));
    if *cx.injection.discovery == flags::DiscoveryFlags::Kubernetes {
        env.extend([
            field("POD_NAME", "metadata.name"),
            field("POD_NAMESPACE", "metadata.namespace"),
            field("POD_IP", "status.podIP"),
        ]);
        if server {
            env.push(value(
                flags::K8S_LABEL_SELECTOR_ENV,
                cx.injection.label_selector(),
            ));
        }
    }
    env
}

/// Sleep `seconds` before the container is sent SIGTERM (Kubernetes' Sleep action, beta and on
/// by default since 1.30).
fn pre_stop_sleep(seconds: i64) -> Lifecycle {
    Lifecycle {
        pre_stop: Some(LifecycleHandler {
            sleep: Some(SleepAction { seconds }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Seconds from a pod's deletion to SIGKILL: routing stops, in-flight requests drain, the
/// process exits; at least [`MIN_GRACE_SECONDS`] (upstream `graceSecondsFor`, `builders.go:100-112`).
fn grace_period(health: &Health) -> i64 {
    (STOP_ROUTING_SECONDS + i64::from(health.drain_seconds) + TEARDOWN_SECONDS)
        .max(MIN_GRACE_SECONDS)
}

/// The GAIE frontend sidecar of a pod that serves, when GAIE is on: upstream's
/// (`deploy/operator/internal/controller/gaie.go:102-157`), the router in direct mode
/// (`python3 -m infera.server --router-mode direct`, [`flags::Injection::frontend`]) from the GAIE
/// image, with the router's environment, readiness on `/v1/models`. Upstream puts it on every pod
/// of a worker service, rank > 0 pods of a multi-node group too; ours only on the pods that serve,
/// which the InferencePool selects. The requests it carries are the engine's, so it stays until
/// the engine's `drain` (seconds) is over (a preStop pause upstream does not have).
fn frontend(cx: &Context<'_>, drain: i64) -> Option<Container> {
    let gaie = cx.deployment.gaie.as_ref()?;
    let port = gaie.frontend_port;
    Some(Container {
        name: FRONTEND_CONTAINER.into(),
        image: Some(gaie.image.clone()),
        image_pull_policy: pull_policy(&gaie.image),
        termination_message_policy: Some(LOGS_ON_ERROR.into()),
        command: Some(flags::command(SERVER_MODULE)),
        args: Some(cx.injection.frontend(port, &gaie.tokenizer_path)),
        env: Some(injected_env(cx, true)),
        ports: Some(vec![ContainerPort {
            name: Some(FRONTEND_PORT.into()),
            container_port: port,
            protocol: Some("TCP".into()),
            ..Default::default()
        }]),
        readiness_probe: Some(Probe {
            initial_delay_seconds: Some(5),
            ..readiness_probe("/v1/models", port, IMAGE_TIMEOUT)
        }),
        lifecycle: Some(pre_stop_sleep(STOP_ROUTING_SECONDS + drain)),
        ..Default::default()
    })
}

/// Requests and limits: CPU and memory as given, the GPU as an extended resource in limits.
fn resources(pod: &Pod, gpu: Option<(&String, i32)>) -> Option<ResourceRequirements> {
    let mut requests = BTreeMap::new();
    for (name, quantity) in [("cpu", &pod.cpu), ("memory", &pod.memory)] {
        if let Some(q) = quantity {
            requests.insert(name.to_string(), q.clone());
        }
    }
    let mut limits = requests.clone();
    if let Some((gpu_type, count)) = gpu {
        limits.insert(gpu_type.clone(), Quantity(count.to_string()));
    }
    (!limits.is_empty()).then(|| ResourceRequirements {
        requests: (!requests.is_empty()).then_some(requests),
        limits: Some(limits),
        ..Default::default()
    })
}
