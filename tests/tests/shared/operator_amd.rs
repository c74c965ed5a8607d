//! The AMD data path end to end on the tier-2 cluster: `resources.gpuProduct` places pods only on
//! fake nodes carrying AMD's product label, a product no node has leaves the pool Pending with
//! `InsufficientCapacity` naming it, and `doctor` lists the products per node; `network.rdma`
//! pods request the NICs, carry the Multus annotation and IPC_LOCK, and land only on nodes that
//! advertise the NICs; an `hf://` model is downloaded by a Job before any GPU pod exists, and
//! the commit the Job's pod reports becomes `status.models.<job>.resolvedRevision`.

use std::time::Duration;

use infera_core::{InferaDeployment, State, gpu_product::PRODUCT_LABEL, naming::LABEL_SERVICE};
use infera_e2e::{
    FakeNode, TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api, ResourceExt,
        api::{ListParams, Patch, PatchParams},
    },
    operator::{Operator, install},
    plugin::kubectl,
};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(120);

/// An aggregated deployment whose `worker` pool has `replicas` pods of 2 GPUs of `product`,
/// tolerating the dedicated taint of each of `nodes`.
fn on_product(name: &str, product: &str, replicas: i32, nodes: &[&FakeNode]) -> String {
    let tolerations: Vec<Value> = nodes
        .iter()
        .map(|node| serde_json::to_value(node.toleration()).unwrap_or_default())
        .collect();
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "services": {
            "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "replicas": replicas, "tolerations": tolerations,
                       "resources": {"gpu": 2, "gpuProduct": product},
                       "args": ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "2"]},
        }},
    })
    .to_string()
}

/// Prefill/decode pools of 1 GPU and `nics` × `rdma/hca` per pod over Multus network `rdma-net`,
/// with IB device `rdma0`, tolerating the dedicated taint of each of `nodes`.
fn pd_with_rdma(name: &str, nics: i32, nodes: &[&FakeNode]) -> String {
    let tolerations: Vec<Value> = nodes
        .iter()
        .map(|node| serde_json::to_value(node.toleration()).unwrap_or_default())
        .collect();
    let pool = |role: &str| {
        json!({"componentType": "worker", "role": role, "tolerations": tolerations,
               "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "1"]})
    };
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "network": {"rdma": {"resourceName": "rdma/hca", "perPod": nics, "networks": ["rdma-net"], "device": "rdma0"}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
                "prefill": pool("prefill"),
                "decode": pool("decode"),
            }},
    })
    .to_string()
}

