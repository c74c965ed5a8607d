//! The `InferaDeployment` custom resource (`infera.amd.com/v1alpha1`).
//!
//! Doc comments on these types become the CRD's field descriptions; the `x_kube(validation)` rules
//! (built in `validate::cel`) and the schema limits (from [`crate::validate::limits`]) are
//! the admission half of the rules in [`crate::validate`], which states every rule once more in
//! Rust with the same wording so the plugin can reject a spec before anything is sent.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::autoscaling::v2::MetricSpec,
    api::core::v1::{
        Affinity, Container, EnvVar, LocalObjectReference, PodSpec, Toleration,
        TopologySpreadConstraint, Volume,
    },
    api::networking::v1::{NetworkPolicyPeer, NetworkPolicyPort},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::Condition},
};
use kube::{CustomResource, KubeSchema};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

mod planner;

pub use planner::{
    LatencySlo, PlannerDecision, PlannerMode, PlannerPool, PlannerPoolStatus, PlannerSpec,
    PlannerStatus,
};

pub use crate::role::Role;
use crate::{
    naming::{MAX_DNS_LABEL, MAX_DNS_SUBDOMAIN},
    validate::{
        cel,
        limits::{
            DURATION_PATTERN, GPU_PRODUCT_PATTERN, HOSTNAME_PATTERN, IB_DEVICE_PATTERN,
            LIVENESS_PATH_PATTERN, MAX_ARG_LENGTH, MAX_ARGS, MAX_DRAIN_SECONDS,
            MAX_DURATION_LENGTH, MAX_EGRESS_RULES, MAX_GPU_PRODUCT_LENGTH, MAX_GPUS, MAX_HOSTNAMES,
            MAX_IB_DEVICE_LENGTH, MAX_METRICS, MAX_METRICS_FROM, MAX_NETWORK_NAME_LENGTH,
            MAX_NODES, MAX_OVERLAY_CONTAINERS, MAX_OVERLAY_ENTRIES, MAX_PROBE_PATH_LENGTH,
            MAX_PROBE_TIMEOUT, MAX_PROGRESS_DEADLINE_SECONDS, MAX_RDMA_NETWORKS,
            MAX_REFERENCE_LENGTH, MAX_REPLICAS, MAX_REVISION_HISTORY_LIMIT, MAX_SERVICES,
            MAX_TRIGGER_METADATA, MAX_TRIGGER_TYPE_LENGTH, MAX_TRIGGERS, MIN_SERVICES,
            MODEL_SOURCE_PATTERN, MOUNT_PATH_PATTERN, NETWORK_NAME_PATTERN, PROBE_PATH_PATTERN,
            RESOURCE_NAME_PATTERN,
        },
    },
};

/// An LLM inference graph: one router server, one or more worker pools (aggregated or
/// prefill/decode disaggregated, single- or multi-node), and the planes they share.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "infera.amd.com",
    version = "v1alpha1",
    kind = "InferaDeployment",
    namespaced,
    shortname = "idep",
    category = "infera",
    status = "InferaDeploymentStatus",
    derive = "PartialEq",
    printcolumn(name = "Backend", type_ = "string", json_path = ".spec.backendFramework", description = "Inference engine"),
    printcolumn(name = "State", type_ = "string", json_path = ".status.state", description = "Pending, Deploying, Ready, Degraded or Failed"),
    printcolumn(name = "Services", type_ = "string", json_path = ".status.servicesReady", description = "Services with every replica ready, of all"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp"),
    printcolumn(name = "Reason", type_ = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].reason", priority = 1, description = "Reason of the Ready condition"),
    printcolumn(name = "Endpoint", type_ = "string", json_path = ".status.endpoint", priority = 1, description = "In-cluster URL of the server"),
    printcolumn(name = "Revision", type_ = "string", json_path = ".status.updateRevision", priority = 1, description = "Revision of the worker pods the deployment rolls out to"),
    validation = cel::deployment_name_form(),
    validation = cel::deployment_name_length(),
    validation = cel::deployment_plus_service_length(),
)]
#[x_kube(
    validation = cel::one_server(),
    validation = cel::a_worker(),
    validation = cel::prefill_with_decode(),
    validation = cel::etcd_endpoint_with_etcd(),
    validation = cel::service_name_not_reserved(),
    validation = cel::image_pinned(),
    validation = cel::service_images_pinned(),
    validation = cel::epp_image_pinned(),
    validation = cel::gaie_tokenizer(),
    validation = cel::gaie_image(),
    validation = cel::deployment_overlay_no_gpu(),
    validation = cel::deployment_overlay_service_account(),
    validation = cel::service_overlays_service_account(),
    validation = cel::deployment_ib_device_not_in_args(),
    validation = cel::no_ib_device_on_vllm(),
    validation = cel::services_no_ib_device_on_vllm(),
    validation = cel::model_flag_not_in_args(),
    validation = cel::deployment_overlay_model_volume(),
    validation = cel::lockstep_needs_prefill_and_decode(),
    validation = cel::rollout_can_progress(),
    validation = cel::planner_pools_are_workers(),
    validation = cel::planner_pools_not_autoscaled(),
)]
#[serde(rename_all = "camelCase")]
pub struct InferaDeploymentSpec {
    /// Inference engine every worker runs (default `sglang`, as upstream's).
    #[serde(default)]
    pub backend_framework: BackendFramework,

