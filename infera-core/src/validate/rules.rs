//! The validation rules' messages and the constants the CRD's CEL rules share with
//! [`super::validate`]: one text per rule, which the Rust rule and its CEL twin
//! ([`super::cel`]) both say, so admission and the operator cannot drift. Imports nothing that
//! imports the spec types: the types' CEL attributes read it.

use super::limits::{MAX_SCRAPE_INTERVAL_SECONDS, MAX_STARTUP_SECONDS};
use crate::naming::{
    MAX_DEPLOYMENT_NAME, MAX_DEPLOYMENT_PLUS_SERVICE, MAX_DNS_LABEL, RESERVED_SERVICE_NAMES,
};

// autoscaling.

/// `triggers` without `provider: keda`.
pub const TRIGGERS_WITHOUT_KEDA: &str = "are KEDA's; set provider: keda, or use metrics with the HorizontalPodAutoscaler (provider: hpa, the default)";

/// `replicas` beside `autoscaling`.
pub const REPLICAS_AND_AUTOSCALING: &str = "replicas and autoscaling both set the replica count; remove replicas (autoscaling.minReplicas is the floor)";

/// No trigger for KEDA.
pub const NO_TRIGGER: &str = "provider: keda needs at least one trigger; add one, e.g. {type: prometheus, metadata: {serverAddress: ..., query: ..., threshold: ...}}";

/// No metric for the HPA.
pub const NO_METRIC: &str = "needs at least one metric (the HorizontalPodAutoscaler's default, 80% CPU, says nothing about a GPU engine's load); add one, e.g. a Pods metric of the engine's queue length";

/// `minReplicas` above `maxReplicas`.
pub const MIN_ABOVE_MAX: &str =
    "must not be above maxReplicas; lower minReplicas or raise maxReplicas";

/// A planned pool's `min` above its `max`.
pub const PLANNER_MIN_ABOVE_MAX: &str = "must not be above max; lower min or raise max";

/// A planned pool that is not a worker pool of the spec.
pub const PLANNER_NOT_A_POOL: &str =
    "must name a worker pool of spec.services; name one, or remove it from spec.planner.pools";

/// A planned pool that also has `autoscaling`.
pub const PLANNER_AND_AUTOSCALING: &str = "names a pool with autoscaling: an autoscaler and the planner cannot both own its replicas; remove the pool's autoscaling (set replicas instead) or remove it from spec.planner.pools";

/// `metrics` with `provider: keda`.
pub const METRICS_WITH_KEDA: &str = "are the HorizontalPodAutoscaler's; with provider: keda, say what to scale on in triggers and remove metrics";

// gaie.

/// GAIE is on and neither `spec.gaie.eppImage` nor `spec.image` names an image.
pub const IMAGE_REQUIRED: &str = "is required when spec.image is not set: the Endpoint Picker (python3 -m infera.gaie) and the frontend sidecar (python3 -m infera.server) run an Infera image; set spec.gaie.eppImage or spec.image";

/// `spec.gaie.tokenizerPath` is missing.
pub const TOKENIZER_REQUIRED: &str = "is required: the Endpoint Picker and the frontend sidecar score prompts with it (--router-tokenizer-path); set it to the workers' tokenizer, e.g. the model's Hugging Face id such as Qwen/Qwen3-0.6B";

// health.

/// A startup timeout outside 1s to 24h; the CEL rule says the same.
pub fn startup_out_of_range() -> String {
    format!(
        "must be from 1s to {}h; set how long a cold start may take, e.g. 30m or 2h",
        MAX_STARTUP_SECONDS / 3600
    )
}

/// `monitoring.interval` out of range.
pub fn scrape_interval_out_of_range() -> String {
    format!(
        "must be from 1s to {}h; set how often Prometheus scrapes each pod, e.g. 15s or 1m",
        MAX_SCRAPE_INTERVAL_SECONDS / 3600
    )
}

// images.

/// An image is not pinned under `imagePolicy.requireDigest`.
pub const UNPINNED: &str = "must be pinned by digest because imagePolicy.requireDigest is true; pin it by digest, e.g. rocm/infera@sha256:<64 hex>; find it with `crane digest IMAGE` or your registry";

/// An image pinned by digest: a name, `@sha256:` and 64 lowercase hex digits (what
/// [`is_pinned`] accepts).
pub const DIGEST_PATTERN: &str = "^[^@]+@sha256:[0-9a-f]{64}$";

// model.

/// A `model` on the server.
pub const SERVER_MODEL: &str =
    "the server serves no model (it routes to the workers); remove model from the server";

/// `tokenSecretRef` or `downloadImage` with a source that downloads nothing.
pub const HF_ONLY: &str =
    "tokenSecretRef and downloadImage are only used with an hf:// source; remove them";

