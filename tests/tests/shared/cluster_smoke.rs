//! Proof that the local control plane of tests/cluster/ is a real cluster: scheduling on extended
//! resources, garbage collection, the LeaderWorkerSet controller and its webhooks, server-side apply
//! conflicts, RBAC, ServiceAccount tokens and volume binding.
//!
//! Needs a tier-2 cluster (`tests/run-e2e.sh`, or `eval "$(tests/cluster/up.sh)"` then
//! `cargo test -p infera-e2e --test shared -- cluster_smoke::`). Tests run in parallel: each has its own namespace, and the one that
//! fills a node with GPUs creates a tainted node of its own.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context as _, ensure};
use infera_e2e::k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use infera_e2e::k8s_openapi::api::core::v1::{
    ConfigMap, Event, PersistentVolumeClaim, Pod, ServiceAccount,
};
use infera_e2e::kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
    PostParams,
};
use infera_e2e::kube::{Api, Client};
use infera_e2e::{FakeNode, ServiceAccountIdentity, TestNamespace, admin, eventually, user};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(90);

fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> anyhow::Result<T> {
    serde_json::from_value(v).context("test fixture does not deserialize")
}

fn pod_running_and_ready(p: &Pod) -> bool {
    let Some(status) = p.status.as_ref() else {
        return false;
    };
    status.phase.as_deref() == Some("Running")
        && status
            .conditions
            .as_deref()
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn summary(pods: &[Pod]) -> String {
    pods.iter()
        .map(|p| {
            format!(
                "{}={}@{}",
                p.metadata.name.as_deref().unwrap_or("?"),
                p.status
                    .as_ref()
                    .and_then(|s| s.phase.as_deref())
                    .unwrap_or("?"),
                p.spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .unwrap_or("-"),
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Pods matching `selector` in `ns`, once there are exactly `n` and all are Running and Ready.
async fn wait_pods_ready(pods: &Api<Pod>, selector: &str, n: usize) -> anyhow::Result<Vec<Pod>> {
    let lp = ListParams::default().labels(selector);
    eventually(WAIT, || async {
        let list = pods.list(&lp).await?.items;
        ensure!(
            list.len() == n && list.iter().all(pod_running_and_ready),
            "want {n} Running+Ready pods for {selector}, have: [{}]",
            summary(&list)
        );
        Ok(list)
    })
    .await
}

fn gpu_pod(name: &str, gpus: u32, node: &FakeNode) -> anyhow::Result<Pod> {
    from_json(json!({
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node.name()},
            "tolerations": [node.toleration()],
            "containers": [{
                "name": "c", "image": "example.invalid/gpu:1",
                "resources": {"limits": {"amd.com/gpu": gpus.to_string()}}
            }]
        }
    }))
}

#[tokio::test]
async fn apiserver_is_the_pinned_kubernetes_version() -> anyhow::Result<()> {
    let client = admin().await?;
    let v = client.apiserver_version().await?;
    ensure!(
        v.major == "1" && v.minor == "36",
        "unexpected server version {v:?}"
    );
    Ok(())
}

#[tokio::test]
async fn gpu_deployment_gets_running_pods_on_fake_gpu_nodes() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-gpu-deploy").await?;
    let deploy: Deployment = from_json(json!({
        "metadata": {"name": "gpu"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "gpu"}},
            "template": {
                "metadata": {"labels": {"app": "gpu"}},
                "spec": {"containers": [{
                    "name": "c", "image": "example.invalid/gpu:1",
                    "resources": {"limits": {"amd.com/gpu": "1"}}
                }]}
            }
        }
    }))?;
    ns.api::<Deployment>()
        .create(&PostParams::default(), &deploy)
        .await?;
    let pods = wait_pods_ready(&ns.api::<Pod>(), "app=gpu", 2).await?;
    for p in &pods {
        let node = p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or_default();
        ensure!(
            node.starts_with("gpu-node-"),
            "pod scheduled to {node:?}, not a fake GPU node"
        );
        let ip = p
            .status
            .as_ref()
            .and_then(|s| s.pod_ip.as_deref())
            .unwrap_or_default();
        ensure!(!ip.is_empty(), "kwok gave the pod no IP");
    }
    // The Deployment controller sees them as available.
    let deployments = ns.api::<Deployment>();
    eventually(WAIT, || async {
        let d = deployments.get("gpu").await?;
        let available = d.status.and_then(|s| s.available_replicas).unwrap_or(0);
        ensure!(available == 2, "availableReplicas = {available}");
        Ok(())
    })
    .await?;
    ns.cleanup().await
}

