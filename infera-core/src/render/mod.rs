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
use kube::core::{ApiResource, GroupVersionKind};
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

/// One object the operator creates for a deployment.
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

/// The kinds of [`Child`], for API discovery, RBAC and watches.
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

    /// Group, version, kind and plural.
    pub fn api_resource(self) -> ApiResource {
        let (group, version, kind, plural) = match self {
            Self::ServiceAccount => ("", "v1", "ServiceAccount", "serviceaccounts"),
            Self::Role => ("rbac.authorization.k8s.io", "v1", "Role", "roles"),
            Self::RoleBinding => (
                "rbac.authorization.k8s.io",
                "v1",
                "RoleBinding",
                "rolebindings",
            ),
            Self::Service => ("", "v1", "Service", "services"),
            Self::Deployment => ("apps", "v1", "Deployment", "deployments"),
            Self::StatefulSet => ("apps", "v1", "StatefulSet", "statefulsets"),
            Self::LeaderWorkerSet => (
                "leaderworkerset.x-k8s.io",
                "v1",
                "LeaderWorkerSet",
                "leaderworkersets",
            ),
            Self::InferencePool => (
                "inference.networking.k8s.io",
                "v1",
                "InferencePool",
                "inferencepools",
            ),
            Self::HttpRoute => ("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"),
        };
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
    }

    /// Kinds that exist only when their CRDs are installed.
    pub fn needs_crd(self) -> bool {
        matches!(
            self,
            Self::LeaderWorkerSet | Self::InferencePool | Self::HttpRoute
        )
    }
}

impl Child {
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
