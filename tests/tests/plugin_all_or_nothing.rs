//! `kubectl infera deploy -f` is all or nothing: a file whose second deployment the API server
//! refuses (here a platform team's ValidatingAdmissionPolicy, which only the server knows) writes
//! neither, and the error names the refused object and the server's reason.
//!
//! Per-object dry runs cannot see aggregate limits: under a ResourceQuota of one InferaDeployment
//! both dry runs of a two-deployment file pass and the second write is refused (tried while
//! writing this test). The plugin does not pre-compute quotas; the operator's graph-wide quota
//! check is issue 10's item 2.

use std::time::Duration;

use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, apply_yaml, eventually, kube::api::ListParams, operator::install,
    plugin::kubectl,
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

/// A policy refusing InferaDeployments named `second` in namespace `NS`.
const POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-no-second}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [infera.amd.com]
      apiVersions: [v1alpha1]
      operations: [CREATE, UPDATE]
      resources: [inferadeployments]
  validations:
  - expression: "object.metadata.name != 'second'"
    message: "the platform team reserves the name second"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-no-second}
spec:
  policyName: NS-no-second
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: NS}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn deploy_writes_nothing_when_the_server_refuses_one_deployment_of_the_file()
-> anyhow::Result<()> {
    let admin = admin().await?;
    install(&admin).await?;
    let ns = TestNamespace::new(&admin, "all-or-nothing").await?;
    let n = ns.name();
    apply_yaml(&admin, &POLICY.replace("NS", n)).await?;
    // The policy is enforced once the API server has loaded it.
    let (api, dry_run) = infera_e2e::admission_dry_run(&admin, n);
    let second = infera_core::yaml::parse_deployments(TWO)?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("two deployments"))?;
    let second = serde_json::from_value(serde_json::to_value(second)?)?;
    eventually(Duration::from_secs(30), || async {
        anyhow::ensure!(
            api.create(&dry_run, &second).await.is_err(),
            "the policy is not enforced yet"
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
            && refused
                .stderr
                .contains("the platform team reserves the name second"),
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

    // Without the policy the same file goes through whole.
    for kind in [
        "validatingadmissionpolicybinding",
        "validatingadmissionpolicy",
    ] {
        kubectl(&["delete", kind, &format!("{n}-no-second")])
            .await?
            .expect_code(0)?;
    }
    eventually(Duration::from_secs(30), || async {
        api.create(&dry_run, &second).await?;
        anyhow::Ok(())
    })
    .await?;
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
