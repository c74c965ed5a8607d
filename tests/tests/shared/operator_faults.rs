//! Faults lose nothing: the operator talks to the API server through the test's fault-injecting
//! proxy (`infera_e2e::fault_proxy`) as its own ServiceAccount. A lost response on a child apply
//! and on the status write converges with no duplicate, no orphan and, once converged, no
//! further write; a storm of 429s is backed off (at most [`MAX_STORM_RATE`] requests per second)
//! and converges once it passes.

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, Instant},
};

use infera_core::InferaDeployment;
use infera_e2e::{
    ServiceAccountIdentity, TestNamespace, admin, apply_yaml_in,
    fault_proxy::{Fault, FaultProxy},
    k8s_openapi::api::apps::v1::Deployment,
    kube::{Api, ResourceExt, api::ListParams},
    operator::{Operator, install},
    ready,
};

const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// Most requests per second the operator may send while every answer is a 429.
const MAX_STORM_RATE: f64 = 20.0;

const SMALL: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: lossy}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    worker: {componentType: worker, resources: {gpu: 1}}
"#;

/// The operator's identity, through `proxy`.
fn through(identity: &ServiceAccountIdentity, proxy: &FaultProxy) -> ServiceAccountIdentity {
    ServiceAccountIdentity {
        namespace: identity.namespace.clone(),
        name: identity.name.clone(),
        token: identity.token.clone(),
        kubeconfig: proxy.kubeconfig().to_owned(),
    }
}

/// `name → resourceVersion` of the deployment's child Deployments and of the InferaDeployment.
async fn versions(
    deployments: &Api<Deployment>,
    ideps: &Api<InferaDeployment>,
) -> anyhow::Result<Vec<(String, Option<String>)>> {
    let mut versions: Vec<(String, Option<String>)> = deployments
        .list(&ListParams::default().labels("infera.amd.com/deployment=lossy"))
        .await?
        .items
        .iter()
        .map(|d| (d.name_any(), d.resource_version()))
        .collect();
    versions.push(("lossy".into(), ideps.get("lossy").await?.resource_version()));
    Ok(versions)
}

#[tokio::test(flavor = "multi_thread")]
async fn lost_responses_on_a_child_apply_and_the_status_write_converge_without_duplicates()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "faults-lost").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let proxy = FaultProxy::start(&identity.kubeconfig).await?;
    // The first apply of a child Deployment (not its dry run) and the first status write are
    // processed, and their answers lost.
    let (apply_lost, status_lost) = (AtomicBool::new(false), AtomicBool::new(false));
    proxy.script(move |seen| {
        let once = |lost: &AtomicBool| !lost.swap(true, Ordering::SeqCst);
        let write = !seen.query.contains("dryRun=");
        let lose = match seen.key().as_str() {
            "PATCH deployments" => write && once(&apply_lost),
            "PATCH inferadeployments/status" => once(&status_lost),
            _ => false,
        };
        lose.then_some(Fault::DropResponse)
    });
    let mut operator = Operator::start(
        &through(&identity, &proxy),
        &["--namespace", n],
        &format!("operator-{n}"),
    )
    .await?;
    apply_yaml_in(&admin, n, SMALL).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    ready(&ideps, "lossy", READY_TIMEOUT).await?;
    // Both children were applied (the first answer lost: the operator either re-applies it or,
    // seeing the child with its applied hash in its watch, knows it landed), and the status was
    // written again after its answer was lost.
    anyhow::ensure!(
        proxy.faulted("drop-response PATCH deployments") == 1
            && proxy.faulted("drop-response PATCH inferadeployments/status") == 1,
        "the faults did not fire once each: {:?}",
        proxy.counts()
    );

    // No duplicate and no orphan: exactly the two children, each owned by the deployment.
    let uid = ideps.get("lossy").await?.uid();
    let deployments: Api<Deployment> = ns.api();
    let children = deployments
        .list(&ListParams::default().labels("app.kubernetes.io/managed-by=infera-operator"))
        .await?
        .items;
    let mut names: Vec<String> = children.iter().map(ResourceExt::name_any).collect();
    names.sort();
    assert_eq!(names, ["lossy-server", "lossy-worker"]);
    for child in &children {
        let owners: Vec<&str> = child
            .owner_references()
            .iter()
            .map(|o| o.uid.as_str())
            .collect();
        assert_eq!(
            owners,
            [uid.as_deref().unwrap_or("?")],
            "{} owners",
            child.name_any()
        );
    }

    // Converged: the retries are over and change nothing more.
    let before = versions(&deployments, &ideps).await?;
    let writes = operator.writes_or_dry_runs().await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(versions(&deployments, &ideps).await?, before);
    assert_eq!(
        operator.writes_or_dry_runs().await?,
        writes,
        "writes after convergence"
    );
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_storm_of_429s_is_backed_off_and_converges_after_it() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "faults-429").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let proxy = FaultProxy::start(&identity.kubeconfig).await?;
    let mut operator = Operator::start(
        &through(&identity, &proxy),
        &["--namespace", n],
        &format!("operator-{n}"),
    )
    .await?;

    let storm = Duration::from_secs(8);
    let until = Instant::now() + storm;
    proxy.script(move |_| {
        (Instant::now() < until).then_some(Fault::Status {
            code: 429,
            retry_after: Some(1),
        })
    });
    let before = proxy.total();
    apply_yaml_in(&admin, n, SMALL).await?;
    tokio::time::sleep(until.saturating_duration_since(Instant::now())).await;
    let during = proxy.total() - before;
    let rate = during as f64 / storm.as_secs_f64();
    eprintln!(
        "429 storm of {storm:?}: {during} requests ({rate:.1}/s): {:?}",
        proxy.counts()
    );
    anyhow::ensure!(
        rate <= MAX_STORM_RATE,
        "{rate:.1} requests/s during the storm (at most {MAX_STORM_RATE})"
    );
    // The storm met the operator: its apply of the new deployment's children was answered 429.
    anyhow::ensure!(
        proxy.faulted("status PATCH deployments") > 0,
        "no child apply met the storm: {:?}",
        proxy.counts()
    );

    let ideps: Api<InferaDeployment> = ns.api();
    ready(&ideps, "lossy", READY_TIMEOUT).await?;
    operator.ensure_running()?;
    ns.cleanup().await
}
