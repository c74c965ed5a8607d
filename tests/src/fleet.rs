//! Many InferaDeployments at once, for the operator's scale tests and benchmark: created
//! concurrently, and waited for until the operator has reconciled every one.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt, TryStreamExt, stream};
use infera_core::InferaDeployment;
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams},
    runtime::watcher,
};
use serde_json::json;

use crate::FIELD_MANAGER;

/// Requests in flight when creating deployments.
const CREATE_CONCURRENCY: usize = 16;

/// A small deployment, a server and one single-GPU worker pool, both at `replicas: 0`, without
/// NATS (which a spec without `nats` now gets, as upstream's does), so scale measures the
/// operator's objects as the README's figures did, not kwok's pod churn.
pub fn small(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment", "metadata": {"name": name},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "nats": {"deploy": false}, "services": {
            "server": {"componentType": "server", "replicas": 0, "args": ["--router-tokenizer-path", "m"]},
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
    Ok(census(admin, namespace).await?.1)
}

/// Deployments in `namespace`: how many, and how many not reconciled at their current generation.
async fn census(admin: &Client, namespace: &str) -> anyhow::Result<(usize, usize)> {
    let api = Api::<InferaDeployment>::namespaced(admin.clone(), namespace);
    // Pages of 500, as kubectl reads, so thousands of deployments are never one response.
    let mut params = ListParams::default().limit(500);
    let (mut total, mut pending) = (0, 0);
    loop {
        let page = api.list(&params).await?;
        total += page.items.len();
        pending += page.items.iter().filter(|idep| !reconciled(idep)).count();
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok((total, pending)),
        }
    }
}

fn reconciled(idep: &InferaDeployment) -> bool {
    idep.status.as_ref().and_then(|s| s.observed_generation) == idep.metadata.generation
}

/// Waits until every deployment in `namespace` is reconciled (its status has its generation);
/// returns when that was first seen. A watch, not a LIST loop: polling thousands of deployments
/// would load the API server the operator is measured against.
pub async fn wait_reconciled(
    admin: &Client,
    namespace: &str,
    timeout: Duration,
) -> anyhow::Result<Instant> {
    let api = Api::<InferaDeployment>::namespaced(admin.clone(), namespace);
    let mut events = watcher(api, watcher::Config::default().page_size(500)).boxed();
    // Names not yet reconciled: `listing` while the watch (re)lists, `pending` once it has.
    let (mut pending, mut listing) = (HashSet::new(), HashSet::new());
    let mut listed = false;
    let watch = async {
        while let Some(event) = events.try_next().await? {
            match event {
                watcher::Event::Init => listing.clear(),
                watcher::Event::InitApply(idep) => track(&mut listing, &idep),
                watcher::Event::InitDone => {
                    pending = std::mem::take(&mut listing);
                    listed = true;
                }
                watcher::Event::Apply(idep) => track(&mut pending, &idep),
                watcher::Event::Delete(idep) => {
                    pending.remove(&idep.metadata.name.unwrap_or_default());
                }
            }
            if listed && pending.is_empty() && listing.is_empty() {
                return anyhow::Ok(Instant::now());
            }
        }
        anyhow::bail!("the watch of InferaDeployments in {namespace} ended")
    };
    tokio::time::timeout(timeout, watch).await.map_err(|_| {
        anyhow::anyhow!("deployments in {namespace} not reconciled after {timeout:?}")
    })?
}

fn track(unreconciled: &mut HashSet<String>, idep: &InferaDeployment) {
    let name = idep.metadata.name.clone().unwrap_or_default();
    if reconciled(idep) {
        unreconciled.remove(&name);
    } else {
        unreconciled.insert(name);
    }
}

/// Head-of-line blocking: once `name` is reconciled and all `count` deployments of `namespace`
/// exist, changes its spec and times how long the operator takes to reconcile the new generation.
/// Returns that time and how many deployments had not been reconciled yet at the change.
pub async fn change_while_converging(
    admin: Client,
    namespace: String,
    name: String,
    count: usize,
) -> anyhow::Result<(Duration, usize)> {
    let api = Api::<InferaDeployment>::namespaced(admin.clone(), &namespace);
    let backlog = loop {
        if api
            .get_opt(&name)
            .await?
            .is_some_and(|idep| reconciled(&idep))
        {
            let (total, pending) = census(&admin, &namespace).await?;
            if total == count {
                break pending;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let changed = Instant::now();
    let patch = json!({"spec": {"image": "rocm/infera:sglang-v0.1.2"}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    while !reconciled(&api.get(&name).await?) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok((changed.elapsed(), backlog))
}