#[tokio::test]
async fn ninth_gpu_pod_on_a_full_node_stays_pending_with_insufficient_gpu() -> anyhow::Result<()> {
    let client = admin().await?;
    // A node of our own, tainted: filling it starves no other test.
    let node = FakeNode::create(&client, "smoke-full", 8).await?;
    let ns = TestNamespace::new(&client, "smoke-gpu-full").await?;
    let pods = ns.api::<Pod>();

    pods.create(&PostParams::default(), &gpu_pod("fill", 8, &node)?)
        .await?;
    eventually(WAIT, || async {
        let p = pods.get("fill").await?;
        ensure!(
            pod_running_and_ready(&p),
            "fill: {}",
            summary(std::slice::from_ref(&p))
        );
        Ok(())
    })
    .await?;

    pods.create(&PostParams::default(), &gpu_pod("ninth", 1, &node)?)
        .await?;
    let events: Api<Event> = ns.api();
    let lp = ListParams::default().fields("involvedObject.name=ninth,reason=FailedScheduling");
    let message = eventually(WAIT, || async {
        let list = events.list(&lp).await?.items;
        list.iter()
            .filter_map(|e| e.message.clone())
            .find(|m| m.contains("Insufficient amd.com/gpu"))
            .ok_or_else(|| anyhow::anyhow!("no FailedScheduling event yet: {list:?}"))
    })
    .await?;
    eprintln!("scheduler said: {message}");

    let ninth = pods.get("ninth").await?;
    ensure!(
        ninth.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending")
            && ninth
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_none(),
        "the ninth GPU pod was placed: {}",
        summary(std::slice::from_ref(&ninth))
    );

    // Freeing the GPUs lets it schedule: the pending state was really about capacity.
    pods.delete("fill", &DeleteParams::default()).await?;
    eventually(WAIT, || async {
        let p = pods.get("ninth").await?;
        ensure!(
            pod_running_and_ready(&p),
            "ninth: {}",
            summary(std::slice::from_ref(&p))
        );
        Ok(())
    })
    .await?;

    // Pods on the node must be gone before the node is: kwok finalizes their deletion.
    ns.cleanup_and_wait(WAIT).await?;
    node.delete(&client).await
}

#[tokio::test]
async fn deleting_an_owner_garbage_collects_its_children() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-gc").await?;

    // A Deployment's ReplicaSet and Pods (owned by the controllers' ownerReferences).
    let deploy: Deployment = from_json(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "example.invalid/web:1"}]}
            }
        }
    }))?;
    let deployments = ns.api::<Deployment>();
    let rss = ns.api::<ReplicaSet>();
    let pods = ns.api::<Pod>();
    deployments.create(&PostParams::default(), &deploy).await?;
    wait_pods_ready(&pods, "app=web", 1).await?;
    ensure!(
        !rss.list(&ListParams::default()).await?.items.is_empty(),
        "no ReplicaSet"
    );

    // An object we own ourselves: ConfigMap child of a ConfigMap parent.
    let cms = ns.api::<ConfigMap>();
    let parent = cms
        .create(
            &PostParams::default(),
            &from_json(json!({"metadata": {"name": "parent"}}))?,
        )
        .await?;
    let uid = parent.metadata.uid.clone().context("parent has no uid")?;
    let child: ConfigMap = from_json(json!({
        "metadata": {"name": "child", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "parent", "uid": uid,
            "controller": true, "blockOwnerDeletion": true
        }]}
    }))?;
    cms.create(&PostParams::default(), &child).await?;

    deployments
        .delete("web", &DeleteParams::background())
        .await?;
    cms.delete("parent", &DeleteParams::foreground()).await?;
    eventually(WAIT, || async {
        let left_rs = rss.list(&ListParams::default()).await?.items.len();
        let left_pods = pods
            .list(&ListParams::default().labels("app=web"))
            .await?
            .items
            .len();
        let child = cms.get_opt("child").await?.is_some();
        let parent = cms.get_opt("parent").await?.is_some();
        ensure!(
            left_rs == 0 && left_pods == 0 && !child && !parent,
            "left: {left_rs} ReplicaSets, {left_pods} Pods, child {child}, parent {parent}"
        );
        Ok(())
    })
    .await?;
    ns.cleanup().await
}

