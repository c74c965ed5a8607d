//! Day-2 operations on the tier-2 cluster.
//!
//! A pool with `autoscaling`: the operator renders an HPA the real API server accepts, on the
//! right workload, and leaves the replica count to whoever scales through the scale subresource
//! (the HPA controller, `kubectl scale`): no write to the workload in the reconciles that follow,
//! and status reports the live count. The cluster has no metrics server, so the HPA itself never
//! moves the count inside its bounds: what is tested is ownership, not autoscaling decisions.
//! `kubectl infera scale` sets a fixed pool's replicas and waits for them, refuses an autoscaled
//! pool, and keeps the revision; `kubectl infera rollout pause` holds a worker pool at its
//! revision through a spec change until `resume`.

use std::time::Duration;

use infera_core::{
    InferaDeployment, State,
    naming::{REPLICAS_HANDOVER_MANAGER, SCALE_MANAGER},
};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api,
        api::{DynamicObject, Patch, PatchParams},
    },
    operator::{Operator, install},
    plugin::kubectl,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(120);

/// A deployment with an autoscaled single-node pool `worker` and an autoscaled multi-node pool
/// `wide` (a LeaderWorkerSet of 2-pod groups).
fn elastic(name: &str) -> String {
    let autoscaling = autoscaling();
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
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
    .to_string()
}

/// From 2 to 5 replicas on the engine's queue length.
fn autoscaling() -> serde_json::Value {
    json!({
        "minReplicas": 2, "maxReplicas": 5,
        "metrics": [{"type": "Pods", "pods": {
            "metric": {"name": "sglang_num_queue_reqs"},
            "target": {"type": "AverageValue", "averageValue": "4"},
        }}],
    })
}

/// The workloads of the two pools, as (API, name).
fn workloads(admin: &infera_e2e::kube::Client, ns: &str) -> [(Api<DynamicObject>, String); 2] {
    let api = |kind: infera_core::ChildKind| {
        Api::<DynamicObject>::namespaced_with(admin.clone(), ns, &kind.api_resource())
    };
    [
        (
            api(infera_core::ChildKind::Deployment),
            "elastic-worker".into(),
        ),
        (
            api(infera_core::ChildKind::LeaderWorkerSet),
            "elastic-wide".into(),
        ),
    ]
}

