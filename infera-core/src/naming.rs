//! Every name and label the operator puts on a child object, in one place.
//!
//! Names are `<deployment>-<suffix>`. The length budget below keeps every name we create, and every
//! name the Deployment, StatefulSet and LeaderWorkerSet controllers derive from ours (pod names,
//! `controller-revision-hash` labels), within the 63 characters of a DNS label.

use std::collections::BTreeMap;

use crate::role::Role;

/// Longest allowed `metadata.name` of an InferaDeployment.
pub const MAX_DEPLOYMENT_NAME: usize = 42;
/// Longest allowed deployment name plus service name.
pub const MAX_DEPLOYMENT_PLUS_SERVICE: usize = 46;
/// Service names that would collide with objects the operator creates itself.
pub const RESERVED_SERVICE_NAMES: [&str; 7] = [
    "nats",
    "nats-headless",
    "epp",
    "discovery",
    "pool",
    "route",
    "model",
];
/// Longest DNS label (RFC 1123), and so longest name of any child.
pub const MAX_DNS_LABEL: usize = 63;
/// Longest DNS subdomain (RFC 1123): Gateway names, resource-name prefixes.
pub const MAX_DNS_SUBDOMAIN: usize = 253;
/// The form of a DNS label that starts with a letter, as a regular expression (length aside).
/// [`is_dns_label`] checks the same form; the CRD's CEL rules match names against this pattern.
pub const DNS_LABEL_PATTERN: &str = "^[a-z]([-a-z0-9]*[a-z0-9])?$";

/// Field manager of the operator's server-side applies.
pub const OPERATOR_MANAGER: &str = "infera-operator";
/// The `app.kubernetes.io/name` of the operator's own pods (`init`'s and the Helm chart's).
pub const OPERATOR_APP_NAME: &str = "infera-operator";
/// The Lease the operator's replicas elect a leader with (its `--lease-name` default, in its
/// namespace); the bundle's leader-election Role names it, and `doctor` reads it.
pub const LEADER_LEASE: &str = "infera-operator";
/// Field manager that holds an autoscaled workload's `spec.replicas` between the operator
/// letting go of it and the autoscaler or `kubectl scale` taking it (the hand-over of the
/// Kubernetes server-side apply documentation, "Transferring ownership").
pub const REPLICAS_HANDOVER_MANAGER: &str = "infera-operator-replicas";
/// Field manager of the plugin's server-side applies.
pub const PLUGIN_MANAGER: &str = "kubectl-infera";
/// Field manager of `kubectl infera scale`'s merge patches (as `kubectl scale` is
/// `kubectl-scale`): what it sets is told apart from what `deploy` applied.
pub const SCALE_MANAGER: &str = "kubectl-infera-scale";
/// Field manager of `kubectl infera rollout pause|resume`'s merge patches.
pub const ROLLOUT_MANAGER: &str = "kubectl-infera-rollout";
/// Field manager of the SLO planner: `status.planner`, and in `Act` the planned pools'
/// `replicas`.
pub const PLANNER_MANAGER: &str = "infera-operator-planner";

/// `infera` on every child.
pub const LABEL_NAME: &str = "app.kubernetes.io/name";
/// The InferaDeployment's name.
pub const LABEL_INSTANCE: &str = "app.kubernetes.io/instance";
/// What the child is: see [`Component::component`].
pub const LABEL_COMPONENT: &str = "app.kubernetes.io/component";
/// `infera-operator`: what the operator's watches select on.
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// The InferaDeployment's name; pods carry it too, so status finds them.
pub const LABEL_DEPLOYMENT: &str = "infera.amd.com/deployment";
/// The service of the spec (or the component, for shared plumbing).
pub const LABEL_SERVICE: &str = "infera.amd.com/service";
/// A worker's role: mixed, prefill or decode.
pub const LABEL_ROLE: &str = "infera.amd.com/role";

/// `true` on the worker pods that take inference requests: every pod of a single-node pool and
/// the leader of each multi-node group, never a rank > 0 pod. The InferencePool selects on it.
pub const LABEL_ENDPOINT: &str = "infera.amd.com/endpoint";

/// `true` on the worker pods that carry the GAIE frontend sidecar, which the InferencePool
/// selects (upstream `deploy/operator/internal/controller/gaie.go:37-40, 153-156`).
pub const LABEL_GAIE_FRONTEND: &str = "infera.amd.com/gaie-frontend";