/// `cache` missing with `hf://`, or set with another source.
pub const CACHE_WITH_HF: &str =
    "is required with an hf:// source and only allowed with one; add or remove model.cache";

/// A `podTemplate` volume named like the operator's model volume.
pub const MODEL_VOLUME_OURS: &str = "model is the operator's volume of the model weights (spec.model or the service's model); give the volume another name";

// names.

/// What a DNS label may contain, in every message about one.
pub const DNS_LABEL_FORM: &str =
    "lowercase letters, digits and '-', starting with a letter and ending with a letter or digit";

/// A service is named like an object the operator creates.
pub fn service_name_reserved() -> String {
    format!(
        "the names {} are reserved for objects the operator creates; rename the service",
        RESERVED_SERVICE_NAMES.join(", ")
    )
}

/// A service name is not a DNS label.
pub fn service_name_not_a_dns_label() -> String {
    format!("service names must be DNS labels ({DNS_LABEL_FORM}); rename the service")
}

/// The deployment name plus a service name is too long; `now` is their length, which only the
/// Rust rule can name.
pub fn names_too_long(now: Option<usize>) -> String {
    let now = now.map(|n| format!(" (now {n})")).unwrap_or_default();
    format!(
        "the deployment name plus a service name must be at most {MAX_DEPLOYMENT_PLUS_SERVICE} characters so that every child name fits in {MAX_DNS_LABEL}{now}; shorten the service name or metadata.name"
    )
}

/// `metadata.name` is longer than [`MAX_DEPLOYMENT_NAME`].
pub fn name_too_long() -> String {
    format!(
        "must be a DNS label of at most {MAX_DEPLOYMENT_NAME} characters; choose a shorter name"
    )
}

/// `metadata.name` is not a DNS label.
pub fn name_not_a_dns_label() -> String {
    format!("must be a DNS label ({DNS_LABEL_FORM}); rename the deployment")
}

// nats.

/// Both `url` and `urlSecretRef`.
pub const URL_TWICE: &str = "names the URL that url names too; keep one";

/// A setting of the managed NATS on an external NATS, or on none.
pub const MANAGED_ONLY: &str =
    "is only used when the operator deploys NATS; remove it, or remove url and deploy: false";

/// An external NATS's URL with `deploy: true`.
pub const EXTERNAL_ONLY: &str = "is only used when deploy is false; remove it or set deploy: false";

// network.

/// `network.rdma` on a service that moves nothing between nodes.
pub const RDMA_NOT_ACROSS_NODES: &str =
    "only prefill, decode and multi-node worker pools use RDMA; remove network.rdma";

/// `network.rdma.device` with vLLM.
pub const IB_DEVICE_ON_VLLM: &str =
    "vLLM has no IB-device flag (its KV connectors choose the NIC themselves); remove device";

/// The IB-device flag in `args` while `network.rdma.device` injects it.
pub const IB_DEVICE_IN_ARGS: &str = "--disaggregation-ib-device is injected from network.rdma.device; remove it from args or remove the device";

// network policy.

/// A `metricsFrom` entry that names no peer, or an `ipBlock` beside a selector (the API server's
/// NetworkPolicy validation refuses both).
pub const PEER_FORM: &str = "every entry names a podSelector and/or a namespaceSelector, or an ipBlock alone; fix the entry";
/// An `ipBlock` whose `cidr` is not a network, or whose `except` is not inside it.
pub const CIDR_FORM: &str = "every ipBlock.cidr is an IP network with its host bits zero, such as 10.0.0.0/8, and each of its except a smaller network inside it; fix the entry";
/// A NetworkPolicy port the API server refuses.
pub const PORT_FORM: &str = "every port has protocol TCP, UDP or SCTP, a port from 1 to 65535 or a port name, and an endPort only after a numeric port and not below it; fix the entry";
/// `egress.allow` beside unrestricted egress, where it changes nothing.
pub const ALLOW_WITHOUT_RESTRICT: &str = "has no effect while egress is open; set spec.networkPolicy.egress.restrict: true, or remove allow";
/// Egress restricted with the graph's NetworkPolicies turned off.
pub const RESTRICT_WITHOUT_POLICIES: &str = "restricted egress is a NetworkPolicy, and enabled: false renders none; remove enabled: false, or egress";

// overlay.

/// An added container without an image.
pub const NO_IMAGE: &str = "an added container needs an image; set image (only the engine entry merges into a container the operator renders)";

/// A label the operator selects pods by.
pub const LABEL_OURS: &str = "app.kubernetes.io/name, instance, component, managed-by and every infera.amd.com/ label are the operator's (it selects pods by them); use another key";

