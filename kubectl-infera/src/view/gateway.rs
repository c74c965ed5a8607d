//! The Gateway section of `status NAME`, for a deployment with `spec.gaie`: the Gateway (and
//! listener) its HTTPRoute attaches to, and what the Gateways report about the HTTPRoute and the
//! InferencePool in their `status.parents[].conditions` (`Accepted`, `ResolvedRefs`…).

use infera_core::{InferaDeployment, naming};
use serde::Serialize;

use crate::gateway_api::{Condition, ParentsStatus};

/// What `status NAME` shows of the Inference Gateway in front of a deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySection {
    /// The Gateway's namespace (`spec.gaie.gatewayNamespace`, default the deployment's).
    pub namespace: String,
    pub name: String,
    /// The listener the route attaches to; none: every listener that allows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
    pub http_route: Attached,
    pub inference_pool: Attached,
}

/// An HTTPRoute or InferencePool and what its parents report about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attached {
    pub name: String,
    pub state: Lookup,
    /// Why it could not be read (with [`Lookup::Unreadable`]).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// One per Gateway that reported on it; empty until a gateway controller does.
    pub parents: Vec<ParentRow>,
}

/// What the GET of an [`Attached`] object found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Lookup {
    Found,
    NotFound,
    Unreadable,
}

/// One parent's report: `namespace/name (listener …)` and its conditions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParentRow {
    pub parent: String,
    pub conditions: Vec<Condition>,
}

/// The section for a deployment with `spec.gaie` (`None` without), from the statuses of its
/// HTTPRoute and InferencePool as read: `Ok(None)` when missing, `Err` when unreadable.
pub fn gateway_section(
    idep: &InferaDeployment,
    route: Result<Option<ParentsStatus>, String>,
    pool: Result<Option<ParentsStatus>, String>,
) -> Option<GatewaySection> {
    let gaie = idep.spec.gaie.as_ref().filter(|gaie| gaie.is_enabled())?;
    let namespace = idep.metadata.namespace.clone().unwrap_or_default();
    let name = idep.metadata.name.as_deref().unwrap_or_default();
    let attached = |object: String, read: Result<Option<ParentsStatus>, String>| {
        let (state, error, status) = match read {
            Ok(Some(status)) => (Lookup::Found, String::new(), status),
            Ok(None) => (Lookup::NotFound, String::new(), ParentsStatus::default()),
            Err(e) => (Lookup::Unreadable, e, ParentsStatus::default()),
        };
        let parents = status
            .parents
            .into_iter()
            .map(|p| ParentRow {
                parent: p.parent_ref.display(&namespace),
                conditions: p.conditions,
            })
            .collect();
        Attached {
            name: object,
            state,
            error,
            parents,
        }
    };
    Some(GatewaySection {
        namespace: gaie
            .gateway_namespace
            .clone()
            .unwrap_or_else(|| namespace.clone()),
        name: gaie.gateway_name.clone(),
        section_name: gaie.gateway_section_name.clone(),
        http_route: attached(naming::http_route_name(name), route),
        inference_pool: attached(naming::inference_pool_name(name), pool),
    })
}
