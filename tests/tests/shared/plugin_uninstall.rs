//! `uninstall` removes exactly what `init` made, refuses while InferaDeployments exist unless
//! `--force`, and `init` afterwards restores the install (so later tests find it).

use std::time::Duration;

use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::{
        api::core::v1::Namespace,
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    },
    kube::{
        Api,
        api::{Patch, PatchParams},
    },
    plugin::kubectl,
};

/// A newer release installed by someone else: init refuses to downgrade, then reports the field
/// the other manager owns instead of forcing it, and only takes it over when told to.
async fn skew_guard_and_conflicts(crds: &Api<CustomResourceDefinition>) -> anyhow::Result<()> {
    let newer = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "inferadeployments.infera.amd.com", "annotations": {"infera.amd.com/version": "9.9.9"}}
    });
    crds.patch(
        "inferadeployments.infera.amd.com",
        &PatchParams::apply("e2e-upgrader").force(),
        &Patch::Apply(newer),
    )
    .await?;
    let refused = kubectl(&["infera", "init"]).await?.expect_code(4)?;
    anyhow::ensure!(
        refused
            .stderr
            .contains("version 9.9.9, newer than this plugin")
            && refused.stderr.contains("--allow-downgrade"),
        "{}",
        refused.stderr
    );
    let conflict = kubectl(&["infera", "init", "--allow-downgrade"])
        .await?
        .expect_code(4)?;
    anyhow::ensure!(
        conflict.stderr.contains("owned by \"e2e-upgrader\"")
            && conflict.stderr.contains("infera.amd.com/version")
            && conflict.stderr.contains("nothing was forced"),
        "{}",
        conflict.stderr
    );
    let forced = kubectl(&["infera", "init", "--allow-downgrade", "--force-conflicts"])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        forced
            .stdout
            .contains("inferadeployments.infera.amd.com configured"),
        "{}",
        forced.stdout
    );
    Ok(())
}

#[tokio::test]
async fn uninstall_refuses_while_deployments_exist_then_removes_the_bundle() -> anyhow::Result<()> {
    let admin = admin().await?;
    kubectl(&["infera", "init", "--wait", "--timeout", "2m"])
        .await?
        .expect_code(0)?;
    let ns = TestNamespace::new(&admin, "plugin-uninstall").await?;
    let pd = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml");
    kubectl(&["infera", "deploy", "-f", pd, "-n", ns.name()])
        .await?
        .expect_code(0)?;

    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    skew_guard_and_conflicts(&crds).await?;

    let refused = kubectl(&["infera", "uninstall"]).await?.expect_code(4)?;
    anyhow::ensure!(
        refused.stderr.contains(&format!("{}/demo", ns.name()))
            && refused.stderr.contains("--force"),
        "{}",
        refused.stderr
    );
    let dry = kubectl(&["infera", "uninstall", "--force", "--dry-run=server"])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        dry.stdout.contains("deleted (server dry run)"),
        "{}",
        dry.stdout
    );
    anyhow::ensure!(
        crds.get_opt("inferadeployments.infera.amd.com")
            .await?
            .is_some(),
        "a dry run deleted the CRD"
    );

    let gone = kubectl(&[
        "infera",
        "uninstall",
        "--force",
        "--wait",
        "--timeout",
        "3m",
    ])
    .await?
    .expect_code(0)?;
    for object in [
        "deployment.apps/infera-operator",
        "namespace/infera-system",
        "clusterrole.rbac.authorization.k8s.io/infera-system:infera-operator",
        "customresourcedefinition.apiextensions.k8s.io/inferadeployments.infera.amd.com",
    ] {
        anyhow::ensure!(
            gone.stdout.contains(&format!("{object} deleted")),
            "{object}:\n{}",
            gone.stdout
        );
    }
    anyhow::ensure!(
        crds.get_opt("inferadeployments.infera.amd.com")
            .await?
            .is_none(),
        "CRD still there"
    );
    anyhow::ensure!(
        Api::<Namespace>::all(admin.clone())
            .get_opt("infera-system")
            .await?
            .is_none(),
        "namespace still there"
    );
    // A second uninstall finds nothing and succeeds.
    kubectl(&["infera", "uninstall"]).await?.expect_code(0)?;

    // Restore the install for whatever runs next.
    eventually(Duration::from_secs(60), || async {
        kubectl(&["infera", "init", "--wait", "--timeout", "2m"])
            .await?
            .expect_code(0)
    })
    .await?;
    ns.cleanup().await
}
