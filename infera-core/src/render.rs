//! Pure rendering of a [`ValidDeployment`] into every child object the operator applies.
//!
//! [`render`] is deterministic: the same input gives the same objects in the same order, which
//! keeps snapshots stable and lets the operator skip writes when nothing changed.

mod autoscaling;
mod gaie;
mod injection;
mod meta;
mod model;
mod monitoring;
mod nats;
mod network_policy;
mod pod;
mod probes;
mod rbac;
mod revision;
mod security;
mod workloads;

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, StatefulSet},
        autoscaling::v2::HorizontalPodAutoscaler,
        batch::v1::Job,
        core::v1::{PersistentVolumeClaim, Service, ServiceAccount},
        networking::v1::NetworkPolicy,
        rbac::v1::{Role, RoleBinding},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::core::ApiResource;
use serde::Serialize;

pub use crate::naming::{ENGINE_CONTAINER, FRONTEND_CONTAINER};
use injection::Injection;

use crate::{
    external::{
        http_route::HttpRoute, inference_pool::InferencePool, inference_pool_v1alpha2,
        lws::LeaderWorkerSet, pod_monitor::PodMonitor, prometheus_rule::PrometheusRule,
        scaled_object::ScaledObject,
    },
    naming,
    validate::{Nats, ValidDeployment},
};

pub use crate::validate::NATS_IMAGE;
pub use nats::credentials as nats_credentials;
pub use network_policy::ApiServer;
pub use workloads::WorkerRollout;

/// One object the operator creates for a deployment; each variant holds the typed object of the
/// kind it names.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Child {
    ServiceAccount(ServiceAccount),
    Role(Role),
    RoleBinding(RoleBinding),
    Service(Service),
    Deployment(Deployment),
    StatefulSet(StatefulSet),
    LeaderWorkerSet(LeaderWorkerSet),
    HorizontalPodAutoscaler(HorizontalPodAutoscaler),
    ScaledObject(ScaledObject),
    InferencePool(InferencePool),
    InferencePoolV1Alpha2(inference_pool_v1alpha2::InferencePool),
    HttpRoute(HttpRoute),
    PersistentVolumeClaim(PersistentVolumeClaim),
    Job(Job),
    NetworkPolicy(NetworkPolicy),
    PodMonitor(PodMonitor),
    PrometheusRule(PrometheusRule),
}

/// The kinds of [`Child`], for API discovery, RBAC and watches; each variant is the kind it names.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChildKind {
    ServiceAccount,
    Role,
    RoleBinding,
    Service,
    Deployment,
    StatefulSet,
    LeaderWorkerSet,
    HorizontalPodAutoscaler,
    /// KEDA's ScaledObject (`keda.sh/v1alpha1`).
    ScaledObject,
    InferencePool,
    /// The InferencePool of GAIE before 1.0 (`inference.networking.x-k8s.io/v1alpha2`).
    InferencePoolV1Alpha2,
    HttpRoute,
    PersistentVolumeClaim,
    Job,
    NetworkPolicy,
    /// The Prometheus Operator's PodMonitor (`monitoring.coreos.com/v1`).
    PodMonitor,
    /// The Prometheus Operator's PrometheusRule (`monitoring.coreos.com/v1`).
    PrometheusRule,
}

impl ChildKind {
    /// Every kind, in the order children are rendered and watched.
    pub const ALL: [ChildKind; 17] = [
        Self::ServiceAccount,
        Self::Role,
        Self::RoleBinding,
        Self::Service,
        Self::Deployment,
        Self::StatefulSet,
        Self::LeaderWorkerSet,
        Self::HorizontalPodAutoscaler,
        Self::ScaledObject,
        Self::InferencePool,
        Self::InferencePoolV1Alpha2,
        Self::HttpRoute,
        Self::PersistentVolumeClaim,
        Self::Job,
        Self::NetworkPolicy,
        Self::PodMonitor,
        Self::PrometheusRule,
    ];

