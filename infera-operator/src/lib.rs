//! The InferaDeployment controller.
//!
//! Reconcile is a pipeline, one module per step: [`observe`] (what exists, from watch caches) →
//! validate and render (pure, in `infera-core`) → [`apply`] (server-side apply, prune) →
//! [`status`] (conditions and readiness, written only when they change).

pub mod apply;
pub mod controller;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod observe;
pub mod reconcile;
pub mod status;

use std::time::Duration;

/// Errors of the controller layer. Spec problems are not errors: they become conditions.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("cannot encode {kind} {name}: {source}")]
    Encode {
        kind: String,
        name: String,
        source: serde_json::Error,
    },
    #[error("InferaDeployment has no {0}")]
    MissingMetadata(&'static str),
    #[error("leader election: {0}")]
    LeaderElection(String),
}

impl Error {
    /// Short label for the errors metric.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Self::Kube(_) => "kube",
            Self::Encode { .. } => "encode",
            Self::MissingMetadata(_) => "metadata",
            Self::LeaderElection(_) => "leader_election",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How often an unchanged deployment is looked at again, to catch anything a watch missed.
pub const RESYNC: Duration = Duration::from_secs(600);

/// How soon a deployment with a child the API server refused is tried again.
pub const REJECTED_RETRY: Duration = Duration::from_secs(15);
