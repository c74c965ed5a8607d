//! The provider discipline of seed 003, each a named test: deleting an InferaDeployment leaves
//! nothing of any kind the render produces or the cluster derives from it (ReplicaSets, the LWS
//! StatefulSets and pods, the NATS claims, EndpointSlices), checked with one list per kind by
//! label and by owner; deletion is idempotent (twice, with the operator down, with a child
//! already gone); a child deleted by hand is re-created; a crash-looping pod is explained in the
//! status and by `deploy --wait`.

use std::{collections::BTreeSet, time::Duration};

use infera_core::{ChildKind, InferaDeployment};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    k8s_openapi::api::{
        apps::v1::{ControllerRevision, Deployment, ReplicaSet, StatefulSet},
        core::v1::{PersistentVolumeClaim, Pod},
        discovery::v1::EndpointSlice,
    },
    kube::{
        Api, Client, ResourceExt,
        api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams},
        core::ApiResource,
    },
    operator::{Operator, install},
    plugin::kubectl,
};

const TIMEOUT: Duration = Duration::from_secs(120);

/// Every kind of child at once: discovery RBAC, managed NATS with its claim, a single-node and a
/// multi-node pool, and the Inference Gateway objects.
const EVERYTHING: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: all}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  nats: {deploy: true, storageSize: 1Gi}
  gaie: {enabled: true, gatewayName: inference-gateway, tokenizerPath: Qwen/Qwen3-0.6B}
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    prefill: {componentType: worker, role: prefill, replicas: 0, resources: {gpu: 1}}
    decode:
      componentType: worker
      role: decode
      replicas: 0
      numberOfNodes: 2
      resources: {gpu: 1}
      args: ["--tp-size", "2"]
"#;

/// The kinds to search after a deletion: every child kind, and what controllers derive from them.
fn kinds() -> Vec<ApiResource> {
    let mut kinds: Vec<ApiResource> = ChildKind::ALL.iter().map(|k| k.api_resource()).collect();
    kinds.extend([
        ApiResource::erase::<ReplicaSet>(&()),
        ApiResource::erase::<ControllerRevision>(&()),
        ApiResource::erase::<Pod>(&()),
        ApiResource::erase::<PersistentVolumeClaim>(&()),
        ApiResource::erase::<EndpointSlice>(&()),
    ]);
    kinds
}

/// Objects of `kinds` in `namespace` that carry the deployment's label or whose owner is one of
/// `owners`, as `Kind/name`. A kind of ours whose CRD the cluster lacks has none.
async fn remaining(
    client: &Client,
    namespace: &str,
    deployment: &str,
    owners: &BTreeSet<String>,
) -> anyhow::Result<Vec<String>> {
    let mut found = Vec::new();
    for kind in kinds() {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &kind);
        let items = match api.list(&ListParams::default()).await {
            Ok(list) => list.items,
            Err(infera_e2e::kube::Error::Api(s)) if s.code == 404 => {
                anyhow::ensure!(
                    infera_e2e::crd_not_installed(client, &kind).await?,
                    "listing {} answered 404 though the cluster serves it",
                    kind.kind
                );
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        for item in items {
            let labelled = item
                .labels()
                .get(infera_core::naming::LABEL_DEPLOYMENT)
                .is_some_and(|d| d == deployment);
            let owned = item
                .owner_references()
                .iter()
                .any(|o| owners.contains(&o.uid));
            if labelled || owned {
                found.push(format!("{}/{}", kind.kind, item.name_any()));
            }
        }
    }
    Ok(found)
}

/// The uids of every object in `namespace` of the kinds searched, so ownership is checked against
/// what existed before the deletion.
async fn uids(client: &Client, namespace: &str) -> anyhow::Result<BTreeSet<String>> {
    let mut uids = BTreeSet::new();
    for kind in kinds() {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &kind);
        if let Ok(list) = api.list(&ListParams::default()).await {
            uids.extend(list.items.iter().filter_map(|i| i.uid()));
        }
    }
    Ok(uids)
}