    /// Group, version, kind and plural, from the type's `Resource` impl.
    pub fn api_resource(self) -> ApiResource {
        match self {
            Self::ServiceAccount => ApiResource::erase::<ServiceAccount>(&()),
            Self::Role => ApiResource::erase::<Role>(&()),
            Self::RoleBinding => ApiResource::erase::<RoleBinding>(&()),
            Self::Service => ApiResource::erase::<Service>(&()),
            Self::Deployment => ApiResource::erase::<Deployment>(&()),
            Self::StatefulSet => ApiResource::erase::<StatefulSet>(&()),
            Self::LeaderWorkerSet => ApiResource::erase::<LeaderWorkerSet>(&()),
            Self::HorizontalPodAutoscaler => ApiResource::erase::<HorizontalPodAutoscaler>(&()),
            Self::ScaledObject => ApiResource::erase::<ScaledObject>(&()),
            Self::InferencePool => ApiResource::erase::<InferencePool>(&()),
            Self::InferencePoolV1Alpha2 => {
                ApiResource::erase::<inference_pool_v1alpha2::InferencePool>(&())
            }
            Self::HttpRoute => ApiResource::erase::<HttpRoute>(&()),
            Self::PersistentVolumeClaim => ApiResource::erase::<PersistentVolumeClaim>(&()),
            Self::Job => ApiResource::erase::<Job>(&()),
            Self::NetworkPolicy => ApiResource::erase::<NetworkPolicy>(&()),
            Self::PodMonitor => ApiResource::erase::<PodMonitor>(&()),
            Self::PrometheusRule => ApiResource::erase::<PrometheusRule>(&()),
        }
    }

    /// The CustomResourceDefinition that must be installed before this kind can be created;
    /// `None` for built-in kinds.
    pub fn crd(self) -> Option<Crd> {
        let (project, needed_for, install) = match self {
            Self::LeaderWorkerSet => (
                "LeaderWorkerSet",
                "numberOfNodes > 1",
                "install LeaderWorkerSet (https://lws.sigs.k8s.io/docs/installation/)",
            ),
            Self::ScaledObject => (
                "KEDA",
                "autoscaling.provider: keda",
                "install KEDA, v2.x (https://keda.sh/docs/latest/deploy/), or use provider: hpa",
            ),
            Self::InferencePool => (
                "Gateway API Inference Extension",
                "spec.gaie",
                "install the Gateway API Inference Extension CRDs, v1.x (https://gateway-api-inference-extension.sigs.k8s.io/); the older inferencepools.inference.networking.x-k8s.io (v1alpha2) works too",
            ),
            Self::InferencePoolV1Alpha2 => (
                "Gateway API Inference Extension v1alpha2",
                "spec.gaie on a cluster without the v1 InferencePool",
                "install the Gateway API Inference Extension CRDs, v1.x (https://gateway-api-inference-extension.sigs.k8s.io/)",
            ),
            Self::HttpRoute => (
                "Gateway API",
                "spec.gaie",
                "install the Gateway API CRDs (https://gateway-api.sigs.k8s.io/guides/)",
            ),
            Self::PodMonitor => (
                "Prometheus Operator",
                "spec.monitoring",
                "install the Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/getting-started/installation/), or set monitoring.enabled: false",
            ),
            Self::PrometheusRule => (
                "Prometheus Operator",
                "spec.monitoring.slo",
                "install the Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/getting-started/installation/), or remove monitoring.slo",
            ),
            _ => return None,
        };
        let resource = self.api_resource();
        Some(Crd {
            name: format!("{}.{}", resource.plural, resource.group),
            version: resource.version,
            project,
            needed_for,
            install,
        })
    }
}

/// A CRD a child kind needs: what it is, what needs it and how to get it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crd {
    /// `<plural>.<group>`, e.g. `leaderworkersets.leaderworkerset.x-k8s.io`.
    pub name: String,
    /// The version we create, which the CRD must serve.
    pub version: String,
    /// The project that ships it.
    pub project: &'static str,
    /// The spec field that makes a deployment need it.
    pub needed_for: &'static str,
    /// How to install it, with where to read more.
    pub install: &'static str,
}

impl std::fmt::Display for Crd {
    /// `the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} CRD ({})", self.project, self.name)
    }
}

