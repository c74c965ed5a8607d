//! infera-operator end to end on the tier-2 cluster. Every test runs its own operator process,
//! scoped to the test's namespace, authenticated as the operator's ServiceAccount under exactly
//! the shipped RBAC (a missing rule fails the test).

use std::{collections::BTreeMap, time::Duration};

use anyhow::Context as _;
use infera_core::{InferaDeployment, State, naming::LABEL_DEPLOYMENT};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api, Client, ResourceExt,
        api::{DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams},
    },
    operator::{Operator, install},
    plugin::doctor_check,
    target_dir,
};
use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{Node, NodeSpec, NodeStatus, Pod},
        discovery::v1::EndpointSlice,
        networking::v1::NetworkPolicy,
    },
    apimachinery::pkg::api::resource::Quantity,
};
use serde_json::json;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

struct Setup {
    admin: Client,
    ns: TestNamespace,
    operator: Operator,
}

async fn setup(prefix: &str) -> anyhow::Result<Setup> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, prefix).await?;
    let identity = install(&admin).await?;
    let log = format!("operator-{}", ns.name());
    let operator = Operator::start(
        &identity,
        &["--namespace", ns.name(), "--log-format=json"],
        &log,
    )
    .await?;
    Ok(Setup {
        admin,
        ns,
        operator,
    })
}

fn example(file: &str) -> anyhow::Result<String> {
    let path = format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))
}

/// A small aggregated deployment; `gpu_type` lets a test use GPUs no other test competes for.
fn small(name: &str, gpu_type: &str, workers: &[(&str, i32)]) -> String {
    let mut services = json!({"server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]}});
    for (worker, replicas) in workers {
        services[*worker] = json!({
            "componentType": "worker", "replicas": replicas,
            "resources": {"gpu": 1, "gpuType": gpu_type},
            "args": ["--model-path", "Qwen/Qwen3-0.6B"],
        });
    }
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
        // Without NATS (the default now deploys one): these tests count the pools' objects.
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "nats": {"deploy": false}, "services": services},
    })
    .to_string()
}

async fn wait_for_state(
    api: &Api<InferaDeployment>,
    name: &str,
    state: State,
) -> anyhow::Result<InferaDeployment> {
    eventually(READY_TIMEOUT, || async {
        let idep = api.get(name).await?;
        let status = idep.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.state == Some(state),
            "state {:?}, conditions {:?}",
            status.state,
            status.conditions
        );
        anyhow::ensure!(
            status.observed_generation == idep.metadata.generation,
            "status of an older generation"
        );
        Ok(idep)
    })
    .await
}