    /// Container image for every service that does not set its own `image`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub image: Option<String>,

    /// How workers and the server find each other: `kubernetes` (default; the operator provisions a
    /// ServiceAccount, Role and RoleBinding) or `etcd` (external; set `etcdEndpoint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery_backend: Option<DiscoveryBackend>,

    /// URL of the external etcd used for discovery, e.g. `http://etcd.infra:2379`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub etcd_endpoint: Option<String>,

    /// The KV-event plane: an operator-managed NATS JetStream (the default, also when `nats` is
    /// omitted), an external NATS (`url`), or none (`deploy: false` without `url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nats: Option<NatsSpec>,

    /// Environment variables of every service's engine container, before the operator's and the
    /// service's own `env`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub envs: Vec<EnvVar>,

    /// Gateway API Inference Extension: when set, the operator adds a frontend sidecar (the router
    /// in direct mode) to every worker pod that serves, Infera's Endpoint Picker, an InferencePool
    /// and an HTTPRoute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaie: Option<GaieSpec>,

    /// What images the spec may name. Without `requireDigest`, mutable tags are allowed and the
    /// status reports them (condition `ImagesPinned`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_policy: Option<ImagePolicy>,

    /// Additions to every pod of the graph (a service's own `podTemplate` goes on top).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template: Option<PodTemplateOverlay>,

    /// The model weights every worker serves: mounted into each worker's engine container and
    /// passed as the engine's model flag. With `hf://` the operator downloads them first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSpec>,

    /// Networking of the worker pools that move KV caches or tensors between nodes: every
    /// prefill, decode and multi-node pool without a `network` of its own gets this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,

    /// NetworkPolicies of the graph (on by default): NATS and the workers accept connections only
    /// from the graph's own pods, the Gateway's namespace where GAIE routes, and `metricsFrom`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<NetworkPolicySpec>,

    /// Metrics collection by the Prometheus Operator: a PodMonitor that scrapes the router's and
    /// the engines' `/metrics` (`kubectl infera dashboard NAME` prints a Grafana dashboard of it),
    /// and with `slo` a PrometheusRule of burn-rate alerts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitoring: Option<MonitoringSpec>,

    /// How the worker pools roll out to a new revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutSpec>,

    /// The SLO planner: sizes the prefill and decode (or aggregated) pools to latency targets
    /// from the engines' metrics, recommending counts (`Advise`) or setting them (`Act`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner: Option<PlannerSpec>,

    /// Earlier revisions of the worker pods kept for `kubectl infera rollout history` and `undo`,
    /// as ControllerRevisions owned by the deployment (default 10). The oldest beyond it that no
    /// pod runs are deleted; 0 keeps only the revisions pods run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_REVISION_HISTORY_LIMIT))]
    pub revision_history_limit: Option<i32>,

    /// The services of the graph by name: exactly one `server` and at least one `worker` pool.
    /// Names are DNS labels; they become part of every child's name.
    #[schemars(extend("maxProperties" = MAX_SERVICES, "minProperties" = MIN_SERVICES))]
    #[x_kube(validation = cel::service_name_form())]
    pub services: BTreeMap<String, Box<ServiceSpec>>,
}

/// How the worker pools roll out to a new revision.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// Hold every existing worker pool at the revision its pods run: the operator does not apply
    /// its Deployment or LeaderWorkerSet (neither a new pod template nor new replicas) until this
    /// is false again. Status reports `Progressing=False` with reason `RolloutPaused`.
    #[serde(default)]
    pub paused: bool,
    /// `Lockstep` (the default when the graph has prefill and decode pools): the operator steps
    /// the prefill and decode pools together, so their updated-and-ready fractions never differ
    /// by more than one step of the smaller side and a prefill and a decode of one revision are
    /// always ready. `Independent`: each pool rolls out on its own (the default otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RolloutStrategy>,
    /// Replicas (groups, for a multi-node pool) a pool may have above its desired count while it
    /// rolls out, when a free GPU allows it (default 1). A pool's `rollout` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_REPLICAS))]
    pub max_surge: Option<i32>,
    /// Replicas (groups) a pool may have below its desired count while it rolls out (default 0).
    /// A pool's `rollout` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_REPLICAS))]
    pub max_unavailable: Option<i32>,
    /// Seconds a rollout may take before status reports `Progressing=False` with reason
    /// `ProgressDeadlineExceeded` (default 600). The rollout goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_PROGRESS_DEADLINE_SECONDS))]
    pub progress_deadline_seconds: Option<i32>,
}

/// How the worker pools of a graph roll out relative to each other.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum RolloutStrategy {
    Lockstep,
    Independent,
}

/// A pool's own rollout bounds, instead of `spec.rollout`'s.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolRolloutSpec {
    /// Replicas (groups) this pool may have above its desired count while it rolls out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_REPLICAS))]
    pub max_surge: Option<i32>,
    /// Replicas (groups) this pool may have below its desired count while it rolls out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_REPLICAS))]
    pub max_unavailable: Option<i32>,
}

/// Inference engine.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackendFramework {
    #[default]
    Sglang,
    Vllm,
}

/// Discovery backend.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiscoveryBackend {
    #[default]
    Kubernetes,
    Etcd,
}

