//! Many InferaDeployments at once, for the operator's scale tests and benchmark: created
//! concurrently, and waited for until the operator has reconciled every one.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt, TryStreamExt, stream};
use infera_core::InferaDeployment;
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams},
};
use serde_json::json;

use crate::FIELD_MANAGER;

/// Requests in flight when creating deployments.
const CREATE_CONCURRENCY: usize = 16;

/// A small deployment, a server and one single-GPU worker pool, both at `replicas: 0`, so scale
/// measures the operator's objects, not kwok's pod churn.
pub fn small(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment", "metadata": {"name": name},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "replicas": 0},
            "worker": {"componentType": "worker", "replicas": 0, "resources": {"gpu": 1}},
        }},
    })
}

/// `prefix-00000` … for `count` deployments.
pub fn names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}-{i:05}")).collect()
}

/// Creates a [`small`] deployment per name in `namespace` (server-side apply as `infera-e2e`),
/// several at a time.
pub async fn create(admin: &Client, namespace: &str, names: &[String]) -> anyhow::Result<()> {
    let api = Api::<InferaDeployment>::namespaced(admin.clone(), namespace);
    stream::iter(names)
        .map(|name| {
            let api = api.clone();
            async move {
                api.patch(
                    name,
                    &PatchParams::apply(FIELD_MANAGER),
                    &Patch::Apply(small(name)),
                )
                .await
                .with_context(|| format!("creating InferaDeployment {name}"))
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// Deployments in `namespace` whose status is not yet of their current generation.
pub async fn unreconciled(admin: &Client, namespace: &str) -> anyhow::Result<usize> {
    let api = Api::<InferaDeployment>::namespaced(admin.clone(), namespace);
    // Pages of 500, as kubectl reads, so thousands of deployments are never one response.
    let mut params = ListParams::default().limit(500);
    let mut pending = 0;
    loop {
        let page = api.list(&params).await?;
        pending += page
            .items
            .iter()
            .filter(|idep| {
                idep.status.as_ref().and_then(|s| s.observed_generation) != idep.metadata.generation
            })
            .count();
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(pending),
        }
    }
}

/// Waits until every deployment in `namespace` is reconciled (its status has its generation);
/// returns when that was first seen.
pub async fn wait_reconciled(
    admin: &Client,
    namespace: &str,
    timeout: Duration,
) -> anyhow::Result<Instant> {
    let deadline = Instant::now() + timeout;
    loop {
        let pending = unreconciled(admin, namespace).await?;
        if pending == 0 {
            return Ok(Instant::now());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{pending} deployments in {namespace} not reconciled after {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
