//! The release's Helm chart on tier 3: it installs, upgrades and uninstalls an operator that
//! reconciles, with `init` and `uninstall` leaving it to Helm, and its CRD upgrades as advised.

use std::time::Duration;

use anyhow::ensure;
use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::{
        api::apps::v1::Deployment,
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    },
    kube::Api,
    plugin::{doctor_check, kubectl},
    release::{VERSION, helm, install_dir, krew_dir},
};

const NAMESPACE: &str = "infera-system";

/// A minimal deployment for the operator to reconcile.
const SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: helm}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server:
      componentType: server
      args: [--router-policy, round-robin, --router-tokenizer-path, /opt/infera/tokenizer]
    worker:
      componentType: worker
      resources: {gpu: 1}
      args: [--model-path, Qwen/Qwen3-0.6B]
"#;

/// Waits until the operator has reconciled generation `generation` of `ns/helm`.
async fn reconciled(ns: &TestNamespace, generation: i64) -> anyhow::Result<()> {
    eventually(Duration::from_secs(120), || async {
        let run = kubectl(&[
            "get",
            "idep",
            "helm",
            "-n",
            ns.name(),
            "-o",
            "jsonpath={.status.observedGeneration}",
        ])
        .await?
        .expect_code(0)?;
        ensure!(
            run.stdout.trim() == generation.to_string(),
            "observedGeneration {:?}, want {generation}",
            run.stdout
        );
        Ok(())
    })
    .await
}