impl Child {
    /// The kind of this object.
    pub fn kind(&self) -> ChildKind {
        match self {
            Self::ServiceAccount(_) => ChildKind::ServiceAccount,
            Self::Role(_) => ChildKind::Role,
            Self::RoleBinding(_) => ChildKind::RoleBinding,
            Self::Service(_) => ChildKind::Service,
            Self::Deployment(_) => ChildKind::Deployment,
            Self::StatefulSet(_) => ChildKind::StatefulSet,
            Self::LeaderWorkerSet(_) => ChildKind::LeaderWorkerSet,
            Self::HorizontalPodAutoscaler(_) => ChildKind::HorizontalPodAutoscaler,
            Self::ScaledObject(_) => ChildKind::ScaledObject,
            Self::InferencePool(_) => ChildKind::InferencePool,
            Self::InferencePoolV1Alpha2(_) => ChildKind::InferencePoolV1Alpha2,
            Self::HttpRoute(_) => ChildKind::HttpRoute,
            Self::PersistentVolumeClaim(_) => ChildKind::PersistentVolumeClaim,
            Self::Job(_) => ChildKind::Job,
            Self::NetworkPolicy(_) => ChildKind::NetworkPolicy,
            Self::PodMonitor(_) => ChildKind::PodMonitor,
            Self::PrometheusRule(_) => ChildKind::PrometheusRule,
        }
    }

    /// The object's metadata.
    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            Self::ServiceAccount(o) => &o.metadata,
            Self::Role(o) => &o.metadata,
            Self::RoleBinding(o) => &o.metadata,
            Self::Service(o) => &o.metadata,
            Self::Deployment(o) => &o.metadata,
            Self::StatefulSet(o) => &o.metadata,
            Self::LeaderWorkerSet(o) => &o.metadata,
            Self::HorizontalPodAutoscaler(o) => &o.metadata,
            Self::ScaledObject(o) => &o.metadata,
            Self::InferencePool(o) => &o.metadata,
            Self::InferencePoolV1Alpha2(o) => &o.metadata,
            Self::HttpRoute(o) => &o.metadata,
            Self::PersistentVolumeClaim(o) => &o.metadata,
            Self::Job(o) => &o.metadata,
            Self::NetworkPolicy(o) => &o.metadata,
            Self::PodMonitor(o) => &o.metadata,
            Self::PrometheusRule(o) => &o.metadata,
        }
    }

    /// The object's name (empty when unset, which the renderers never do).
    pub fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or_default()
    }

    /// The service this child belongs to (`infera.amd.com/service`).
    pub fn service(&self) -> &str {
        self.metadata()
            .labels
            .as_ref()
            .and_then(|l| l.get(naming::LABEL_SERVICE))
            .map_or("", String::as_str)
    }

    /// What a workload's rollout and status read of it; `None` for other kinds.
    pub fn workload(&self) -> Option<Workload> {
        let revision_of = |template: &k8s_openapi::api::core::v1::PodTemplateSpec| {
            let labels = template.metadata.as_ref()?.labels.as_ref()?;
            labels.get(naming::LABEL_REVISION).cloned()
        };
        let (replicas, group_size, revision) = match self {
            Self::Deployment(d) => {
                let spec = d.spec.as_ref()?;
                (spec.replicas, None, revision_of(&spec.template))
            }
            Self::StatefulSet(s) => {
                let spec = s.spec.as_ref()?;
                (spec.replicas, None, revision_of(&spec.template))
            }
            Self::LeaderWorkerSet(l) => {
                let template = &l.spec.leader_worker_template;
                let revision = template.worker_template.get("metadata").and_then(|m| {
                    m["labels"][naming::LABEL_REVISION]
                        .as_str()
                        .map(String::from)
                });
                (l.spec.replicas, template.size, revision)
            }
            _ => return None,
        };
        Some(Workload {
            service: self.service().to_string(),
            kind: self.kind(),
            name: self.name().to_string(),
            replicas,
            group_size,
            revision,
        })
    }
}

/// What the operator's rollout and status read of a rendered workload (a Deployment, StatefulSet
/// or LeaderWorkerSet): read once from the typed object, so that no step reads the rendered JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Its service (`infera.amd.com/service`).
    pub service: String,
    /// Its kind.
    pub kind: ChildKind,
    /// Its name.
    pub name: String,
    /// Replicas asked for; `None` when an autoscaler owns them (the live workload says).
    pub replicas: Option<i32>,
    /// Pods per group, for a LeaderWorkerSet.
    pub group_size: Option<i32>,
    /// The revision its pods carry (its pod template's `infera.amd.com/revision`): worker pools
    /// only.
    pub revision: Option<String>,
}

