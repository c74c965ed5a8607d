//! Validation of an `InferaDeployment` into a [`ValidDeployment`], the only input renderers accept.
//!
//! Every rule of the product contract lives here, one module per group of rules, including those
//! the CRD enforces at admission: `cel` builds the CRD's CEL rules and [`limits`] holds its size
//! limits, from the same constants and messages, so the plugin rejects a bad spec before sending
//! it with the wording admission would use, and the operator can report what admission could not
//! catch (the parallelism rule). All errors are collected, not only the first.

mod autoscaling;
pub(crate) mod cel;
mod discovery;
mod gaie;
mod health;
mod images;
pub mod limits;
mod model;
mod monitoring;
mod names;
mod nats;
mod network;
mod network_policy;
mod overlay;
mod parallelism;
mod planner;
mod rollout;
mod rules;
mod services;
pub use services::{MAIN_CONTAINER_NAMES, main_container};
mod syntax;
mod topology;

use std::{collections::BTreeMap, fmt};

pub use autoscaling::{Autoscaling, Scaler};
pub use images::{MutableImage, is_pinned, mutable_images};
use k8s_openapi::{
    api::core::v1::{EnvVar, PodSpec, Toleration},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::OwnerReference},
};
use kube::Resource;
pub use model::{DEFAULT_MOUNT_PATH, Model, ModelSource, model_flag, parse_source};
pub use monitoring::Monitoring;
pub use network::Rdma;
pub use network_policy::NetworkPolicy;
pub use overlay::{PodOverlay, merge_engine};
pub use rollout::{DEFAULT_PROGRESS_DEADLINE_SECONDS, PoolBounds, Rollout};
pub use rules::{
    DEFAULT_GPU_TYPE, DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, DIGEST_PATTERN,
    ENGINE_OWNED_FIELDS,
};
pub use syntax::is_quantity;

use crate::{
    flags::DiscoveryFlags,
    types::{BackendFramework, GaieSpec, InferaDeployment, Role},
};

/// Default size of the managed NATS JetStream volume (upstream's, `nats.go:34-40`).
pub const DEFAULT_NATS_STORAGE: &str = "4Gi";
/// Default image of the managed NATS JetStream server, where upstream runs `nats:latest`
/// (`nats.go:27-32`): the release's own image of nats-server (release/versions.sh), pinned by the
/// digest of what `make release` built (release/build.sh sets `INFERA_NATS_IMAGE` for this build),
/// so a restart never changes the server under the deployment. A development build names its tag.
pub const NATS_IMAGE: &str = match option_env!("INFERA_NATS_IMAGE") {
    Some(image) => image,
    None => "ghcr.io/amd/infera/nats:2.15.3",
};
/// Default `health.drainSeconds`: long enough for most generations to finish.
pub const DEFAULT_DRAIN_SECONDS: i32 = 120;

/// One broken rule: the field path, what is wrong, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Path of the offending field, e.g. `spec.services.prefill.resources.gpu`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every rule a spec breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

/// A deployment that passed every rule, with defaults resolved. Renderers read only this.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidDeployment {
    /// The InferaDeployment's name.
    pub name: String,
    /// Its namespace (`default` when rendering a spec that has none).
    pub namespace: String,
    /// Controller reference for children; `None` when rendering a spec that was never created.
    pub owner: Option<OwnerReference>,
    /// The engine.
    pub backend: BackendFramework,
    /// How pods find each other.
    pub discovery: DiscoveryFlags,
    /// The KV-event plane.
    pub nats: Nats,
    /// `spec.envs`: environment of every service's engine container, first.
    pub envs: Vec<EnvVar>,
    /// The Inference Gateway in front of the graph, if any.
    pub gaie: Option<Gaie>,
    /// The router server; none when an Inference Gateway routes to the workers' frontend
    /// sidecars.
    pub server: Option<Pod>,
    /// The worker pools, in the spec's (sorted) service order.
    pub workers: Vec<Worker>,
    /// How the worker pools roll out to a new revision.
    pub rollout: Rollout,
    /// The graph's NetworkPolicies; `None` when turned off.
    pub network_policy: Option<NetworkPolicy>,
    /// The graph's PodMonitor; `None` without `spec.monitoring`, or when turned off.
    pub monitoring: Option<Monitoring>,
    /// The SLO planner; `None` without `spec.planner`, or when `Off`.
    pub planner: Option<crate::planner::Planner>,
}

/// The KV-event plane.
#[derive(Clone, Debug, PartialEq)]
pub enum Nats {
    /// No KV events.
    None,
    /// The operator deploys JetStream with a volume of this size.
    Managed {
        /// Size of the JetStream volume.
        storage: Quantity,
        /// Image of the NATS server.
        image: String,
        /// StorageClass of the volume; `None` is the cluster's default.
        storage_class_name: Option<String>,
        /// The Secret with its credentials.
        credentials: String,
    },
    /// The user's NATS at this URL.
    External {
        /// `nats://...`, or where to read it.
        url: NatsUrl,
    },
}