#[tokio::test(flavor = "multi_thread")]
async fn deletion_leaves_nothing_of_any_kind_and_is_idempotent() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "conformance").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let operator = Operator::start_in(&identity, n).await?;
    apply_yaml_in(&admin, n, EVERYTHING).await?;

    // Wait for what controllers derive: the LWS StatefulSet and the NATS claim.
    let statefulsets: Api<StatefulSet> = ns.api();
    let claims: Api<PersistentVolumeClaim> = ns.api();
    eventually(TIMEOUT, || async {
        let sets = statefulsets.list(&ListParams::default()).await?.items;
        anyhow::ensure!(sets.len() >= 2, "statefulsets so far: {}", sets.len());
        let claims = claims.list(&ListParams::default()).await?.items;
        anyhow::ensure!(!claims.is_empty(), "no NATS claim yet");
        Ok(())
    })
    .await?;

    // Lost state is repaired: a child deleted by hand comes back.
    let deployments: Api<Deployment> = ns.api();
    let before = deployments.get("all-server").await?.uid();
    deployments
        .delete("all-server", &DeleteParams::default())
        .await?;
    eventually(TIMEOUT, || async {
        let now = deployments
            .get_opt("all-server")
            .await?
            .and_then(|d| d.uid());
        anyhow::ensure!(now.is_some() && now != before, "all-server not re-created");
        Ok(())
    })
    .await?;

    let ideps: Api<InferaDeployment> = ns.api();
    let mut owners = uids(&admin, n).await?;
    owners.extend(ideps.get("all").await?.uid());

    // The operator is down, a child is already gone, and the deployment is deleted twice.
    operator.kill().await?;
    deployments
        .delete("all-prefill", &DeleteParams::default())
        .await?;
    ideps.delete("all", &DeleteParams::foreground()).await?;
    match ideps.delete("all", &DeleteParams::foreground()).await {
        Ok(_) => {}
        Err(infera_e2e::kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => return Err(e.into()),
    }

    eventually(TIMEOUT, || async {
        anyhow::ensure!(ideps.get_opt("all").await?.is_none(), "all still exists");
        let left = remaining(&admin, n, "all", &owners).await?;
        anyhow::ensure!(left.is_empty(), "left behind: {left:?}");
        Ok(())
    })
    .await?;
    ns.cleanup().await
}

/// One worker pod of one GPU.
const ONE_WORKER: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: crashy}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server: {componentType: server, replicas: 0, args: [--router-tokenizer-path, m]}
    worker: {componentType: worker, replicas: 1, resources: {gpu: 1}}
"#;

/// Restart observation: the engine of a running worker pod starts crash-looping (its status
/// patched as the kubelet would write it; kwok leaves a Running pod's status alone). The reason,
/// restarts and last exit appear in the InferaDeployment's `Ready` condition, and `deploy --wait`
/// times out explaining it.
#[tokio::test(flavor = "multi_thread")]
async fn a_crash_looping_pod_is_explained_in_status_and_by_deploy_wait() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "crashloop").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    let file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join(format!("{n}-crashy.yaml"));
    std::fs::write(&file, ONE_WORKER)?;
    let file = file.display().to_string();
    kubectl(&[
        "infera",
        "deploy",
        "-f",
        &file,
        "-n",
        n,
        "--wait",
        "--timeout",
        "90s",
    ])
    .await?
    .expect_code(0)?;

    let pods: Api<Pod> = ns.api();
    let selector = format!("{}=worker", infera_core::naming::LABEL_SERVICE);
    let pod = pods
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no worker pod"))?;
    let now = "2026-01-01T00:00:00Z";
    let crashing = serde_json::json!({"status": {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "False", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": "False", "lastTransitionTime": now},
        ],
        "containerStatuses": [{
            "name": infera_core::naming::ENGINE_CONTAINER, "image": "rocm/infera:sglang-v0.1.1",
            "imageID": "", "ready": false, "restartCount": 3,
            "state": {"waiting": {"reason": "CrashLoopBackOff",
                                  "message": "back-off 40s restarting failed container"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                         "startedAt": now, "finishedAt": now}},
        }],
    }});
    pods.patch_status(
        &pod.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&crashing),
    )
    .await?;

    let ideps: Api<InferaDeployment> = ns.api();
    eventually(TIMEOUT, || async {
        let idep = ideps.get("crashy").await?;
        let message = idep
            .status
            .iter()
            .flat_map(|s| &s.conditions)
            .find(|c| c.type_ == "Ready")
            .map(|c| c.message.clone())
            .unwrap_or_default();
        anyhow::ensure!(
            message.contains("worker: 0/1 ready")
                && message.contains("CrashLoopBackOff, 3 restarts, last exit 1 (Error)"),
            "Ready says: {message}"
        );
        Ok(())
    })
    .await?;
    let waited = kubectl(&[
        "infera",
        "deploy",
        "-f",
        &file,
        "-n",
        n,
        "--wait",
        "--timeout",
        "10s",
    ])
    .await?
    .expect_code(3)?;
    anyhow::ensure!(
        waited.stderr.contains("crash-looping") && waited.stderr.contains(&pod.name_any()),
        "{}",
        waited.stderr
    );
    ns.cleanup().await
}