impl Workload {
    /// The workloads among `children`, in their order.
    pub fn of(children: &[Child]) -> Vec<Workload> {
        children.iter().filter_map(Child::workload).collect()
    }
}

/// The pod templates of a workload of `kind`, named `name`, from its JSON, each with its role:
/// `pod` (Deployment, StatefulSet, Job), or a LeaderWorkerSet's `leader` (when it has its own)
/// and `worker`; none for other kinds. A StatefulSet's pod gets a volume for each of its claim
/// templates, as the StatefulSet controller gives its first pod (claim `<template>-<set>-0`,
/// kubernetes `pkg/controller/statefulset/stateful_set_utils.go`, `getPersistentVolumeClaimName`).
/// JSON, not the typed objects: whoever needs them sends them to the API server as JSON.
pub fn pod_templates(
    kind: ChildKind,
    name: &str,
    child: &serde_json::Value,
) -> Vec<(&'static str, serde_json::Value)> {
    let spec = &child["spec"];
    match kind {
        ChildKind::Deployment | ChildKind::Job => vec![("pod", spec["template"].clone())],
        ChildKind::StatefulSet => {
            let mut template = spec["template"].clone();
            let claims = spec["volumeClaimTemplates"]
                .as_array()
                .into_iter()
                .flatten();
            let volumes = claims
                .filter_map(|claim| claim["metadata"]["name"].as_str())
                .map(|claim| {
                    serde_json::json!({"name": claim,
                        "persistentVolumeClaim": {"claimName": format!("{claim}-{name}-0")}})
                });
            let pod = &mut template["spec"];
            match pod["volumes"].as_array_mut() {
                Some(existing) => existing.extend(volumes),
                None => pod["volumes"] = volumes.collect(),
            }
            vec![("pod", template)]
        }
        ChildKind::LeaderWorkerSet => {
            let lws = &spec["leaderWorkerTemplate"];
            [
                ("leader", &lws["leaderTemplate"]),
                ("worker", &lws["workerTemplate"]),
            ]
            .into_iter()
            .filter(|(_, template)| template.is_object())
            .map(|(role, template)| (role, template.clone()))
            .collect()
        }
        _ => Vec::new(),
    }
}

/// What the cluster serves, where the objects depend on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Apis {
    /// The InferencePool API to create the pool with.
    pub inference_pool: PoolApi,
    /// Where the graph's pods reach the Kubernetes API, for restricted egress; `None` when not
    /// known (offline: the egress policy then has no rule for it).
    pub api_server: Option<ApiServer>,
}

/// The two InferencePool APIs clusters serve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PoolApi {
    /// `inference.networking.k8s.io/v1`, GAIE 1.0 and later.
    #[default]
    V1,
    /// `inference.networking.x-k8s.io/v1alpha2`, GAIE before 1.0.
    V1Alpha2,
}

impl PoolApi {
    /// The API group of the InferencePool, for references to it and RBAC on it.
    pub fn group(self) -> &'static str {
        match self {
            Self::V1 => "inference.networking.k8s.io",
            Self::V1Alpha2 => "inference.networking.x-k8s.io",
        }
    }

    /// The one the cluster serves, v1 first, from whether each kind's CRD is installed; v1 when
    /// neither is (the pool is then reported missing).
    pub fn served(installed: impl Fn(ChildKind) -> bool) -> PoolApi {
        if !installed(ChildKind::InferencePool) && installed(ChildKind::InferencePoolV1Alpha2) {
            Self::V1Alpha2
        } else {
            Self::V1
        }
    }
}

/// Shared inputs of the renderers.
pub(crate) struct Context<'a> {
    deployment: &'a ValidDeployment,
    injection: Injection<'a>,
    apis: Apis,
    /// The revision worker pods carry; `None` while it is being computed.
    revision: Option<String>,
}

impl<'a> Context<'a> {
    fn new(deployment: &'a ValidDeployment, apis: Apis, nats_url: Option<&'a str>) -> Self {
        Self {
            deployment,
            injection: Injection {
                backend: deployment.backend,
                discovery: &deployment.discovery,
                deployment: &deployment.name,
                nats_url,
            },
            apis,
            revision: None,
        }
    }
}

/// The revision of the deployment's worker pods on a cluster that serves `apis` (see
/// [`revision`](self::revision)): what `status.updateRevision` reports and the worker pods'
/// `infera.amd.com/revision` label says.
pub fn revision(deployment: &ValidDeployment, apis: Apis) -> String {
    let nats_url = nats::url(deployment);
    revision::of(&Context::new(deployment, apis, nats_url.as_deref()))
}