/// An external NATS's URL.
#[derive(Clone, Debug, PartialEq)]
pub enum NatsUrl {
    /// Written in the spec.
    Value(String),
    /// In key `key` of the Secret `name`, which the pods read.
    Secret {
        /// The Secret.
        name: String,
        /// Its key.
        key: String,
    },
}

/// Gateway API Inference Extension settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gaie {
    /// The Gateway the HTTPRoute attaches to.
    pub gateway_name: String,
    /// Its namespace; `None` is the deployment's.
    pub gateway_namespace: Option<String>,
    /// The Gateway's listener; `None` is every listener that allows the route.
    pub gateway_section_name: Option<String>,
    /// The image of the Endpoint Picker and the frontend sidecar: `eppImage`, else `spec.image`
    /// (upstream `gaie.go:58-63`).
    pub image: String,
    /// The tokenizer the Endpoint Picker and the frontend sidecar score with.
    pub tokenizer_path: String,
    /// Hostnames the HTTPRoute matches; empty: the listener's.
    pub hostnames: Vec<String>,
    /// Port of the frontend sidecar and the InferencePool's target port (default
    /// [`crate::flags::FRONTEND_PORT`]).
    pub frontend_port: i32,
    /// The served model's name.
    pub model_name: Option<String>,
}

/// What every service's pods share.
#[derive(Clone, Debug, PartialEq)]
pub struct Pod {
    /// The service's name in the spec.
    pub service: String,
    /// The service's image, or the deployment's (with `extraPodSpec`, its main container's).
    pub image: String,
    /// Port the engine container listens on.
    pub port: i32,
    /// No probes on the engine container (`skipReadinessProbe`).
    pub skip_probes: bool,
    /// `podLabels`: labels added to the pods.
    pub labels: BTreeMap<String, String>,
    /// `extraPodSpec`: the whole pod, used as written with the operator's additions.
    pub extra: Option<Box<PodSpec>>,
    /// Replicas (groups, for a multi-node pool); with `autoscaling`, its floor.
    pub replicas: i32,
    /// When set, an autoscaler owns the replica count and the rendered workload sets none.
    pub autoscaling: Option<Autoscaling>,
    /// The engine container's entry point, if not the image's.
    pub command: Option<Vec<String>>,
    /// The user's engine arguments; injected flags are appended when rendering.
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<EnvVar>,
    /// Where the pods may run.
    pub node_selector: BTreeMap<String, String>,
    /// Taints the pods tolerate.
    pub tolerations: Vec<Toleration>,
    /// CPU request and limit.
    pub cpu: Option<Quantity>,
    /// Memory request and limit.
    pub memory: Option<Quantity>,
    /// How the engine container is probed and stopped.
    pub health: Health,
    /// What the user adds to the pods.
    pub overlay: PodOverlay,
}

/// A service's `health`, parsed. A `None` takes the engine's default from its contract, which the
/// renderer holds (the engine contract, docs/reference.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// Longest cold start, in seconds.
    pub startup_timeout: Option<i32>,
    /// Path the readiness and startup probes call.
    pub readiness_path: Option<String>,
    /// The liveness probe's path, or no liveness probe.
    pub liveness: Option<Liveness>,
    /// Seconds one probe request may take.
    pub timeout_seconds: Option<i32>,
    /// Seconds a stopping pod may spend finishing in-flight requests.
    pub drain_seconds: i32,
}

impl Default for Health {
    /// The engine's defaults throughout, and [`DEFAULT_DRAIN_SECONDS`].
    fn default() -> Self {
        Self {
            startup_timeout: None,
            readiness_path: None,
            liveness: None,
            timeout_seconds: None,
            drain_seconds: DEFAULT_DRAIN_SECONDS,
        }
    }
}

/// `health.livenessPath`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Probe this path.
    Path(String),
    /// `none`: no liveness probe.
    Off,
}

/// A worker pool.
#[derive(Clone, Debug, PartialEq)]
pub struct Worker {
    /// What every pod of the pool shares with the server's.
    pub pod: Pod,
    /// Mixed, prefill or decode.
    pub role: Role,
    /// Pods per replica; above 1 the pool is a LeaderWorkerSet.
    pub nodes: i32,
    /// GPUs per pod.
    pub gpu: i32,
    /// The GPU's extended resource name, e.g. `amd.com/gpu`.
    pub gpu_type: String,
    /// The RDMA NICs of the pool's pods, if it uses RDMA.
    pub rdma: Option<Rdma>,
    /// How many replicas (groups) above and below desired the pool may have while rolling out.
    pub rollout: PoolBounds,
    /// The GPU product the pods must run on (see [`crate::gpu_product`]).
    pub gpu_product: Option<String>,
    /// Size of the memory-backed `/dev/shm`.
    pub shared_memory: Option<Quantity>,
    /// The weights the pool serves: its own `model`, else `spec.model`, if either is set.
    pub model: Option<Model>,
}

impl ValidDeployment {
    /// The `hf://` models the workers serve, each once (pools sharing `spec.model` share its
    /// download).
    pub fn downloads(&self) -> Vec<&Model> {
        let mut downloads: Vec<&Model> = Vec::new();
        for model in self.workers.iter().filter_map(|w| w.model.as_ref()) {
            let hf = matches!(model.source, ModelSource::HuggingFace { .. });
            if hf
                && !downloads
                    .iter()
                    .any(|d| d.download_name == model.download_name)
            {
                downloads.push(model);
            }
        }
        downloads
    }