/// The deployment's state and its Ready condition's reason and message, once it is in `state`.
async fn wait_for(
    api: &Api<InferaDeployment>,
    name: &str,
    state: State,
) -> anyhow::Result<(String, String)> {
    eventually(TIMEOUT, || async {
        let status = api.get(name).await?.status.unwrap_or_default();
        anyhow::ensure!(
            status.state == Some(state),
            "state {:?}, conditions {:?}",
            status.state,
            status.conditions
        );
        let ready = status.conditions.first();
        Ok(ready
            .map(|c| (c.reason.clone(), c.message.clone()))
            .unwrap_or_default())
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn gpu_product_places_pods_on_that_product_only_and_an_absent_one_is_named()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "amd-product").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    // Two products, as AMD's node labeller spells them; the MI210 node has room for every pod.
    let mi300x = FakeNode::create_with(
        &admin,
        "mi300x",
        8,
        &[(PRODUCT_LABEL, "AMD_Instinct_MI300X_OAM")],
        &[],
    )
    .await?;
    let mi210 = FakeNode::create_with(
        &admin,
        "mi210",
        8,
        &[(PRODUCT_LABEL, "Instinct_MI210")],
        &[],
    )
    .await?;
    let nodes = [&mi300x, &mi210];

    apply_yaml_in(&admin, ns.name(), &on_product("on300", "MI300X", 3, &nodes)).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    wait_for(&ideps, "on300", State::Ready).await?;
    let pods: Api<Pod> = ns.api();
    let workers = pods
        .list(&ListParams::default().labels(&format!("{LABEL_SERVICE}=worker")))
        .await?;
    let placed: Vec<Option<String>> = workers
        .items
        .iter()
        .map(|pod| pod.spec.as_ref().and_then(|s| s.node_name.clone()))
        .collect();
    assert_eq!(placed, vec![Some(mi300x.name().to_string()); 3]);

    // No node has an MI355X: never substituted, the pool is short of capacity and says which.
    apply_yaml_in(&admin, ns.name(), &on_product("on355", "MI355X", 1, &nodes)).await?;
    let (reason, message) = wait_for(&ideps, "on355", State::Pending).await?;
    assert_eq!(reason, "InsufficientCapacity", "{message}");
    // One line per pool that waits: NATS may still be waiting for its volume at that moment.
    assert!(
        message.lines().any(|line| line.starts_with(
            "pool worker: 1 pod unschedulable: no node of GPU product MI355X can take it: "
        )),
        "{message}"
    );

    // doctor lists the products per node, and a spec for an absent product names those present.
    let doctor = kubectl(&["infera", "doctor", "-n", ns.name(), "-o", "json"]).await?;
    let report: Value = serde_json::from_str(&doctor.stdout)?;
    let check = |id: &str| {
        report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_default()
    };
    let free = check("INF302")["details"].to_string();
    for line in [
        format!("{}: 2/8 MI300X amd.com/gpu free", mi300x.name()),
        format!("{}: 8/8 MI210 amd.com/gpu free", mi210.name()),
    ] {
        assert!(free.contains(&line), "{line} not in {free}");
    }
    let spec = std::env::temp_dir().join(format!("{}-on355.yaml", ns.name()));
    std::fs::write(&spec, on_product("on355", "MI355X", 1, &nodes))?;
    let path = spec.display().to_string();
    let fit = kubectl(&[
        "infera",
        "doctor",
        "-n",
        ns.name(),
        "--for",
        &path,
        "-o",
        "json",
    ])
    .await?;
    std::fs::remove_file(&spec)?;
    assert!(
        fit.stdout.contains("no node has MI355X, the cluster has ")
            && fit.stdout.contains("MI210")
            && fit.stdout.contains("MI300X"),
        "{}",
        fit.stdout
    );

    operator.ensure_running()?;
    mi300x.delete(&admin).await?;
    mi210.delete(&admin).await?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn rdma_pods_request_the_nics_attach_the_network_and_land_only_where_the_nics_are()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "amd-rdma").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    let with_nics = FakeNode::create_with(&admin, "nics", 8, &[], &[("rdma/hca", "8")]).await?;
    let without = FakeNode::create(&admin, "no-nics", 8).await?;
    let nodes = [&with_nics, &without];

    apply_yaml_in(&admin, ns.name(), &pd_with_rdma("rdma", 1, &nodes)).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    wait_for(&ideps, "rdma", State::Ready).await?;
    let pods: Api<Pod> = ns.api();
    for role in ["prefill", "decode"] {
        let pool = pods
            .list(&ListParams::default().labels(&format!("{LABEL_SERVICE}={role}")))
            .await?;
        assert_eq!(pool.items.len(), 1, "{role}");
        let pod = &pool.items[0];
        let spec = pod.spec.clone().unwrap_or_default();
        assert_eq!(spec.node_name.as_deref(), Some(with_nics.name()), "{role}");
        assert_eq!(
            pod.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("k8s.v1.cni.cncf.io/networks"))
                .map(String::as_str),
            Some("rdma-net")
        );
        let engine = &spec.containers[0];
        let limits = engine
            .resources
            .as_ref()
            .and_then(|r| r.limits.clone())
            .unwrap_or_default();
        assert_eq!(limits.get("rdma/hca").map(|q| q.0.as_str()), Some("1"));
        let added = engine
            .security_context
            .as_ref()
            .and_then(|s| s.capabilities.as_ref())
            .and_then(|c| c.add.clone());
        assert_eq!(added, Some(vec!["IPC_LOCK".to_string()]));
        let args = engine.args.clone().unwrap_or_default();
        let device = args
            .iter()
            .position(|a| a == "--disaggregation-ib-device")
            .and_then(|i| args.get(i + 1));
        assert_eq!(device.map(String::as_str), Some("rdma0"), "{args:?}");
    }

    // More NICs per pod than any node has: Pending, and the scheduler's reason names them.
    apply_yaml_in(&admin, ns.name(), &pd_with_rdma("greedy", 9, &nodes)).await?;
    let (reason, message) = wait_for(&ideps, "greedy", State::Pending).await?;
    assert_eq!(reason, "InsufficientCapacity", "{message}");
    assert!(message.contains("Insufficient rdma/hca"), "{message}");

    operator.ensure_running()?;
    with_nics.delete(&admin).await?;
    without.delete(&admin).await?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_hf_model_is_downloaded_before_any_gpu_pod_exists() -> anyhow::Result<()> {
    use k8s_openapi::api::{
        apps::v1::Deployment,
        batch::v1::Job,
        core::v1::{PersistentVolume, PersistentVolumeClaim},
    };
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "amd-model").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    // A StorageClass nothing provisions: the download waits for the volume this test binds.
    let class = format!("held-{}", ns.name());
    let spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "cached"},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "model": {"source": "hf://Qwen/Qwen3-0.6B", "cache": {"size": "1Gi", "storageClassName": class}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
                "worker": {"componentType": "worker", "resources": {"gpu": 1}, "args": ["--tp-size", "1"]},
            }},
    });
    apply_yaml_in(&admin, ns.name(), &spec.to_string()).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let (reason, message) = wait_for(&ideps, "cached", State::Pending).await?;
    assert_eq!(reason, "ModelNotReady", "{message}");
    let status = ideps.get("cached").await?.status.unwrap_or_default();
    let model = status.conditions.iter().find(|c| c.type_ == "ModelReady");
    assert_eq!(
        model.map(|c| (c.status.as_str(), c.reason.as_str())),
        Some(("False", "Downloading")),
        "{:?}",
        status.conditions
    );
    let deployments: Api<Deployment> = ns.api();
    let pool = deployments.get("cached-worker").await?;
    assert_eq!(pool.spec.and_then(|s| s.replicas), Some(0));
    let pods: Api<Pod> = ns.api();
    let gpu_pods = ListParams::default().labels(&format!("{LABEL_SERVICE}=worker"));
    assert!(pods.list(&gpu_pods).await?.items.is_empty());
    let shown = kubectl(&["infera", "status", "cached", "-n", ns.name()]).await?;
    assert!(
        shown.stdout.contains("ModelNotReady")
            && shown.stdout.contains("downloading Qwen/Qwen3-0.6B"),
        "{}",
        shown.stdout
    );

    // The volume appears: the Job's pod runs and completes (kwok), then the pool scales up.
    let claims: Api<PersistentVolumeClaim> = ns.api();
    let claim = claims.get("cached-model").await?;
    let volume: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": format!("{}-model", ns.name())},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
                 "storageClassName": class, "hostPath": {"path": "/tmp/infera-model"},
                 "claimRef": {"namespace": ns.name(), "name": "cached-model", "uid": claim.metadata.uid}},
    }))?;
    let volumes: Api<PersistentVolume> = Api::all(admin.clone());
    volumes.create(&Default::default(), &volume).await?;
    wait_for(&ideps, "cached", State::Ready).await?;
    let download = pods
        .list(&ListParams::default().labels(&format!("{LABEL_SERVICE}=model")))
        .await?;
    let done = download
        .items
        .iter()
        .flat_map(|pod| {
            pod.status
                .iter()
                .flat_map(|s| s.container_statuses.iter().flatten())
        })
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.clone())
        .map(|t| t.0)
        .max()
        .ok_or_else(|| anyhow::anyhow!("no finished download pod: {download:?}"))?;
    let jobs: Api<Job> = ns.api();
    let succeeded = jobs
        .get("cached-model")
        .await?
        .status
        .and_then(|s| s.succeeded);
    assert_eq!(succeeded, Some(1));
    let workers = pods.list(&gpu_pods).await?.items;
    assert_eq!(workers.len(), 1);
    for pod in &workers {
        let created = pod.metadata.creation_timestamp.clone().map(|t| t.0);
        assert!(
            created.is_some_and(|created| created >= done),
            "GPU pod {created:?} created before the download finished at {done:?}"
        );
        let args = pod.spec.clone().unwrap_or_default().containers[0]
            .args
            .clone()
            .unwrap_or_default();
        assert!(
            args.windows(2).any(|w| w == ["--model-path", "/models"]),
            "{args:?}"
        );
    }
    let status = ideps.get("cached").await?.status.unwrap_or_default();
    let model = status.conditions.iter().find(|c| c.type_ == "ModelReady");
    assert_eq!(
        model.map(|c| (c.status.as_str(), c.reason.as_str())),
        Some(("True", "Downloaded"))
    );

    // The kubelet puts what the container wrote to /dev/termination-log (the commit the download
    // got) into its terminated state; kwok does not run the script, so the test writes it as the
    // kubelet would, and the operator reports it as the resolved revision.
    let commit = "c1e7ed4b1f4ea4bd5e1c41f8bb25c8b8d7f0e2a1";
    let finished = download
        .items
        .iter()
        .find(|pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded"))
        .ok_or_else(|| anyhow::anyhow!("no succeeded download pod"))?;
    let mut statuses = finished
        .status
        .clone()
        .unwrap_or_default()
        .container_statuses
        .unwrap_or_default();
    for container in &mut statuses {
        if let Some(terminated) = container.state.as_mut().and_then(|s| s.terminated.as_mut()) {
            terminated.message = Some(format!("{commit}\n"));
        }
    }
    pods.patch_status(
        &finished.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"containerStatuses": statuses}})),
    )
    .await?;
    let resolved = async || {
        let status = ideps.get("cached").await?.status.unwrap_or_default();
        let model = status
            .models
            .get("cached-model")
            .cloned()
            .unwrap_or_default();
        anyhow::ensure!(
            model.resolved_revision.as_deref() == Some(commit),
            "status.models: {:?}",
            status.models
        );
        anyhow::Ok(model)
    };
    let model = eventually(Duration::from_secs(30), resolved).await?;
    assert_eq!(model.source, "hf://Qwen/Qwen3-0.6B");
    let shown = kubectl(&["infera", "status", "cached", "-n", ns.name()]).await?;
    assert!(
        shown.stdout.contains("cached-model") && shown.stdout.contains(commit),
        "{}",
        shown.stdout
    );

    operator.ensure_running()?;
    volumes
        .delete(&format!("{}-model", ns.name()), &Default::default())
        .await?;
    ns.cleanup().await
}

