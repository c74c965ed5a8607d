//! The InferaDeployment controller.
//!
//! Reconcile is a pipeline, one module per step: [`observe`] (what exists, from watch caches) →
//! validate and render (pure, in `infera-core`) → [`apply`] (server-side apply, prune) →
//! [`status`] (conditions and readiness, written only when they change).

pub mod apply;
pub mod context;
pub mod controller;
pub mod credentials;
pub mod events;
pub mod fairness;
#[cfg(test)]
mod fixtures;
pub mod history;
pub mod http;
pub mod leader;
pub mod live;
pub mod lockstep;
pub mod metrics;
pub mod models;
pub mod observe;
pub mod ownership;
pub mod planner;
pub mod reconcile;
pub mod registration;
pub mod rollout;
pub mod status;
pub mod unseen;

use std::time::Duration;

/// Errors of the controller layer: each names the step that failed and its object, and keeps the
/// cause as its `source` ([`chain`] shows both). Spec problems are not errors: they become
/// conditions, as do children the API server refuses and fields another manager owns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// InferaDeployments are namespaced: one without a namespace cannot be reconciled.
    #[error("InferaDeployment {name} has no namespace")]
    NoNamespace { name: String },
    #[error("cannot encode {kind} {name} for server-side apply")]
    Encode {
        kind: String,
        name: String,
        #[source]
        source: serde_json::Error,
    },
    /// The API server failed a child's apply in a way worth retrying (throttled, unavailable).
    #[error("cannot apply {kind} {name}")]
    Apply {
        kind: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot delete {kind} {name}, which is no longer rendered")]
    Delete {
        kind: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    /// Creating, renumbering or deleting a ControllerRevision of the history failed.
    #[error("cannot {action} ControllerRevision {name}")]
    History {
        action: &'static str,
        name: String,
        #[source]
        source: kube::Error,
    },
    /// The planner's change of a pool's replicas failed (see [`planner`]).
    #[error("cannot set the replicas of InferaDeployment {name}")]
    Scale {
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot write the status of InferaDeployment {name}")]
    WriteStatus {
        name: String,
        #[source]
        source: kube::Error,
    },
    /// The status names a field the installed CRD does not declare (see [`undeclared_field`]).
    #[error(
        "cannot write the status of InferaDeployment {name}: {}",
        crd_outdated(field)
    )]
    CrdOutdated {
        name: String,
        field: String,
        #[source]
        source: kube::Error,
    },
    /// Restricted egress names the API server's endpoints, and they are not known.
    #[error(
        "cannot restrict the egress of InferaDeployment {name}: the API server's endpoints are not known yet (the operator reads them from EndpointSlice {slice}; if its log says that watch is forbidden, apply the RBAC of this operator's release, which grants it)"
    )]
    ApiServerUnknown { name: String, slice: String },
    /// Creating the managed NATS's credentials failed (see [`credentials`]).
    #[error("cannot create Secret {name}, the NATS credentials")]
    Credentials {
        name: String,
        #[source]
        source: kube::Error,
    },
    /// Setting a worker pod's readiness gate failed (see [`registration`]).
    #[error("cannot mark pod {pod} registered with the router")]
    MarkRegistered {
        pod: String,
        #[source]
        source: kube::Error,
    },
    /// The system gave no random bytes for a password.
    #[error("cannot generate a NATS password")]
    Random(#[source] getrandom::Error),
    #[error("lost the leader Lease {name}: another replica holds it")]
    LeaseTaken { name: String },
    #[error("lost the leader Lease {name}: not renewed within its duration")]
    LeaseNotRenewed {
        name: String,
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// The step that failed, the `error` label of `infera_reconcile_errors_total`.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Self::NoNamespace { .. } | Self::ApiServerUnknown { .. } => "observe",
            Self::Encode { .. }
            | Self::Apply { .. }
            | Self::Delete { .. }
            | Self::Credentials { .. }
            | Self::MarkRegistered { .. }
            | Self::Random(_) => "apply",
            Self::History { .. } => "history",
            Self::WriteStatus { .. } | Self::CrdOutdated { .. } => "status",
            Self::Scale { .. } => "planner",
            Self::LeaseTaken { .. } | Self::LeaseNotRenewed { .. } => "leader_election",
        }
    }
}

impl Error {
    /// Whether the API server refused the request (a 4xx other than a timeout, a conflict or
    /// throttling), or it could not be made at all: trying again the same way fails the same way.
    pub fn refused(&self) -> bool {
        let source = match self {
            Self::NoNamespace { .. } | Self::Encode { .. } | Self::Random(_) => return true,
            Self::Apply { source, .. }
            | Self::Delete { source, .. }
            | Self::Credentials { source, .. }
            | Self::MarkRegistered { source, .. }
            | Self::History { source, .. }
            | Self::WriteStatus { source, .. }
            | Self::CrdOutdated { source, .. }
            | Self::Scale { source, .. } => source,
            Self::ApiServerUnknown { .. }
            | Self::LeaseTaken { .. }
            | Self::LeaseNotRenewed { .. } => {
                return false;
            }
        };
        matches!(source, kube::Error::Api(status)
            if (400..500).contains(&status.code) && ![408, 409, 429].contains(&status.code))
    }
}