/// The KV-event plane.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::nats_url_when_external("url"),
    validation = cel::nats_url_when_external("urlSecretRef"),
    validation = cel::nats_url_once(),
    validation = cel::nats_managed_only("image"),
    validation = cel::nats_managed_only("storageSize"),
    validation = cel::nats_managed_only("storageClassName"),
)]
#[serde(rename_all = "camelCase")]
pub struct NatsSpec {
    /// Deploy and manage a NATS JetStream StatefulSet for this deployment (default: true, unless
    /// `url` or `urlSecretRef` names an external NATS). `false` without either: no NATS; requests
    /// go over HTTP and KV events over ZMQ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy: Option<bool>,
    /// Image of the managed NATS server (default: the release's NATS 2.15 image, pinned by digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub image: Option<String>,
    /// Size of the JetStream volume of the managed NATS (default 4Gi).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_size: Option<Quantity>,
    /// StorageClass of the JetStream volume of the managed NATS (default: the cluster's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub storage_class_name: Option<String>,
    /// URL of an external NATS when `deploy` is false, e.g. `nats://nats.infra:4222`. A URL with
    /// credentials belongs in a Secret: `urlSecretRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub url: Option<String>,
    /// The external NATS's URL from a Secret you created in the deployment's namespace, e.g.
    /// `nats://user:password@nats.infra:4222`: the pods read it as `NATS_SERVER` (the operator
    /// never reads Secrets). Instead of `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_secret_ref: Option<SecretKeyRef>,
}

/// Gateway API Inference Extension settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GaieSpec {
    /// `true` turns GAIE on. Default false, as upstream's (`types.go:152-154`): a `gaie` block
    /// without it changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Hugging Face id or path of the tokenizer the Endpoint Picker and the frontend sidecar score
    /// with (`--router-tokenizer-path`); required; must match the workers'. Their pods do not
    /// mount the model, so a Hugging Face id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub tokenizer_path: Option<String>,
    /// Hostnames the HTTPRoute matches (default: every hostname of the Gateway's listener).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        extend("maxItems" = MAX_HOSTNAMES),
        inner(length(min = 1, max = MAX_DNS_SUBDOMAIN), regex(pattern = HOSTNAME_PATTERN))
    )]
    pub hostnames: Vec<String>,
    /// Port of the frontend sidecar in worker pods, which the InferencePool targets (default 8000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub frontend_port: Option<i32>,
    /// The served model's name; informational, as upstream's (routing is by header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub model_name: Option<String>,
    /// Name of the Gateway the HTTPRoute attaches to.
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub gateway_name: String,
    /// Namespace of that Gateway (default: the deployment's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_DNS_LABEL))]
    pub gateway_namespace: Option<String>,
    /// Listener of that Gateway the route attaches to (`parentRefs[].sectionName`; default: all
    /// listeners that allow it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub gateway_section_name: Option<String>,
    /// Image of the Endpoint Picker (`python3 -m infera.gaie`) and the frontend sidecar
    /// (`python3 -m infera.server`) (default: `spec.image`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub epp_image: Option<String>,
}

impl GaieSpec {
    /// Whether GAIE is on: `enabled: true` (upstream's default is off).
    pub fn is_enabled(&self) -> bool {
        self.enabled == Some(true)
    }
}

/// The graph's NetworkPolicies.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::metrics_from_peer_form(),
    validation = cel::egress_needs_policies()
)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicySpec {
    /// `false` renders no NetworkPolicy (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Who may scrape metrics: these peers reach the engines' ports (the engines serve `/metrics`
    /// on their serving port) and NATS's monitoring port, e.g. `[{namespaceSelector: {matchLabels:
    /// {kubernetes.io/metadata.name: monitoring}}}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("maxItems" = MAX_METRICS_FROM))]
    pub metrics_from: Vec<NetworkPolicyPeer>,
    /// What the graph's pods may connect to: anywhere unless `restrict: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressSpec>,
}

/// The egress of the graph's pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::egress_allow_needs_restrict(),
    validation = cel::egress_peer_form()
)]
#[serde(rename_all = "camelCase")]
pub struct EgressSpec {
    /// `true` lets the graph's pods connect only to one another, to DNS (port 53), to the
    /// Kubernetes API server (upstream's discovery and registration use it) and to `allow`
    /// (default false: egress stays open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restrict: Option<bool>,
    /// More destinations for restricted egress, e.g. Hugging Face for engines that download their
    /// model and for the router's tokenizer: `[{to: [{ipBlock: {cidr: 0.0.0.0/0, except:
    /// [10.0.0.0/8]}}], ports: [{port: 443}]}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("maxItems" = MAX_EGRESS_RULES))]
    pub allow: Vec<EgressRule>,
}

impl EgressSpec {
    /// Whether egress is restricted: only with `restrict: true`.
    pub fn is_restricted(&self) -> bool {
        self.restrict == Some(true)
    }
}

/// Destinations the graph's pods may connect to: the `to` peers (anywhere when empty) on the
/// `ports` (every port when empty), as a NetworkPolicy egress rule.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EgressRule {
    /// NetworkPolicy peers: pods, namespaces, or an `ipBlock` alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("maxItems" = MAX_EGRESS_RULES))]
    pub to: Vec<NetworkPolicyPeer>,
    /// NetworkPolicy ports (`port`, `endPort`, `protocol`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("maxItems" = MAX_EGRESS_RULES))]
    pub ports: Vec<NetworkPolicyPort>,
}

