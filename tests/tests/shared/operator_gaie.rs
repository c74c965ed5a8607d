//! The Gateway API Inference Extension objects on the tier-2 cluster (which has the Gateway API and
//! InferencePool CRDs but no gateway controller): the InferencePool selects exactly the pods that
//! serve requests, the Endpoint Picker's Role allows what it reads and nothing else, the serving
//! pods carry the direct-mode router sidecar the pool targets (the server itself routes as
//! always, as upstream's), `status.gaie` follows the route's acceptance by a Gateway (upstream's
//! `gaieStatus`), the graph without its server stays Ready behind the gateway (upstream's
//! serverless `kgateway-gaie-aggregated.yaml`), and the GAIE objects go with `spec.gaie`.

use std::time::Duration;

use infera_core::{InferaDeployment, State};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api, Client, ResourceExt,
        api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, PostParams},
    },
    operator::{Operator, install},
};
use k8s_openapi::api::{
    apps::v1::Deployment,
    authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
    core::v1::Pod,
};
use serde_json::json;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// Prefill on one node, decode as a LeaderWorkerSet group of two, fronted by Gateway `gw`
/// unless `gaie` is false.
fn spec(gaie: bool) -> String {
    let mut spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "gw"},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "prefill": {"componentType": "worker", "role": "prefill", "resources": {"gpu": 1},
                        "args": ["--model-path", "m", "--tp-size", "1"]},
            "decode": {"componentType": "worker", "role": "decode", "numberOfNodes": 2,
                       "resources": {"gpu": 1}, "args": ["--model-path", "m", "--tp-size", "2"]},
        }},
    });
    if gaie {
        spec["spec"]["gaie"] = json!({"enabled": true, "gatewayName": "inference-gateway", "gatewaySectionName": "http", "tokenizerPath": "Qwen/Qwen3-0.6B"});
    }
    spec.to_string()
}

async fn ready(ideps: &Api<InferaDeployment>) -> anyhow::Result<()> {
    eventually(READY_TIMEOUT, || async {
        let idep = ideps.get("gw").await?;
        let status = idep.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.state == Some(State::Ready)
                && status.observed_generation == idep.metadata.generation,
            "state {:?}, conditions {:?}",
            status.state,
            status.conditions
        );
        Ok(())
    })
    .await
}

fn pool_api(admin: &Client, ns: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("inference.networking.k8s.io", "v1", "InferencePool");
    Api::namespaced_with(
        admin.clone(),
        ns,
        &ApiResource::from_gvk_with_plural(&gvk, "inferencepools"),
    )
}

/// `status.gaie` once it says `ready` is `ready`.
async fn gaie_status(
    ideps: &Api<InferaDeployment>,
    ready: bool,
) -> anyhow::Result<infera_core::GaieStatus> {
    eventually(READY_TIMEOUT, || async {
        let gaie = ideps.get("gw").await?.status.and_then(|s| s.gaie);
        match gaie {
            Some(gaie) if gaie.ready == Some(ready) => Ok(gaie),
            other => Err(anyhow::anyhow!("status.gaie: {other:?}")),
        }
    })
    .await
}

async fn server_args(deployments: &Api<Deployment>) -> anyhow::Result<Vec<String>> {
    let server = deployments.get("gw-server").await?;
    let args = server
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|s| s.containers.into_iter().next())
        .and_then(|c| c.args)
        .unwrap_or_default();
    Ok(args)
}

