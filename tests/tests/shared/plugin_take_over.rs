//! Migrating from upstream Infera's operator (docs/migration.md): with one running, `doctor` fails
//! INF104 naming it, `init` refuses with the steps (exit 4), and `init --take-over` scales it to 0,
//! deletes the children it created — its Deployment orphaning its pods — and installs ours; our
//! operator then creates the pool's Deployment anew, which adopts the running pods.
//!
//! Upstream's operator is stood in for by what its Helm chart creates (release `infera-operator`;
//! AMD-AGI/Infera `deploy/operator/helm/infera-operator/templates/{rbac,deployment}.yaml`) and by
//! children as its `builders.go` labels and selects them (`labelsFor`, lines 166-172), written
//! under its field manager (`manager`: controller-runtime's default, its program `/manager`).
//! One test in its own binary: the other controller is cluster-wide while it runs.

use std::time::Duration;

use infera_e2e::{
    TestNamespace, admin, apply_yaml, eventually,
    kube::{
        Api, Client,
        api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
    },
    operator::Operator,
    plugin::kubectl,
};
use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::ServiceAccount,
    rbac::v1::{ClusterRole, ClusterRoleBinding},
};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(120);
const ROLE: &str = "e2e-upstream-infera-operator";

/// Upstream's operator as its chart installs it, in `namespace`.
async fn upstream_operator(admin: &Client, namespace: &str) -> anyhow::Result<()> {
    apply_yaml(
        admin,
        &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": ROLE},
            "rules": [
                {"apiGroups": ["infera.amd.com"], "resources": ["inferadeployments"],
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
                {"apiGroups": ["infera.amd.com"], "resources": ["inferadeployments/status"],
                    "verbs": ["get", "patch", "update"]},
            ],
        })
        .to_string(),
    )
    .await?;
    apply_yaml(
        admin,
        &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": ROLE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": "infera-operator", "namespace": namespace}],
        })
        .to_string(),
    )
    .await?;
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "infera-operator"}}))?;
    Api::<ServiceAccount>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &account)
        .await?;
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "infera-operator",
            "annotations": {"meta.helm.sh/release-name": "infera-operator"}},
        "spec": {"replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "infera-operator"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "infera-operator"}},
                "spec": {"serviceAccountName": "infera-operator", "containers": [{"name": "manager",
                    "image": "docker.io/rocm/infera:operator-v0.1.0", "command": ["/manager"]}]},
            }},
    }))?;
    Api::<Deployment>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &deployment)
        .await?;
    Ok(())
}

/// An InferaDeployment `legacy` with a pool and its discovery ServiceAccount as upstream's
/// operator created them.
async fn upstream_graph(admin: &Client, namespace: &str) -> anyhow::Result<()> {
    infera_e2e::apply_yaml_in(
        admin,
        namespace,
        &json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "legacy"},
            "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
                "server": {"componentType": "server",
                    "args": ["--router-tokenizer-path", "Qwen/Qwen3-0.6B"]},
                "decode": {"componentType": "worker", "replicas": 1, "resources": {"gpu": 1},
                    "args": ["--model-path", "Qwen/Qwen3-0.6B"]},
            }},
        })
        .to_string(),
    )
    .await?;
    let labels = json!({"app.kubernetes.io/managed-by": "infera-operator",
        "infera.amd.com/deployment": "legacy", "infera.amd.com/service": "decode"});
    let upstream = PostParams {
        field_manager: Some("manager".into()),
        ..PostParams::default()
    };
    let pool: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "legacy-decode", "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "infera", "image": "rocm/infera:sglang-v0.1.1"}]},
        }},
    }))?;
    Api::<Deployment>::namespaced(admin.clone(), namespace)
        .create(&upstream, &pool)
        .await?;
    let account: ServiceAccount = serde_json::from_value(json!({
        "metadata": {"name": "legacy-disc", "labels": {"app.kubernetes.io/managed-by": "infera-operator",
            "infera.amd.com/deployment": "legacy", "infera.amd.com/service": "disc"}},
    }))?;
    Api::<ServiceAccount>::namespaced(admin.clone(), namespace)
        .create(&upstream, &account)
        .await?;
    Ok(())
}

/// The ReplicaSets of `legacy-decode`, each with the uid of the Deployment that owns it.
async fn pool_replica_sets(api: &Api<ReplicaSet>) -> anyhow::Result<Vec<(String, Option<String>)>> {
    let selector = "infera.amd.com/deployment=legacy,infera.amd.com/service=decode";
    Ok(api
        .list(&ListParams::default().labels(selector))
        .await?
        .items
        .into_iter()
        .map(|rs| {
            let owner = rs
                .metadata
                .owner_references
                .unwrap_or_default()
                .into_iter()
                .find(|o| o.controller == Some(true))
                .map(|o| o.uid);
            (rs.metadata.name.unwrap_or_default(), owner)
        })
        .collect())
}