fn ready_reason(idep: &InferaDeployment) -> (String, String) {
    let condition = idep.status.as_ref().and_then(|s| s.conditions.first());
    condition
        .map(|c| (c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

/// A kwok node of our own that advertises `gpus` of the extended resource `gpu_type`.
async fn gpu_node(admin: &Client, name: &str, gpu_type: &str, gpus: u32) -> anyhow::Result<()> {
    let resources: BTreeMap<String, Quantity> = [
        ("cpu", "64".to_string()),
        ("memory", "512Gi".to_string()),
        ("pods", "110".to_string()),
        (gpu_type, gpus.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Quantity(v)))
    .collect();
    let node = Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: Some([("kwok.x-k8s.io/node".to_string(), "fake".to_string())].into()),
            labels: Some(
                [
                    ("kubernetes.io/hostname".to_string(), name.to_string()),
                    ("type".to_string(), "kwok".to_string()),
                ]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            provider_id: Some(format!("kwok://{name}")),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            allocatable: Some(resources.clone()),
            capacity: Some(resources),
            ..Default::default()
        }),
    };
    Api::<Node>::all(admin.clone())
        .create(&PostParams::default(), &node)
        .await?;
    Ok(())
}

async fn delete_node(admin: &Client, name: &str) {
    let _ = Api::<Node>::all(admin.clone())
        .delete(name, &DeleteParams::default())
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_pd_example_becomes_ready_on_fake_gpu_nodes() -> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        mut operator,
    } = setup("op-pd").await?;
    apply_yaml_in(&admin, ns.name(), &example("pd.yaml")?).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let idep = wait_for_state(&ideps, "demo", State::Ready).await?;
    let status = idep.status.unwrap_or_default();
    assert_eq!(status.services["server"].ready_replicas, 2);
    assert_eq!(status.services["prefill"].ready_replicas, 1);
    assert_eq!(status.services["decode"].ready_replicas, 1);
    assert_eq!(status.services["nats"].kind, "StatefulSet");
    assert_eq!(
        status.endpoint.as_deref(),
        Some(format!("http://demo-server.{}.svc.cluster.local:8000", ns.name()).as_str())
    );

    let pods: Api<Pod> = ns.api();
    let pods = pods
        .list(&ListParams::default().labels(&format!("{LABEL_DEPLOYMENT}=demo")))
        .await?;
    assert_eq!(pods.items.len(), 5, "2 server, 1 prefill, 1 decode, 1 NATS");
    // The graph's NetworkPolicies: NATS's and the workers' (no Endpoint Picker without GAIE).
    let policies: Api<NetworkPolicy> = ns.api();
    let policies: Vec<String> = policies
        .list(&ListParams::default().labels(&format!("{LABEL_DEPLOYMENT}=demo")))
        .await?
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(policies, ["demo-nats", "demo-workers"]);
    let nodes = Api::<Node>::all(admin.clone());
    for pod in &pods.items {
        let status = pod.status.clone().unwrap_or_default();
        assert_eq!(
            status.phase.as_deref(),
            Some("Running"),
            "{}",
            pod.name_any()
        );
        let role = pod
            .labels()
            .get("infera.amd.com/role")
            .cloned()
            .unwrap_or_default();
        if role == "prefill" || role == "decode" {
            let node = nodes
                .get(
                    pod.spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .unwrap_or_default(),
                )
                .await?;
            let gpus = node
                .status
                .and_then(|s| s.allocatable)
                .and_then(|a| a.get("amd.com/gpu").cloned());
            assert!(gpus.is_some(), "{} runs on a GPU node", pod.name_any());
        }
    }

    let output = std::process::Command::new("kubectl")
        .args(["get", "idep", "-n", ns.name()])
        .env("KUBECONFIG", infera_e2e::kubeconfig_path()?)
        .output()?;
    let table = String::from_utf8_lossy(&output.stdout);
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "BACKEND", "STATE", "SERVICES", "AGE"],
        "{table}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[..4], ["demo", "sglang", "Ready", "4/4"], "{table}");

    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_node_pool_becomes_ready_through_leader_worker_set() -> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        mut operator,
    } = setup("op-lws").await?;
    let spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "big"},
        "spec": {"backendFramework": "vllm", "image": "rocm/infera:vllm-v0.1.1", "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "worker": {"componentType": "worker", "replicas": 2, "numberOfNodes": 2,
                       "resources": {"gpu": 1}, "args": ["--model", "m", "--tensor-parallel-size", "1", "--pipeline-parallel-size", "2"]},
        }},
    });
    apply_yaml_in(&admin, ns.name(), &spec.to_string()).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let idep = wait_for_state(&ideps, "big", State::Ready).await?;
    let worker = &idep.status.unwrap_or_default().services["worker"];
    assert_eq!(
        (
            worker.kind.as_str(),
            worker.desired_replicas,
            worker.ready_groups
        ),
        ("LeaderWorkerSet", 2, Some(2))
    );

    let pods: Api<Pod> = ns.api();
    let pods = pods
        .list(&ListParams::default().labels("leaderworkerset.sigs.k8s.io/name=big-worker"))
        .await?;
    assert_eq!(pods.items.len(), 4, "2 groups of 2 pods");
    for pod in &pods.items {
        assert!(
            pod.labels()
                .contains_key("leaderworkerset.sigs.k8s.io/group-index"),
            "labelled by the LWS webhook"
        );
        let env = pod
            .spec
            .as_ref()
            .map(|s| s.containers[0].env.clone().unwrap_or_default())
            .unwrap_or_default();
        assert!(
            env.iter().any(|e| e.name == "LWS_LEADER_ADDRESS"),
            "rank environment injected for {}",
            pod.name_any()
        );
    }
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spec_that_does_not_fit_names_the_pool_and_recovers_when_a_node_is_added()
-> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        mut operator,
    } = setup("op-fit").await?;
    let gpu_type = format!("amd.com/e2e-{}", ns.name());
    apply_yaml_in(
        &admin,
        ns.name(),
        &small("tight", &gpu_type, &[("decode", 2)]),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    // Both pods are Pending once the scheduler has seen both.
    let message = eventually(READY_TIMEOUT, || async {
        let idep = wait_for_state(&ideps, "tight", State::Pending).await?;
        let (reason, message) = ready_reason(&idep);
        anyhow::ensure!(reason == "InsufficientCapacity", "reason {reason}");
        // One line per pool that waits: NATS may still be waiting for its volume at that moment.
        anyhow::ensure!(
            message
                .lines()
                .any(|line| line.starts_with("pool decode: 2 pods unschedulable:")),
            "{message}"
        );
        anyhow::Ok(message)
    })
    .await?;
    assert!(
        message.contains(&format!("Insufficient {gpu_type}")),
        "{message}"
    );

    let node = format!("e2e-{}", ns.name());
    gpu_node(&admin, &node, &gpu_type, 8).await?;
    let result = wait_for_state(&ideps, "tight", State::Ready).await;
    delete_node(&admin, &node).await;
    result?;
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_spec_past_admission_is_reported_with_the_field_path() -> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        operator,
    } = setup("op-invalid").await?;
    // CEL cannot check parallelism flags against GPUs; the operator can.
    let mut spec: serde_json::Value =
        serde_json::from_str(&small("tp", "amd.com/gpu", &[("decode", 1)]))?;
    spec["spec"]["services"]["decode"]["args"] = json!(["--tp-size", "4"]);
    apply_yaml_in(&admin, ns.name(), &spec.to_string()).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let idep = wait_for_state(&ideps, "tp", State::Failed).await?;
    assert_eq!(
        ready_reason(&idep),
        (
            "InvalidSpec".to_string(),
            "spec.services.decode.args: --tp-size 4 uses 4 GPUs but resources.gpu × numberOfNodes is 1; make the parallelism flags multiply to 1 or change resources.gpu / numberOfNodes".to_string()
        )
    );
    let deployments: Api<Deployment> = ns.api();
    assert!(
        deployments
            .list(&ListParams::default())
            .await?
            .items
            .is_empty(),
        "nothing rendered from an invalid spec"
    );
    drop(operator);
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn spec_changes_update_children_removed_services_are_deleted_and_nothing_is_left_behind()
-> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        mut operator,
    } = setup("op-change").await?;
    let gpu_type = "amd.com/gpu";
    apply_yaml_in(
        &admin,
        ns.name(),
        &small("svc", gpu_type, &[("a", 1), ("b", 1)]),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    wait_for_state(&ideps, "svc", State::Ready).await?;

    // An object that carries the deployment label but not our managed-by label is not ours.
    let deployments: Api<Deployment> = ns.api();
    let bystander = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "svc-bystander", "labels": {LABEL_DEPLOYMENT: "svc"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "bystander"}},
                 "template": {"metadata": {"labels": {"app": "bystander"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}},
    });
    deployments
        .patch(
            "svc-bystander",
            &PatchParams::apply("someone-else"),
            &Patch::Apply(&bystander),
        )
        .await?;

    apply_yaml_in(&admin, ns.name(), &small("svc", gpu_type, &[("a", 2)])).await?;
    eventually(READY_TIMEOUT, || async {
        let a = deployments.get("svc-a").await?;
        anyhow::ensure!(
            a.spec.and_then(|s| s.replicas) == Some(2),
            "svc-a not scaled yet"
        );
        anyhow::ensure!(
            deployments.get_opt("svc-b").await?.is_none(),
            "svc-b still exists"
        );
        anyhow::Ok(())
    })
    .await?;
    wait_for_state(&ideps, "svc", State::Ready).await?;
    assert!(
        deployments.get_opt("svc-bystander").await?.is_some(),
        "never delete what is not ours"
    );

    // Restricted egress: one policy over the graph's pods, whose API rule is the API server's
    // own EndpointSlice as the operator, under the shipped RBAC, watches it. Tier 2's API server
    // publishes none (`--endpoint-reconciler-type=none`, on loopback): until one appears the
    // operator says what it waits for; the test then writes it as a lease reconciler would.
    let policies: Api<NetworkPolicy> = ns.api();
    assert!(policies.get_opt("svc-workers").await?.is_some());
    let slices: Api<EndpointSlice> = Api::namespaced(admin.clone(), "default");
    slices
        .delete("kubernetes", &DeleteParams::default())
        .await
        .ok();
    ideps
        .patch(
            "svc",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"networkPolicy": {"egress": {"restrict": true,
                "allow": [{"ports": [{"port": 443}]}]}}}}),
            ),
        )
        .await?;
    eventually(READY_TIMEOUT, || async {
        let idep = ideps.get("svc").await?;
        let reconciled = idep.status.as_ref().and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == infera_core::condition::RECONCILED)
        });
        let message = reconciled.map(|c| c.message.as_str()).unwrap_or_default();
        anyhow::ensure!(
            message.contains("the API server's endpoints are not known yet")
                && message.contains("EndpointSlice default/kubernetes"),
            "Reconciled: {message:?}"
        );
        anyhow::Ok(())
    })
    .await?;
    assert!(policies.get_opt("svc-egress").await?.is_none());
    // The failures repeat one Event, counted in its series (the operator's merge patch of
    // `series` as the API server validates it).
    let events: Api<k8s_openapi::api::events::v1::Event> = ns.api();
    eventually(READY_TIMEOUT, || async {
        let counts: Vec<i32> = events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("ReconcileError"))
            .filter_map(|e| Some(e.series?.count))
            .collect();
        anyhow::ensure!(
            counts.iter().any(|count| *count >= 2),
            "no ReconcileError Event counted again: {counts:?}"
        );
        anyhow::Ok(())
    })
    .await?;
    // `doctor --for` says the same before anything is applied.
    let live = ideps.get("svc").await?;
    let file = target_dir()
        .join("e2e-logs")
        .join(format!("{}-egress.json", ns.name()));
    let spec = json!({"apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "svc"}, "spec": live.spec});
    std::fs::write(&file, spec.to_string())?;
    let file = file.display().to_string();
    let doctor_args = ["--for", file.as_str(), "-n", ns.name()];
    let inf603 = || doctor_check(&doctor_args, "INF603");
    let check = inf603().await?;
    assert_eq!(check["severity"], "fail", "{check}");
    let slice = |address: &str| {
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes", "namespace": "default",
                "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": true}}],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]})
    };
    let api_rule = |address: &str| {
        json!({"to": [{"ipBlock": {"cidr": format!("{address}/32")}}],
            "ports": [{"port": 6443, "protocol": "TCP"}]})
    };
    // Whatever happens from here, the slice this test writes is deleted after it.
    let outcome = async {
        apply_yaml_in(&admin, "default", &slice("192.0.2.10").to_string()).await?;
        let egress = eventually(READY_TIMEOUT, || policies.get("svc-egress")).await?;
        let spec = serde_json::to_value(egress.spec)?;
        let graph = json!({"matchLabels": {LABEL_DEPLOYMENT: "svc"}});
        // The API server defaults the protocol.
        let https = json!({"ports": [{"port": 443, "protocol": "TCP"}]});
        anyhow::ensure!(
            spec["podSelector"] == graph
                && spec["policyTypes"] == json!(["Egress"])
                && spec["egress"][2] == api_rule("192.0.2.10")
                && spec["egress"][3] == https,
            "{spec}"
        );
        wait_for_state(&ideps, "svc", State::Ready).await?;
        let check = inf603().await?;
        anyhow::ensure!(
            check["severity"] == "pass"
                && check["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("at 192.0.2.10 (port 6443)")),
            "{check}"
        );
        // The API server moves: the policy follows.
        apply_yaml_in(&admin, "default", &slice("192.0.2.11").to_string()).await?;
        eventually(READY_TIMEOUT, || async {
            let spec = serde_json::to_value(policies.get("svc-egress").await?.spec)?;
            anyhow::ensure!(spec["egress"][2] == api_rule("192.0.2.11"), "{spec}");
            anyhow::Ok(())
        })
        .await?;
        anyhow::Ok(())
    }
    .await;
    let deleted = slices.delete("kubernetes", &DeleteParams::default()).await;
    outcome?;
    deleted?;

    // Turning the NetworkPolicies off (and with them restricted egress) deletes them.
    ideps
        .patch(
            "svc",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"networkPolicy": {"enabled": false, "egress": null}}})),
        )
        .await?;
    eventually(READY_TIMEOUT, || async {
        for name in ["svc-workers", "svc-egress"] {
            anyhow::ensure!(
                policies.get_opt(name).await?.is_none(),
                "{name} still exists"
            );
        }
        anyhow::Ok(())
    })
    .await?;

    ideps.delete("svc", &DeleteParams::default()).await?;
    eventually(READY_TIMEOUT, || async {
        let left: Vec<String> = deployments
            .list(&ListParams::default().labels("app.kubernetes.io/managed-by=infera-operator"))
            .await?
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect();
        anyhow::ensure!(left.is_empty(), "left behind: {left:?}");
        anyhow::Ok(())
    })
    .await?;
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn steady_state_sends_no_writes_and_another_writer_is_reported_not_fought()
-> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        mut operator,
    } = setup("op-steady").await?;
    apply_yaml_in(
        &admin,
        ns.name(),
        &small("calm", "amd.com/gpu", &[("worker", 1)]),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    wait_for_state(&ideps, "calm", State::Ready).await?;

    // Let the last status changes of the children settle, then count.
    let settled = eventually(Duration::from_secs(60), || async {
        let before = operator.writes_or_dry_runs().await?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let after = operator.writes_or_dry_runs().await?;
        anyhow::ensure!(before == after, "still writing: {before} -> {after}");
        anyhow::Ok(after)
    })
    .await?;
    let reconciles = operator.sample("infera_reconciles_total").await?;
    for i in 0..3 {
        // Touching the InferaDeployment's metadata triggers a reconcile without changing the spec.
        // One touch at a time: triggers that arrive while one is queued are merged into it.
        let patch = json!({"metadata": {"annotations": {"e2e/touch": i.to_string()}}});
        ideps
            .patch("calm", &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        eventually(Duration::from_secs(20), || async {
            let now = operator.sample("infera_reconciles_total").await?;
            anyhow::ensure!(
                now > reconciles + f64::from(i),
                "only {} reconciles since",
                now - reconciles
            );
            anyhow::Ok(())
        })
        .await?;
    }
    assert_eq!(
        operator.writes_or_dry_runs().await?,
        settled,
        "re-reconciling an unchanged deployment must not write"
    );

    // Another writer takes spec.replicas of a child: reported with its manager, not reverted.
    let deployments: Api<Deployment> = ns.api();
    let scale = json!({"spec": {"replicas": 3}});
    let params = PatchParams {
        field_manager: Some("e2e-autoscaler".into()),
        ..Default::default()
    };
    deployments
        .patch("calm-worker", &params, &Patch::Merge(&scale))
        .await?;
    let idep = wait_for_state(&ideps, "calm", State::Degraded).await?;
    let (reason, message) = ready_reason(&idep);
    assert_eq!(reason, "OwnershipConflict");
    assert!(
        message.contains("Deployment calm-worker")
            && message.contains(".spec.replicas")
            && message.contains("e2e-autoscaler"),
        "{message}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let replicas = deployments
        .get("calm-worker")
        .await?
        .spec
        .and_then(|s| s.replicas);
    assert_eq!(
        replicas,
        Some(3),
        "the operator does not fight the other writer"
    );
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_while_reconciling_twenty_deployments_converges_without_duplicates_or_orphans()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-kill").await?;
    let identity = install(&admin).await?;
    let gpu_type = format!("amd.com/e2e-{}", ns.name());
    let node = format!("e2e-{}", ns.name());
    gpu_node(&admin, &node, &gpu_type, 64).await?;
    let names: Vec<String> = (0..20).map(|i| format!("d{i:02}")).collect();
    let args = ["--namespace", ns.name(), "--log-format=json"];
    let operator =
        Operator::start(&identity, &args, &format!("operator-{}-first", ns.name())).await?;
    for name in &names {
        apply_yaml_in(&admin, ns.name(), &small(name, &gpu_type, &[("worker", 1)])).await?;
    }
    // Kill it mid-flight: as soon as it has started writing, well before it can be done.
    eventually(Duration::from_secs(30), || async {
        let metrics = operator.metrics().await?;
        anyhow::ensure!(
            infera_e2e::operator::writes(&metrics) > 5,
            "not writing yet"
        );
        anyhow::Ok(())
    })
    .await?;
    operator.kill().await?;

    let mut operator =
        Operator::start(&identity, &args, &format!("operator-{}-second", ns.name())).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    for name in &names {
        wait_for_state(&ideps, name, State::Ready).await?;
    }
    let deployments: Api<Deployment> = ns.api();
    let all = deployments
        .list(&ListParams::default().labels("app.kubernetes.io/managed-by=infera-operator"))
        .await?;
    assert_eq!(
        all.items.len(),
        40,
        "exactly a server and a worker per deployment"
    );
    let pods: Api<Pod> = ns.api();
    let pods = pods
        .list(&ListParams::default().labels(LABEL_DEPLOYMENT))
        .await?;
    assert_eq!(pods.items.len(), 40, "exactly one pod per Deployment");
    for deployment in &all.items {
        let owner = deployment
            .owner_references()
            .iter()
            .find(|o| o.controller == Some(true))
            .context("owner")?;
        let idep = ideps.get(&owner.name).await?;
        assert_eq!(
            idep.uid().as_deref(),
            Some(owner.uid.as_str()),
            "{} has a live owner",
            deployment.name_any()
        );
    }
    operator.ensure_running()?;
    delete_node(&admin, &node).await;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_elect_one_leader_and_the_standby_takes_over() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-ha").await?;
    let identity = install(&admin).await?;
    let args = [
        "--namespace",
        ns.name(),
        "--leader-elect",
        "--leader-election-namespace=infera-system",
        "--lease-duration=6",
    ];
    let first = Operator::start(&identity, &args, &format!("operator-{}-a", ns.name())).await?;
    let second = Operator::start(&identity, &args, &format!("operator-{}-b", ns.name())).await?;
    let leaders = || async {
        let a = first.sample("infera_leader").await?;
        let b = second.sample("infera_leader").await?;
        anyhow::Ok((a, b))
    };
    let (a, b) = eventually(Duration::from_secs(30), || async {
        let (a, b) = leaders().await?;
        anyhow::ensure!(a + b == 1.0, "leaders: {a} + {b}");
        anyhow::Ok((a, b))
    })
    .await?;
    apply_yaml_in(
        &admin,
        ns.name(),
        &small("ha", "amd.com/gpu", &[("worker", 1)]),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    wait_for_state(&ideps, "ha", State::Ready).await?;
    let standby_reconciles = if a == 1.0 {
        second.sample("infera_reconciles_total").await?
    } else {
        first.sample("infera_reconciles_total").await?
    };
    assert_eq!(standby_reconciles, 0.0, "only the leader reconciles");

    let (leader, standby) = if a == 1.0 {
        (first, second)
    } else {
        (second, first)
    };
    let _ = b;
    leader.kill().await?;
    let started = std::time::Instant::now();
    eventually(Duration::from_secs(20), || async {
        anyhow::ensure!(
            standby.sample("infera_leader").await? == 1.0,
            "standby has not taken over"
        );
        anyhow::Ok(())
    })
    .await?;
    eprintln!("standby took over after {:?}", started.elapsed());
    assert!(
        started.elapsed() <= Duration::from_secs(6 + 4),
        "within the lease duration plus a retry"
    );
    apply_yaml_in(
        &admin,
        ns.name(),
        &small("ha", "amd.com/gpu", &[("worker", 2)]),
    )
    .await?;
    let idep = wait_for_state(&ideps, "ha", State::Ready).await?;
    assert_eq!(
        idep.status.unwrap_or_default().services["worker"].ready_replicas,
        2,
        "the new leader reconciles"
    );
    let status = standby.terminate().await?;
    assert!(status.success(), "SIGTERM is a clean shutdown: {status}");
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graph_a_quota_refuses_is_reported_and_retried() -> anyhow::Result<()> {
    let Setup {
        admin,
        ns,
        mut operator,
    } = setup("op-quota").await?;
    let quota = json!({
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-services"},
        "spec": {"hard": {"services": "0"}},
    });
    apply_yaml_in(&admin, ns.name(), &quota.to_string()).await?;
    // The graph comes once the quota controller has filled in the quota's status: by then the
    // API server's quota admission and the operator's cache have the quota too. (Sent at once, a
    // Service's dry run could pass before admission saw the quota and its create fail after the
    // worker's Deployment was written: CI of f1fd666.)
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> = ns.api();
    eventually(READY_TIMEOUT, || async {
        let quota = quotas.get("no-services").await?;
        let counted = quota
            .status
            .and_then(|s| s.used)
            .is_some_and(|u| u.contains_key("services"));
        anyhow::ensure!(counted, "the quota controller has not counted services yet");
        anyhow::Ok(())
    })
    .await?;
    apply_yaml_in(
        &admin,
        ns.name(),
        &small("rq", "amd.com/gpu", &[("worker", 1)]),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let idep = wait_for_state(&ideps, "rq", State::Degraded).await?;
    let (reason, message) = ready_reason(&idep);
    assert_eq!(reason, "ApplyRejected");
    // The graph-wide check names the quota.
    assert!(message.contains("no-services"), "{message}");
    let deployments: Api<Deployment> = ns.api();
    assert!(
        deployments.get_opt("rq-worker").await?.is_none(),
        "a graph is written whole or not at all"
    );

    quotas
        .delete("no-services", &DeleteParams::default())
        .await?;
    wait_for_state(&ideps, "rq", State::Ready).await?;
    operator.ensure_running()?;
    ns.cleanup().await
}