/// Every child of a deployment, in a fixed order, for a cluster with the current APIs.
pub fn render(deployment: &ValidDeployment) -> Vec<Child> {
    render_for(deployment, Apis::default())
}

/// Every child of a deployment, in a fixed order, for a cluster that serves `apis`.
pub fn render_for(deployment: &ValidDeployment, apis: Apis) -> Vec<Child> {
    let nats_url = nats::url(deployment);
    let mut cx = Context::new(deployment, apis, nats_url.as_deref());
    cx.revision = Some(revision::of(&cx));
    let mut children = Vec::new();
    if deployment.discovery == crate::flags::DiscoveryFlags::Kubernetes {
        children.extend(rbac::discovery(&cx));
    }
    if let Some(settings) = &deployment.network_policy {
        children.extend(network_policy::policies(&cx, settings));
    }
    if let Nats::Managed {
        storage,
        image,
        storage_class_name,
        credentials,
    } = &deployment.nats
    {
        children.extend(nats::managed(
            &cx,
            storage,
            image,
            storage_class_name.as_deref(),
            credentials,
        ));
    }
    for model in deployment.downloads() {
        children.extend(model::download(&cx, model));
    }
    if let Some(server) = &deployment.server {
        children.extend(workloads::server(&cx, server));
        let component = naming::Component::Server(&server.service);
        children.extend(autoscaling::autoscaler(&cx, component, server, false));
    }
    for worker in &deployment.workers {
        children.push(workloads::worker(&cx, worker));
        let component = naming::Component::Worker(&worker.pod.service, worker.role);
        children.extend(autoscaling::autoscaler(
            &cx,
            component,
            &worker.pod,
            worker.multi_node(),
        ));
    }
    if let Some(gaie) = &deployment.gaie {
        children.extend(gaie::objects(&cx, gaie));
    }
    if let Some(monitoring) = &deployment.monitoring {
        children.push(monitoring::pod_monitor(&cx, monitoring));
        if let Some(slo) = &monitoring.slo {
            children.push(monitoring::prometheus_rule(&cx, monitoring, slo));
        }
    }
    children
}

/// The server Service's in-cluster URL; none without a server (the Inference Gateway's address is
/// the Gateway's).
pub fn endpoint(deployment: &ValidDeployment) -> Option<String> {
    let server = deployment.server.as_ref()?;
    let service = naming::Component::Server(&server.service).object_name(&deployment.name);
    Some(format!(
        "http://{}:{}",
        naming::service_host(&service, &deployment.namespace),
        server.port
    ))
}

/// `terminationMessagePolicy` of the containers that run upstream's code: when one fails without
/// writing a termination message, the kubelet takes the tail of its log instead (Kubernetes API,
/// `Container.terminationMessagePolicy`), so the engine's own last words (a refused flag, a
/// traceback) reach the pod's status, and from there `status`, `deploy --wait` and the conditions.
const LOGS_ON_ERROR: &str = "FallbackToLogsOnError";

/// A container's `imagePullPolicy` by Kubernetes' convention: an image pinned by digest never
/// changes, so `IfNotPresent`; otherwise unset, and Kubernetes pulls `:latest` and untagged
/// images `Always` and tagged ones `IfNotPresent`.
fn pull_policy(image: &str) -> Option<String> {
    crate::validate::is_pinned(image).then(|| "IfNotPresent".into())
}

/// A typed object as a free-form JSON map (for the LeaderWorkerSet pod template).
fn to_json_map<T: Serialize>(object: &T) -> std::collections::BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(object) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => std::collections::BTreeMap::new(),
    }
}

#[cfg(test)]
mod pull_policy_tests {
    use super::pull_policy;

    #[test]
    fn only_a_pinned_image_gets_a_pull_policy() {
        let digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(
            pull_policy(&format!("rocm/infera@sha256:{digest}")).as_deref(),
            Some("IfNotPresent")
        );
        assert_eq!(pull_policy("rocm/infera:sglang-v0.1.1"), None);
        assert_eq!(pull_policy("rocm/infera:latest"), None);
        assert_eq!(pull_policy("rocm/infera"), None);
    }
}