#[tokio::test]
async fn leaderworkerset_becomes_ready_with_pods_labelled_by_its_webhook() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-lws").await?;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
        "leaderworkersets",
    );
    let lws_api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns.name(), &ar);
    let lws: DynamicObject = from_json(json!({
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "serve"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{
                    "name": "c", "image": "example.invalid/vllm:1",
                    "resources": {"limits": {"amd.com/gpu": "1"}}
                }]}}
            }
        }
    }))?;
    let created = lws_api.create(&PostParams::default(), &lws).await?;
    // The mutating webhook defaulted the spec (e.g. the rollout strategy) on the way in.
    ensure!(
        created.data["spec"]["rolloutStrategy"]["type"].is_string(),
        "LWS was not defaulted by its webhook: {}",
        created.data["spec"]
    );

    let pods = wait_pods_ready(
        &ns.api::<Pod>(),
        "leaderworkerset.sigs.k8s.io/name=serve",
        4,
    )
    .await?;
    let mut seen = BTreeSet::new();
    for p in &pods {
        let labels = p.metadata.labels.clone().unwrap_or_default();
        let group = labels
            .get("leaderworkerset.sigs.k8s.io/group-index")
            .cloned();
        let worker = labels
            .get("leaderworkerset.sigs.k8s.io/worker-index")
            .cloned();
        ensure!(
            labels.contains_key("leaderworkerset.sigs.k8s.io/group-key"),
            "pod {:?} lacks the webhook's group-key label: {labels:?}",
            p.metadata.name
        );
        seen.insert((group, worker));
    }
    let want: BTreeSet<_> = [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")]
        .into_iter()
        .map(|(g, w)| (Some(g.to_owned()), Some(w.to_owned())))
        .collect();
    ensure!(seen == want, "group/worker indexes {seen:?}");

    eventually(WAIT, || async {
        let o = lws_api.get("serve").await?;
        let ready = o.data["status"]["readyReplicas"].as_i64().unwrap_or(0);
        let available = o.data["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Available" && c["status"] == "True");
        ensure!(ready == 2 && available, "LWS status: {}", o.data["status"]);
        Ok(())
    })
    .await?;
    // The leader StatefulSet plus one worker StatefulSet per group.
    let sts = ns
        .api::<StatefulSet>()
        .list(&ListParams::default())
        .await?
        .items;
    ensure!(sts.len() == 3, "{} StatefulSets", sts.len());
    ns.cleanup().await
}

#[tokio::test]
async fn two_field_managers_applying_the_same_field_conflict() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-ssa").await?;
    let cms = ns.api::<ConfigMap>();
    let cm = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"key": v}});

    cms.patch(
        "shared",
        &PatchParams::apply("manager-a"),
        &Patch::Apply(cm("a")),
    )
    .await?;
    match cms
        .patch(
            "shared",
            &PatchParams::apply("manager-b"),
            &Patch::Apply(cm("b")),
        )
        .await
    {
        Err(infera_e2e::kube::Error::Api(s)) => {
            ensure!(
                s.code == 409 && s.reason == "Conflict",
                "expected 409 Conflict, got {s:?}"
            );
            ensure!(
                s.message.contains("manager-a"),
                "conflict does not name the owner: {}",
                s.message
            );
        }
        other => anyhow::bail!("expected a 409 conflict, got {other:?}"),
    }
    // Forcing takes ownership.
    let forced = cms
        .patch(
            "shared",
            &PatchParams::apply("manager-b").force(),
            &Patch::Apply(cm("b")),
        )
        .await?;
    let value = forced
        .data
        .as_ref()
        .and_then(|d| d.get("key"))
        .map(String::as_str);
    ensure!(value == Some("b"), "after the forced apply key = {value:?}");
    // Re-applying the same intent is a no-op: same resourceVersion.
    let again = cms
        .patch(
            "shared",
            &PatchParams::apply("manager-b"),
            &Patch::Apply(cm("b")),
        )
        .await?;
    ensure!(
        again.metadata.resource_version == forced.metadata.resource_version,
        "no-op apply changed the object"
    );
    ns.cleanup().await
}

fn expect_forbidden<T: std::fmt::Debug>(
    what: &str,
    r: Result<T, infera_e2e::kube::Error>,
) -> anyhow::Result<()> {
    match r {
        Err(infera_e2e::kube::Error::Api(s)) if s.code == 403 && s.reason == "Forbidden" => Ok(()),
        other => anyhow::bail!("{what}: expected 403 Forbidden, got {other:?}"),
    }
}

