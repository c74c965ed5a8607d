//! A deployment whose CRD dependency is missing is reported, the rest of it still deployed, and it
//! recovers once a CRD it can use is installed: the pre-1.0 InferencePool (v1alpha2) first, then the
//! current one (v1), which replaces it. In a test binary of its own: it removes a cluster-wide CRD
//! for a while, which no other test of the binary may observe.

use std::time::Duration;

use anyhow::Context as _;

use infera_core::{InferaDeployment, State};
use infera_e2e::{
    TestNamespace, admin, apply_yaml, apply_yaml_in, eventually,
    kube::{
        Api,
        api::{DeleteParams, DynamicObject, PostParams},
        core::{ApiResource, GroupVersionKind},
    },
    operator::{Operator, install},
    test_bin_dir,
};
use k8s_openapi::{
    api::apps::v1::Deployment,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use serde_json::json;

const POOLS_CRD: &str = "inferencepools.inference.networking.k8s.io";
const POOLS_V1ALPHA2_CRD: &str = "inferencepools.inference.networking.x-k8s.io";

fn pools(
    admin: &infera_e2e::kube::Client,
    ns: &str,
    group: &str,
    version: &str,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, version, "InferencePool");
    Api::namespaced_with(
        admin.clone(),
        ns,
        &ApiResource::from_gvk_with_plural(&gvk, "inferencepools"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn gaie_without_its_crd_reports_missing_dependency_deploys_the_rest_and_recovers()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-missing").await?;
    let identity = install(&admin).await?;
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let mut saved = crds.get(POOLS_CRD).await?;
    saved.metadata = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        name: saved.metadata.name.clone(),
        labels: saved.metadata.labels.clone(),
        annotations: saved.metadata.annotations.clone(),
        ..Default::default()
    };
    saved.status = None;
    crds.delete(POOLS_CRD, &DeleteParams::default()).await?;
    eventually(Duration::from_secs(60), || async {
        anyhow::ensure!(
            crds.get_opt(POOLS_CRD).await?.is_none(),
            "CRD still terminating"
        );
        anyhow::Ok(())
    })
    .await?;

    let result = async {
        let operator = Operator::start(&identity, &["--namespace", ns.name()], &format!("operator-{}", ns.name())).await?;
        let spec = json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment", "metadata": {"name": "gw"},
            "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
                     "gaie": {"enabled": true, "gatewayName": "inference-gateway", "tokenizerPath": "Qwen/Qwen3-0.6B"},
                     "services": {"server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
                                  "worker": {"componentType": "worker", "resources": {"gpu": 1}}}},
        });
        apply_yaml_in(&admin, ns.name(), &spec.to_string()).await?;
        let ideps: Api<InferaDeployment> = ns.api();
        let idep = eventually(Duration::from_secs(60), || async {
            let idep = ideps.get("gw").await?;
            let state = idep.status.as_ref().and_then(|s| s.state);
            anyhow::ensure!(state == Some(State::Degraded), "state {state:?}");
            anyhow::Ok(idep)
        })
        .await?;
        let condition = idep.status.as_ref().and_then(|s| s.conditions.first()).cloned().context("a Ready condition")?;
        assert_eq!(condition.reason, "MissingDependency");
        assert!(condition.message.contains(POOLS_CRD) && condition.message.contains("install"), "{}", condition.message);
        assert!(condition.message.contains(POOLS_V1ALPHA2_CRD), "names both versions: {}", condition.message);
        let deployments: Api<Deployment> = ns.api();
        for name in ["gw-server", "gw-worker", "gw-epp"] {
            assert!(deployments.get_opt(name).await?.is_some(), "{name} is deployed despite the missing CRD");
        }

        // Only the pre-1.0 API: the pool, the route and the EPP speak v1alpha2.
        let v1alpha2 = test_bin_dir()?.join("share/gaie-v1alpha2/inference.networking.x-k8s.io_inferencepools.yaml");
        apply_yaml(&admin, &std::fs::read_to_string(&v1alpha2).with_context(|| format!("reading {}", v1alpha2.display()))?).await?;
        let old_pools = pools(&admin, ns.name(), "inference.networking.x-k8s.io", "v1alpha2");
        let routes = Api::<DynamicObject>::namespaced_with(
            admin.clone(),
            ns.name(),
            &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute"), "httproutes"),
        );
        eventually(Duration::from_secs(90), || async {
            let pool = old_pools.get_opt("gw-pool").await?.context("no v1alpha2 InferencePool yet")?;
            anyhow::ensure!(pool.data["spec"]["targetPortNumber"] == 8000, "{:?}", pool.data);
            anyhow::ensure!(pool.data["spec"]["extensionRef"]["name"] == "gw-epp", "{:?}", pool.data);
            let route = routes.get("gw-route").await?;
            anyhow::ensure!(route.data["spec"]["rules"][0]["backendRefs"][0]["group"] == "inference.networking.x-k8s.io", "{:?}", route.data);
            let epp = deployments.get("gw-epp").await?;
            let command = epp.spec.and_then(|s| s.template.spec).and_then(|s| s.containers[0].command.clone()).unwrap_or_default();
            anyhow::ensure!(command == ["python3", "-m", "infera.gaie"], "{command:?}");
            let state = ideps.get("gw").await?.status.and_then(|s| s.state);
            anyhow::ensure!(state == Some(State::Ready), "state {state:?}");
            anyhow::Ok(())
        })
        .await?;

        // The current API back: v1 replaces v1alpha2.
        crds.create(&PostParams::default(), &saved).await?;
        let new_pools = pools(&admin, ns.name(), "inference.networking.k8s.io", "v1");
        eventually(Duration::from_secs(90), || async {
            anyhow::ensure!(new_pools.get_opt("gw-pool").await?.is_some(), "no v1 InferencePool yet");
            anyhow::ensure!(old_pools.get_opt("gw-pool").await?.is_none(), "the v1alpha2 pool is still there");
            let state = ideps.get("gw").await?.status.and_then(|s| s.state);
            anyhow::ensure!(state == Some(State::Ready), "state {state:?}");
            anyhow::Ok(())
        })
        .await?;
        drop(operator);
        anyhow::Ok(())
    }
    .await;
    if crds.get_opt(POOLS_CRD).await?.is_none() {
        crds.create(&PostParams::default(), &saved).await?;
    }
    if crds.get_opt(POOLS_V1ALPHA2_CRD).await?.is_some() {
        crds.delete(POOLS_V1ALPHA2_CRD, &DeleteParams::default())
            .await?;
    }
    result?;
    ns.cleanup().await
}