/// An `hf://` model of a downloaded deployment moves to another revision: the download Job's pod
/// template is immutable, so the operator replaces the Job (a new uid, of the new source) rather
/// than failing to apply it, and the deployment ends Ready with the new source in `status.models`.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_model_revision_replaces_the_download_job() -> anyhow::Result<()> {
    use k8s_openapi::api::batch::v1::Job;
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "amd-revision").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    let spec = |source: &str| {
        json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "swap"},
            "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
                "model": {"source": source, "cache": {"size": "1Gi"}},
                "services": {
                    "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
                    "worker": {"componentType": "worker", "resources": {"gpu": 1}, "args": ["--tp-size", "1"]},
                }},
        })
        .to_string()
    };
    apply_yaml_in(&admin, ns.name(), &spec("hf://Qwen/Qwen3-0.6B@v1")).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    wait_for(&ideps, "swap", State::Ready).await?;
    let jobs: Api<Job> = ns.api();
    let first = jobs.get("swap-model").await?.uid();

    apply_yaml_in(&admin, ns.name(), &spec("hf://Qwen/Qwen3-0.6B@v2")).await?;
    let replaced = async || {
        let job = jobs.get("swap-model").await?;
        let command = job
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|s| s.containers.first())
            .and_then(|c| c.command.clone())
            .unwrap_or_default();
        let idep = ideps.get("swap").await?;
        let status = idep.status.clone().unwrap_or_default();
        anyhow::ensure!(
            job.uid() != first
                && command.contains(&"v2".to_string())
                && job.status.as_ref().and_then(|s| s.succeeded) == Some(1)
                && status.observed_generation == idep.metadata.generation
                && status.state == Some(State::Ready),
            "job {:?} {command:?}, status {:?}",
            job.uid(),
            status.conditions
        );
        anyhow::Ok(status)
    };
    let status = eventually(TIMEOUT, replaced).await?;
    assert_eq!(
        status.models.get("swap-model").map(|m| m.source.as_str()),
        Some("hf://Qwen/Qwen3-0.6B@v2")
    );

    operator.ensure_running()?;
    ns.cleanup().await
}

