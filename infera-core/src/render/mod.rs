//! Pure rendering of a [`ValidDeployment`] into every child object the operator applies.
//!
//! [`render`] is deterministic: the same input gives the same objects in the same order, which
//! keeps snapshots stable and lets the operator skip writes when nothing changed.

mod gaie;
mod meta;
mod nats;
mod pod;
mod rbac;
mod workloads;

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, StatefulSet},
        core::v1::{Service, ServiceAccount},
        rbac::v1::{Role, RoleBinding},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::core::ApiResource;
use serde::Serialize;

pub use self::pod::{ENGINE_CONTAINER, FRONTEND_CONTAINER};
use crate::{
    external::{http_route::HttpRoute, inference_pool::InferencePool, lws::LeaderWorkerSet},
    flags::Injection,
    naming,
    validate::{Nats, ValidDeployment},
};

/// Image of the managed NATS JetStream server.
pub const NATS_IMAGE: &str = "nats:2.11-alpine";
/// Default Endpoint Picker image (Gateway API Inference Extension release that matches our types).
pub const EPP_IMAGE: &str = "registry.k8s.io/gateway-api-inference-extension/epp:v1.3.0";
/// Default Endpoint Picker image of a prefill/decode graph: llm-d's inference scheduler, built on
/// GAIE v1.3.0 with the prefill/decode plugins the GAIE image lacks.
pub const EPP_PD_IMAGE: &str = "ghcr.io/llm-d/llm-d-inference-scheduler:v0.5.0";

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
    InferencePool(InferencePool),
    HttpRoute(HttpRoute),
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
    InferencePool,
    HttpRoute,
}

impl ChildKind {
    /// Every kind, in the order children are rendered and watched.
    pub const ALL: [ChildKind; 9] = [
        Self::ServiceAccount,
        Self::Role,
        Self::RoleBinding,
        Self::Service,
        Self::Deployment,
        Self::StatefulSet,
        Self::LeaderWorkerSet,
        Self::InferencePool,
        Self::HttpRoute,
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
            Self::InferencePool => ApiResource::erase::<InferencePool>(&()),
            Self::HttpRoute => ApiResource::erase::<HttpRoute>(&()),
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
            Self::InferencePool => (
                "Gateway API Inference Extension",
                "spec.gaie",
                "install the Gateway API Inference Extension CRDs (https://gateway-api-inference-extension.sigs.k8s.io/)",
            ),
            Self::HttpRoute => (
                "Gateway API",
                "spec.gaie",
                "install the Gateway API CRDs (https://gateway-api.sigs.k8s.io/guides/)",
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
            Self::InferencePool(_) => ChildKind::InferencePool,
            Self::HttpRoute(_) => ChildKind::HttpRoute,
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
            Self::InferencePool(o) => &o.metadata,
            Self::HttpRoute(o) => &o.metadata,
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
}

/// Shared inputs of the renderers.
pub(crate) struct Context<'a> {
    deployment: &'a ValidDeployment,
    injection: Injection<'a>,
}

/// Every child of a deployment, in a fixed order.
pub fn render(deployment: &ValidDeployment) -> Vec<Child> {
    let nats_url = nats::url(deployment);
    let cx = Context {
        deployment,
        injection: Injection {
            backend: deployment.backend,
            discovery: &deployment.discovery,
            nats_url: nats_url.as_deref(),
            gaie: deployment.gaie.is_some(),
        },
    };
    let mut children = Vec::new();
    if deployment.discovery == crate::flags::DiscoveryFlags::Kubernetes {
        children.extend(rbac::discovery(&cx));
    }
    if let Nats::Managed { storage } = &deployment.nats {
        children.extend(nats::managed(&cx, storage));
    }
    children.extend(workloads::server(&cx));
    for worker in &deployment.workers {
        children.push(workloads::worker(&cx, worker));
    }
    if let Some(gaie) = &deployment.gaie {
        children.extend(gaie::objects(&cx, gaie));
    }
    children
}

/// The server Service's in-cluster URL.
pub fn endpoint(deployment: &ValidDeployment) -> String {
    let service =
        naming::Component::Server(&deployment.server.service).object_name(&deployment.name);
    format!(
        "http://{}:{}",
        naming::service_host(&service, &deployment.namespace),
        crate::flags::SERVER_PORT
    )
}

/// A typed object as a free-form JSON map (for the LeaderWorkerSet pod template).
fn to_json_map<T: Serialize>(object: &T) -> std::collections::BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(object) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => std::collections::BTreeMap::new(),
    }
}