impl NetworkPolicySpec {
    /// Whether NetworkPolicies are rendered: unless `enabled: false`.
    pub fn is_enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    /// Whether the graph's egress is restricted: policies on, and `egress.restrict: true`.
    pub fn restricts_egress(&self) -> bool {
        self.is_enabled() && self.egress.as_ref().is_some_and(EgressSpec::is_restricted)
    }
}

/// Metrics collection by the Prometheus Operator (its PodMonitor CRD must be installed).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::scrape_interval_range(),
    validation = cel::monitoring_labels_not_ours()
)]
#[serde(rename_all = "camelCase")]
pub struct MonitoringSpec {
    /// `false` renders no PodMonitor (default true once `monitoring` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// How often Prometheus scrapes each pod: a whole number of seconds or minutes such as `15s`
    /// or `1m`, from 1s to 1h. Default: the Prometheus's own scrape interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_DURATION_LENGTH), regex(pattern = DURATION_PATTERN))]
    pub interval: Option<String>,
    /// Labels of the PodMonitor (and PrometheusRule), for a Prometheus that picks them by label
    /// (its `podMonitorSelector` and `ruleSelector`), e.g. `{release: kube-prometheus-stack}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_OVERLAY_ENTRIES))]
    pub labels: BTreeMap<String, String>,
    /// Latency objectives, each met by 95% of requests: the operator adds a PrometheusRule that
    /// alerts when the error budget (the 5% allowed above the target) burns too fast, e.g.
    /// `{ttftP95Milliseconds: 500, itlP95Milliseconds: 50}`. Needs the Prometheus Operator's
    /// PrometheusRule CRD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<LatencySlo>,
}

impl MonitoringSpec {
    /// Whether a PodMonitor is rendered: unless `enabled: false`.
    pub fn is_enabled(&self) -> bool {
        self.enabled != Some(false)
    }
}

/// What images the spec may name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePolicy {
    /// Every image the spec names (`image`, each service's `image`, `gaie.eppImage`) must be
    /// pinned by digest (`name@sha256:<64 lowercase hex>`), so every pod runs the same bytes.
    #[serde(default)]
    pub require_digest: bool,
}

// The larger optional parts are boxed, and `spec.services` holds each service boxed: a BTreeMap
// node holds room for eleven values, and the operator caches every deployment's spec. Unboxed, a
// service was 1,168 bytes, and every cached deployment carried a 13 KB map node however few
// services it had; now a node is 352 bytes and a service 232.
/// One service of the graph: the router `server`, or a `worker` pool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::server_has_no_role(),
    validation = cel::server_has_no_gpu(),
    validation = cel::server_on_one_node(),
    validation = cel::server_has_a_tokenizer(),
    validation = cel::worker_has_a_gpu(),
    validation = cel::server_has_no_gpu_product(),
    validation = cel::no_injected_flag(),
    validation = cel::service_overlay_no_gpu(),
    validation = cel::rdma_only_across_nodes(),
    validation = cel::ib_device_not_in_args(),
    validation = cel::replicas_or_autoscaling(),
    validation = cel::server_has_no_model(),
    validation = cel::service_overlay_model_volume(),
    validation = cel::server_has_no_rollout(),
    validation = cel::extra_pod_spec_alone(),
    validation = cel::extra_pod_spec_container(),
    validation = cel::skip_probes_without_probe_settings(),
    validation = cel::pod_labels_not_ours(),
)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// `server` (the router; no GPU) or `worker` (runs the model).
    pub component_type: ComponentType,

    /// Worker role: `mixed` (aggregated, default), `prefill` or `decode`. Not allowed on the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,

    /// Number of replicas (for multi-node pools: number of groups). Default 1. Not with
    /// `autoscaling`, which owns the count instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_REPLICAS))]
    pub replicas: Option<i32>,

    /// Let an autoscaler own the replica count: the operator renders a HorizontalPodAutoscaler
    /// (or a KEDA ScaledObject) for the service's Deployment or LeaderWorkerSet and stops setting
    /// its `replicas`, so the autoscaler and `kubectl scale` are not undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Box<AutoscalingSpec>>,

    /// Nodes per replica. Above 1 the pool becomes a LeaderWorkerSet of that size. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_NODES))]
    pub number_of_nodes: Option<i32>,

    /// Per-pod resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Box<ResourcesSpec>>,

    /// Engine arguments (model, parallelism, transfer backend, ...). The operator adds the flags
    /// listed in the README; setting one of them here is an error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("maxItems" = MAX_ARGS), inner(length(max = MAX_ARG_LENGTH)))]
    pub args: Vec<String>,

    /// The engine container's entry point (default: the image's). The operator's arguments and
    /// `args` follow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxItems" = MAX_ARGS), inner(length(max = MAX_ARG_LENGTH)))]
    pub command: Option<Vec<String>>,

    /// Image for this service (default: `spec.image`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub image: Option<String>,

    /// Extra environment variables for the service's containers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,

    /// Port the engine container listens on (default: 8000 for the server and vLLM workers,
    /// 30000 for SGLang workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,

    /// Do not probe the engine container (no startup, readiness or liveness probe): for an engine
    /// started out of band after the pod runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_readiness_probe: bool,

    /// Labels added to the service's pods (not the operator's own: `app.kubernetes.io/name`,
    /// `instance`, `component`, `managed-by`, nor any `infera.amd.com/` label).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_OVERLAY_ENTRIES))]
    pub pod_labels: BTreeMap<String, String>,

    /// The whole pod spec of this service, used as written instead of the pod the operator
    /// renders from the fields above. Into its main container (named `main` or `infera`, else
    /// the first) the operator adds what the images need when absent: the environment
    /// (`spec.envs`, `NATS_SERVER`, `POD_NAME`, `POD_NAMESPACE`, `POD_IP`, the server's worker
    /// selector), the service port; on workers a readiness probe (single-node, unless
    /// `skipReadinessProbe`), a preStop pause and a grace period long enough to drain. Not with
    /// `image`, `command`, `args`, `env`, `resources`, `nodeSelector`, `tolerations`, `health`,
    /// `model`, `network` or `podTemplate`, which would go unused. The Kubernetes field
    /// descriptions are left out of the schema: see the Pod API reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bare::<Option<PodSpec>>")]
    pub extra_pod_spec: Option<Box<PodSpec>>,

    /// Node selector for the service's pods.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,

    /// Tolerations for the service's pods.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,

    /// How the engine container is probed and stopped. The defaults follow the engine's own
    /// contract (docs/reference.md, "Probes and draining"); set these for an image whose entry point
    /// answers differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Box<HealthSpec>>,

    /// Additions to this service's pods, on top of `spec.podTemplate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_template: Option<Box<PodTemplateOverlay>>,

    /// This pool's networking, instead of `spec.network` (prefill, decode and multi-node pools
    /// only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Box<NetworkSpec>>,

    /// This pool's model weights, instead of `spec.model` (workers only). An `hf://` source is
    /// downloaded by a Job of its own, `<deployment>-<service>-model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<ModelSpec>>,
    /// This pool's rollout bounds (`maxSurge`, `maxUnavailable`), instead of `spec.rollout`'s
    /// (worker pools only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<PoolRolloutSpec>,
}

