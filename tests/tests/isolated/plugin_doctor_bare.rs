//! `doctor` on a cluster without LeaderWorkerSet and without GPU nodes: a tier-1 control plane
//! (etcd + kube-apiserver only) of its own. The failures carry the right IDs and hints.

use anyhow::Context as _;
use infera_e2e::{
    cluster::PrivateCluster,
    kube::{
        Api,
        api::{DynamicObject, Patch, PatchParams, PostParams},
        core::{ApiResource, GroupVersionKind},
    },
    plugin::kubectl_env,
};

fn check<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or(&serde_json::Value::Null)
}

#[tokio::test]
async fn doctor_without_lws_and_gpu_nodes_fails_with_ids_and_hints() -> anyhow::Result<()> {
    let bare = PrivateCluster::up(1)?;
    let kubeconfig = bare.kubeconfig.display().to_string();
    let env = [("KUBECONFIG", kubeconfig.as_str())];
    for pre in [true, false] {
        let mut args = vec!["infera", "doctor", "--context", "admin", "-o", "json"];
        if pre {
            args.push("--pre");
        }
        let run = kubectl_env(&args, &env).await?.expect_code(1)?;
        let report: serde_json::Value =
            serde_json::from_str(&run.stdout).context("exactly one JSON document")?;
        anyhow::ensure!(report["success"] == false, "{}", run.stdout);
        let lws = check(&report, "INF201");
        anyhow::ensure!(lws["severity"] == "fail", "{lws}");
        anyhow::ensure!(
            lws["hint"]
                .as_str()
                .is_some_and(|h| h.contains("install LeaderWorkerSet")),
            "{lws}"
        );
        let gpu = check(&report, "INF301");
        anyhow::ensure!(gpu["severity"] == "fail", "{gpu}");
        anyhow::ensure!(
            gpu["message"]
                .as_str()
                .is_some_and(|m| m.contains("no node has allocatable amd.com/gpu")),
            "{gpu}"
        );
        anyhow::ensure!(
            gpu["hint"]
                .as_str()
                .is_some_and(|h| h.contains("device plugin")),
            "{gpu}"
        );
        // Before init the missing Infera CRD is expected; after, it is a failure.
        let crd = check(&report, "INF101");
        anyhow::ensure!(
            crd["severity"] == if pre { "pass" } else { "fail" },
            "{crd}"
        );
    }
    let table = kubectl_env(&["infera", "doctor", "--context", "admin", "--pre"], &env)
        .await?
        .expect_code(1)?;
    anyhow::ensure!(
        table.stdout.contains("FAIL  INF201") && table.stdout.contains("FAIL  INF301"),
        "{}",
        table.stdout
    );
    Ok(())
}

/// The GPU check warned, and its hint mentions `hint`.
fn ensure_warning_with_hint(gpu: &serde_json::Value, hint: &str) -> anyhow::Result<()> {
    anyhow::ensure!(gpu["severity"] == "warn", "{gpu}");
    anyhow::ensure!(
        gpu["hint"].as_str().is_some_and(|h| h.contains(hint)),
        "{gpu}"
    );
    Ok(())
}

async fn gpu_check(env: &[(&str, &str)]) -> anyhow::Result<serde_json::Value> {
    let run = kubectl_env(
        &[
            "infera",
            "doctor",
            "--context",
            "admin",
            "--pre",
            "-o",
            "json",
        ],
        env,
    )
    .await?;
    let report: serde_json::Value =
        serde_json::from_str(&run.stdout).context("one JSON document")?;
    Ok(check(&report, "INF301").clone())
}

#[tokio::test]
async fn doctor_recognises_gpu_partitions_and_dra_with_hints() -> anyhow::Result<()> {
    let bare = PrivateCluster::up(1)?;
    let kubeconfig = bare.kubeconfig.display().to_string();
    let env = [("KUBECONFIG", kubeconfig.as_str())];
    let admin = bare.admin().await?;
    // A node whose device plugin uses the `mixed` naming strategy (partitioned MI300X).
    let nodes: Api<infera_e2e::k8s_openapi::api::core::v1::Node> = Api::all(admin.clone());
    let node = serde_json::from_value(serde_json::json!({"metadata": {"name": "mi300x-0"}}))?;
    nodes.create(&PostParams::default(), &node).await?;
    let status = serde_json::json!({"status": {"allocatable": {"amd.com/cpx_nps4": "64", "cpu": "96"}, "capacity": {"amd.com/cpx_nps4": "64", "cpu": "96"}}});
    nodes
        .patch_status("mi300x-0", &PatchParams::default(), &Patch::Merge(status))
        .await?;
    let gpu = gpu_check(&env).await?;
    ensure_warning_with_hint(&gpu, "resources.gpuType: amd.com/cpx_nps4")?;
    nodes.delete("mi300x-0", &Default::default()).await?;

    // AMD's DRA driver: a DeviceClass gpu.amd.com and no extended resource at all.
    let classes = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("resource.k8s.io", "v1", "DeviceClass"),
        "deviceclasses",
    );
    let class: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.amd.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.amd.com'"}}]}
    }))?;
    Api::<DynamicObject>::all_with(admin.clone(), &classes)
        .create(&PostParams::default(), &class)
        .await?;
    let gpu = gpu_check(&env).await?;
    ensure_warning_with_hint(&gpu, "DeviceClass gpu.amd.com")?;
    Ok(())
}