/// A download that cannot start (its volume is never provisioned) times `deploy --wait` out with
/// the Job to follow; once the Job fails (the test marks it as the Job controller's backoff
/// limit does, `FailureTarget`, and the controller fails it), the deployment reports
/// `ModelReady=False, reason=DownloadFailed` with the Job's message, no GPU pod exists, and
/// `deploy --wait` stops at once naming the Job and the fix.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_download_is_download_failed_and_deploy_wait_explains_it() -> anyhow::Result<()> {
    use k8s_openapi::api::batch::v1::Job;
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "amd-failed").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, n).await?;
    let spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "broken"},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "model": {"source": "hf://Qwen/Qwen3-0.6B", "cache": {"size": "1Gi", "storageClassName": format!("held-{n}")}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
                "worker": {"componentType": "worker", "resources": {"gpu": 1}, "args": ["--tp-size", "1"]},
            }},
    });
    let file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("{n}-broken.yaml"));
    std::fs::write(&file, spec.to_string())?;
    let file = file.display().to_string();
    let deploy = [
        "infera",
        "deploy",
        "-f",
        &file,
        "-n",
        n,
        "--wait",
        "--timeout",
    ];
    let stuck = kubectl(&[&deploy[..], &["5s"]].concat())
        .await?
        .expect_code(3)?;
    assert!(
        stuck.stderr.contains("ModelNotReady")
            && stuck.stderr.contains(&format!(
                "follow it with `kubectl logs -n {n} -f job/broken-model`"
            )),
        "{}",
        stuck.stderr
    );

    let jobs: Api<Job> = ns.api();
    let now = "2026-01-01T00:00:00Z";
    let failing = json!({"status": {"conditions": [{
        "type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
        "message": "Job has reached the specified backoff limit",
        "lastProbeTime": now, "lastTransitionTime": now,
    }]}});
    jobs.patch_status(
        "broken-model",
        &PatchParams::default(),
        &Patch::Merge(failing),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let failed = async || {
        let status = ideps.get("broken").await?.status.unwrap_or_default();
        let model = status.conditions.iter().find(|c| c.type_ == "ModelReady");
        anyhow::ensure!(
            model.is_some_and(|c| c.status == "False" && c.reason == "DownloadFailed"),
            "{:?}",
            status.conditions
        );
        anyhow::Ok(model.map(|c| c.message.clone()).unwrap_or_default())
    };
    let message = eventually(TIMEOUT, failed).await?;
    assert_eq!(
        message,
        "downloading Qwen/Qwen3-0.6B failed: Job broken-model: BackoffLimitExceeded: Job has reached the specified backoff limit"
    );
    let pods: Api<Pod> = ns.api();
    let gpu_pods = ListParams::default().labels(&format!("{LABEL_SERVICE}=worker"));
    assert!(pods.list(&gpu_pods).await?.items.is_empty());

    let explained = kubectl(&[&deploy[..], &["60s"]].concat())
        .await?
        .expect_code(1)?;
    assert!(
        explained.stderr.contains(&message)
            && explained.stderr.contains(&format!(
                "retry with `kubectl delete -n {n} job/broken-model`"
            )),
        "{}",
        explained.stderr
    );

    operator.ensure_running()?;
    ns.cleanup().await
}

