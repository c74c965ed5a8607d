//! The operator's Helm chart (deploy/helm/infera-operator, generated from the bundle `init`
//! applies) with Helm itself (helm.sh/helm/v4, built by release/tools.sh): it lints, it renders
//! exactly the bundle's objects with its default values, its values change what values.yaml says,
//! and the API server accepts what it renders (on tier 3: `tier3::helm`).

use std::collections::BTreeMap;

use anyhow::{Context as _, ensure};
use infera_e2e::{TestNamespace, admin, plugin::kubectl, release::helm};
use serde_json::Value;

const CHART: &str = "deploy/helm/infera-operator";
const NAMESPACE: &str = "infera-system";

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