async fn grant_pod_reader(
    client: &Client,
    ns: &str,
    subject: serde_json::Value,
) -> anyhow::Result<()> {
    let yaml = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: pod-reader}}\n\
         rules: [{{apiGroups: [\"\"], resources: [pods], verbs: [get, list]}}]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: pod-reader}}\n\
         roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}}\n\
         subjects: [{subject}]\n"
    );
    infera_e2e::apply_yaml_in(client, ns, &yaml).await?;
    Ok(())
}

#[tokio::test]
async fn unprivileged_users_are_forbidden_until_bound() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-rbac").await?;
    let alice = user("alice").await?;
    let bob = user("bob").await?;
    let alice_pods: Api<Pod> = Api::namespaced(alice, ns.name());
    let bob_pods: Api<Pod> = Api::namespaced(bob, ns.name());
    expect_forbidden(
        "alice lists pods",
        alice_pods.list(&ListParams::default()).await,
    )?;
    expect_forbidden(
        "bob lists pods",
        bob_pods.list(&ListParams::default()).await,
    )?;
    let cm: ConfigMap = from_json(json!({"metadata": {"name": "x"}}))?;
    let alice_cms: Api<ConfigMap> = Api::namespaced(user("alice").await?, ns.name());
    expect_forbidden(
        "alice creates a ConfigMap",
        alice_cms.create(&PostParams::default(), &cm).await,
    )?;

    // RBAC is live: a RoleBinding lets alice read pods (only), and only in this namespace.
    grant_pod_reader(
        &client,
        ns.name(),
        json!({"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}),
    )
    .await?;
    eventually(WAIT, || async {
        alice_pods.list(&ListParams::default()).await.map(|_| ())
    })
    .await?;
    expect_forbidden(
        "bob still lists pods",
        bob_pods.list(&ListParams::default()).await,
    )?;
    let alice_default: Api<Pod> = Api::namespaced(user("alice").await?, "default");
    expect_forbidden(
        "alice lists pods elsewhere",
        alice_default.list(&ListParams::default()).await,
    )?;
    ns.cleanup().await
}

#[tokio::test]
async fn service_account_token_and_impersonation_follow_rbac() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-sa").await?;
    let dir = infera_e2e::target_dir().join("e2e-kubeconfigs");
    let id = ServiceAccountIdentity::create(
        &client,
        ns.name(),
        "operator",
        Duration::from_secs(3600),
        &dir.join(format!("{}-operator.kubeconfig", ns.name())),
    )
    .await?;
    let by_token: Api<Pod> = Api::namespaced(id.client().await?, ns.name());
    let by_impersonation: Api<Pod> = Api::namespaced(
        infera_e2e::impersonating(ns.name(), "operator").await?,
        ns.name(),
    );
    expect_forbidden(
        "SA token lists pods",
        by_token.list(&ListParams::default()).await,
    )?;
    expect_forbidden(
        "impersonated SA lists pods",
        by_impersonation.list(&ListParams::default()).await,
    )?;

    grant_pod_reader(
        &client,
        ns.name(),
        json!({"kind": "ServiceAccount", "name": "operator"}),
    )
    .await?;
    eventually(WAIT, || async {
        by_token.list(&ListParams::default()).await.map(|_| ())
    })
    .await?;
    by_impersonation.list(&ListParams::default()).await?;

    // The kubeconfig works for other programs too: kubectl authenticates as the ServiceAccount.
    let out = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&id.kubeconfig)
        .args([
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ])
        .output()
        .await
        .context("running kubectl")?;
    let who = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success() && who == id.username(),
        "kubectl auth whoami: {who:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sa = ns.api::<ServiceAccount>().get("operator").await?;
    ensure!(sa.metadata.name.as_deref() == Some("operator"));
    ns.cleanup().await
}

#[tokio::test]
async fn pvcs_bind_through_the_default_storage_class() -> anyhow::Result<()> {
    let client = admin().await?;
    let ns = TestNamespace::new(&client, "smoke-pvc").await?;
    let pvc: PersistentVolumeClaim = from_json(json!({
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }))?;
    let pvcs = ns.api::<PersistentVolumeClaim>();
    pvcs.create(&PostParams::default(), &pvc).await?;
    eventually(WAIT, || async {
        let p = pvcs.get("data").await?;
        let phase = p.status.as_ref().and_then(|s| s.phase.clone());
        ensure!(phase.as_deref() == Some("Bound"), "PVC phase {phase:?}");
        let class = p.spec.as_ref().and_then(|s| s.storage_class_name.clone());
        ensure!(class.is_some(), "no StorageClass was defaulted");
        Ok(())
    })
    .await?;

    // A StatefulSet with a volumeClaimTemplate (what NATS JetStream needs) gets a Running pod.
    let sts: StatefulSet = from_json(json!({
        "metadata": {"name": "nats"},
        "spec": {
            "serviceName": "nats",
            "replicas": 1,
            "selector": {"matchLabels": {"app": "nats"}},
            "template": {
                "metadata": {"labels": {"app": "nats"}},
                "spec": {"containers": [{
                    "name": "nats", "image": "example.invalid/nats:2",
                    "volumeMounts": [{"name": "js", "mountPath": "/data"}]
                }]}
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "js"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    }))?;
    ns.api::<StatefulSet>()
        .create(&PostParams::default(), &sts)
        .await?;
    wait_pods_ready(&ns.api::<Pod>(), "app=nats", 1).await?;
    let claim = pvcs.get("js-nats-0").await?;
    ensure!(
        claim.status.and_then(|s| s.phase).as_deref() == Some("Bound"),
        "js-nats-0 is not Bound"
    );
    ns.cleanup().await
}