/// The status field a server-side apply was refused for because the CRD's schema does not declare
/// it: an InferaDeployment CRD older than the operator. The API server answers 500, "failed to
/// create typed patch object (/; infera.amd.com/v1alpha1, Kind=InferaDeployment): .status.x: field
/// not declared in schema", or several such lines after "errors:" (apimachinery v0.37
/// `pkg/util/managedfields/internal/structuredmerge.go`, structured-merge-diff v6
/// `typed/helpers.go`).
pub fn undeclared_field(error: &kube::Error) -> Option<String> {
    let kube::Error::Api(status) = error else {
        return None;
    };
    let (before, _) = status
        .message
        .split_once(": field not declared in schema")?;
    let field = before.rsplit(char::is_whitespace).next()?;
    field.starts_with(".status").then(|| field.to_string())
}

/// What is wrong with a CRD that lacks status `field`, and how to upgrade it whichever way it was
/// installed: the error of a refused status write and `/readyz` say it.
pub fn crd_outdated(field: &str) -> String {
    let version = infera_core::crd::VERSION;
    format!(
        "the InferaDeployment CRD is older than the operator ({version}) and does not declare \
         {field}: upgrade it to release {version} (`kubectl infera init` with that release's \
         plugin; installed with Helm, which does not upgrade CRDs: `{}`; installed from the \
         release's manifest: apply infera-operator-{version}.yaml)",
        infera_core::crd::helm_crd_upgrade(version)
    )
}

/// An error and its sources, `cannot apply Deployment demo-server: ApiError: ...`, for logs and
/// Events: an error's `Display` names only what failed, its sources say why. A source whose text
/// the previous ones already contain is left out.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    for cause in std::iter::successors(error.source(), |cause| cause.source()) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How often an unchanged deployment is looked at again by default, to catch anything a watch
/// missed (`--resync-seconds`).
pub const RESYNC: Duration = Duration::from_secs(600);

/// How soon a deployment with a child the API server refused is tried again.
pub const REJECTED_RETRY: Duration = Duration::from_secs(15);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_step_and_object_and_its_chain_says_why() {
        let status = kube::core::Status::failure("etcdserver: request timed out", "Timeout");
        let error = Error::Apply {
            kind: "Deployment".into(),
            name: "calm-worker".into(),
            source: kube::Error::Api(Box::new(status.with_code(504))),
        };
        assert_eq!(error.to_string(), "cannot apply Deployment calm-worker");
        assert_eq!(error.metric_label(), "apply");
        let chain = chain(&error);
        assert!(
            chain.starts_with(
                "cannot apply Deployment calm-worker: ApiError: etcdserver: request timed out: Timeout"
            ),
            "{chain}"
        );
        // The ApiError's source is its Status, whose text the ApiError already shows.
        assert!(!chain.ends_with("request timed out: Timeout"), "{chain}");
    }

    fn api_error(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure(message, "").with_code(code),
        ))
    }

    #[test]
    fn a_status_field_the_crd_does_not_declare_is_named() {
        let refused = api_error(
            500,
            "failed to create typed patch object (/; infera.amd.com/v1alpha1, Kind=InferaDeployment): \
             .status.observedGeneration: field not declared in schema",
        );
        assert_eq!(
            undeclared_field(&refused).as_deref(),
            Some(".status.observedGeneration")
        );
        let several = api_error(
            500,
            "failed to create typed patch object (/; infera.amd.com/v1alpha1, Kind=InferaDeployment): \
             errors:\n  .status.planner: field not declared in schema\n  .status.gaie: field not declared in schema",
        );
        assert_eq!(
            undeclared_field(&several).as_deref(),
            Some(".status.planner")
        );
        // A spec field is the user's to fix, not the CRD's; other errors are no such refusal.
        let spec = api_error(500, ".spec.podTemplate: field not declared in schema");
        assert_eq!(undeclared_field(&spec), None);
        assert_eq!(
            undeclared_field(&api_error(500, "etcdserver: leader changed")),
            None
        );
    }

    #[test]
    fn an_outdated_crd_says_how_to_upgrade_it() {
        let error = Error::CrdOutdated {
            name: "calm".into(),
            field: ".status.observedGeneration".into(),
            source: api_error(500, "x"),
        };
        let text = error.to_string();
        for part in [
            "cannot write the status of InferaDeployment calm",
            "the InferaDeployment CRD is older than the operator",
            "does not declare .status.observedGeneration",
            "`kubectl infera init` with that release's plugin",
            "helm show crds oci://ghcr.io/amd/infera/charts/infera-operator --version",
            "apply infera-operator-",
        ] {
            assert!(text.contains(part), "{part:?} not in {text}");
        }
        assert_eq!(error.metric_label(), "status");
        assert!(!error.refused(), "a 500 is tried again, with back-off");
    }
}
