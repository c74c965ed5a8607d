//! The operator writes a graph whole or not at all.
//!
//! * A ResourceQuota too small for the whole graph: per-object admission would admit every
//!   Deployment (pods are charged only when their ReplicaSets create them) and start prefill pods
//!   without their decode; the operator's graph-wide quota check creates nothing, says which quota
//!   and resource fall short, and creates the whole graph as soon as the quota is raised.
//! * A change one child of which the API server refuses (a platform team's
//!   ValidatingAdmissionPolicy, which only the server knows): the strict dry run sees it, so no
//!   child of the change is written — the running graph stays as it was — and the refusal is
//!   reported with the server's message.

use std::time::Duration;

use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, apply_yaml, apply_yaml_in, eventually,
    k8s_openapi::api::{apps::v1::Deployment, core::v1::ResourceQuota},
    kube::{
        Api,
        api::{ListParams, Patch, PatchParams, PostParams},
    },
    operator::{Operator, install},
    plugin::kubectl,
};

const TIMEOUT: Duration = Duration::from_secs(60);

/// One prefill and two decode pods of one GPU each: three GPUs.
const PD: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: pd}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    prefill: {componentType: worker, role: prefill, replicas: 1, resources: {gpu: 1}}
    decode: {componentType: worker, role: decode, replicas: 2, resources: {gpu: 1}}
"#;

/// The Ready condition's reason and message.
async fn ready(ideps: &Api<InferaDeployment>) -> anyhow::Result<(String, String)> {
    let idep = ideps.get("pd").await?;
    let ready = idep
        .status
        .iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == "Ready")
        .ok_or_else(|| anyhow::anyhow!("no Ready condition yet"))?;
    Ok((ready.reason.clone(), ready.message.clone()))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graph_over_its_quota_creates_nothing_until_the_quota_is_raised() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "quota-whole").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    let quota = |gpus: u32| {
        format!(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: gpus}}\nspec: {{hard: {{requests.amd.com/gpu: \"{gpus}\"}}}}\n"
        )
    };
    apply_yaml_in(&admin, n, &quota(2)).await?;
    // The quota controller fills in the status the check reads.
    let quotas: Api<ResourceQuota> = ns.api();
    eventually(TIMEOUT, || async {
        let status = quotas.get("gpus").await?.status.unwrap_or_default();
        anyhow::ensure!(
            status.hard.is_some() && status.used.is_some(),
            "quota status not filled yet"
        );
        Ok(())
    })
    .await?;
    apply_yaml_in(&admin, n, PD).await?;

    let ideps: Api<InferaDeployment> = ns.api();
    let (reason, message) = eventually(TIMEOUT, || async {
        let (reason, message) = ready(&ideps).await?;
        anyhow::ensure!(reason == "ApplyRejected", "{reason}: {message}");
        Ok((reason, message))
    })
    .await?;
    anyhow::ensure!(
        message.contains("ResourceQuota gpus")
            && message.contains("requests.amd.com/gpu")
            && message.contains("needs 3")
            && message.contains("2 is left"),
        "{reason}: {message}"
    );
    let deployments: Api<Deployment> = ns.api();
    let created = deployments.list(&ListParams::default()).await?.items;
    anyhow::ensure!(
        created.is_empty(),
        "a half graph was created: {:?}",
        created.iter().map(|d| &d.metadata.name).collect::<Vec<_>>()
    );

    // Raised: the quota's watch brings the refused graph back at once, and it is created whole.
    apply_yaml_in(&admin, n, &quota(3)).await?;
    eventually(TIMEOUT, || async {
        let names: Vec<_> = deployments
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter_map(|d| d.metadata.name)
            .collect();
        anyhow::ensure!(
            ["pd-decode", "pd-prefill", "pd-server"]
                .iter()
                .all(|want| names.iter().any(|n| n == want)),
            "deployments so far: {names:?}"
        );
        Ok(())
    })
    .await?;
    ns.cleanup().await
}

/// A policy refusing Deployments of namespace `NS` that would run more than two decode pods.
const POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-two-decodes}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: "!object.metadata.name.endsWith('-decode') || object.spec.replicas <= 2"
    message: "the platform team allows two decode pods"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-two-decodes}
spec:
  policyName: NS-two-decodes
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: NS}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_change_the_server_refuses_for_one_child_writes_no_child() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "refused-whole").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    apply_yaml(&admin, &POLICY.replace("NS", n)).await?;
    apply_yaml_in(&admin, n, PD).await?;
    let deployments: Api<Deployment> = ns.api();
    let replicas = async |name: &str| -> anyhow::Result<Option<i32>> {
        Ok(deployments.get(name).await?.spec.and_then(|s| s.replicas))
    };
    eventually(TIMEOUT, async || {
        anyhow::ensure!(
            replicas("pd-decode").await? == Some(2),
            "decode not created yet"
        );
        anyhow::ensure!(
            replicas("pd-prefill").await? == Some(1),
            "prefill not created yet"
        );
        Ok(())
    })
    .await?;

    // The policy is enforced once the API server has loaded it: until a dry run of a third decode
    // pod is refused, a change could pass the operator's dry run and meet the policy on the write.
    let mut probe = deployments.get("pd-decode").await?;
    probe.metadata = Default::default();
    probe.metadata.name = Some("probe-decode".into());
    if let Some(spec) = probe.spec.as_mut() {
        spec.replicas = Some(3);
    }
    let dry_run = PostParams {
        dry_run: true,
        ..Default::default()
    };
    eventually(TIMEOUT, || async {
        anyhow::ensure!(
            deployments.create(&dry_run, &probe).await.is_err(),
            "the policy is not enforced yet"
        );
        Ok(())
    })
    .await?;

    // Both pools grow; the policy refuses the decode Deployment's new size.
    let ideps: Api<InferaDeployment> = ns.api();
    let grow = serde_json::json!({"spec": {"services": {
        "prefill": {"replicas": 2}, "decode": {"replicas": 4},
    }}});
    ideps
        .patch("pd", &PatchParams::default(), &Patch::Merge(&grow))
        .await?;
    let message = eventually(TIMEOUT, || async {
        let (reason, message) = ready(&ideps).await?;
        anyhow::ensure!(reason == "ApplyRejected", "{reason}: {message}");
        Ok(message)
    })
    .await?;
    anyhow::ensure!(
        message.contains("Deployment pd-decode")
            && message.contains("the platform team allows two decode pods"),
        "{message}"
    );
    anyhow::ensure!(
        replicas("pd-prefill").await? == Some(1),
        "prefill was grown without its decode"
    );
    anyhow::ensure!(replicas("pd-decode").await? == Some(2));
    for kind in [
        "validatingadmissionpolicybinding",
        "validatingadmissionpolicy",
    ] {
        kubectl(&["delete", kind, &format!("{n}-two-decodes")])
            .await?
            .expect_code(0)?;
    }
    ns.cleanup().await
}