/// Waits until the deployment is Ready with `worker` and `wide` desiring `replicas`.
async fn ready_with(
    ideps: &Api<InferaDeployment>,
    replicas: i32,
) -> anyhow::Result<InferaDeployment> {
    eventually(TIMEOUT, || async {
        let idep = ideps.get("elastic").await?;
        let status = idep.status.clone().unwrap_or_default();
        let desired = |pool: &str| status.services.get(pool).map(|s| s.desired_replicas);
        anyhow::ensure!(
            status.state == Some(State::Ready)
                && desired("worker") == Some(replicas)
                && desired("wide") == Some(replicas),
            "state {:?}, services {:?}, conditions {:?}",
            status.state,
            status.services,
            status.conditions
        );
        Ok(idep)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn autoscaled_pools_get_an_hpa_and_kubectl_scale_is_not_undone() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-autoscale").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    apply_yaml_in(&admin, ns.name(), &elastic("elastic")).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    // Created without replicas, then handed over at minReplicas.
    ready_with(&ideps, 2).await?;

    // The HPAs the API server accepted target the pools' workloads.
    let hpas: Api<HorizontalPodAutoscaler> = ns.api();
    for (name, kind) in [
        ("elastic-worker", "Deployment"),
        ("elastic-wide", "LeaderWorkerSet"),
    ] {
        let spec = hpas.get(name).await?.spec.unwrap_or_default();
        assert_eq!(
            (
                spec.scale_target_ref.kind.as_str(),
                spec.scale_target_ref.name.as_str()
            ),
            (kind, name)
        );
        assert_eq!((spec.min_replicas, spec.max_replicas), (Some(2), 5));
    }
    // spec.replicas is held by the hand-over manager, not by the operator's apply.
    for (api, name) in workloads(&admin, ns.name()) {
        let live = api.get(&name).await?;
        let holders: Vec<String> = live
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .filter(|entry| {
                entry
                    .fields_v1
                    .as_ref()
                    .is_some_and(|f| f.0["f:spec"].get("f:replicas").is_some())
            })
            .filter_map(|entry| entry.manager.clone())
            .collect();
        assert_eq!(holders, [REPLICAS_HANDOVER_MANAGER], "{name}");
    }

    let settled = eventually(Duration::from_secs(60), || async {
        let before = operator.writes_or_dry_runs().await?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let after = operator.writes_or_dry_runs().await?;
        anyhow::ensure!(before == after, "still writing: {before} -> {after}");
        anyhow::Ok(after)
    })
    .await?;
    let patches = workload_patches(&operator).await?;

    // `kubectl scale` of both workloads: a merge patch of the scale subresource, as kubectl
    // sends it, within the HPA's bounds (outside them the HPA controller would set it back).
    let scale = PatchParams {
        field_manager: Some("kubectl-scale".into()),
        ..Default::default()
    };
    for (api, name) in workloads(&admin, ns.name()) {
        api.patch_subresource(
            "scale",
            &name,
            &scale,
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await?;
    }
    // The scale's watch events trigger reconciles; touches of the InferaDeployment add more.
    let reconciles = operator.sample("infera_reconciles_total").await?;
    for i in 0..3 {
        let touch = json!({"metadata": {"annotations": {"e2e/touch": i.to_string()}}});
        ideps
            .patch("elastic", &PatchParams::default(), &Patch::Merge(&touch))
            .await?;
        eventually(Duration::from_secs(20), || async {
            let now = operator.sample("infera_reconciles_total").await?;
            anyhow::ensure!(now > reconciles + f64::from(i), "no reconcile yet");
            anyhow::Ok(())
        })
        .await?;
    }
    // Status follows the live count.
    ready_with(&ideps, 3).await?;
    for (api, name) in workloads(&admin, ns.name()) {
        let live = api.get(&name).await?;
        assert_eq!(live.data["spec"]["replicas"], 3, "{name} was scaled back");
    }
    let (after, writes) = (
        workload_patches(&operator).await?,
        operator.writes_or_dry_runs().await?,
    );
    eprintln!(
        "writes: {settled} settled, {writes} after the scale; PATCHes of workloads: {patches} -> {after}"
    );
    assert_eq!(after, patches, "a workload was written after the scale");
    operator.ensure_running()?;
    ns.cleanup().await
}

/// PATCH requests the operator sent to Deployments and LeaderWorkerSets so far.
async fn workload_patches(operator: &Operator) -> anyhow::Result<f64> {
    let metrics = operator.metrics().await?;
    Ok(["deployments", "leaderworkersets"]
        .iter()
        .map(|plural| {
            infera_e2e::operator::sample(
                &metrics,
                &format!("infera_api_requests_total{{verb=\"PATCH {plural}\"}}"),
            )
        })
        .sum())
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_infera_scale_sets_replicas_waits_and_refuses_an_autoscaled_pool()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-scale").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    let spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "pools"},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
            "decode": {
                "componentType": "worker", "replicas": 1,
                "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"],
            },
            "elastic": {
                "componentType": "worker", "autoscaling": autoscaling(),
                "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"],
            },
        }},
    });
    apply_yaml_in(&admin, ns.name(), &spec.to_string()).await?;
    let n = ns.name();

    // A server-side dry run changes nothing.
    let dry = kubectl(&[
        "infera",
        "scale",
        "pools",
        "decode=3",
        "-n",
        n,
        "--dry-run=server",
    ])
    .await?
    .expect_code(0)?;
    assert_eq!(
        dry.stdout.trim(),
        "inferadeployment.infera.amd.com/pools scaled: decode 1 → 3 (server dry run)"
    );
    let ideps: Api<InferaDeployment> = ns.api();
    assert_eq!(
        ideps.get("pools").await?.spec.services["decode"].replicas,
        Some(1)
    );

    let scaled = kubectl(&[
        "infera",
        "scale",
        "pools",
        "decode=3",
        "-n",
        n,
        "--wait",
        "--timeout=2m",
    ])
    .await?
    .expect_code(0)?;
    assert_eq!(
        scaled.stdout.trim(),
        "inferadeployment.infera.amd.com/pools scaled: decode 1 → 3"
    );
    let idep = ideps.get("pools").await?;
    let status = idep.status.clone().unwrap_or_default();
    assert_eq!(
        status.state,
        Some(State::Ready),
        "--wait returned before Ready"
    );
    assert_eq!(
        (
            status.services["decode"].desired_replicas,
            status.services["decode"].ready_replicas
        ),
        (3, 3)
    );
    // The update owns exactly the field it set.
    let owners: Vec<String> = idep
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|entry| {
            entry.fields_v1.as_ref().is_some_and(|f| {
                f.0["f:spec"]["f:services"]["f:decode"]
                    .get("f:replicas")
                    .is_some()
            })
        })
        .filter_map(|entry| entry.manager.clone())
        .collect();
    assert_eq!(owners, [SCALE_MANAGER]);
    // Scaling is no new revision; every worker pod carries the one status reports.
    let revision = status.update_revision.clone().unwrap_or_default();
    assert_eq!(status.current_revision.as_deref(), Some(revision.as_str()));
    assert_eq!(status.services["decode"].updated_replicas, Some(3));
    let progressing = status
        .conditions
        .iter()
        .find(|c| c.type_ == infera_core::PROGRESSING)
        .map(|c| (c.status.as_str(), c.reason.as_str()));
    assert_eq!(progressing, Some(("True", infera_core::ROLLOUT_COMPLETE)));
    let pods: Api<k8s_openapi::api::core::v1::Pod> = ns.api();
    let decode = pods
        .list(&infera_e2e::kube::api::ListParams::default().labels("infera.amd.com/service=decode"))
        .await?;
    assert_eq!(decode.items.len(), 3);
    for pod in &decode.items {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels.get(infera_core::naming::LABEL_REVISION),
            Some(&revision)
        );
        let env = pod
            .spec
            .as_ref()
            .map(|s| s.containers[0].env.clone().unwrap_or_default());
        assert!(
            env.iter()
                .flatten()
                .any(|e| e.name == infera_core::naming::REVISION_ENV
                    && e.value.as_deref() == Some(revision.as_str())),
            "{env:?}"
        );
    }

    let refused = kubectl(&["infera", "scale", "pools", "elastic=3", "-n", n])
        .await?
        .expect_code(4)?;
    assert!(
        refused
            .stderr
            .contains("elastic is scaled by HorizontalPodAutoscaler pools-elastic"),
        "{}",
        refused.stderr
    );
    let unknown = kubectl(&["infera", "scale", "pools", "prefill=3", "-n", n])
        .await?
        .expect_code(1)?;
    assert!(
        unknown
            .stderr
            .contains("has no pool prefill; its pools are decode, elastic, server"),
        "{}",
        unknown.stderr
    );
    assert_eq!(
        ideps.get("pools").await?.metadata.generation,
        idep.metadata.generation,
        "a refused scale wrote"
    );

    // Autoscaling removed: the operator takes back the replicas its hand-over manager held
    // (nobody scaled since), deletes the HPA, and the pool runs the spec's count.
    let fixed = json!({"spec": {"services": {"elastic": {"autoscaling": null, "replicas": 3}}}});
    ideps
        .patch("pools", &PatchParams::default(), &Patch::Merge(&fixed))
        .await?;
    let hpas: Api<HorizontalPodAutoscaler> = ns.api();
    eventually(TIMEOUT, || async {
        let status = ideps.get("pools").await?.status.unwrap_or_default();
        let elastic = status.services.get("elastic").cloned().unwrap_or_default();
        anyhow::ensure!(
            status.state == Some(State::Ready)
                && (elastic.desired_replicas, elastic.ready_replicas) == (3, 3),
            "{:?} {elastic:?} {:?}",
            status.state,
            status.conditions
        );
        anyhow::ensure!(hpas.get_opt("pools-elastic").await?.is_none(), "HPA left");
        Ok(())
    })
    .await?;
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_rollout_holds_worker_pools_at_their_revision_until_resumed() -> anyhow::Result<()>
{
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-pause").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    let spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "held"},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
            "decode": {
                "componentType": "worker", "resources": {"gpu": 1},
                "args": ["--model-path", "Qwen/Qwen3-0.6B"],
            },
        }},
    });
    apply_yaml_in(&admin, ns.name(), &spec.to_string()).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let progressing = |idep: &InferaDeployment| {
        let status = idep.status.clone().unwrap_or_default();
        let condition = status
            .conditions
            .iter()
            .find(|c| c.type_ == infera_core::PROGRESSING)
            .map(|c| (c.status.clone(), c.reason.clone()));
        (condition, status.update_revision, status.current_revision)
    };
    let first = eventually(TIMEOUT, || async {
        let idep = ideps.get("held").await?;
        let (condition, update, current) = progressing(&idep);
        anyhow::ensure!(
            condition == Some(("True".into(), infera_core::ROLLOUT_COMPLETE.into())),
            "{condition:?}"
        );
        anyhow::ensure!(update == current, "{update:?} {current:?}");
        Ok(update.unwrap_or_default())
    })
    .await?;
    let n = ns.name();
    let paused = kubectl(&["infera", "rollout", "pause", "held", "-n", n])
        .await?
        .expect_code(0)?;
    assert_eq!(
        paused.stdout.trim(),
        "inferadeployment.infera.amd.com/held paused"
    );
    // A change of the worker pods while paused: a new revision, not rolled out.
    let change =
        json!({"spec": {"services": {"decode": {"args": ["--model-path", "Qwen/Qwen3-1.7B"]}}}});
    ideps
        .patch("held", &PatchParams::default(), &Patch::Merge(&change))
        .await?;
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = ns.api();
    let template_revision = |d: &k8s_openapi::api::apps::v1::Deployment| {
        d.spec
            .as_ref()
            .and_then(|s| s.template.metadata.as_ref())
            .and_then(|m| m.labels.as_ref())
            .and_then(|l| l.get(infera_core::naming::LABEL_REVISION).cloned())
    };
    let second = eventually(TIMEOUT, || async {
        let idep = ideps.get("held").await?;
        let (condition, update, current) = progressing(&idep);
        anyhow::ensure!(
            condition == Some(("False".into(), infera_core::ROLLOUT_PAUSED.into())),
            "{condition:?}"
        );
        anyhow::ensure!(current.as_deref() == Some(first.as_str()));
        Ok(update.unwrap_or_default())
    })
    .await?;
    assert_ne!(second, first);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let decode = deployments.get("held-decode").await?;
    assert_eq!(
        template_revision(&decode).as_deref(),
        Some(first.as_str()),
        "applied while paused"
    );

    let resumed = kubectl(&["infera", "rollout", "resume", "held", "-n", n])
        .await?
        .expect_code(0)?;
    assert_eq!(
        resumed.stdout.trim(),
        "inferadeployment.infera.amd.com/held resumed"
    );
    eventually(TIMEOUT, || async {
        let idep = ideps.get("held").await?;
        let (condition, update, current) = progressing(&idep);
        anyhow::ensure!(
            condition == Some(("True".into(), infera_core::ROLLOUT_COMPLETE.into()))
                && update.as_deref() == Some(second.as_str())
                && current.as_deref() == Some(second.as_str()),
            "{condition:?} {update:?} {current:?}"
        );
        Ok(())
    })
    .await?;
    let decode = deployments.get("held-decode").await?;
    assert_eq!(template_revision(&decode).as_deref(), Some(second.as_str()));
    operator.ensure_running()?;
    ns.cleanup().await
}