/// Whether the EPP's ServiceAccount may `verb` `resource` of `group` in `ns`.
async fn epp_may(
    admin: &Client,
    ns: &str,
    verb: &str,
    group: &str,
    resource: &str,
) -> anyhow::Result<bool> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{ns}:gw-epp")),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{ns}"),
            ]),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(ns.into()),
                verb: Some(verb.into()),
                group: Some(group.into()),
                resource: Some(resource.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviewed = Api::<SubjectAccessReview>::all(admin.clone())
        .create(&PostParams::default(), &review)
        .await?;
    Ok(reviewed.status.is_some_and(|s| s.allowed))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pool_selects_prefill_pods_and_decode_leaders_and_the_epp_reads_only_what_it_needs()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-gaie").await?;
    let identity = install(&admin).await?;
    let log = format!("operator-{}", ns.name());
    let mut operator = Operator::start(&identity, &["--namespace", ns.name()], &log).await?;
    apply_yaml_in(&admin, ns.name(), &spec(true)).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    ready(&ideps).await?;

    // No gateway controller: the pool has no conditions (ready, as upstream's), the route is not
    // accepted. Then a Gateway accepts the route (its status written as a controller would).
    let waiting = gaie_status(&ideps, false).await?;
    assert_eq!(
        waiting,
        infera_core::GaieStatus {
            epp_replicas: 1,
            epp_ready_replicas: 1,
            inference_pool_name: Some("gw-pool".into()),
            inference_pool_ready: Some(true),
            http_route_name: Some("gw-route".into()),
            http_route_accepted: Some(false),
            ready: Some(false),
        }
    );
    let route_gvk = GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute");
    let routes: Api<DynamicObject> = Api::namespaced_with(
        admin.clone(),
        ns.name(),
        &ApiResource::from_gvk_with_plural(&route_gvk, "httproutes"),
    );
    let accepted = json!({"status": {"parents": [{
        "parentRef": {"name": "inference-gateway"},
        "controllerName": "example.com/gateway-controller",
        "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted",
            "message": "accepted", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}],
    }]}});
    routes
        .patch_status(
            "gw-route",
            &infera_e2e::kube::api::PatchParams::default(),
            &infera_e2e::kube::api::Patch::Merge(&accepted),
        )
        .await?;
    let accepted = gaie_status(&ideps, true).await?;
    assert_eq!(accepted.http_route_accepted, Some(true));

    // The pool's own selector, applied to the live pods: the prefill pod and the decode leader.
    let pool = pool_api(&admin, ns.name()).get("gw-pool").await?;
    let labels: Vec<String> = pool.data["spec"]["selector"]["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    let pods: Api<Pod> = ns.api();
    let selected = pods
        .list(&ListParams::default().labels(&labels.join(",")))
        .await?;
    let mut roles: Vec<(String, Option<String>)> = selected
        .items
        .iter()
        .map(|p| {
            let labels = p.labels();
            (
                labels["infera.amd.com/role"].clone(),
                labels
                    .get("leaderworkerset.sigs.k8s.io/worker-index")
                    .cloned(),
            )
        })
        .collect();
    roles.sort();
    assert_eq!(
        roles,
        [
            ("decode".into(), Some("0".into())),
            ("prefill".into(), None)
        ],
        "selected pods: {:?}",
        selected
            .items
            .iter()
            .map(|p| p.name_any())
            .collect::<Vec<_>>()
    );
    // Rank 1 of the decode group: no sidecar, no HTTP port.
    let follower = pods
        .list(&ListParams::default().labels(
            "leaderworkerset.sigs.k8s.io/name=gw-decode,leaderworkerset.sigs.k8s.io/worker-index=1",
        ))
        .await?;
    let containers = &follower.items[0]
        .spec
        .as_ref()
        .map(|s| s.containers.clone())
        .unwrap_or_default();
    assert_eq!(containers.len(), 1, "only the engine on rank 1");
    assert!(containers[0].ports.is_none() && containers[0].readiness_probe.is_none());

    // The Endpoint Picker's Role: reading pods (it discovers workers as the router does,
    // upstream `infera/common/discovery_k8s.py`), nothing more.
    let ns_name = ns.name();
    for (verb, group, resource, allowed) in [
        ("list", "", "pods", true),
        ("watch", "", "pods", true),
        ("create", "", "pods", false),
        ("patch", "", "pods", false),
        ("get", "", "secrets", false),
        ("list", "", "configmaps", false),
        (
            "watch",
            "inference.networking.k8s.io",
            "inferencepools",
            false,
        ),
    ] {
        assert_eq!(
            epp_may(&admin, ns_name, verb, group, resource).await?,
            allowed,
            "{verb} {group}/{resource}"
        );
    }

    // The sidecar the pool targets is upstream's router in direct mode; the server is not.
    let deployments: Api<Deployment> = ns.api();
    let args = server_args(&deployments).await?;
    assert!(!args.contains(&"--router-mode".to_string()), "{args:?}");
    let prefill = selected
        .items
        .iter()
        .find(|p| p.labels()["infera.amd.com/role"] == "prefill")
        .and_then(|p| p.spec.as_ref())
        .map(|s| s.containers.clone())
        .unwrap_or_default();
    let frontend = prefill
        .iter()
        .find(|c| c.name == "infera-frontend")
        .ok_or_else(|| anyhow::anyhow!("no frontend sidecar in {prefill:?}"))?;
    assert_eq!(
        frontend.command.as_deref(),
        Some(&["python3", "-m", "infera.server"].map(String::from)[..])
    );
    let sidecar_args = frontend.args.clone().unwrap_or_default();
    assert!(
        sidecar_args
            .windows(2)
            .any(|w| w == ["--router-mode", "direct"]),
        "{sidecar_args:?}"
    );

    // Without its server the graph is reached through the gateway only: the server's Deployment
    // and Service go, the workers stay Ready, and there is no endpoint.
    let mut serverless: serde_json::Value = serde_json::from_str(&spec(true))?;
    serverless["spec"]["services"]
        .as_object_mut()
        .and_then(|services| services.remove("server"))
        .ok_or_else(|| anyhow::anyhow!("the spec has a server"))?;
    apply_yaml_in(&admin, ns.name(), &serverless.to_string()).await?;
    let services: Api<k8s_openapi::api::core::v1::Service> = ns.api();
    eventually(READY_TIMEOUT, || async {
        anyhow::ensure!(
            deployments.get_opt("gw-server").await?.is_none()
                && services.get_opt("gw-server").await?.is_none(),
            "the server's Deployment or Service is still there"
        );
        Ok(())
    })
    .await?;
    ready(&ideps).await?;
    let status = ideps.get("gw").await?.status.unwrap_or_default();
    assert_eq!(status.endpoint, None);
    assert!(
        !status.services.contains_key("server"),
        "{:?}",
        status.services
    );
    assert!(deployments.get_opt("gw-epp").await?.is_some());

    // Without a Gateway (and with the server back) the GAIE objects go.
    apply_yaml_in(&admin, ns.name(), &spec(false)).await?;
    eventually(READY_TIMEOUT, || async {
        let args = server_args(&deployments).await?;
        anyhow::ensure!(!args.contains(&"--router-mode".to_string()), "{args:?}");
        anyhow::ensure!(
            pool_api(&admin, ns_name)
                .get_opt("gw-pool")
                .await?
                .is_none(),
            "the pool is still there"
        );
        anyhow::ensure!(
            deployments.get_opt("gw-epp").await?.is_none(),
            "the EPP is still there"
        );
        Ok(())
    })
    .await?;
    ready(&ideps).await?;
    anyhow::ensure!(
        ideps.get("gw").await?.status.and_then(|s| s.gaie).is_none(),
        "status.gaie stays without GAIE"
    );
    operator.ensure_running()?;
    ns.cleanup().await
}
