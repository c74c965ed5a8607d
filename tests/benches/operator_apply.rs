//! Benchmark: how long the operator takes to fully apply 200 InferaDeployments, against a tight
//! concurrent client creating the same child objects directly, in the same run; and the
//! operator's peak RSS and request counts.
//!
//!   cargo build --release -p infera-operator
//!   KUBECONFIG=... cargo bench -p infera-e2e --bench operator_apply   # needs a tier-2 cluster
//!
//! Workers have `replicas: 0` so the comparison measures applying objects, not kwok's pod churn.
//! The direct client authenticates as the operator's ServiceAccount, so both are subject to the
//! same API Priority and Fairness level (an admin client would be exempt).

use std::time::{Duration, Instant};

use futures::{StreamExt, stream};
use infera_core::{ChildKind, InferaDeployment, naming::OPERATOR_MANAGER, render, validate, yaml};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in,
    kube::{
        Api, Client,
        api::{DynamicObject, ListParams, Patch, PatchParams},
    },
    operator::{Operator, install},
};
use serde_json::json;

const DEPLOYMENTS: usize = 200;
const CONCURRENCY: usize = 16;

fn spec(name: &str) -> String {
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment", "metadata": {"name": name},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "replicas": 0},
            "worker": {"componentType": "worker", "replicas": 0, "resources": {"gpu": 1}},
        }},
    })
    .to_string()
}

/// Children of every kind the render produces, counted with one LIST per kind.
async fn count_children(client: &Client, namespace: &str) -> anyhow::Result<usize> {
    let mut total = 0;
    for kind in [
        ChildKind::ServiceAccount,
        ChildKind::Role,
        ChildKind::RoleBinding,
        ChildKind::Service,
        ChildKind::Deployment,
    ] {
        let api =
            Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &kind.api_resource());
        total += api
            .list_metadata(
                &ListParams::default().labels("app.kubernetes.io/managed-by=infera-operator"),
            )
            .await?
            .items
            .len();
    }
    Ok(total)
}

async fn wait_for(client: &Client, namespace: &str, expected: usize) -> anyhow::Result<()> {
    loop {
        if count_children(client, namespace).await? >= expected {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let admin = admin().await?;
    let identity = install(&admin).await?;
    let names: Vec<String> = (0..DEPLOYMENTS).map(|i| format!("bench-{i:03}")).collect();
    let per_deployment =
        validate(&yaml::parse_deployments(&spec("x"))?[0]).map(|v| render(&v).len())?;
    let expected = DEPLOYMENTS * per_deployment;

    // Direct: render locally and server-side apply every child, CONCURRENCY at a time.
    let direct_ns = TestNamespace::new(&admin, "bench-direct").await?;
    let mut children = Vec::new();
    for name in &names {
        let mut idep: InferaDeployment = yaml::parse_deployments(&spec(name))?.remove(0);
        idep.metadata.namespace = Some(direct_ns.name().to_string());
        children.extend(render(&validate(&idep)?));
    }
    let started = Instant::now();
    // The same identity as the operator, so both get the same API Priority and Fairness share.
    // RoleBindings go last: binding a Role that does not exist yet is refused.
    let as_operator = identity.client().await?;
    let (bindings, others): (Vec<_>, Vec<_>) = children
        .into_iter()
        .partition(|c| c.kind() == ChildKind::RoleBinding);
    for batch in [others, bindings] {
        let results: Vec<anyhow::Result<()>> = stream::iter(batch)
            .map(|child| {
                let (client, namespace) = (as_operator.clone(), direct_ns.name().to_string());
                async move {
                    let api = Api::<DynamicObject>::namespaced_with(
                        client,
                        &namespace,
                        &child.kind().api_resource(),
                    );
                    api.patch(
                        child.name(),
                        &PatchParams::apply(OPERATOR_MANAGER),
                        &Patch::Apply(&child),
                    )
                    .await?;
                    Ok(())
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    }
    let direct = started.elapsed();
    wait_for(&admin, direct_ns.name(), expected).await?;

    // Operator: create the InferaDeployments, time until every child exists.
    let ns = TestNamespace::new(&admin, "bench-operator").await?;
    let operator = Operator::start(
        &identity,
        &["--namespace", ns.name(), "--concurrency=16"],
        "operator-bench",
    )
    .await?;
    let started = Instant::now();
    let results: Vec<anyhow::Result<()>> = stream::iter(names.iter())
        .map(|name| {
            let (admin, namespace) = (admin.clone(), ns.name().to_string());
            async move {
                apply_yaml_in(&admin, &namespace, &spec(name)).await?;
                Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    let created = started.elapsed();
    wait_for(&admin, ns.name(), expected).await?;
    let applied = started.elapsed();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let metrics = operator.metrics().await?;
    let requests: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("infera_api_requests_total"))
        .collect();

    println!(
        "operator_apply: {DEPLOYMENTS} InferaDeployments, {expected} children ({per_deployment} each)"
    );
    println!(
        "  direct client ({CONCURRENCY} concurrent SSA):     {:>8.2?}",
        direct
    );
    println!(
        "  operator (create {created:.2?}, all applied): {:>8.2?}  ratio {:.2}x",
        applied,
        applied.as_secs_f64() / direct.as_secs_f64()
    );
    println!(
        "  operator peak RSS: {} KiB",
        operator.peak_rss_kib().unwrap_or_default()
    );
    println!(
        "  operator writes in total: {}",
        infera_e2e::operator::writes(&metrics)
    );
    for line in requests {
        println!("    {line}");
    }
    drop(operator);
    direct_ns.cleanup().await?;
    ns.cleanup().await
}