/// Where the model weights come from and where the engines find them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::model_cache_with_hf(),
    validation = cel::model_hf_fields(),
)]
#[serde(rename_all = "camelCase")]
pub struct ModelSpec {
    /// `pvc://CLAIM[/SUBPATH]` (an existing PersistentVolumeClaim), `hostPath:///PATH` (a
    /// directory on every GPU node) or `hf://ORG/NAME[@REVISION]` (downloaded from Hugging Face
    /// into a volume the operator creates, before any GPU pod starts).
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH), regex(pattern = MODEL_SOURCE_PATTERN))]
    pub source: String,
    /// Where the weights appear in the engine containers (default `/models`); the engine's
    /// model flag points there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_PROBE_PATH_LENGTH), regex(pattern = MOUNT_PATH_PATTERN))]
    pub mount_path: Option<String>,
    /// `hf://` only (required there): the volume the download goes to, which persists, so a
    /// re-run resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<ModelCache>,
    /// `hf://` only: a Secret you created with a Hugging Face token; the download Job reads it
    /// as `HF_TOKEN` (the operator itself never reads Secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<SecretKeyRef>,
    /// `hf://` only: image of the download Job, which must have the `hf` CLI of huggingface_hub
    /// (default: the deployment's image).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH))]
    pub download_image: Option<String>,
}

/// The volume an `hf://` model is downloaded to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCache {
    /// Size of the volume, e.g. `100Gi`.
    pub size: Quantity,
    /// StorageClass of the volume (default: the cluster's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub storage_class_name: Option<String>,
    /// Access modes of the volume (default `ReadWriteMany`, so pods on several nodes mount it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<AccessMode>,
}

/// A PersistentVolumeClaim access mode.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum AccessMode {
    ReadWriteOnce,
    ReadOnlyMany,
    ReadWriteMany,
    ReadWriteOncePod,
}

/// A key of a Secret in the deployment's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyRef {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub name: String,
    /// Key in it (default: `HF_TOKEN` for a model's token, `url` for a NATS URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub key: Option<String>,
}

/// Networking of a worker pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkSpec {
    /// RDMA NICs for the KV-cache transfer between prefill and decode, and for multi-node groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma: Option<RdmaSpec>,
}

/// RDMA NICs of a pool's pods: the device plugin's resource in limits, the Multus secondary
/// networks, `IPC_LOCK` to pin memory, and the engine's IB device.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RdmaSpec {
    /// Extended resource an RDMA device plugin advertises, e.g. `rdma/hca` or `amd.com/vnic`.
    #[schemars(
        length(min = 1, max = MAX_DNS_SUBDOMAIN),
        regex(pattern = RESOURCE_NAME_PATTERN)
    )]
    pub resource_name: String,
    /// How many of that resource each pod requests (default: one per GPU of the pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_GPUS))]
    pub per_pod: Option<i32>,
    /// Multus NetworkAttachmentDefinitions to attach (`name` or `namespace/name`), set as the
    /// pods' `k8s.v1.cni.cncf.io/networks` annotation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        extend("maxItems" = MAX_RDMA_NETWORKS),
        inner(length(min = 1, max = MAX_NETWORK_NAME_LENGTH), regex(pattern = NETWORK_NAME_PATTERN))
    )]
    pub networks: Vec<String>,
    /// The IB device(s) the engine uses for the transfer, e.g. `rdma0` or `mlx5_0,mlx5_1`:
    /// injected as SGLang's `--disaggregation-ib-device` (vLLM has no such flag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_IB_DEVICE_LENGTH), regex(pattern = IB_DEVICE_PATTERN))]
    pub device: Option<String>,
    /// Add the `IPC_LOCK` capability, which RDMA needs to pin memory (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipc_lock: Option<bool>,
}

