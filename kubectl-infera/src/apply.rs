//! Server-side apply as the `kubectl-infera` field manager: strict field validation (an unknown or
//! duplicate field is an error, not a warning), never forced unless asked, conflicts reported with
//! the manager and field, and an outcome (created / configured / unchanged) read from the
//! resourceVersion. Commands that write several objects dry-run all of them first and write
//! only when every one passes.

use infera_core::naming::PLUGIN_MANAGER;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api, Client,
    api::{DynamicObject, Patch, PatchParams, ValidationDirective},
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

/// Parameters of a server-side apply as `kubectl-infera`: strict field validation, forced only
/// when the user asked.
pub fn params(dry_run: bool, force: bool) -> PatchParams {
    let mut params = PatchParams::apply(PLUGIN_MANAGER);
    params.dry_run = dry_run;
    params.force = force;
    params.field_validation = Some(ValidationDirective::Strict);
    params
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
    let applied = api
        .patch(name, &params(dry_run, force), &Patch::Apply(object))
        .await
        .map_err(|e| conflict_or(display, e))?;
    let outcome = outcome(previous.map(|p| &p.metadata), &applied.metadata);
    Ok((applied, outcome))
}

/// What an apply did, from the object's metadata before (None: absent) and after.
pub fn outcome(previous: Option<&ObjectMeta>, applied: &ObjectMeta) -> Outcome {
    match previous {
        None => Outcome::Created,
        Some(p) if p.resource_version == applied.resource_version => Outcome::Unchanged,
        Some(_) => Outcome::Configured,
    }
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
