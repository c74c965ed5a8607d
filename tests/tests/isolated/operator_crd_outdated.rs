//! An InferaDeployment CRD older than the operator — the state `helm upgrade` leaves, since Helm
//! never upgrades a chart's `crds/` — on a tier-1 control plane of the test's own: the API server
//! refuses every status the operator writes, and the operator says why where a user looks (the
//! deployment's Event, the log, `/readyz`) and how to fix it; once the CRD is upgraded the status
//! is written and `/readyz` is ready again.

use std::time::Duration;

use anyhow::Context as _;
use infera_core::InferaDeployment;
use infera_e2e::{
    apply_yaml,
    cluster::PrivateCluster,
    eventually, fleet,
    k8s_openapi::api::core::v1::{Event, Namespace},
    kube::{
        Api,
        api::{ListParams, Patch, PatchParams, PostParams},
    },
    operator::{Operator, install_on},
};

const CRD: &str = include_str!("../../../crds/inferadeployments.infera.amd.com.yaml");

/// The CRD without `status.observedGeneration`, which every status the operator writes names.
fn outdated_crd() -> anyhow::Result<String> {
    let mut crd: serde_json::Value = serde_saphyr::from_str(CRD)?;
    let status = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
        ["properties"];
    status
        .as_object_mut()
        .and_then(|properties| properties.remove("observedGeneration"))
        .context("the CRD's status declares observedGeneration")?;
    crd["metadata"]["annotations"]["infera.amd.com/version"] = "0.0.1".into();
    Ok(serde_json::to_string(&crd)?)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outdated_crd_is_named_with_its_fix_until_it_is_upgraded() -> anyhow::Result<()> {
    let cluster = PrivateCluster::up(1)?;
    let admin = cluster.admin().await?;
    let identity = install_on(&cluster.kubeconfig, &admin).await?;
    apply_yaml(&admin, &outdated_crd()?).await?;
    let (ns, elsewhere) = ("outdated", "probe");
    for name in [ns, elsewhere] {
        let namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": name}}))?;
        Api::<Namespace>::all(admin.clone())
            .create(&PostParams::default(), &namespace)
            .await?;
    }
    // The fault: the API server refuses a status naming the field, once it serves the new schema
    // (probed on a deployment in a namespace the operator does not watch).
    fleet::create(&admin, elsewhere, &["probe".to_string()]).await?;
    let probes = Api::<InferaDeployment>::namespaced(admin.clone(), elsewhere);
    eventually(Duration::from_secs(30), async || {
        let probe = Patch::Apply(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "status": {"observedGeneration": 1},
        }));
        let params = PatchParams::apply("infera-e2e-probe").dry_run();
        match probes.patch_status("probe", &params, &probe).await {
            Err(error) if error.to_string().contains("field not declared in schema") => Ok(()),
            other => anyhow::bail!("the outdated CRD accepted the status: {other:?}"),
        }
    })
    .await?;
    // Started before its deployment exists, while it can be ready: `start_in` waits for that.
    let mut operator = Operator::start_in(&identity, ns).await?;
    fleet::create(&admin, ns, &["calm".to_string()]).await?;
    let ideps = Api::<InferaDeployment>::namespaced(admin.clone(), ns);

    let expected = [
        "the InferaDeployment CRD is older than the operator",
        "does not declare .status.observedGeneration",
        "`kubectl infera init` with that release's plugin",
    ];
    let events = Api::<Event>::namespaced(admin.clone(), ns);
    let said = eventually(Duration::from_secs(60), async || {
        operator.ensure_running()?;
        let (code, why) = operator.readiness().await?;
        anyhow::ensure!(code == 503, "/readyz answered {code}: {why}");
        for part in expected {
            anyhow::ensure!(why.contains(part), "{part:?} not in /readyz's {why:?}");
        }
        let listed = events
            .list(&ListParams::default().fields("involvedObject.name=calm"))
            .await?;
        let event = listed
            .items
            .iter()
            .filter_map(|e| e.message.as_deref())
            .find(|m| m.contains(expected[0]))
            .context("no Event says the CRD is older than the operator")?;
        Ok(event.to_string())
    })
    .await?;
    for part in expected.iter().chain(&["helm show crds"]) {
        anyhow::ensure!(said.contains(part), "{part:?} not in the Event {said:?}");
    }
    let log = std::fs::read_to_string(&operator.log)?;
    anyhow::ensure!(
        log.contains(expected[0]),
        "the operator's log does not say it: {}",
        operator.log.display()
    );
    anyhow::ensure!(
        ideps.get("calm").await?.status.is_none(),
        "a status was written"
    );

    // The fix: the current CRD. The next attempt (the reconcile backs off) writes the status.
    apply_yaml(&admin, CRD).await?;
    eventually(Duration::from_secs(90), async || {
        operator.ensure_running()?;
        let idep = ideps.get("calm").await?;
        let observed = idep.status.as_ref().and_then(|s| s.observed_generation);
        anyhow::ensure!(
            observed == idep.metadata.generation,
            "status observedGeneration {observed:?}"
        );
        let (code, why) = operator.readiness().await?;
        anyhow::ensure!(code == 200, "/readyz answered {code}: {why}");
        Ok(())
    })
    .await?;
    Ok(())
}