async fn take_over(
    admin: &Client,
    upstream: &TestNamespace,
    graph: &TestNamespace,
) -> anyhow::Result<()> {
    kubectl(&["infera", "init", "--wait", "--timeout", "2m"])
        .await?
        .expect_code(0)?;
    upstream_operator(admin, upstream.name()).await?;
    upstream_graph(admin, graph.name()).await?;
    let replica_sets: Api<ReplicaSet> = graph.api();
    let before = eventually(TIMEOUT, || async {
        let sets = pool_replica_sets(&replica_sets).await?;
        anyhow::ensure!(sets.len() == 1, "{sets:?}");
        Ok(sets)
    })
    .await?;

    let other = format!("{}/infera-operator", upstream.name());
    let doctor = kubectl(&["infera", "doctor"]).await?;
    assert!(
        doctor.stdout.contains("INF104")
            && doctor.stdout.contains(&format!(
                "another controller reconciles InferaDeployments: {other}"
            )),
        "{}",
        doctor.stdout
    );
    let refused = kubectl(&["infera", "init"]).await?.expect_code(4)?;
    assert!(
        refused.stderr.contains(&format!(
            "helm uninstall infera-operator -n {}",
            upstream.name()
        )),
        "{}",
        refused.stderr
    );

    let taken = kubectl(&["infera", "init", "--take-over", "--timeout", "2m"])
        .await?
        .expect_code(0)?;
    let upstream_deployments: Api<Deployment> = upstream.api();
    let stopped = upstream_deployments.get("infera-operator").await?;
    assert_eq!(stopped.spec.and_then(|s| s.replicas), Some(0));
    assert_eq!(
        stopped
            .metadata
            .annotations
            .unwrap_or_default()
            .get("infera.amd.com/replicas-before-take-over")
            .map(String::as_str),
        Some("1")
    );
    let n = graph.name();
    for line in [
        format!("deployments/legacy-decode -n {n} deleted"),
        format!("serviceaccounts/legacy-disc -n {n} deleted"),
    ] {
        assert!(taken.stdout.contains(&line), "{line}:\n{}", taken.stdout);
    }
    assert!(
        taken.stdout.contains(&format!(
            "deployment.apps/infera-operator -n {} scaled to 0 (was 1)",
            upstream.name()
        )),
        "{}",
        taken.stdout
    );
    let accounts: Api<ServiceAccount> = graph.api();
    eventually(TIMEOUT, || async {
        anyhow::ensure!(
            accounts.get_opt("legacy-disc").await?.is_none(),
            "legacy-disc is still there"
        );
        Ok(())
    })
    .await?;

    // Our operator creates the pool anew, and its Deployment adopts the ReplicaSet (and pods)
    // upstream's left behind.
    let identity = infera_e2e::operator::install(admin).await?;
    let mut operator = Operator::start_in(&identity, n).await?;
    let pools: Api<Deployment> = graph.api();
    eventually(TIMEOUT, || async {
        let pool = pools.get("legacy-decode").await?;
        let ours = pool
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .any(|m| m.manager.as_deref() == Some("infera-operator"));
        let uid = pool.metadata.uid.clone();
        let sets = pool_replica_sets(&replica_sets).await?;
        let adopted = sets
            .iter()
            .find(|(name, _)| *name == before[0].0)
            .is_some_and(|(_, owner)| *owner == uid);
        anyhow::ensure!(
            ours && adopted,
            "ours: {ours}, replica sets {sets:?}, pool {uid:?}"
        );
        Ok(())
    })
    .await?;
    operator.ensure_running()?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn init_takes_over_from_upstreams_operator_keeping_its_deployments_pods() -> anyhow::Result<()>
{
    let admin = admin().await?;
    let upstream = TestNamespace::new(&admin, "upstream-op").await?;
    let graph = TestNamespace::new(&admin, "taken-over").await?;
    let result = take_over(&admin, &upstream, &graph).await;
    // The stand-in is cluster-wide: removed whatever happened, so that later inits are not refused.
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(admin.clone());
    let _ = roles.delete(ROLE, &DeleteParams::default()).await;
    let _ = bindings.delete(ROLE, &DeleteParams::default()).await;
    let _ = Api::<Deployment>::namespaced(admin.clone(), upstream.name())
        .patch(
            "infera-operator",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 0}})),
        )
        .await;
    result?;
    upstream.cleanup().await?;
    graph.cleanup().await
}
