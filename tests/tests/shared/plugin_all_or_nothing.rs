//! `kubectl infera deploy -f` is all or nothing: a file whose second deployment the API server
//! refuses (here a platform team's ValidatingAdmissionPolicy, which only the server knows) writes
//! neither, and the error names the refused object and the server's reason.
//!
//! Per-object dry runs cannot see aggregate limits: under a ResourceQuota of one InferaDeployment
//! both dry runs of a two-deployment file pass and the second write is refused (tried while
//! writing this test). The plugin does not pre-compute quotas; the operator checks each graph
//! against its namespace's quotas as a whole (`operator_all_or_nothing.rs`).
//!
//! The dry run is strict: a field the cluster's CRD does not know is refused, not dropped.

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
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    worker: {componentType: worker, resources: {gpu: 1}}
---
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: second}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
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

/// Version skew: a cluster whose CRD is older than the plugin (here without `spec.podTemplate`).
/// The dry run refuses the field the server does not know, names it, and nothing is written.
#[tokio::test(flavor = "multi_thread")]
async fn deploy_refuses_a_field_the_cluster_crd_does_not_know_and_writes_nothing()
-> anyhow::Result<()> {
    let cluster = infera_e2e::cluster::PrivateCluster::up(1)?;
    let admin = cluster.admin().await?;
    let mut crd: serde_json::Value = serde_saphyr::from_str(include_str!(
        "../../../crds/inferadeployments.infera.amd.com.yaml"
    ))?;
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    if let Some(properties) = spec["properties"].as_object_mut() {
        properties.remove("podTemplate");
    }
    // The rules that read the field go with it, as they would in a CRD that never had it.
    if let Some(rules) = spec["x-kubernetes-validations"].as_array_mut() {
        rules.retain(|rule| {
            !rule["rule"]
                .as_str()
                .unwrap_or_default()
                .contains("podTemplate")
        });
    }
    apply_yaml(&admin, &serde_json::to_string(&crd)?).await?;
    let ideps: infera_e2e::kube::Api<InferaDeployment> =
        infera_e2e::kube::Api::namespaced(admin.clone(), "default");
    let all = ListParams::default();
    eventually(Duration::from_secs(30), || ideps.list(&all)).await?;

    let file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("skew-{}.yaml", infera_e2e::unique_suffix()));
    std::fs::create_dir_all(file.parent().unwrap_or(&file))?;
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pod-template.yaml"),
        &file,
    )?;
    let kubeconfig = cluster.kubeconfig.display().to_string();
    let env = [("KUBECONFIG", kubeconfig.as_str())];
    let file = file.display().to_string();
    let args = [
        "infera",
        "deploy",
        "-f",
        &file,
        "-n",
        "default",
        "--context",
        "admin",
    ];
    let refused = infera_e2e::plugin::kubectl_env(&args, &env)
        .await?
        .expect_code(1)?;
    // Server-side apply refuses a field its schema lacks (`field not declared in schema`), as
    // strict validation refuses an unknown one.
    anyhow::ensure!(
        refused.stderr.contains(".spec.podTemplate")
            && refused.stderr.contains("field not declared in schema"),
        "{}",
        refused.stderr
    );
    let written = ideps.list(&ListParams::default()).await?;
    anyhow::ensure!(written.items.is_empty(), "something was written");
    Ok(())
}