/// On a cluster whose nodes advertise RDMA NICs, the wizard offers them for a pd deployment
/// (with the count on the nodes), then asks for the Multus networks and the IB device, and the
/// spec gets `network.rdma` from the answers.
#[tokio::test(flavor = "multi_thread")]
async fn the_wizard_offers_the_rdma_nics_the_nodes_advertise() -> anyhow::Result<()> {
    use infera_e2e::plugin::{ENTER, Pty};
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "amd-wizard").await?;
    let node = FakeNode::create_with(&admin, "wiz-nics", 8, &[], &[("rdma/hca", "8")]).await?;
    let command = format!(
        "kubectl infera deploy -n {} --backend sglang --model Qwen/Qwen3-0.6B --topology pd \
         --image rocm/infera:sglang-v0.1.1 --gpus 1 --tp 1 --prefill-replicas 1 --decode-replicas 1 \
         --memory 64Gi --shared-memory 32Gi --gpu-product MI300X --transfer-backend mori \
         --router-policy kv-aware --nats --discovery kubernetes --dry-run=client -o yaml",
        ns.name()
    );
    let mut pty = Pty::spawn(&command)?;
    let wait = Duration::from_secs(30);
    pty.expect("Name of the deployment", wait).await?;
    pty.send(&format!("wiz-rdma{ENTER}")).await?;
    pty.expect("RDMA NICs for the KV transfer", wait).await?;
    pty.expect("rdma/hca — ", wait).await?;
    // Typing filters the choices: the one resource, whatever else the cluster advertises.
    pty.send(&format!("rdma/hca{ENTER}")).await?;
    pty.expect("Multus networks to attach", wait).await?;
    pty.send(&format!("rdma-net{ENTER}")).await?;
    pty.expect("RDMA device", wait).await?;
    pty.send(&format!("rdma0{ENTER}")).await?;
    pty.expect("resourceName: rdma/hca", wait).await?;
    let screen = pty.screen();
    let code = pty.wait(wait).await?;
    anyhow::ensure!(code == 0, "wizard exited {code}:\n{screen}");
    for expected in ["- rdma-net", "device: rdma0", "--rdma-resource rdma/hca"] {
        anyhow::ensure!(screen.contains(expected), "no {expected:?} in:\n{screen}");
    }
    anyhow::ensure!(!screen.contains("No node advertises RDMA NICs"), "{screen}");

    node.delete(&admin).await?;
    ns.cleanup().await
}
