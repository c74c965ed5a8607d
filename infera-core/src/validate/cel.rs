//! The CRD's CEL rules (`x-kubernetes-validations`), which [`crate::types`] attaches with
//! `x_kube(validation = ...)`. Each is built from the constants and, where CEL can say as much,
//! the message of the Rust rule it mirrors, so admission and [`super::validate`] cannot drift.
//! A message starts with the field it is about, as the Rust rule's path does.

use kube::core::{Message, Rule};

use super::limits::{DURATION_PATTERN, MAX_SCRAPE_INTERVAL_SECONDS, MAX_STARTUP_SECONDS};
use super::rules::{
    ALLOW_WITHOUT_RESTRICT, CACHE_WITH_HF, CANNOT_PROGRESS, DEFAULT_GPU_TYPE, DEFAULT_MAX_SURGE,
    DEFAULT_MAX_UNAVAILABLE, DIGEST_PATTERN, ENGINE_FIELD_OURS, ENGINE_OWNED_FIELDS, EXTERNAL_ONLY,
    EXTRA_POD_SPEC_ALONE, EXTRA_POD_SPEC_CONTAINER, FRONTEND_OURS, GPU_OURS, HF_ONLY,
    IB_DEVICE_IN_ARGS, IB_DEVICE_ON_VLLM, IMAGE_REQUIRED, INIT_NAME_OURS, LABEL_OURS,
    LOCKSTEP_WITHOUT_PD, MANAGED_ONLY, METRICS_WITH_KEDA, MIN_ABOVE_MAX, MODEL_VOLUME_OURS,
    NO_IMAGE, NO_METRIC, NO_TRIGGER, NO_WORKER, PEER_FORM, PLANNER_AND_AUTOSCALING,
    PLANNER_MIN_ABOVE_MAX, PLANNER_NOT_A_POOL, RDMA_NOT_ACROSS_NODES, REPLICAS_AND_AUTOSCALING,
    RESTRICT_WITHOUT_POLICIES, SERVER_GPU, SERVER_GPU_PRODUCT, SERVER_MODEL, SERVER_NODES,
    SERVER_ROLE, SERVER_ROLLOUT, SERVER_TOKENIZER, SERVICE_ACCOUNT_OURS, SHM_OURS,
    SKIP_PROBES_HEALTH, TOKENIZER_FLAG, TOKENIZER_REQUIRED, TRIGGERS_WITHOUT_KEDA, UNPINNED,
    URL_TWICE, WORKER_GPU, name_not_a_dns_label, name_too_long, names_too_long,
    scrape_interval_out_of_range, service_name_not_a_dns_label, service_name_reserved,
    startup_out_of_range,
};
use crate::{
    flags,
    naming::{
        DNS_LABEL_PATTERN, ENGINE_CONTAINER, FRONTEND_CONTAINER, MAX_DEPLOYMENT_NAME,
        MAX_DEPLOYMENT_PLUS_SERVICE, MODEL_VOLUME, OWNED_LABEL_PREFIX, OWNED_STANDARD_LABELS,
        RESERVED_SERVICE_NAMES, SHM_VOLUME,
    },
};

/// A rule failing with `field: message`.
fn rule(cel: impl Into<String>, field: &str, message: &str) -> Rule {
    Rule::new(cel).message(Message::Message(format!("{field}: {message}")))
}