    /// Marks the download `download_name` as done in every worker that serves it, so its GPU
    /// pools are rendered with their replicas.
    pub fn set_downloaded(&mut self, download_name: &str) {
        for worker in &mut self.workers {
            if let Some(model) = worker
                .model
                .as_mut()
                .filter(|m| m.download_name == download_name)
            {
                model.downloaded = true;
            }
        }
    }
}

impl Worker {
    /// Whether the pool is a LeaderWorkerSet.
    pub fn multi_node(&self) -> bool {
        self.nodes > 1
    }
}

/// Validates a deployment. Errors come sorted by field path, so output is stable.
pub fn validate(idep: &InferaDeployment) -> Result<ValidDeployment, ValidationErrors> {
    let mut errors = Errors::default();
    let spec = &idep.spec;
    let name = idep.metadata.name.clone().unwrap_or_default();
    let name_ok = names::deployment_name(&mut errors, &name);
    // A bad deployment name is reported once, not again with every service.
    names::service_names(
        &mut errors,
        if name_ok { &name } else { "" },
        &spec.services,
    );
    topology::graph(
        &mut errors,
        &spec.services,
        spec.gaie.as_ref().is_some_and(GaieSpec::is_enabled),
    );
    let discovery = discovery::flags(
        &mut errors,
        spec.discovery_backend,
        spec.etcd_endpoint.as_deref(),
    );
    let rotation = idep
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(crate::naming::NATS_ROTATION_ANNOTATION));
    let credentials = nats::credentials(&mut errors, &name, rotation.map(String::as_str));
    let nats = nats::plane(&mut errors, spec.nats.as_ref(), credentials);
    let gaie = spec
        .gaie
        .as_ref()
        .map(|g| gaie::settings(&mut errors, g, spec.image.as_deref()))
        .filter(|_| spec.gaie.as_ref().is_some_and(GaieSpec::is_enabled));
    if let Some(rdma) = spec.network.as_ref().and_then(|n| n.rdma.as_ref()) {
        network::deployment(
            &mut errors,
            "spec.network.rdma",
            rdma,
            spec.backend_framework,
        );
    }
    let mut models = model::models(&mut errors, &name, spec);
    model::overlay_collisions(&mut errors, spec, &models);
    let rollout = rollout::graph(&mut errors, spec);
    let network_policy = network_policy::policy(&mut errors, spec.network_policy.as_ref());
    let monitoring = monitoring::monitoring(&mut errors, spec.monitoring.as_ref());
    let planner = planner::planner(&mut errors, spec);
    let (server, mut workers) = services::server_and_workers(&mut errors, spec);
    for worker in &mut workers {
        let model = models.remove(&worker.pod.service);
        // A pod written whole (`extraPodSpec`) mounts and names its weights itself.
        worker.model = model.filter(|_| worker.pod.extra.is_none());
    }
    if let Some(gaie) = &gaie {
        gaie::frontend_port_free(&mut errors, gaie, &workers);
    }
    images::require_digest(&mut errors, spec);
    overlay::overlays(&mut errors, spec, discovery == DiscoveryFlags::Kubernetes);

    if errors.0.is_empty() {
        Ok(ValidDeployment {
            owner: owner_reference(idep),
            name,
            namespace: idep
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into()),
            backend: spec.backend_framework,
            discovery,
            nats,
            envs: spec.envs.clone(),
            gaie,
            server,
            workers,
            rollout,
            network_policy,
            monitoring,
            planner,
        })
    } else {
        Err(errors.into_sorted())
    }
}

fn owner_reference(idep: &InferaDeployment) -> Option<OwnerReference> {
    idep.metadata.uid.as_ref()?;
    idep.controller_owner_ref(&())
}

/// The errors found so far, in the order the rules found them.
#[derive(Default)]
struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            path: path.into(),
            message: message.into(),
        });
    }

    /// At most `max` `what` in the list at `path` (the schema's `maxItems`, `maxProperties`).
    fn at_most(&mut self, path: &str, what: &str, count: usize, max: usize) {
        if count > max {
            self.push(
                path,
                format!("at most {max} {what} are allowed (now {count}); remove some"),
            );
        }
    }

    /// Sorted by path; errors of one field keep the order the rules found them in.
    fn into_sorted(mut self) -> ValidationErrors {
        self.0.sort_by(|a, b| a.path.cmp(&b.path));
        ValidationErrors(self.0)
    }
}

/// `path: message` of every error a rule group finds, in the order found.
#[cfg(test)]
fn found(rules: impl FnOnce(&mut Errors)) -> Vec<String> {
    let mut errors = Errors::default();
    rules(&mut errors);
    errors.0.iter().map(ToString::to_string).collect()
}

/// A service from its JSON form, as a user would write it.
#[cfg(test)]
fn service(json: serde_json::Value) -> crate::types::ServiceSpec {
    serde_json::from_value(json).expect("a service")
}
