//! Server-side apply as the `kubectl-infera` field manager: never forced unless asked, conflicts
//! reported with the manager and field, and an outcome (created / configured / unchanged) read
//! from the resourceVersion.

use infera_core::naming::PLUGIN_MANAGER;
use kube::{
    Api, Client,
    api::{DynamicObject, Patch, PatchParams},
    core::ApiResource,
};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Created,
    Configured,
    Unchanged,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Created => "created",
            Self::Configured => "configured",
            Self::Unchanged => "unchanged",
        })
    }
}

pub fn dynamic_api(
    client: &Client,
    resource: &ApiResource,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
        None => Api::all_with(client.clone(), resource),
    }
}

/// Applies `object`; `previous` is the object as it was read just before (None: absent).
pub async fn apply(
    api: &Api<DynamicObject>,
    object: &serde_json::Value,
    name: &str,
    display: &str,
    previous: Option<&DynamicObject>,
    dry_run: bool,
    force: bool,
) -> Result<(DynamicObject, Outcome)> {
    let mut params = PatchParams::apply(PLUGIN_MANAGER);
    params.dry_run = dry_run;
    params.force = force;
    let applied = api
        .patch(name, &params, &Patch::Apply(object))
        .await
        .map_err(|e| conflict_or(display, e))?;
    let outcome = match previous {
        None => Outcome::Created,
        Some(p) if p.metadata.resource_version == applied.metadata.resource_version => {
            Outcome::Unchanged
        }
        Some(_) => Outcome::Configured,
    };
    Ok((applied, outcome))
}

/// Turns an apply error into [`Error::Conflict`] when it is a field-manager conflict.
pub fn conflict_or(display: &str, error: kube::Error) -> Error {
    if let kube::Error::Api(status) = &error
        && status.code == 409
    {
        let conflicts = infera_core::conflict::parse(status);
        if !conflicts.is_empty() {
            return Error::Conflict {
                object: display.to_string(),
                conflicts,
            };
        }
    }
    Error::kube(format!("applying {display}"), error)
}
