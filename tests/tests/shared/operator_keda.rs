//! `autoscaling.provider: keda` on the tier-2 cluster with KEDA's real ScaledObject CRD (v2.20.2,
//! vendored from kedacore/keda `config/crd/bases/keda.sh_scaledobjects.yaml` in
//! `tests/fixtures/keda/`). KEDA's controller cannot run here (it ships as container images, and
//! the cluster runs none), so what is tested is what the operator owns: without the CRD the
//! deployment reports MissingDependency naming it and the fix, and `doctor --for` fails INF221;
//! once the CRD is installed the operator, with exactly the shipped RBAC, creates ScaledObjects
//! the real API server accepts, targeting the pool's Deployment and LeaderWorkerSet, and leaves
//! the workloads' replicas to the scale subresource; `kubectl infera scale` refuses the pool,
//! naming the ScaledObject and the HorizontalPodAutoscaler KEDA would create for it.
//!
//! In a test binary of its own: it installs and removes a cluster-wide CRD.

use std::time::Duration;

use anyhow::Context as _;
use infera_core::{InferaDeployment, State};
use infera_e2e::{
    TestNamespace, admin, apply_yaml, apply_yaml_in, eventually,
    kube::{
        Api,
        api::{DeleteParams, DynamicObject, Patch, PatchParams},
    },
    operator::{Operator, install},
    plugin::{doctor_check, kubectl},
    target_dir,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

const KEDA_CRD: &str = "scaledobjects.keda.sh";
const KEDA_CRD_YAML: &str = include_str!("../../fixtures/keda/keda.sh_scaledobjects.yaml");
const TIMEOUT: Duration = Duration::from_secs(120);

/// A deployment whose single-node pool `worker` and multi-node pool `wide` (a LeaderWorkerSet of
/// 2-pod groups) autoscale with KEDA on a Prometheus query.
fn spec(namespace: &str) -> serde_json::Value {
    let autoscaling = json!({
        "provider": "keda", "minReplicas": 2, "maxReplicas": 5,
        "triggers": [{"type": "prometheus", "name": "queue", "metadata": {
            "serverAddress": "http://prometheus.monitoring:9090",
            "query": "sum(sglang_num_queue_reqs)", "threshold": "4",
        }}],
    });
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "kd", "namespace": namespace},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
            "worker": {
                "componentType": "worker", "autoscaling": autoscaling,
                "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"],
            },
            "wide": {
                "componentType": "worker", "autoscaling": autoscaling, "numberOfNodes": 2,
                "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "2"],
            },
        }},
    })
}

