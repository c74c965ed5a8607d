//! `kubectl infera deploy -f` is all or nothing: a file whose second deployment the API server
//! refuses (here a ResourceQuota on the count of InferaDeployments, which only the server can
//! see) writes neither, and the error names the refused object and the server's reason.

use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, kube::api::ListParams, operator::install, plugin::kubectl,
};

const TWO: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: first}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server}
    worker: {componentType: worker, resources: {gpu: 1}}
---
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: second}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server}
    worker: {componentType: worker, resources: {gpu: 1}}
"#;

const ONE_DEPLOYMENT: &str = r#"
apiVersion: v1
kind: ResourceQuota
metadata: {name: one-deployment}
spec:
  hard: {count/inferadeployments.infera.amd.com: "1"}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn deploy_writes_nothing_when_the_server_refuses_one_deployment_of_the_file()
-> anyhow::Result<()> {
    let admin = admin().await?;
    install(&admin).await?;
    let ns = TestNamespace::new(&admin, "all-or-nothing").await?;
    let n = ns.name();
    apply_yaml_in(&admin, n, ONE_DEPLOYMENT).await?;
    // Quota admission refuses everything while the controller has not counted yet.
    let quotas = ns.api::<ResourceQuota>();
    eventually(Duration::from_secs(30), || async {
        let quota = quotas.get("one-deployment").await?;
        anyhow::ensure!(
            quota.status.and_then(|s| s.hard).is_some(),
            "the quota is not counted yet"
        );
        Ok(())
    })
    .await?;
    let file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("{n}-two.yaml"));
    std::fs::create_dir_all(file.parent().unwrap_or(&file))?;
    std::fs::write(&file, TWO)?;
    let file = file.display().to_string();

    let refused = kubectl(&["infera", "deploy", "-f", &file, "-n", n])
        .await?
        .expect_code(1)?;
    anyhow::ensure!(
        refused.stderr.contains("InferaDeployment")
            && refused.stderr.contains("second")
            && refused.stderr.contains("exceeded quota: one-deployment"),
        "{}",
        refused.stderr
    );
    let written = ns
        .api::<InferaDeployment>()
        .list(&ListParams::default())
        .await?;
    anyhow::ensure!(
        written.items.is_empty(),
        "the first deployment was written: {:?}",
        written
            .items
            .iter()
            .map(|d| &d.metadata.name)
            .collect::<Vec<_>>()
    );
    anyhow::ensure!(refused.stdout.is_empty(), "{}", refused.stdout);

    // The same file within the quota goes through whole.
    kubectl(&["delete", "resourcequota", "one-deployment", "-n", n])
        .await?
        .expect_code(0)?;
    let done = kubectl(&["infera", "deploy", "-f", &file, "-n", n])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        done.stdout.contains("first created") && done.stdout.contains("second created"),
        "{}",
        done.stdout
    );
    ns.cleanup().await
}