/// Who owns a service's replica count, between which bounds, on which metrics.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::autoscaling_min_not_above_max(),
    validation = cel::autoscaling_hpa_has_metrics(),
    validation = cel::autoscaling_triggers_need_keda(),
    validation = cel::autoscaling_keda_has_no_metrics(),
    validation = cel::autoscaling_keda_has_triggers(),
)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingSpec {
    /// `hpa` (default): an `autoscaling/v2` HorizontalPodAutoscaler on `metrics`. `keda`: a KEDA
    /// ScaledObject (`keda.sh/v1alpha1`) on `triggers`; KEDA must be installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AutoscalingProvider>,
    /// Fewest replicas (groups, for multi-node pools). Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_REPLICAS))]
    pub min_replicas: Option<i32>,
    /// Most replicas (groups, for multi-node pools).
    #[schemars(range(min = 1, max = MAX_REPLICAS))]
    pub max_replicas: i32,
    /// With `provider: hpa`, what the autoscaler scales on, as the HorizontalPodAutoscaler's
    /// `spec.metrics` (see the `autoscaling/v2` API reference). At least one: the HPA's own
    /// default, 80% CPU, says nothing about a GPU engine's load. For a multi-node pool, `Pods`
    /// and `Resource` metrics are averaged over the leader pods, one per group.
    // An `Option`, not an empty `Vec`: `metrics: []` is present to admission (`has()`, `minItems`)
    // and must be so here too; the schema is the list's, not `nullable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bare_list::<MetricSpec, MAX_METRICS>", extend("minItems" = 1))]
    pub metrics: Option<Vec<MetricSpec>>,
    /// With `provider: keda`, the ScaledObject's `spec.triggers`, passed on as written: each a
    /// KEDA scaler (`type`) and its settings (`metadata`); see KEDA's scaler documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "list::<KedaTrigger, 1, MAX_TRIGGERS>")]
    pub triggers: Option<Vec<KedaTrigger>>,
}

/// One KEDA trigger, shaped as KEDA's `ScaleTriggers` (kedacore/keda v2.20.2,
/// `apis/keda/v1alpha1/scaletriggers_types.go`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KedaTrigger {
    /// The scaler, e.g. `prometheus`.
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = MAX_TRIGGER_TYPE_LENGTH))]
    pub scaler: String,
    /// The trigger's name, unique among the triggers (KEDA names the metric after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_TRIGGER_TYPE_LENGTH))]
    pub name: Option<String>,
    /// The scaler's settings, e.g. `serverAddress`, `query` and `threshold` for `prometheus`.
    #[serde(default)]
    #[schemars(extend("maxProperties" = MAX_TRIGGER_METADATA))]
    pub metadata: BTreeMap<String, String>,
    /// `AverageValue` (KEDA's default), `Value` or `Utilization`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_type: Option<KedaMetricType>,
    /// A TriggerAuthentication (or ClusterTriggerAuthentication) with the scaler's credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication_ref: Option<KedaAuthenticationRef>,
    /// Serve the metric from KEDA's cache between polls (not for `cpu`, `memory` or `cron`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_cached_metrics: Option<bool>,
}

/// What a KEDA trigger's target value is compared with.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum KedaMetricType {
    AverageValue,
    Value,
    Utilization,
}

/// A KEDA TriggerAuthentication or ClusterTriggerAuthentication, by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KedaAuthenticationRef {
    /// Its name.
    #[schemars(length(min = 1, max = MAX_DNS_SUBDOMAIN))]
    pub name: String,
    /// `TriggerAuthentication` (default) or `ClusterTriggerAuthentication`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<KedaAuthenticationKind>,
}

/// The kinds of KEDA authentication objects.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum KedaAuthenticationKind {
    TriggerAuthentication,
    ClusterTriggerAuthentication,
}

/// Autoscaler.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AutoscalingProvider {
    #[default]
    Hpa,
    Keda,
}

/// What a user adds to the pods the operator renders, shaped like a PodTemplateSpec: labels and
/// annotations are added; a container named `engine` is merged into the engine container (env,
/// envFrom, volumeMounts, resources, securityContext); other containers and init containers are
/// added; the pod fields replace the operator's defaults. Between `spec.podTemplate` and a
/// service's, the service's wins: entries with the same name (containers, volumes, env,
/// pull secrets) and mount path replace, other fields are replaced whole. The fields the operator
/// owns (selector labels, the engine's image, command, args, ports, probes and lifecycle, the
/// GPU, the `dshm` volume, the discovery ServiceAccount) are refused. The Kubernetes field
/// descriptions are left out of the schema to keep the CRD small: see the Pod API reference.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = cel::overlay_labels_not_ours(),
    validation = cel::overlay_engine_fields(),
    validation = cel::overlay_container_names(),
    validation = cel::overlay_init_container_names(),
    validation = cel::overlay_containers_have_images(),
    validation = cel::overlay_init_containers_have_images(),
    validation = cel::overlay_shm_volume(),
)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateOverlay {
    /// Labels and annotations added to the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<OverlayMetadata>,
    /// Pod fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpecOverlay>,
}