/// The revision of the graph's worker pods (see `render::revision`), on every worker pod; also
/// in its engine container's environment as [`REVISION_ENV`].
pub const LABEL_REVISION: &str = "infera.amd.com/revision";
/// The engine container's environment variable holding [`LABEL_REVISION`]'s value.
pub const REVISION_ENV: &str = "INFERA_REVISION";

/// Every `infera.amd.com/` label is the operator's.
pub const OWNED_LABEL_PREFIX: &str = "infera.amd.com/";
/// The standard labels the operator sets on every child and pod (the `infera.amd.com/` ones aside).
pub const OWNED_STANDARD_LABELS: [&str; 4] = [
    LABEL_NAME,
    LABEL_INSTANCE,
    LABEL_COMPONENT,
    LABEL_MANAGED_BY,
];

/// Whether the operator sets label `key`, so a `podTemplate` may not.
pub fn is_owned_label(key: &str) -> bool {
    key.starts_with(OWNED_LABEL_PREFIX) || OWNED_STANDARD_LABELS.contains(&key)
}

/// Name of the engine container in every pod.
pub const ENGINE_CONTAINER: &str = "engine";
/// Name of the GAIE frontend sidecar.
pub const FRONTEND_CONTAINER: &str = "infera-frontend";
/// Name of the port the router and the engines serve requests and `/metrics` on.
pub const HTTP_PORT: &str = "http";
/// Name of the port the GAIE frontend sidecar serves requests and `/metrics` on.
pub const FRONTEND_PORT: &str = "frontend";
/// Name of the memory-backed volume mounted at `/dev/shm`.
pub const SHM_VOLUME: &str = "dshm";
/// Annotation of an `hf://` download Job: the source it downloads, as `model.source` spells it.
/// A Job's pod template is immutable, so a Job of another source is replaced, not updated.
pub const MODEL_SOURCE_ANNOTATION: &str = "infera.amd.com/model-source";
/// Volume of the model weights (`spec.model`) in the worker pods.
pub const MODEL_VOLUME: &str = "model";

/// Annotation in which upstream's wrapper registers its worker with the router (its own pod's,
/// patched once the engine serves: `infera/common/registration_k8s.py:68-79`); the router routes
/// to a Running pod that carries it (`infera/common/discovery_k8s.py:43, 240-300`).
pub const WORKER_INFO_ANNOTATION: &str = "infera.amd.com/worker-info";
/// Readiness gate of the worker pods that register (Kubernetes discovery, pods that serve): the
/// operator sets it `True` once the pod carries [`WORKER_INFO_ANNOTATION`], so a worker is Ready
/// (for rollouts, `status` and `deploy --wait`) only once the router can route to it.
pub const REGISTERED_CONDITION: &str = "infera.amd.com/registered";

/// Labels the LeaderWorkerSet controller puts on every pod of a group.
pub const LWS_LABEL_NAME: &str = "leaderworkerset.sigs.k8s.io/name";
/// The group a pod of a LeaderWorkerSet belongs to.
pub const LWS_LABEL_GROUP_INDEX: &str = "leaderworkerset.sigs.k8s.io/group-index";
/// A pod's index within its LeaderWorkerSet group: `0` is the leader (LeaderWorkerSet v0.9,
/// api/leaderworkerset/v1/leaderworkerset_types.go, WorkerIndexLabelKey).
pub const LWS_LABEL_WORKER_INDEX: &str = "leaderworkerset.sigs.k8s.io/worker-index";

/// Value of `app.kubernetes.io/name` on every child.
pub const APP_NAME: &str = "infera";

/// Label selector matching every child the operator manages, in any deployment.
pub fn managed_selector() -> String {
    format!("{LABEL_MANAGED_BY}={OPERATOR_MANAGER},{LABEL_DEPLOYMENT}")
}