/// On tier 3 (run alone, after the other tier-3 tests: it replaces the operator `init` installed):
/// the release's chart installs an operator that runs from the released image by digest and
/// reconciles; the advised upgrade of its CRD applies over Helm's; `init` and `uninstall` refuse to touch it and say which Helm command does; doctor
/// names the release; `helm upgrade` changes it and it still reconciles; `helm uninstall` removes
/// it and keeps the CRD and the InferaDeployments; the release's single-file manifest, applied with
/// `kubectl apply --server-side`, installs the same operator again.
#[tokio::test]
async fn tier3_helm_installs_upgrades_and_uninstalls_the_operator() -> anyhow::Result<()> {
    let chart = install_dir()?.join(format!("infera-operator-{VERSION}.tgz"));
    let chart = chart.display().to_string();
    let manifest = install_dir()?.join(format!("infera-operator-{VERSION}.yaml"));
    let pinned = std::fs::read_to_string(krew_dir()?.join("operator-image.txt"))?;
    // A cluster without Infera: what init installed for the other tests goes, CRD and all.
    kubectl(&["infera", "uninstall", "--force", "--wait"])
        .await?
        .expect_code(0)?;

    helm(&[
        "install",
        "infera-operator",
        &chart,
        "-n",
        NAMESPACE,
        "--create-namespace",
        "--wait",
        "--timeout",
        "5m",
    ])?;
    let admin = admin().await?;
    let deployments: Api<Deployment> = Api::namespaced(admin.clone(), NAMESPACE);
    let operator = deployments.get("infera-operator").await?;
    let spec = operator.spec.clone().unwrap_or_default();
    let image = spec.template.spec.clone().unwrap_or_default().containers[0]
        .image
        .clone()
        .unwrap_or_default();
    ensure!(
        image == pinned.trim(),
        "the chart runs {image}, the release pins {pinned}"
    );

    let ns = TestNamespace::new(&admin, "helm").await?;
    let path = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("{}.yaml", ns.name()));
    std::fs::write(&path, SPEC)?;
    kubectl(&["apply", "-n", ns.name(), "-f", &path.display().to_string()])
        .await?
        .expect_code(0)?;
    reconciled(&ns, 1).await?;

    // The CRD's upgrade that the operator and doctor advise for a Helm install (Helm never
    // upgrades `crds/`), on the CRD this Helm installed server-side as `helm`: a newer release's
    // CRD (this one's, another version annotation) applies, and stays Helm's.
    let crds = helm(&["show", "crds", &chart])?;
    let stamp = format!("infera.amd.com/version: \"{VERSION}\"");
    ensure!(crds.contains(&stamp), "no {stamp} in the chart's CRD");
    let crds_file = |name: &str, text: &str| -> anyhow::Result<String> {
        let path = infera_e2e::target_dir().join("e2e-logs").join(name);
        std::fs::write(&path, text)?;
        Ok(path.display().to_string())
    };
    let newer = crds_file(
        "helm-crd-newer.yaml",
        &crds.replace(&stamp, "infera.amd.com/version: \"99.0.0\""),
    )?;
    let upgrade = |file: String| async move {
        kubectl(&[
            "apply",
            "--server-side",
            "--field-manager=helm",
            "--force-conflicts",
            "-f",
            &file,
        ])
        .await?
        .expect_code(0)
    };
    upgrade(newer).await?;
    let crd = Api::<CustomResourceDefinition>::all(admin.clone())
        .get("inferadeployments.infera.amd.com")
        .await?;
    let managers: Vec<String> = crd
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|entry| entry.operation.as_deref() == Some("Apply"))
        .filter_map(|entry| entry.manager.clone())
        .collect();
    ensure!(
        crd.metadata
            .annotations
            .unwrap_or_default()
            .get("infera.amd.com/version")
            == Some(&"99.0.0".to_string())
            && managers == ["helm"],
        "the CRD after the advised upgrade: appliers {managers:?}"
    );
    upgrade(crds_file("helm-crd.yaml", &crds)?).await?;

    // Left to Helm: init and uninstall refuse, saying which Helm command to run.
    let init = kubectl(&["infera", "init"]).await?;
    ensure!(
        init.code == 4 && init.stderr.contains("helm upgrade infera-operator"),
        "init: {} {}",
        init.code,
        init.stderr
    );
    let uninstall = kubectl(&["infera", "uninstall"]).await?;
    ensure!(
        uninstall.code == 4
            && uninstall
                .stderr
                .contains("helm uninstall infera-operator -n infera-system"),
        "uninstall: {} {}",
        uninstall.code,
        uninstall.stderr
    );
    let check = doctor_check(&[], "INF103").await?;
    ensure!(
        check["message"]
            .as_str()
            .is_some_and(|m| m.contains("installed by the Helm release infera-operator")),
        "{check}"
    );

    helm(&[
        "upgrade",
        "infera-operator",
        &chart,
        "-n",
        NAMESPACE,
        "--reuse-values",
        "--set",
        "replicas=1",
        "--wait",
        "--timeout",
        "5m",
    ])?;
    let upgraded = deployments.get("infera-operator").await?;
    ensure!(
        upgraded.spec.as_ref().and_then(|s| s.replicas) == Some(1),
        "{:?}",
        upgraded.spec
    );
    kubectl(&[
        "patch",
        "idep",
        "helm",
        "-n",
        ns.name(),
        "--type",
        "merge",
        "-p",
        r#"{"spec": {"services": {"worker": {"env": [{"name": "AFTER_UPGRADE", "value": "1"}]}}}}"#,
    ])
    .await?
    .expect_code(0)?;
    reconciled(&ns, 2).await?;

    helm(&["uninstall", "infera-operator", "-n", NAMESPACE, "--wait"])?;
    ensure!(
        deployments.get_opt("infera-operator").await?.is_none(),
        "the operator is still there"
    );
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    ensure!(
        crds.get_opt("inferadeployments.infera.amd.com")
            .await?
            .is_some(),
        "helm uninstall deleted the CRD"
    );
    kubectl(&["get", "idep", "helm", "-n", ns.name()])
        .await?
        .expect_code(0)?;

    // The single-file manifest installs the same operator.
    kubectl(&[
        "apply",
        "--server-side",
        "-f",
        &manifest.display().to_string(),
    ])
    .await?
    .expect_code(0)?;
    kubectl(&[
        "rollout",
        "status",
        "-n",
        NAMESPACE,
        "deployment/infera-operator",
        "--timeout=5m",
    ])
    .await?
    .expect_code(0)?;
    let applied = deployments.get("infera-operator").await?;
    ensure!(
        applied.spec.as_ref().map(|s| &s.template) == Some(&spec.template),
        "the manifest's pod template differs from the chart's"
    );
    kubectl(&[
        "patch", "idep", "helm", "-n", ns.name(), "--type", "merge", "-p",
        r#"{"spec": {"services": {"worker": {"env": [{"name": "AFTER_MANIFEST", "value": "1"}]}}}}"#,
    ])
    .await?
    .expect_code(0)?;
    reconciled(&ns, 3).await?;
    ns.cleanup().await
}