/// The GPU in a container's resources.
pub const GPU_OURS: &str =
    "the GPU resource is the operator's; set resources.gpu and resources.gpuType of the service";

/// The `dshm` volume.
pub const SHM_OURS: &str = "dshm is the operator's memory-backed /dev/shm (set its size with resources.sharedMemory); give the volume another name";

/// A ServiceAccount with Kubernetes discovery.
pub const SERVICE_ACCOUNT_OURS: &str = "with discoveryBackend kubernetes the pods run as the discovery ServiceAccount the operator binds to its Role; remove serviceAccountName, or use discoveryBackend etcd to run as your own";

/// An init container named `engine` or `infera-frontend`.
pub const INIT_NAME_OURS: &str = "engine and frontend are the names of the operator's containers; give the init container another name";

/// A container named `frontend`.
pub const FRONTEND_OURS: &str =
    "infera-frontend is the operator's GAIE sidecar; give the container another name";

/// An owned field of the engine container.
pub const ENGINE_FIELD_OURS: &str = "the engine container's image, imagePullPolicy, command, args, ports, probes and lifecycle are the operator's; set the service's image, command, args or health instead";

/// The engine container's fields a `podTemplate` may not set, as named in the Pod API.
pub const ENGINE_OWNED_FIELDS: [&str; 9] = [
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "ports",
    "startupProbe",
    "readinessProbe",
    "livenessProbe",
    "lifecycle",
];

// rollout.

/// `rollout` on the server.
pub const SERVER_ROLLOUT: &str =
    "only worker pools have rollout bounds; remove rollout from the server";

/// `strategy: Lockstep` on a graph without prefill and decode pools.
pub const LOCKSTEP_WITHOUT_PD: &str = "Lockstep pairs prefill pools with decode pools and this graph has none; use Independent or remove strategy";

/// `maxUnavailable` when neither the pool nor `spec.rollout` sets it: never below desired.
pub const DEFAULT_MAX_UNAVAILABLE: i32 = 0;

/// `maxSurge` when neither the pool nor `spec.rollout` sets it: one replica above desired, as
/// a Deployment's default rounds to for small pools.
pub const DEFAULT_MAX_SURGE: i32 = 1;

/// A pool that could never replace a replica.
pub const CANNOT_PROGRESS: &str = "maxSurge and maxUnavailable are both 0 for this pool (spec.rollout's apply where the pool sets none, defaults 1 and 0), so no replica could ever be replaced; raise one of them";

// services.

/// A worker asks for no GPU.
pub const WORKER_GPU: &str = "a worker needs at least one GPU per pod; set resources.gpu";

/// The server flag [`SERVER_TOKENIZER`] asks for.
pub const TOKENIZER_FLAG: &str = "--router-tokenizer-path";

/// A service with `skipReadinessProbe` also sets how the probes call.
pub const SKIP_PROBES_HEALTH: &str = "skipReadinessProbe leaves the engine container without probes; remove health.startupTimeout, readinessPath, livenessPath and timeoutSeconds, or skipReadinessProbe";

/// The server's args lack the tokenizer its router scores with.
pub const SERVER_TOKENIZER: &str = "the router needs the workers' tokenizer and does not start without it (upstream infera/server/args.py: --router-tokenizer-path is required); add \"--router-tokenizer-path\", \"<the workers' model id or tokenizer path>\" to args";

/// The server has a role.
pub const SERVER_ROLE: &str = "only workers have a role; remove it from the server";

/// The server asks for more than one node.
pub const SERVER_NODES: &str = "the server runs on one node; remove numberOfNodes";

/// The server names a GPU product.
pub const SERVER_GPU_PRODUCT: &str =
    "the server runs no model and gets no GPU; remove resources.gpuProduct";

/// The server asks for GPUs.
pub const SERVER_GPU: &str = "the server runs no model and gets no GPU; remove resources.gpu";

/// `extraPodSpec` has no container.
pub const EXTRA_POD_SPEC_CONTAINER: &str =
    "extraPodSpec needs at least one container; add the engine container (name it main)";

/// A service with `extraPodSpec` also sets a field that renders into the pod.
pub const EXTRA_POD_SPEC_ALONE: &str = "extraPodSpec is the whole pod, so image, command, args, env, resources, nodeSelector, tolerations, health, model, network and podTemplate would go unused; set them in extraPodSpec (its main container is the one named main or infera, else the first) and remove them here";

// topology.

/// There is no worker pool.
pub const NO_WORKER: &str =
    "at least one service must have componentType: worker; add a worker pool";

// The deployment.

/// Default GPU resource name.
pub const DEFAULT_GPU_TYPE: &str = "amd.com/gpu";
