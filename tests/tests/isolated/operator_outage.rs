//! The control plane crashes mid-reconcile: `kill -9` of kube-apiserver, and of etcd, while the
//! operator converges 20 deployments, each on a tier-1 control plane of the test's own. The
//! operator neither exits nor crash-loops, and within 30 s of the API server answering `/readyz`
//! again every deployment has exactly its rendered children (no orphan, no duplicate) and a status
//! of its current generation, and the operator is ready.
//!
//! While the API server is gone the operator's `/readyz` says not-ready. While only etcd is gone
//! the API server still answers watches from its cache and holds writes until etcd returns or its
//! own timeout passes, so the operator sees no failure in a 10 s outage and stays ready; its
//! `/readyz` must keep answering.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use anyhow::Context as _;
use infera_core::{ChildKind, InferaDeployment, naming::LABEL_DEPLOYMENT, render, validate};
use infera_e2e::{
    cluster::PrivateCluster,
    eventually,
    fleet::{self, small},
    k8s_openapi::api::core::v1::Namespace,
    kube::{
        Api, Client, ResourceExt,
        api::{DynamicObject, ListParams, PostParams},
    },
    operator::{Operator, install_on},
};

const DEPLOYMENTS: usize = 20;
/// How long the component stays down.
const OUTAGE: Duration = Duration::from_secs(10);
/// The bound, from the API server answering `/readyz` again to convergence.
const CONVERGENCE: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn operator_converges_after_kube_apiserver_is_killed() -> anyhow::Result<()> {
    outage("kube-apiserver", Expect::NotReady).await
}

#[tokio::test(flavor = "multi_thread")]
async fn operator_converges_after_etcd_is_killed() -> anyhow::Result<()> {
    outage("etcd", Expect::Answering).await
}

/// What the operator's `/readyz` says during the outage.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    NotReady,
    Answering,
}

async fn outage(component: &str, during: Expect) -> anyhow::Result<()> {
    let cluster = PrivateCluster::up(1)?;
    let admin = cluster.admin().await?;
    let identity = install_on(&cluster.kubeconfig, &admin).await?;
    let mut operator = Operator::start(&identity, &[], &format!("outage-{component}")).await?;
    // A plain namespace: tier 1 has no controller to give it a default ServiceAccount, which
    // `TestNamespace` waits for; the whole cluster goes with the test.
    let ns = "outage";
    let namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": ns}}))?;
    Api::<Namespace>::all(admin.clone())
        .create(&PostParams::default(), &namespace)
        .await?;
    let names = fleet::names("graph", DEPLOYMENTS);
    fleet::create(&admin, ns, &names).await?;

    tokio::time::sleep(Duration::from_millis(500)).await;
    let argv = cluster.kill(component)?;
    let down = Instant::now();
    eventually(OUTAGE, async || {
        operator.ensure_running()?;
        let code = operator.readyz().await?;
        match during {
            Expect::NotReady => anyhow::ensure!(code == 503, "/readyz answered {code}"),
            Expect::Answering => anyhow::ensure!(code == 200 || code == 503, "/readyz: {code}"),
        }
        Ok(())
    })
    .await
    .with_context(|| format!("the operator's /readyz with {component} gone"))?;
    tokio::time::sleep(OUTAGE.saturating_sub(down.elapsed())).await;
    operator.ensure_running()?;
    cluster.restart(component, &argv)?;

    let api_ready = api_readyz(&admin).await?;
    eprintln!("{component}: down {:.1?}, API ready again", down.elapsed());
    eventually(
        CONVERGENCE.saturating_sub(api_ready.elapsed()),
        async || {
            operator.ensure_running()?;
            let pending = fleet::unreconciled(&admin, ns).await?;
            anyhow::ensure!(
                pending == 0,
                "{pending} deployments without a current status"
            );
            let wrong = children_differ(&admin, ns, &names).await?;
            anyhow::ensure!(
                wrong.is_empty(),
                "children differ from the render: {wrong:?}"
            );
            let code = operator.readyz().await?;
            anyhow::ensure!(code == 200, "/readyz answered {code}");
            Ok(())
        },
    )
    .await
    .with_context(|| format!("converging within {CONVERGENCE:?} of the API answering /readyz"))?;
    eprintln!(
        "{component}: converged {:.1?} after the API was ready",
        api_ready.elapsed()
    );
    Ok(())
}

/// Waits until the API server answers `/readyz` with `ok`, and returns when it did.
async fn api_readyz(admin: &Client) -> anyhow::Result<Instant> {
    eventually(Duration::from_secs(120), async || {
        let request = hyper::Request::get("/readyz").body(Vec::new())?;
        let body = admin.request_text(request).await?;
        anyhow::ensure!(body.trim() == "ok", "/readyz: {body}");
        Ok(Instant::now())
    })
    .await
    .context("the API server's /readyz after the restart")
}

/// Per deployment, the differences between its children (one LIST per kind, by our label) and what
/// it renders: missing, extra (orphans or duplicates), and children of no deployment of `names`.
async fn children_differ(
    admin: &Client,
    namespace: &str,
    names: &[String],
) -> anyhow::Result<Vec<String>> {
    let mut live: BTreeMap<String, BTreeSet<(ChildKind, String)>> = BTreeMap::new();
    for kind in ChildKind::ALL {
        let api: Api<DynamicObject> =
            Api::namespaced_with(admin.clone(), namespace, &kind.api_resource());
        let list = match api
            .list(&ListParams::default().labels(LABEL_DEPLOYMENT))
            .await
        {
            Ok(list) => list,
            // A kind whose CRD a tier-1 cluster lacks (LeaderWorkerSet, GAIE) has no children.
            Err(infera_e2e::kube::Error::Api(status)) if status.code == 404 => {
                let resource = kind.api_resource();
                anyhow::ensure!(
                    infera_e2e::crd_not_installed(admin, &resource).await?,
                    "listing {} answered 404 though the cluster serves it",
                    resource.kind
                );
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        for child in list.items {
            let deployment = child.labels()[LABEL_DEPLOYMENT].clone();
            live.entry(deployment)
                .or_default()
                .insert((kind, child.name_any()));
        }
    }
    let mut wrong = Vec::new();
    for name in names {
        let idep: InferaDeployment = serde_json::from_value(small(name))?;
        let mut idep = idep;
        idep.metadata.namespace = Some(namespace.into());
        idep.metadata.uid = Some("uid".into());
        let valid = validate(&idep).map_err(|errors| anyhow::anyhow!("{errors:?}"))?;
        let rendered: BTreeSet<(ChildKind, String)> =
            render::render_for(&valid, render::Apis::default())
                .iter()
                .map(|child| (child.kind(), child.name().to_string()))
                .collect();
        let found = live.remove(name).unwrap_or_default();
        if found != rendered {
            wrong.push(format!(
                "{name}: missing {:?}, extra {:?}",
                rendered.difference(&found).collect::<Vec<_>>(),
                found.difference(&rendered).collect::<Vec<_>>()
            ));
        }
    }
    wrong.extend(
        live.keys()
            .map(|orphan| format!("children of unknown deployment {orphan}")),
    );
    Ok(wrong)
}