/// What a child belongs to: one user service, or a piece of shared plumbing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component<'a> {
    /// The router server, by service name.
    Server(&'a str),
    /// A worker pool, by service name, with its role.
    Worker(&'a str, Role),
    /// The managed NATS JetStream.
    Nats,
    /// The discovery identity.
    Discovery,
    /// The Gateway API Inference Extension's Endpoint Picker.
    EndpointPicker,
    /// The InferencePool and HTTPRoute.
    Gateway,
    /// The `hf://` model's volume and download Job.
    Model,
    /// The graph's NetworkPolicies.
    NetworkPolicy,
    /// The graph's PodMonitor.
    Monitoring,
}

impl Component<'_> {
    /// `app.kubernetes.io/component`.
    pub fn component(&self) -> &'static str {
        match self {
            Self::Server(_) => "server",
            Self::Worker(..) => "worker",
            Self::Nats => "nats",
            Self::Discovery => "discovery",
            Self::EndpointPicker => "epp",
            Self::Gateway => "gateway",
            Self::Model => "model",
            Self::NetworkPolicy => "network-policy",
            Self::Monitoring => "monitoring",
        }
    }

    /// `infera.amd.com/service`: the user's service name, or the component for shared objects.
    pub fn service(&self) -> &str {
        match self {
            Self::Server(name) | Self::Worker(name, _) => name,
            other => other.component(),
        }
    }

    /// `infera.amd.com/role`.
    pub fn role(&self) -> String {
        match self {
            Self::Worker(_, role) => role.to_string(),
            other => other.component().to_string(),
        }
    }

    /// Name of the child (Deployment, Service, LeaderWorkerSet, ...) for this component.
    pub fn object_name(&self, deployment: &str) -> String {
        format!("{deployment}-{}", self.service())
    }
}

/// All labels of a child.
pub fn labels(deployment: &str, component: Component<'_>) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_NAME.into(), APP_NAME.into()),
        (LABEL_INSTANCE.into(), deployment.into()),
        (LABEL_COMPONENT.into(), component.component().into()),
        (LABEL_MANAGED_BY.into(), OPERATOR_MANAGER.into()),
        (LABEL_DEPLOYMENT.into(), deployment.into()),
        (LABEL_SERVICE.into(), component.service().into()),
        (LABEL_ROLE.into(), component.role()),
    ])
}

/// The immutable pod selector of a workload: stable across spec changes.
pub fn selector(deployment: &str, component: Component<'_>) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_DEPLOYMENT.into(), deployment.into()),
        (LABEL_SERVICE.into(), component.service().into()),
    ])
}

/// Headless Service that gives NATS pods stable DNS names.
pub fn nats_headless_name(deployment: &str) -> String {
    format!("{deployment}-nats-headless")
}

/// Secret with the managed NATS's credentials: its password ([`NATS_PASSWORD_KEY`]) and the URL
/// the clients connect with ([`NATS_URL_KEY`]); after a rotation (the value of
/// [`NATS_ROTATION_ANNOTATION`]), a new Secret with that suffix.
pub fn nats_credentials_name(deployment: &str, rotation: Option<&str>) -> String {
    match rotation {
        None => format!("{deployment}-nats-auth"),
        Some(rotation) => format!("{deployment}-nats-auth-{rotation}"),
    }
}

/// Annotation of an InferaDeployment that rotates its managed NATS's credentials: each new value
/// (1 to 16 lowercase letters or digits) is a new Secret with a new password, and NATS and its
/// clients restart with it.
pub const NATS_ROTATION_ANNOTATION: &str = "infera.amd.com/nats-credentials";

/// The one user of the managed NATS.
pub const NATS_USER: &str = "infera";
/// Key of the password in [`nats_credentials_name`].
pub const NATS_PASSWORD_KEY: &str = "password";
/// Key of the client URL, with the credentials, in [`nats_credentials_name`].
pub const NATS_URL_KEY: &str = "url";

/// InferencePool fronting the workers.
pub fn inference_pool_name(deployment: &str) -> String {
    format!("{deployment}-pool")
}

/// HTTPRoute from the Gateway to the InferencePool.
pub fn http_route_name(deployment: &str) -> String {
    format!("{deployment}-route")
}

/// The HorizontalPodAutoscaler KEDA creates for, and owns under, the ScaledObject
/// `scaled_object` (kedacore/keda v2.20.2, `controllers/keda/hpa.go`, `getDefaultHpaName`).
pub fn keda_hpa_name(scaled_object: &str) -> String {
    format!("keda-hpa-{scaled_object}")
}

/// In-cluster DNS name of a Service.
pub fn service_host(service: &str, namespace: &str) -> String {
    format!("{service}.{namespace}.svc.cluster.local")
}

/// True when `name` is an RFC 1123 DNS label that starts with a letter (also an RFC 1035 label,
/// which Service names need).
pub fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_DNS_LABEL
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.last().is_some_and(|b| *b != b'-')
}