/// Labels and annotations added to the pods.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct OverlayMetadata {
    /// Labels (not `app.kubernetes.io/name`, `instance`, `component`, `managed-by`, nor any
    /// `infera.amd.com/` label: the operator selects pods by them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = MAX_OVERLAY_ENTRIES))]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The pod fields a `podTemplate` may set; each as in the Pod API.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSpecOverlay {
    /// `engine`: merged into the engine container; any other name: an added container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "bare_list::<Container, MAX_OVERLAY_CONTAINERS>")]
    pub containers: Vec<Container>,
    /// Added init containers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "bare_list::<Container, MAX_OVERLAY_CONTAINERS>")]
    pub init_containers: Vec<Container>,
    /// Added volumes (a model PVC, a cache); not `dshm`, the operator's `/dev/shm`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "bare_list::<Volume, MAX_OVERLAY_ENTRIES>")]
    pub volumes: Vec<Volume>,
    /// Node and pod affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bare::<Option<Affinity>>")]
    pub affinity: Option<Affinity>,
    /// Pull secrets for private registries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "bare::<Vec<LocalObjectReference>>")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// How pods spread over zones and nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "bare::<Vec<TopologySpreadConstraint>>")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// PriorityClass of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// Scheduler of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// RuntimeClass of the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<String>,
    /// Share the host's IPC namespace.
    #[serde(default, rename = "hostIPC", skip_serializing_if = "Option::is_none")]
    pub host_ipc: Option<bool>,
    /// ServiceAccount of the pods; only with `discoveryBackend: etcd` (with `kubernetes`, pods
    /// run as the discovery ServiceAccount the operator binds to its Role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
}

/// `T`'s schema, trimmed for a CRD: without the Kubernetes field descriptions, and with the
/// ObjectMeta of templates inside it (ephemeral volume claims) reduced to what Kubernetes copies
/// from it, its labels and annotations.
fn bare<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.subschema_for::<T>();
    if let Some(object) = schema.as_object_mut() {
        trim(object);
    }
    schema
}

/// A list of `MIN` to `MAX` `T`s: the schema of an `Option<Vec<T>>` field whose presence counts
/// (an empty list is refused, not read as absent) without `nullable`.
fn list<T: JsonSchema, const MIN: usize, const MAX: usize>(
    generator: &mut SchemaGenerator,
) -> Schema {
    let mut schema = generator.subschema_for::<Vec<T>>();
    schema.insert("minItems".into(), MIN.into());
    schema.insert("maxItems".into(), MAX.into());
    schema
}

/// A list of at most `MAX` `T`s, trimmed as [`bare`] (the bound keeps the CEL rules that walk it
/// within the API server's cost budget).
fn bare_list<T: JsonSchema, const MAX: usize>(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = bare::<Vec<T>>(generator);
    schema.insert("maxItems".into(), MAX.into());
    schema
}

/// Trims a schema object and every schema inside it (see [`bare`]).
fn trim(schema: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    let inner = |value: &mut Value| {
        if let Value::Object(schema) = value {
            trim(schema);
        }
    };
    schema.remove("description");
    if let Some(Value::Object(properties)) = schema.get_mut("properties")
        && properties.contains_key("managedFields")
    {
        properties.retain(|name, _| name == "labels" || name == "annotations");
    }
    for (keyword, value) in schema.iter_mut() {
        match (keyword.as_str(), value) {
            ("properties", Value::Object(properties)) => properties.values_mut().for_each(inner),
            ("allOf" | "anyOf" | "oneOf", Value::Array(schemas)) => {
                schemas.iter_mut().for_each(inner)
            }
            ("items" | "additionalProperties" | "not", value) => inner(value),
            _ => {}
        }
    }
}

/// Probes and draining of a service's engine container; every field is optional.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = cel::startup_timeout_range())]
#[serde(rename_all = "camelCase")]
pub struct HealthSpec {
    /// How long a cold start (weight download and load, warm-up) may take before the kubelet
    /// restarts the container: a whole number of seconds, minutes or hours such as `90s`, `30m`
    /// or `2h`, at most 24h. Default: 1h for workers, 5m for the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_DURATION_LENGTH), regex(pattern = DURATION_PATTERN))]
    pub startup_timeout: Option<String>,

    /// HTTP path the readiness and startup probes call, e.g. `/health`. Default: the engine's
    /// constant-time readiness endpoint (`/ready` for SGLang, `/health` for vLLM and the server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_PROBE_PATH_LENGTH), regex(pattern = PROBE_PATH_PATTERN))]
    pub readiness_path: Option<String>,

    /// HTTP path the liveness probe calls, or `none` for no liveness probe. Default: an endpoint
    /// that does not generate (`/ping` for SGLang, `/health` for vLLM); none for the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_PROBE_PATH_LENGTH), regex(pattern = LIVENESS_PATH_PATTERN))]
    pub liveness_path: Option<String>,

    /// Seconds one probe request may take, for every probe (default: the endpoint's worst case,
    /// 5 s for a constant-time endpoint, 25 s for SGLang's generating `/health`, 10 s for a path
    /// the engine contract does not list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_PROBE_TIMEOUT))]
    pub timeout_seconds: Option<i32>,