/// Deletes the KEDA CRD, if installed, and waits until it is gone.
async fn remove_crd(crds: &Api<CustomResourceDefinition>) -> anyhow::Result<()> {
    if crds.get_opt(KEDA_CRD).await?.is_some() {
        crds.delete(KEDA_CRD, &DeleteParams::default()).await?;
    }
    eventually(Duration::from_secs(60), || async {
        anyhow::ensure!(
            crds.get_opt(KEDA_CRD).await?.is_none(),
            "CRD still terminating"
        );
        anyhow::Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_keda_pool_is_missing_its_dependency_until_the_crd_then_gets_scaled_objects()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-keda").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    remove_crd(&crds).await?;

    let result = async {
        let mut operator = Operator::start_in(&identity, n).await?;
        let spec = spec(n);
        let dir = target_dir().join("e2e-logs");
        std::fs::create_dir_all(&dir)?;
        let file = dir.join(format!("operator-keda-{n}.json"));
        std::fs::write(&file, serde_json::to_string_pretty(&spec)?)?;
        let file = file.display().to_string();

        // Without the CRD: doctor says so before anything is deployed.
        let check = doctor_check(&["--for", &file], "INF221").await?;
        anyhow::ensure!(check["severity"] == "fail", "{check}");
        anyhow::ensure!(
            check["message"] == format!("the KEDA CRD ({KEDA_CRD}) is not installed"),
            "{check}"
        );

        // ... and the operator reports it, naming the CRD and the fix, with the rest deployed.
        apply_yaml_in(&admin, n, &spec.to_string()).await?;
        let ideps: Api<InferaDeployment> = ns.api();
        let idep = eventually(TIMEOUT, || async {
            let idep = ideps.get("kd").await?;
            let status = idep.status.clone().unwrap_or_default();
            let reason = status.conditions.first().map(|c| c.reason.clone());
            anyhow::ensure!(
                status.state == Some(State::Degraded)
                    && reason.as_deref() == Some("MissingDependency"),
                "state {:?}, conditions {:?}",
                status.state,
                status.conditions
            );
            anyhow::Ok(idep)
        })
        .await?;
        let message = idep
            .status
            .as_ref()
            .and_then(|s| s.conditions.first())
            .map(|c| c.message.clone())
            .unwrap_or_default();
        for expected in [
            "needs the KEDA CRD (scaledobjects.keda.sh) for autoscaling.provider: keda",
            "install KEDA",
            "worker",
            "wide",
        ] {
            anyhow::ensure!(message.contains(expected), "{expected:?} not in {message}");
        }
        let workload = |kind: infera_core::ChildKind| {
            Api::<DynamicObject>::namespaced_with(admin.clone(), n, &kind.api_resource())
        };
        let deployments = workload(infera_core::ChildKind::Deployment);
        let sets = workload(infera_core::ChildKind::LeaderWorkerSet);
        for (api, name) in [(&deployments, "kd-worker"), (&sets, "kd-wide")] {
            anyhow::ensure!(
                api.get_opt(name).await?.is_some(),
                "{name} is deployed despite the missing CRD"
            );
        }

        // KEDA's CRD installed: ScaledObjects the API server accepts, on the pools' workloads.
        apply_yaml(&admin, KEDA_CRD_YAML).await?;
        let scaled = workload(infera_core::ChildKind::ScaledObject);
        eventually(TIMEOUT, || async {
            for (name, api_version, kind) in [
                ("kd-worker", "apps/v1", "Deployment"),
                ("kd-wide", "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
            ] {
                let object = scaled
                    .get_opt(name)
                    .await?
                    .with_context(|| format!("no ScaledObject {name} yet"))?;
                let spec = &object.data["spec"];
                anyhow::ensure!(
                    spec["scaleTargetRef"]
                        == json!({"apiVersion": api_version, "kind": kind, "name": name}),
                    "{name}: {spec}"
                );
                anyhow::ensure!(
                    (&spec["minReplicaCount"], &spec["maxReplicaCount"]) == (&json!(2), &json!(5)),
                    "{name}: {spec}"
                );
                anyhow::ensure!(
                    spec["triggers"][0]["type"] == "prometheus"
                        && spec["triggers"][0]["metadata"]["threshold"] == "4",
                    "{name}: {spec}"
                );
            }
            let state = ideps.get("kd").await?.status.and_then(|s| s.state);
            anyhow::ensure!(state == Some(State::Ready), "state {state:?}");
            anyhow::Ok(())
        })
        .await?;
        let check = doctor_check(&["--for", &file], "INF221").await?;
        anyhow::ensure!(check["severity"] == "pass", "{check}");

        // Handed over at minReplicaCount, and a scale through the subresource (as KEDA's HPA or
        // `kubectl scale` does) is not undone.
        let scale = PatchParams {
            field_manager: Some("kubectl-scale".into()),
            ..Default::default()
        };
        for (api, name) in [(&deployments, "kd-worker"), (&sets, "kd-wide")] {
            let live = api.get(name).await?;
            anyhow::ensure!(live.data["spec"]["replicas"] == 2, "{name}: {:?}", live.data["spec"]["replicas"]);
            api.patch_subresource("scale", name, &scale, &Patch::Merge(json!({"spec": {"replicas": 3}})))
                .await?;
        }
        eventually(TIMEOUT, || async {
            let status = ideps.get("kd").await?.status.unwrap_or_default();
            let desired = |pool: &str| status.services.get(pool).map(|s| s.desired_replicas);
            anyhow::ensure!(
                desired("worker") == Some(3) && desired("wide") == Some(3),
                "services {:?}",
                status.services
            );
            anyhow::Ok(())
        })
        .await?;
        for (api, name) in [(&deployments, "kd-worker"), (&sets, "kd-wide")] {
            let live = api.get(name).await?;
            anyhow::ensure!(live.data["spec"]["replicas"] == 3, "{name} was scaled back");
        }

        let refused = kubectl(&["infera", "scale", "kd", "worker=4", "-n", n])
            .await?
            .expect_code(4)?;
        anyhow::ensure!(
            refused.stderr.contains(
                "worker is scaled by KEDA ScaledObject kd-worker and the HorizontalPodAutoscaler keda-hpa-kd-worker it creates"
            ),
            "{}",
            refused.stderr
        );
        operator.ensure_running()?;
        drop(operator);
        anyhow::Ok(())
    }
    .await;
    remove_crd(&crds).await?;
    result?;
    ns.cleanup().await
}