/// A CEL list of string literals.
fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| format!("'{item}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// `metadata.name` is a DNS label.
pub(crate) fn deployment_name_form() -> Rule {
    rule(
        format!("self.metadata.name.matches('{DNS_LABEL_PATTERN}')"),
        "metadata.name",
        &name_not_a_dns_label(),
    )
}

/// `metadata.name` is at most [`MAX_DEPLOYMENT_NAME`] characters.
pub(crate) fn deployment_name_length() -> Rule {
    rule(
        format!("size(self.metadata.name) <= {MAX_DEPLOYMENT_NAME}"),
        "metadata.name",
        &name_too_long(),
    )
}

/// The deployment name plus any service name is at most [`MAX_DEPLOYMENT_PLUS_SERVICE`]. A name
/// that is too long on its own is reported once, by [`deployment_name_length`], as the Rust rule
/// does.
pub(crate) fn deployment_plus_service_length() -> Rule {
    rule(
        format!(
            "size(self.metadata.name) > {MAX_DEPLOYMENT_NAME} || self.spec.services.all(s, size(self.metadata.name) + size(s) <= {MAX_DEPLOYMENT_PLUS_SERVICE})"
        ),
        "spec.services",
        &names_too_long(None),
    )
    .field_path(".spec.services")
}

/// Service names (the keys of `spec.services`) are DNS labels.
pub(crate) fn service_name_form() -> Rule {
    rule(
        format!("self.all(s, s.matches('{DNS_LABEL_PATTERN}'))"),
        "spec.services",
        &service_name_not_a_dns_label(),
    )
}

/// No service takes a name the operator uses.
pub(crate) fn service_name_not_reserved() -> Rule {
    rule(
        format!(
            "self.services.all(s, !(s in {}))",
            list(&RESERVED_SERVICE_NAMES)
        ),
        "spec.services",
        &service_name_reserved(),
    )
    .field_path(".services")
}

/// Exactly one server, or none behind an Inference Gateway (the Rust rule also names the extra
/// servers).
pub(crate) fn one_server() -> Rule {
    rule(
        "self.services.filter(s, self.services[s].componentType == 'server').size() == 1 || (self.services.filter(s, self.services[s].componentType == 'server').size() == 0 && has(self.gaie) && has(self.gaie.enabled) && self.gaie.enabled)",
        "spec.services",
        "exactly one service must have componentType: server, or none when spec.gaie.enabled is true; add one server or remove the extras",
    )
    .field_path(".services")
}

/// At least one worker pool.
pub(crate) fn a_worker() -> Rule {
    rule(
        "self.services.exists(s, self.services[s].componentType == 'worker')",
        "spec.services",
        NO_WORKER,
    )
    .field_path(".services")
}

/// Prefill pools exactly when there are decode pools (the Rust rule names the missing role).
pub(crate) fn prefill_with_decode() -> Rule {
    let has = |role: &str| {
        format!(
            "self.services.exists(s, has(self.services[s].role) && self.services[s].role == '{role}')"
        )
    };
    rule(
        format!("{} == {}", has("prefill"), has("decode")),
        "spec.services",
        "prefill pools need decode pools and vice versa; add the missing role or use role: mixed",
    )
    .field_path(".services")
}

/// `rollout.strategy: Lockstep` only on a graph with prefill (hence decode) pools.
pub(crate) fn lockstep_needs_prefill_and_decode() -> Rule {
    rule(
        "!has(self.rollout) || !has(self.rollout.strategy) || self.rollout.strategy != 'Lockstep' || self.services.exists(s, self.services[s].componentType == 'worker' && has(self.services[s].role) && self.services[s].role == 'prefill')",
        "spec.rollout.strategy",
        LOCKSTEP_WITHOUT_PD,
    )
    .field_path(".rollout.strategy")
}

/// Every worker pool's `maxSurge` and `maxUnavailable` (its own, else `spec.rollout`'s, else
/// the defaults) are not both 0.
pub(crate) fn rollout_can_progress() -> Rule {
    let bound = |field: &str, default: i32| {
        format!(
            "(has(self.services[s].rollout) && has(self.services[s].rollout.{field}) ? self.services[s].rollout.{field} : (has(self.rollout) && has(self.rollout.{field}) ? self.rollout.{field} : {default}))"
        )
    };
    rule(
        format!(
            "self.services.all(s, self.services[s].componentType != 'worker' || {} + {} > 0)",
            bound("maxSurge", DEFAULT_MAX_SURGE),
            bound("maxUnavailable", DEFAULT_MAX_UNAVAILABLE),
        ),
        "spec.services",
        CANNOT_PROGRESS,
    )
    .field_path(".services")
}

/// `rollout` only on worker pools.
pub(crate) fn server_has_no_rollout() -> Rule {
    rule(
        "self.componentType != 'server' || !has(self.rollout)",
        "rollout",
        SERVER_ROLLOUT,
    )
    .field_path(".rollout")
}

/// `etcdEndpoint` exactly when discovery is etcd (the Rust rule says which way it is wrong).
pub(crate) fn etcd_endpoint_with_etcd() -> Rule {
    rule(
        "(has(self.discoveryBackend) && self.discoveryBackend == 'etcd') == has(self.etcdEndpoint)",
        "spec.etcdEndpoint",
        "set it exactly when discoveryBackend is etcd; add etcdEndpoint or remove it",
    )
    .field_path(".etcdEndpoint")
}

/// `nats.<field>` (`url`, `urlSecretRef`) only when NATS is external: not with `deploy: true`.
pub(crate) fn nats_url_when_external(field: &str) -> Rule {
    rule(
        format!("!has(self.{field}) || !has(self.deploy) || !self.deploy"),
        &format!("spec.nats.{field}"),
        EXTERNAL_ONLY,
    )
    .field_path(format!(".{field}"))
}

/// An external NATS's URL is given once: `url` or `urlSecretRef`.
pub(crate) fn nats_url_once() -> Rule {
    rule(
        "!has(self.url) || !has(self.urlSecretRef)",
        "spec.nats.urlSecretRef",
        URL_TWICE,
    )
    .field_path(".urlSecretRef")
}

/// `field` of `spec.nats` only when the operator deploys NATS (`deploy`, by default true
/// unless `url` is set).
pub(crate) fn nats_managed_only(field: &str) -> Rule {
    rule(
        format!("(has(self.deploy) ? self.deploy : !has(self.url) && !has(self.urlSecretRef)) || !has(self.{field})"),
        &format!("spec.nats.{field}"),
        MANAGED_ONLY,
    )
    .field_path(format!(".{field}"))
}

/// A service with `extraPodSpec` sets none of the fields that render into the pod.
pub(crate) fn extra_pod_spec_alone() -> Rule {
    let fields = [
        "image",
        "command",
        "args",
        "env",
        "resources",
        "nodeSelector",
        "tolerations",
        "health",
        "model",
        "network",
        "podTemplate",
    ];
    let set: Vec<String> = fields.iter().map(|f| format!("has(self.{f})")).collect();
    rule(
        format!("!has(self.extraPodSpec) || !({})", set.join(" || ")),
        "extraPodSpec",
        EXTRA_POD_SPEC_ALONE,
    )
    .field_path(".extraPodSpec")
}

/// An `extraPodSpec` has a container.
pub(crate) fn extra_pod_spec_container() -> Rule {
    rule(
        "!has(self.extraPodSpec) || size(self.extraPodSpec.containers) > 0",
        "extraPodSpec.containers",
        EXTRA_POD_SPEC_CONTAINER,
    )
    .field_path(".extraPodSpec.containers")
}

/// `skipReadinessProbe` with no probe settings in `health`.
pub(crate) fn skip_probes_without_probe_settings() -> Rule {
    rule(
        "!has(self.skipReadinessProbe) || !self.skipReadinessProbe || !has(self.health) || !(has(self.health.startupTimeout) || has(self.health.readinessPath) || has(self.health.livenessPath) || has(self.health.timeoutSeconds))",
        "skipReadinessProbe",
        SKIP_PROBES_HEALTH,
    )
    .field_path(".skipReadinessProbe")
}

/// `podLabels` sets none of the operator's labels.
pub(crate) fn pod_labels_not_ours() -> Rule {
    rule(
        format!(
            "!has(self.podLabels) || self.podLabels.all(k, !k.startsWith('{OWNED_LABEL_PREFIX}') && !(k in {}))",
            list(&OWNED_STANDARD_LABELS)
        ),
        "podLabels",
        LABEL_OURS,
    )
    .field_path(".podLabels")
}

/// The server has no role.
pub(crate) fn server_has_no_role() -> Rule {
    rule(
        "self.componentType != 'server' || !has(self.role)",
        "role",
        SERVER_ROLE,
    )
    .field_path(".role")
}

/// The server has no GPU.
pub(crate) fn server_has_no_gpu() -> Rule {
    rule(
        "self.componentType != 'server' || !has(self.resources) || !has(self.resources.gpu) || self.resources.gpu == 0",
        "resources.gpu",
        SERVER_GPU,
    )
    .field_path(".resources.gpu")
}

/// The server runs on one node.
pub(crate) fn server_on_one_node() -> Rule {
    rule(
        "self.componentType != 'server' || !has(self.numberOfNodes) || self.numberOfNodes == 1",
        "numberOfNodes",
        SERVER_NODES,
    )
    .field_path(".numberOfNodes")
}

/// The server's args name the tokenizer (unless `extraPodSpec` writes its command line).
pub(crate) fn server_has_a_tokenizer() -> Rule {
    rule(
        format!(
            "self.componentType != 'server' || has(self.extraPodSpec) || (has(self.args) && self.args.exists(a, a == '{flag}' || a.startsWith('{flag}=')))",
            flag = TOKENIZER_FLAG
        ),
        "args",
        SERVER_TOKENIZER,
    )
    .field_path(".args")
}

/// The server names no GPU product.
pub(crate) fn server_has_no_gpu_product() -> Rule {
    rule(
        "self.componentType != 'server' || !has(self.resources) || !has(self.resources.gpuProduct)",
        "resources.gpuProduct",
        SERVER_GPU_PRODUCT,
    )
    .field_path(".resources.gpuProduct")
}

/// CEL: the service moves KV caches or tensors between nodes (see `network::across_nodes`),
/// `service` being the CEL expression of the service.
fn across_nodes(service: &str) -> String {
    format!(
        "({service}.componentType == 'worker' && ((has({service}.role) && {service}.role != 'mixed') || (has({service}.numberOfNodes) && {service}.numberOfNodes > 1)))"
    )
}

/// CEL: `args` of the service `service` sets no [`flags::IB_DEVICE_FLAG`].
fn no_ib_device_flag(service: &str) -> String {
    format!(
        "(!has({service}.args) || {service}.args.all(a, a.split('=')[0] != '{}'))",
        flags::IB_DEVICE_FLAG
    )
}

/// `network.rdma` only on prefill, decode and multi-node worker pools.
pub(crate) fn rdma_only_across_nodes() -> Rule {
    rule(
        format!(
            "!has(self.network) || !has(self.network.rdma) || {}",
            across_nodes("self")
        ),
        "network.rdma",
        RDMA_NOT_ACROSS_NODES,
    )
    .field_path(".network.rdma")
}

/// With a service's own `network.rdma.device`, its `args` do not set the IB-device flag.
pub(crate) fn ib_device_not_in_args() -> Rule {
    rule(
        format!(
            "!has(self.network) || !has(self.network.rdma) || !has(self.network.rdma.device) || {}",
            no_ib_device_flag("self")
        ),
        "args",
        IB_DEVICE_IN_ARGS,
    )
    .field_path(".args")
}

/// With `spec.network.rdma.device`, no pool that takes it sets the IB-device flag in `args`.
pub(crate) fn deployment_ib_device_not_in_args() -> Rule {
    let service = "self.services[s]";
    rule(
        format!(
            "!has(self.network) || !has(self.network.rdma) || !has(self.network.rdma.device) || self.services.all(s, has({service}.network) || !{} || {})",
            across_nodes(service),
            no_ib_device_flag(service)
        ),
        "spec.services",
        IB_DEVICE_IN_ARGS,
    )
    .field_path(".services")
}

/// CEL: the `network` at `network` names no IB device.
fn no_device(network: &str) -> String {
    format!("(!has({network}) || !has({network}.rdma) || !has({network}.rdma.device))")
}

/// vLLM takes no IB device: not in `spec.network`.
pub(crate) fn no_ib_device_on_vllm() -> Rule {
    rule(
        format!(
            "self.backendFramework != 'vllm' || {}",
            no_device("self.network")
        ),
        "spec.network.rdma.device",
        IB_DEVICE_ON_VLLM,
    )
    .field_path(".network.rdma.device")
}

/// vLLM takes no IB device: not in a pool's `network`.
pub(crate) fn services_no_ib_device_on_vllm() -> Rule {
    rule(
        format!(
            "self.backendFramework != 'vllm' || self.services.all(s, {})",
            no_device("self.services[s].network")
        ),
        "spec.services",
        IB_DEVICE_ON_VLLM,
    )
    .field_path(".services")
}

/// `model.cache` exactly with an `hf://` source (`spec.model` or a service's `model`).
pub(crate) fn model_cache_with_hf() -> Rule {
    rule(
        "self.source.startsWith('hf://') == has(self.cache)",
        "model.cache",
        CACHE_WITH_HF,
    )
    .field_path(".cache")
}

/// `model.tokenSecretRef` and `model.downloadImage` only with an `hf://` source.
pub(crate) fn model_hf_fields() -> Rule {
    rule(
        "self.source.startsWith('hf://') || (!has(self.tokenSecretRef) && !has(self.downloadImage))",
        "model",
        HF_ONLY,
    )
}

/// The server serves no model: no `model` of its own.
pub(crate) fn server_has_no_model() -> Rule {
    rule(
        "self.componentType != 'server' || !has(self.model)",
        "model",
        SERVER_MODEL,
    )
    .field_path(".model")
}

/// No worker with a model (`spec.model` or its own) sets the engine's model flag in `args` (the
/// Rust rule names the argument).
pub(crate) fn model_flag_not_in_args() -> Rule {
    let flag = format!(
        "(self.backendFramework == 'sglang' ? '{}' : '{}')",
        flags::SGLANG_MODEL_FLAG,
        flags::VLLM_MODEL_FLAG
    );
    let service = "self.services[s]";
    rule(
        format!(
            "self.services.all(s, (!has(self.model) && !has({service}.model)) || {service}.componentType != 'worker' || !has({service}.args) || {service}.args.all(a, a.split('=')[0] != {flag}))"
        ),
        "spec.services",
        "sets the model flag spec.model or the service's model injects (--model-path for sglang, --model for vllm); remove it from args or remove the model",
    )
    .field_path(".services")
}

/// CEL: the `podTemplate` at CEL path `overlay` adds no volume named like the model's.
fn no_model_volume(overlay: &str) -> String {
    format!(
        "(!has({overlay}) || !has({overlay}.spec) || !has({overlay}.spec.volumes) || {overlay}.spec.volumes.all(v, v.name != '{MODEL_VOLUME}'))"
    )
}

/// A worker's own `model`: its `podTemplate` adds no volume named like the model's.
pub(crate) fn service_overlay_model_volume() -> Rule {
    rule(
        format!(
            "!has(self.model) || {}",
            no_model_volume("self.podTemplate")
        ),
        "podTemplate.spec.volumes",
        MODEL_VOLUME_OURS,
    )
    .field_path(".podTemplate.spec.volumes")
}

/// With a model anywhere, `spec.podTemplate` (on every pod) adds no volume named like the
/// model's, nor does the `podTemplate` of a worker that takes `spec.model`. (The mount-path rule
/// is the Rust rule's alone: a CEL rule over every container's `volumeMounts`, a list without a
/// schema limit, exceeds the API server's cost budget.)
pub(crate) fn deployment_overlay_model_volume() -> Rule {
    let any_model = "(has(self.model) || self.services.exists(s, has(self.services[s].model)))";
    let service = "self.services[s]";
    rule(
        format!(
            "!{any_model} || ({} && (!has(self.model) || self.services.all(s, has({service}.model) || {service}.componentType != 'worker' || {})))",
            no_model_volume("self.podTemplate"),
            no_model_volume(&format!("{service}.podTemplate")),
        ),
        "spec.podTemplate.spec.volumes",
        MODEL_VOLUME_OURS,
    )
}

/// A worker has at least one GPU.
pub(crate) fn worker_has_a_gpu() -> Rule {
    rule(
        "self.componentType != 'worker' || has(self.extraPodSpec) || (has(self.resources) && has(self.resources.gpu) && self.resources.gpu >= 1)",
        "resources.gpu",
        WORKER_GPU,
    )
    .field_path(".resources.gpu")
}

/// `replicas` and `autoscaling` exclude each other.
pub(crate) fn replicas_or_autoscaling() -> Rule {
    rule(
        "!has(self.autoscaling) || !has(self.replicas)",
        "replicas",
        REPLICAS_AND_AUTOSCALING,
    )
    .field_path(".replicas")
}

/// `autoscaling.minReplicas` (default 1) is not above `maxReplicas`.
pub(crate) fn autoscaling_min_not_above_max() -> Rule {
    rule(
        "!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",
        "minReplicas",
        MIN_ABOVE_MAX,
    )
    .field_path(".minReplicas")
}

/// A planned pool's `min` is not above its `max`.
pub(crate) fn planner_min_not_above_max() -> Rule {
    rule("self.min <= self.max", "min", PLANNER_MIN_ABOVE_MAX).field_path(".min")
}

/// Every planned pool is a worker pool of the spec.
pub(crate) fn planner_pools_are_workers() -> Rule {
    rule(
        "!has(self.planner) || self.planner.pools.all(p, p in self.services && self.services[p].componentType == 'worker')",
        "spec.planner.pools",
        PLANNER_NOT_A_POOL,
    )
    .field_path(".planner.pools")
}

/// No planned pool has `autoscaling`.
pub(crate) fn planner_pools_not_autoscaled() -> Rule {
    rule(
        "!has(self.planner) || self.planner.pools.all(p, !(p in self.services) || !has(self.services[p].autoscaling))",
        "spec.planner.pools",
        PLANNER_AND_AUTOSCALING,
    )
    .field_path(".planner.pools")
}

/// CEL for `provider: keda` (absent means `hpa`).
const KEDA: &str = "has(self.provider) && self.provider == 'keda'";

/// The HorizontalPodAutoscaler (`provider: hpa`, the default) needs `metrics`.
pub(crate) fn autoscaling_hpa_has_metrics() -> Rule {
    rule(format!("{KEDA} || has(self.metrics)"), "metrics", NO_METRIC).field_path(".metrics")
}

/// `triggers` only with `provider: keda`.
pub(crate) fn autoscaling_triggers_need_keda() -> Rule {
    rule(
        format!("{KEDA} || !has(self.triggers)"),
        "triggers",
        TRIGGERS_WITHOUT_KEDA,
    )
    .field_path(".triggers")
}

/// `metrics` not with `provider: keda`.
pub(crate) fn autoscaling_keda_has_no_metrics() -> Rule {
    rule(
        format!("!({KEDA}) || !has(self.metrics)"),
        "metrics",
        METRICS_WITH_KEDA,
    )
    .field_path(".metrics")
}

/// A KEDA ScaledObject (`provider: keda`) needs `triggers`.
pub(crate) fn autoscaling_keda_has_triggers() -> Rule {
    rule(
        format!("!({KEDA}) || has(self.triggers)"),
        "triggers",
        NO_TRIGGER,
    )
    .field_path(".triggers")
}

/// `args` sets none of [`flags::RESERVED`] (the Rust rule names the flag).
pub(crate) fn no_injected_flag() -> Rule {
    rule(
        format!(
            "!has(self.args) || self.args.all(a, !(a.split('=')[0] in {}))",
            list(&flags::RESERVED)
        ),
        "args",
        "sets a flag the operator injects; remove it (see the injected-flag table in the README)",
    )
    .field_path(".args")
}

/// With `imagePolicy.requireDigest`, the image at CEL path `image` (where `self` is the spec) is
/// pinned by digest; `field` is where the error points.
fn pinned_under_policy(condition: &str, field: &str, path: &str) -> Rule {
    rule(
        format!("!has(self.imagePolicy) || !self.imagePolicy.requireDigest || {condition}"),
        field,
        UNPINNED,
    )
    .field_path(path)
}

/// `image.matches(...)`: pinned by digest.
fn pinned(image: &str) -> String {
    format!("{image}.matches('{DIGEST_PATTERN}')")
}

/// `spec.image` is pinned by digest under `imagePolicy.requireDigest`.
pub(crate) fn image_pinned() -> Rule {
    pinned_under_policy(
        &format!("!has(self.image) || {}", pinned("self.image")),
        "spec.image",
        ".image",
    )
}

/// Every service's image is pinned by digest under `imagePolicy.requireDigest` (the Rust rule
/// names the service).
pub(crate) fn service_images_pinned() -> Rule {
    pinned_under_policy(
        &format!(
            "self.services.all(s, !has(self.services[s].image) || {})",
            pinned("self.services[s].image")
        ),
        "spec.services",
        ".services",
    )
}

/// `spec.gaie.tokenizerPath` is set, as upstream's CRD requires.
pub(crate) fn gaie_tokenizer() -> Rule {
    rule(
        "!has(self.gaie) || has(self.gaie.tokenizerPath)",
        "spec.gaie.tokenizerPath",
        TOKENIZER_REQUIRED,
    )
    .field_path(".gaie.tokenizerPath")
}

/// With GAIE on, `spec.gaie.eppImage` or `spec.image` names the EPP and sidecar image.
pub(crate) fn gaie_image() -> Rule {
    rule(
        "!has(self.gaie) || !has(self.gaie.enabled) || !self.gaie.enabled || has(self.gaie.eppImage) || has(self.image)",
        "spec.gaie.eppImage",
        IMAGE_REQUIRED,
    )
    .field_path(".gaie.eppImage")
}

/// `spec.gaie.eppImage` is pinned by digest under `imagePolicy.requireDigest`.
pub(crate) fn epp_image_pinned() -> Rule {
    pinned_under_policy(
        &format!(
            "!has(self.gaie) || !has(self.gaie.eppImage) || {}",
            pinned("self.gaie.eppImage")
        ),
        "spec.gaie.eppImage",
        ".gaie.eppImage",
    )
}

/// `health.startupTimeout` is from 1s to 24h. A value that is not a duration is the schema
/// pattern's to refuse, so the rule leaves it alone rather than fail to parse it.
pub(crate) fn startup_timeout_range() -> Rule {
    let timeout = "duration(self.startupTimeout)";
    rule(
        format!(
            "!has(self.startupTimeout) || !self.startupTimeout.matches('{DURATION_PATTERN}') || ({timeout} >= duration('1s') && {timeout} <= duration('{MAX_STARTUP_SECONDS}s'))"
        ),
        "startupTimeout",
        &startup_out_of_range(),
    )
    .field_path(".startupTimeout")
}

/// `monitoring.interval` is within 1s to [`MAX_SCRAPE_INTERVAL_SECONDS`] (its form is the
/// schema's pattern).
pub(crate) fn scrape_interval_range() -> Rule {
    let interval = "duration(self.interval)";
    rule(
        format!(
            "!has(self.interval) || !self.interval.matches('{DURATION_PATTERN}') || ({interval} >= duration('1s') && {interval} <= duration('{MAX_SCRAPE_INTERVAL_SECONDS}s'))"
        ),
        "interval",
        &scrape_interval_out_of_range(),
    )
    .field_path(".interval")
}

/// `monitoring.labels` sets none of the operator's labels (the PodMonitor carries them).
pub(crate) fn monitoring_labels_not_ours() -> Rule {
    rule(
        format!(
            "!has(self.labels) || self.labels.all(k, !k.startsWith('{OWNED_LABEL_PREFIX}') && !(k in {}))",
            list(&OWNED_STANDARD_LABELS)
        ),
        "labels",
        LABEL_OURS,
    )
    .field_path(".labels")
}

/// `condition` holds for every item `c` of the overlay's `list` (`self` is the overlay).
fn each_of_overlay(list: &str, condition: &str) -> String {
    format!("!has(self.spec) || !has(self.spec.{list}) || self.spec.{list}.all(c, {condition})")
}

/// A `podTemplate` sets no label the operator selects pods by.
pub(crate) fn overlay_labels_not_ours() -> Rule {
    rule(
        format!(
            "!has(self.metadata) || !has(self.metadata.labels) || self.metadata.labels.all(k, !k.startsWith('{OWNED_LABEL_PREFIX}') && !(k in {}))",
            list(&OWNED_STANDARD_LABELS)
        ),
        "metadata.labels",
        LABEL_OURS,
    )
    .field_path(".metadata.labels")
}

/// A `podTemplate`'s `engine` entry sets none of [`ENGINE_OWNED_FIELDS`].
pub(crate) fn overlay_engine_fields() -> Rule {
    let unset: Vec<String> = ENGINE_OWNED_FIELDS
        .iter()
        .map(|field| format!("!has(c.{field})"))
        .collect();
    rule(
        each_of_overlay(
            "containers",
            &format!("c.name != '{ENGINE_CONTAINER}' || ({})", unset.join(" && ")),
        ),
        "spec.containers",
        ENGINE_FIELD_OURS,
    )
    .field_path(".spec.containers")
}

/// No added container is named like the GAIE sidecar.
pub(crate) fn overlay_container_names() -> Rule {
    rule(
        each_of_overlay("containers", &format!("c.name != '{FRONTEND_CONTAINER}'")),
        "spec.containers",
        FRONTEND_OURS,
    )
    .field_path(".spec.containers")
}

/// No init container is named like the operator's containers.
pub(crate) fn overlay_init_container_names() -> Rule {
    rule(
        each_of_overlay(
            "initContainers",
            &format!(
                "!(c.name in {})",
                list(&[ENGINE_CONTAINER, FRONTEND_CONTAINER])
            ),
        ),
        "spec.initContainers",
        INIT_NAME_OURS,
    )
    .field_path(".spec.initContainers")
}

/// Every added container has an image (the `engine` entry merges into ours).
pub(crate) fn overlay_containers_have_images() -> Rule {
    rule(
        each_of_overlay(
            "containers",
            &format!("c.name == '{ENGINE_CONTAINER}' || has(c.image)"),
        ),
        "spec.containers",
        NO_IMAGE,
    )
    .field_path(".spec.containers")
}

/// Every init container has an image.
pub(crate) fn overlay_init_containers_have_images() -> Rule {
    rule(
        each_of_overlay("initContainers", "has(c.image)"),
        "spec.initContainers",
        NO_IMAGE,
    )
    .field_path(".spec.initContainers")
}

/// No volume takes the name of the operator's `/dev/shm`.
pub(crate) fn overlay_shm_volume() -> Rule {
    rule(
        each_of_overlay("volumes", &format!("c.name != '{SHM_VOLUME}'")),
        "spec.volumes",
        SHM_OURS,
    )
    .field_path(".spec.volumes")
}

/// No container of `overlay` (a CEL path to a `podTemplate`) asks for the resource `gpu` (a CEL
/// string expression).
fn overlay_without(overlay: &str, gpu: &str) -> String {
    let free = |list: &str| {
        format!(
            "(!has({overlay}.spec.{list}) || {overlay}.spec.{list}.all(c, !has(c.resources) || ((!has(c.resources.limits) || !({gpu} in c.resources.limits)) && (!has(c.resources.requests) || !({gpu} in c.resources.requests)))))"
        )
    };
    format!(
        "!has({overlay}) || !has({overlay}.spec) || ({} && {})",
        free("containers"),
        free("initContainers")
    )
}

/// The GPU resource name of the service at CEL path `service`.
fn gpu_of(service: &str) -> String {
    format!(
        "(has({service}.resources) && has({service}.resources.gpuType) ? {service}.resources.gpuType : '{DEFAULT_GPU_TYPE}')"
    )
}

/// A service's `podTemplate` asks for no GPU (`self` is the service).
pub(crate) fn service_overlay_no_gpu() -> Rule {
    rule(
        overlay_without("self.podTemplate", &gpu_of("self")),
        "podTemplate.spec",
        GPU_OURS,
    )
    .field_path(".podTemplate.spec")
}

/// `spec.podTemplate` asks for no service's GPU nor the default one.
pub(crate) fn deployment_overlay_no_gpu() -> Rule {
    rule(
        format!(
            "({}) && self.services.all(s, {})",
            overlay_without("self.podTemplate", &format!("'{DEFAULT_GPU_TYPE}'")),
            overlay_without("self.podTemplate", &gpu_of("self.services[s]"))
        ),
        "spec.podTemplate.spec",
        GPU_OURS,
    )
    .field_path(".podTemplate.spec")
}

/// With Kubernetes discovery, the overlay at CEL path `overlay` names no ServiceAccount; `field`
/// is where the error points.
fn no_service_account(overlay_named: &str, field: &str, path: &str) -> Rule {
    rule(
        format!(
            "(has(self.discoveryBackend) && self.discoveryBackend == 'etcd') || {overlay_named}"
        ),
        field,
        SERVICE_ACCOUNT_OURS,
    )
    .field_path(path)
}

/// `!has(...serviceAccountName)` of the overlay at CEL path `overlay`.
fn unnamed(overlay: &str) -> String {
    format!("(!has({overlay}) || !has({overlay}.spec) || !has({overlay}.spec.serviceAccountName))")
}

/// With Kubernetes discovery `spec.podTemplate` names no ServiceAccount.
pub(crate) fn deployment_overlay_service_account() -> Rule {
    no_service_account(
        &unnamed("self.podTemplate"),
        "spec.podTemplate.spec.serviceAccountName",
        ".podTemplate.spec.serviceAccountName",
    )
}

/// With Kubernetes discovery no service's `podTemplate` names a ServiceAccount (the Rust rule
/// names the service).
pub(crate) fn service_overlays_service_account() -> Rule {
    no_service_account(
        &format!(
            "self.services.all(s, {})",
            unnamed("self.services[s].podTemplate")
        ),
        "spec.services.*.podTemplate.spec.serviceAccountName",
        ".services",
    )
}

/// Every `networkPolicy.metricsFrom` entry names selectors, or an `ipBlock` alone.
pub(crate) fn metrics_from_peer_form() -> Rule {
    rule(
        "!has(self.metricsFrom) || self.metricsFrom.all(p, (has(p.podSelector) || has(p.namespaceSelector)) != has(p.ipBlock))",
        "spec.networkPolicy.metricsFrom",
        PEER_FORM,
    )
    .field_path(".metricsFrom")
}

/// Restricted egress needs the graph's NetworkPolicies on.
pub(crate) fn egress_needs_policies() -> Rule {
    rule(
        "!has(self.egress) || !has(self.egress.restrict) || !self.egress.restrict || !has(self.enabled) || self.enabled",
        "spec.networkPolicy.egress.restrict",
        RESTRICT_WITHOUT_POLICIES,
    )
    .field_path(".egress.restrict")
}

/// `egress.allow` only with `restrict: true`.
pub(crate) fn egress_allow_needs_restrict() -> Rule {
    rule(
        "!has(self.allow) || size(self.allow) == 0 || (has(self.restrict) && self.restrict)",
        "spec.networkPolicy.egress.allow",
        ALLOW_WITHOUT_RESTRICT,
    )
    .field_path(".allow")
}

/// Every peer of an `egress.allow` rule names selectors, or an `ipBlock` alone.
pub(crate) fn egress_peer_form() -> Rule {
    rule(
        "!has(self.allow) || self.allow.all(r, !has(r.to) || r.to.all(p, (has(p.podSelector) || has(p.namespaceSelector)) != has(p.ipBlock)))",
        "spec.networkPolicy.egress.allow",
        PEER_FORM,
    )
    .field_path(".allow")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_cel_string_lists() {
        assert_eq!(list(&["a", "b-c"]), "['a', 'b-c']");
    }

    #[test]
    fn the_name_rules_are_split_into_form_and_length() {
        let form = deployment_name_form();
        assert_eq!(
            form.rule,
            "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"
        );
        assert_eq!(
            form.message,
            Some(Message::Message("metadata.name: must be a DNS label (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit); rename the deployment".into()))
        );
        let length = deployment_name_length();
        assert_eq!(length.rule, "size(self.metadata.name) <= 42");
        assert_eq!(
            length.message,
            Some(Message::Message("metadata.name: must be a DNS label of at most 42 characters; choose a shorter name".into()))
        );
    }

    #[test]
    fn the_startup_timeout_rule_leaves_malformed_values_to_the_pattern() {
        let rule = startup_timeout_range();
        assert_eq!(
            rule.rule,
            "!has(self.startupTimeout) || !self.startupTimeout.matches('^[0-9]{1,6}[smh]$') || (duration(self.startupTimeout) >= duration('1s') && duration(self.startupTimeout) <= duration('86400s'))"
        );
        assert_eq!(
            rule.message,
            Some(Message::Message("startupTimeout: must be from 1s to 24h; set how long a cold start may take, e.g. 30m or 2h".into()))
        );
    }

    #[test]
    fn the_digest_rules_see_every_image() {
        let digest = "matches('^[^@]+@sha256:[0-9a-f]{64}$')";
        let policy = "!has(self.imagePolicy) || !self.imagePolicy.requireDigest";
        assert_eq!(
            image_pinned().rule,
            format!("{policy} || !has(self.image) || self.image.{digest}")
        );
        assert_eq!(
            service_images_pinned().rule,
            format!(
                "{policy} || self.services.all(s, !has(self.services[s].image) || self.services[s].image.{digest})"
            )
        );
        assert_eq!(
            epp_image_pinned().rule,
            format!(
                "{policy} || !has(self.gaie) || !has(self.gaie.eppImage) || self.gaie.eppImage.{digest}"
            )
        );
        assert_eq!(
            image_pinned().message,
            Some(Message::Message("spec.image: must be pinned by digest because imagePolicy.requireDigest is true; pin it by digest, e.g. rocm/infera@sha256:<64 hex>; find it with `crane digest IMAGE` or your registry".into()))
        );
    }

    #[test]
    fn the_injected_flag_rule_names_every_reserved_flag() {
        assert_eq!(
            no_injected_flag().rule,
            "!has(self.args) || self.args.all(a, !(a.split('=')[0] in ['--disaggregation-mode', '--discovery-backend', '--etcd-endpoint', '--k8s-label-selector', '--request-transport', '--kv-event-transport', '--nats-server', '--drain-timeout', '--host', '--port', '--nnodes', '--node-rank', '--dist-init-addr', '--master-addr', '--master-port', '--router-mode', '--disaggregation-bootstrap-port']))"
        );
    }
}