    /// Seconds a stopping pod may spend finishing in-flight requests after it stops receiving
    /// new ones (default 120). vLLM gets it as `--shutdown-timeout`; for every engine it sizes
    /// `terminationGracePeriodSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_DRAIN_SECONDS))]
    pub drain_seconds: Option<i32>,
}

/// Kind of service.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ComponentType {
    Server,
    Worker,
}

/// Per-pod resources.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesSpec {
    /// GPUs per pod (workers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_GPUS))]
    pub gpu: Option<i32>,
    /// Extended resource name of the GPU (default `amd.com/gpu`; partitioned GPUs use names such
    /// as `amd.com/cpx_nps4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = MAX_DNS_SUBDOMAIN),
        regex(pattern = RESOURCE_NAME_PATTERN)
    )]
    pub gpu_type: Option<String>,
    /// GPU product the pool's pods must run on, as AMD names it (`MI300X`, `MI325X`, `MI355X`),
    /// or a value of the node label `amd.com/gpu.product-name` as AMD's node labeller writes it
    /// (`AMD_Instinct_MI300X_HF`). A required node affinity: never another product (workers
    /// only; docs/reference.md, "GPU product", lists the label values each name matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = MAX_GPU_PRODUCT_LENGTH),
        regex(pattern = GPU_PRODUCT_PATTERN)
    )]
    pub gpu_product: Option<String>,
    /// CPU request and limit per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Quantity>,
    /// Memory request and limit per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
    /// Size of the memory-backed `/dev/shm` (engines use it for tensor exchange).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_memory: Option<Quantity>,
}

/// Observed state, written by the operator through the status subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InferaDeploymentStatus {
    /// Summary: Pending, Deploying, Ready, Degraded or Failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// `state` in upstream Infera's values, for its clients: `pending` (Pending, Deploying,
    /// Degraded), `ready` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_state: Option<UpstreamState>,
    /// The Inference Gateway objects, with `spec.gaie` (upstream's `status.gaie`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaie: Option<GaieStatus>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready` and friends, with reasons such as InvalidSpec, MissingDependency,
    /// InsufficientCapacity, OwnershipConflict and PodsNotReady.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// Per service readiness.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub services: BTreeMap<String, ServiceStatus>,
    /// Services with every replica ready, of all in `services`, e.g. `1/2` (the `Services`
    /// column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services_ready: Option<String>,
    /// In-cluster URL of the server, e.g. `http://demo-server.default.svc.cluster.local:8000`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The revision every worker pool last ran completely (every replica updated and ready).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// The revision of the worker pods the spec asks for now: a hash of everything that shapes
    /// them, which they carry as the `infera.amd.com/revision` label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// When the rollout to `updateRevision` started; unset once it is complete.
    /// `spec.rollout.progressDeadlineSeconds` counts from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_start_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    /// The `hf://` downloads by Job name (`<deployment>-model`, `<deployment>-<service>-model`):
    /// what each downloads and the commit it got.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelStatus>,
    /// What the SLO planner saw and decided, with `spec.planner`; written by the planner alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner: Option<PlannerStatus>,
}

/// Summary state in upstream Infera's values (its `status.state`).
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamState {
    Initializing,
    Pending,
    Ready,
    Failed,
}

impl State {
    /// The upstream value of this state: upstream has no Deploying or Degraded, and says
    /// `pending` until every service is ready and `failed` only for a spec it cannot reconcile
    /// (upstream `deploy/operator/api/v1alpha1/inferadeployment_types.go:39-48`).
    pub fn upstream(self) -> UpstreamState {
        match self {
            Self::Pending | Self::Deploying | Self::Degraded => UpstreamState::Pending,
            Self::Ready => UpstreamState::Ready,
            Self::Failed => UpstreamState::Failed,
        }
    }
}

/// The Inference Gateway objects of a deployment, as upstream reports them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GaieStatus {
    /// Endpoint Picker replicas asked for.
    #[serde(default)]
    pub epp_replicas: i32,
    /// Endpoint Picker replicas that are ready.
    #[serde(default)]
    pub epp_ready_replicas: i32,
    /// Name of the InferencePool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_pool_name: Option<String>,
    /// Whether the InferencePool exists and is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_pool_ready: Option<bool>,
    /// Name of the HTTPRoute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_route_name: Option<String>,
    /// Whether a Gateway accepted the HTTPRoute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_route_accepted: Option<bool>,
    /// The Endpoint Picker is ready, the InferencePool too, and the route is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
}

/// One `hf://` download.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatus {
    /// The source it downloads, e.g. `hf://Qwen/Qwen3-0.6B@main`.
    pub source: String,
    /// The commit the download got (what the revision, or the default branch, resolved to),
    /// once its Job has succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_revision: Option<String>,
}

/// Summary state of a deployment.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum State {
    Pending,
    Deploying,
    Ready,
    Degraded,
    Failed,
}

/// Readiness of one service.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// `Deployment` or `LeaderWorkerSet`.
    pub kind: String,
    /// Replicas (groups, for multi-node pools) asked for.
    pub desired_replicas: i32,
    /// Replicas that are ready.
    pub ready_replicas: i32,
    /// Multi-node pools: groups whose every pod is Ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_groups: Option<i32>,
    /// Worker pools: replicas (groups, for multi-node pools) whose pods run `updateRevision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
}

impl std::fmt::Display for BackendFramework {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Sglang => "sglang",
            Self::Vllm => "vllm",
        })
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}
