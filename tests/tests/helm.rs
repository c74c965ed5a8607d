//! The operator's Helm chart (deploy/helm/infera-operator, generated from the bundle `init`
//! applies) with Helm itself (helm.sh/helm/v4, built by release/tools.sh): it lints, it renders
//! exactly the bundle's objects with its default values, its values change what values.yaml says,
//! the API server accepts what it renders, and on tier 3 it installs, upgrades and uninstalls an
//! operator that reconciles, with `init` and `uninstall` leaving it to Helm.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, ensure};
use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::{
        api::apps::v1::Deployment,
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    },
    kube::Api,
    plugin::{doctor_check, kubectl},
    release::{VERSION, install_dir, krew_dir, release_tool, repo, run},
};
use serde_json::Value;

const CHART: &str = "deploy/helm/infera-operator";
const NAMESPACE: &str = "infera-system";

fn helm(args: &[&str]) -> anyhow::Result<String> {
    run(Command::new(release_tool("helm")?)
        .args(args)
        .current_dir(repo()))
}

/// The objects of a multi-document YAML stream, by `kind namespace/name`.
fn objects(text: &str) -> anyhow::Result<BTreeMap<String, Value>> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(text).context("parsing YAML")?;
    Ok(documents
        .into_iter()
        .filter(|d| !d.is_null())
        .map(|d| {
            let key = format!(
                "{} {}/{}",
                d["kind"].as_str().unwrap_or_default(),
                d["metadata"]["namespace"].as_str().unwrap_or_default(),
                d["metadata"]["name"].as_str().unwrap_or_default()
            );
            (key, d)
        })
        .collect())
}

/// `helm template` of the chart in the repository, into `namespace`, with `--set` values.
fn template(namespace: &str, set: &[&str]) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut args = vec![
        "template",
        "infera-operator",
        CHART,
        "-n",
        namespace,
        "--include-crds",
    ];
    for value in set {
        args.extend(["--set", value]);
    }
    objects(&helm(&args)?)
}

#[tokio::test]
async fn helm_chart_lints_and_renders_exactly_the_bundle_init_applies() -> anyhow::Result<()> {
    helm(&["lint", "--strict", "-n", NAMESPACE, CHART])?;
    let rendered = template(NAMESPACE, &[])?;
    let init = kubectl(&["infera", "init", "--dry-run=client", "-o", "yaml"])
        .await?
        .expect_code(0)?;
    let mut bundle = objects(&init.stdout)?;
    // Helm creates the release's namespace (--create-namespace); everything else is the chart's.
    ensure!(
        bundle.remove("Namespace /infera-system").is_some(),
        "no Namespace in the bundle"
    );
    ensure!(
        rendered.keys().eq(bundle.keys()),
        "the chart renders {:?}, the bundle has {:?}",
        rendered.keys(),
        bundle.keys()
    );
    for (key, object) in &bundle {
        ensure!(
            rendered[key] == *object,
            "{key} differs:\nchart:  {}\nbundle: {}",
            rendered[key],
            object
        );
    }
    Ok(())
}

#[test]
fn helm_chart_values_change_what_values_yaml_documents() -> anyhow::Result<()> {
    let digest = format!("sha256:{}", "a".repeat(64));
    let rendered = template(
        NAMESPACE,
        &[
            "replicas=1",
            "leaderElection=false",
            "logFormat=text",
            "watchNamespace=team-a",
            &format!("image.repository=registry.example/infera/operator,image.digest={digest}"),
            "nodeSelector.pool=system",
            "tolerations[0].key=dedicated,tolerations[0].operator=Exists",
            "resources.limits.memory=512Mi",
            "podMonitor.enabled=true",
        ],
    )?;
    let deployment = &rendered["Deployment infera-system/infera-operator"];
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    ensure!(deployment["spec"]["replicas"] == 1, "{deployment}");
    ensure!(
        container["image"] == format!("registry.example/infera/operator@{digest}"),
        "{container}"
    );
    ensure!(
        container["args"]
            == serde_json::json!([
                "--http-addr=0.0.0.0:8080",
                "--log-format=text",
                "--namespace=team-a"
            ]),
        "{container}"
    );
    ensure!(
        container["resources"]["limits"]["memory"] == "512Mi",
        "{container}"
    );
    ensure!(
        pod["nodeSelector"] == serde_json::json!({"pool": "system"}),
        "{pod}"
    );
    ensure!(
        pod["tolerations"] == serde_json::json!([{"key": "dedicated", "operator": "Exists"}]),
        "{pod}"
    );
    let monitor = &rendered["PodMonitor infera-system/infera-operator"];
    ensure!(
        monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] == "infera-operator",
        "{monitor}"
    );
    // Elsewhere than infera-system, the plugin would not find the operator: refused.
    let elsewhere = template("infera", &[]).expect_err("a release outside infera-system");
    ensure!(
        format!("{elsewhere:#}")
            .contains("install the infera-operator chart into the namespace infera-system"),
        "{elsewhere:#}"
    );
    Ok(())
}

/// What the chart renders, moved into a fresh namespace and applied as a server-side dry run
/// (`--force-conflicts`: other tests' `init` owns the CRD with the same values): the API server's
/// schema and admission accept every object.
#[tokio::test]
async fn helm_chart_renders_what_the_api_server_accepts() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "helm-dry").await?;
    let rendered = helm(&[
        "template",
        "infera-operator",
        CHART,
        "-n",
        NAMESPACE,
        "--include-crds",
    ])?;
    let count = objects(&rendered)?.len();
    let file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("{}.yaml", ns.name()));
    std::fs::create_dir_all(file.parent().unwrap_or(&file))?;
    std::fs::write(&file, rendered.replace(NAMESPACE, ns.name()))?;
    let applied = kubectl(&[
        "apply",
        "--server-side",
        "--dry-run=server",
        "--force-conflicts",
        "--field-manager=helm-test",
        "-f",
        &file.display().to_string(),
    ])
    .await?
    .expect_code(0)?;
    let accepted = applied
        .stdout
        .lines()
        .filter(|l| l.ends_with("(server dry run)"))
        .count();
    ensure!(
        accepted == count,
        "{count} objects rendered:\n{}",
        applied.stdout
    );
    ns.cleanup().await
}

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
/// reconciles; `init` and `uninstall` refuse to touch it and say which Helm command does; doctor
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
