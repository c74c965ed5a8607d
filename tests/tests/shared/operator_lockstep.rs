//! Lockstep rollouts on the tier-2 cluster, observed pod by pod.
//!
//! kwok makes the pods of these tests Ready only after a delay (the pod annotation
//! `pod-ready.stage.kwok.x-k8s.io/delay`, see tests/cluster/README.md), so a rollout takes steps
//! that can be watched. A watcher records every pod event during the rollout of a prefill/decode
//! graph and checks, at every recorded moment, the three invariants of `infera_core::lockstep`:
//! each pool has at least `desired − maxUnavailable` ready pods, the updated-and-ready fractions
//! of the prefill and decode sides differ by at most one replica of the smaller side, and a
//! ready prefill and a ready decode of one revision exist. The same rollout with
//! `strategy: Independent` breaks them (so the check can fail). Multi-node pools (LeaderWorkerSets,
//! a group counted by its leader) keep them too. On a node with no spare GPU the
//! rollout replaces within `maxUnavailable` (`maxSurge: 0`), and with `maxSurge: 1,
//! maxUnavailable: 0` reports `RolloutBlocked`, naming the surge replica that waits for a GPU;
//! multi-node pools there switch from surge to replacement. A side of one replica waits for the
//! other side's first new one. Each graph runs on a dedicated fake node, so other tests never
//! take its GPUs. The Deployment controller scales a paused Deployment down from its larger
//! ReplicaSet and drops its old pods once its new ReplicaSet is complete, which the give-back of a
//! surge GPU and the one-short rule rely on.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::StreamExt;
use infera_core::{
    InferaDeployment, PROGRESSING, ROLLOUT_BLOCKED, ROLLOUT_COMPLETE,
    naming::{LABEL_REVISION, LABEL_SERVICE},
};
use infera_e2e::{
    FakeNode, TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api, Client,
        api::{Patch, PatchParams},
        runtime::{WatchStreamExt, watcher},
    },
    operator::{Operator, install},
    plugin::kubectl,
};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(180);
/// How long kwok keeps a new pod of these tests from being Ready.
const READY_DELAY: &str = "1s";

/// A pool of the graph: its service name, replicas, and its own `rollout` bounds.
struct PoolSpec {
    service: &'static str,
    role: &'static str,
    replicas: i32,
    nodes: i32,
    max_surge: i32,
    max_unavailable: i32,
}

/// A prefill pool of `prefill` replicas and a decode pool of `decode`, of `nodes` nodes each,
/// with the same bounds.
const fn pair(
    prefill: i32,
    decode: i32,
    nodes: i32,
    max_surge: i32,
    max_unavailable: i32,
) -> [PoolSpec; 2] {
    [
        PoolSpec {
            service: "prefill",
            role: "prefill",
            replicas: prefill,
            nodes,
            max_surge,
            max_unavailable,
        },
        PoolSpec {
            service: "decode",
            role: "decode",
            replicas: decode,
            nodes,
            max_surge,
            max_unavailable,
        },
    ]
}

/// The image every graph of these tests starts from.
const IMAGE: &str = "rocm/infera:sglang-v0.1.1";

/// The prefill/decode graph `name` on `node`, with `strategy`, at [`IMAGE`].
fn graph(name: &str, node: &FakeNode, strategy: &str, pools: &[PoolSpec]) -> String {
    let mut services = serde_json::Map::new();
    services.insert(
        "server".into(),
        json!({"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]}),
    );
    for pool in pools {
        services.insert(
            pool.service.into(),
            json!({
                "componentType": "worker", "role": pool.role, "replicas": pool.replicas,
                "numberOfNodes": pool.nodes, "resources": {"gpu": 1},
                "args": ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", pool.nodes.to_string()],
                "tolerations": [node.toleration()],
                "nodeSelector": {"kubernetes.io/hostname": node.name()},
                "rollout": {"maxSurge": pool.max_surge, "maxUnavailable": pool.max_unavailable},
            }),
        );
    }
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
        "spec": {
            "backendFramework": "sglang", "image": IMAGE,
            "rollout": {"strategy": strategy},
            "podTemplate": {"metadata": {"annotations": {
                "pod-ready.stage.kwok.x-k8s.io/delay": READY_DELAY,
            }}},
            "services": services,
        },
    })
    .to_string()
}

/// A namespace `ns_prefix-…` with an operator of its own, and a dedicated node `node_prefix-…`
/// of `gpus` GPUs that only these graphs use.
async fn stage(
    ns_prefix: &str,
    node_prefix: &str,
    gpus: u32,
) -> anyhow::Result<(Client, TestNamespace, FakeNode, Operator)> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, ns_prefix).await?;
    let node = FakeNode::create(&admin, node_prefix, gpus).await?;
    let identity = install(&admin).await?;
    let operator = Operator::start_in(&identity, ns.name()).await?;
    Ok((admin, ns, node, operator))
}

/// What the watcher knows of one pod.
#[derive(Clone, Debug)]
struct Seen {
    service: String,
    revision: String,
    ready: bool,
    terminating: bool,
}

/// Every pod event of one deployment, the pods as they stand, and the invariants each event
/// broke.
#[derive(Default)]
struct Record {
    pods: BTreeMap<String, Seen>,
    /// The pods of a (re)list, until it is complete.
    listing: BTreeMap<String, Seen>,
    events: usize,
    violations: Vec<String>,
    /// Errors of the watch: an event lost to one would go unchecked.
    watch_errors: Vec<String>,
}

/// The fewest pod events a whole rollout of `pools` makes: each replica's (group leader's) new
/// pod appears and its old one goes.
fn rollout_events(pools: &[PoolSpec]) -> usize {
    let replicas: i32 = pools.iter().map(|pool| pool.replicas).sum();
    2 * usize::try_from(replicas).unwrap_or_default()
}

impl Record {
    /// The invariants held at every one of at least `min_events` pod events, and the watch saw
    /// them all (a watch that saw nothing, or lost events, proves nothing).
    fn held(&self, min_events: usize) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.watch_errors.is_empty(),
            "the pod watch failed, events may be missing: {:?}",
            self.watch_errors
        );
        anyhow::ensure!(
            self.events >= min_events,
            "{} pod events, fewer than {min_events}",
            self.events
        );
        anyhow::ensure!(self.violations.is_empty(), "{:#?}", self.violations);
        Ok(())
    }

    /// Ready, not terminating pods of `service` with revision `revision` (any, if `None`).
    fn ready(&self, service: &str, revision: Option<&str>) -> i64 {
        let count = self
            .pods
            .values()
            .filter(|pod| {
                pod.service == service
                    && pod.ready
                    && !pod.terminating
                    && revision.is_none_or(|r| pod.revision == r)
            })
            .count();
        i64::try_from(count).unwrap_or(i64::MAX)
    }

    /// The invariants at this moment, for a rollout from `old` of `pools`.
    fn check(&mut self, pools: &[PoolSpec], old: &str) {
        let mut broken = Vec::new();
        for pool in pools {
            let ready = self.ready(pool.service, None);
            let floor = i64::from(pool.replicas - pool.max_unavailable);
            if ready < floor {
                broken.push(format!("{} has {ready} ready, below {floor}", pool.service));
            }
        }
        let revisions: std::collections::BTreeSet<String> =
            self.pods.values().map(|pod| pod.revision.clone()).collect();
        let side = |role: &str, revision: &str| -> (i64, i64) {
            pools
                .iter()
                .filter(|pool| pool.role == role)
                .fold((0, 0), |(ready, desired), pool| {
                    (
                        // A pool is at most wholly updated: surge replicas of the revision
                        // (a LeaderWorkerSet keeps its surge groups until every group is
                        // updated) are capacity beyond desired, not progress.
                        ready
                            + self
                                .ready(pool.service, Some(revision))
                                .min(i64::from(pool.replicas)),
                        desired + i64::from(pool.replicas),
                    )
                })
        };
        for revision in revisions.iter().filter(|r| r.as_str() != old) {
            let ((rp, dp), (rd, dd)) = (side("prefill", revision), side("decode", revision));
            if (rp * dd - rd * dp).abs() * dp.min(dd) > dp * dd {
                broken.push(format!(
                    "revision {revision}: prefill {rp}/{dp} and decode {rd}/{dd} ready"
                ));
            }
        }
        let paired = revisions
            .iter()
            .any(|revision| side("prefill", revision).0 >= 1 && side("decode", revision).0 >= 1);
        if !paired {
            broken.push("no ready prefill and decode of one revision".into());
        }
        if !broken.is_empty() {
            self.violations
                .push(format!("event {}: {}", self.events, broken.join("; ")));
        }
    }
}

/// Watches the pods of deployment `name` in `ns`, checking the invariants after every event.
fn watch(
    admin: &Client,
    ns: &str,
    name: &str,
    pools: &'static [PoolSpec],
    old: String,
) -> (Arc<Mutex<Record>>, tokio::task::JoinHandle<()>) {
    let record = Arc::new(Mutex::new(Record::default()));
    let pods: Api<Pod> = Api::namespaced(admin.clone(), ns);
    let config = watcher::Config::default().labels(&format!("infera.amd.com/deployment={name}"));
    let shared = record.clone();
    let task = tokio::spawn(async move {
        let mut stream = watcher(pods, config).default_backoff().boxed();
        while let Some(event) = stream.next().await {
            let mut record = shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let event = match event {
                Ok(event) => event,
                Err(error) => {
                    record.watch_errors.push(error.to_string());
                    continue;
                }
            };
            let name = |pod: &Pod| pod.metadata.name.clone().unwrap_or_default();
            match event {
                watcher::Event::Init => {
                    record.listing.clear();
                    continue;
                }
                watcher::Event::InitApply(pod) => {
                    if let Some(seen) = seen(&pod) {
                        record.listing.insert(name(&pod), seen);
                    }
                    continue;
                }
                watcher::Event::InitDone => record.pods = std::mem::take(&mut record.listing),
                watcher::Event::Apply(pod) => {
                    let Some(seen) = seen(&pod) else { continue };
                    record.pods.insert(name(&pod), seen);
                }
                watcher::Event::Delete(pod) => {
                    record.pods.remove(&name(&pod));
                }
            }
            record.events += 1;
            record.check(pools, &old);
        }
    });
    (record, task)
}

/// A worker pod as the watcher sees it; `None` for the server's.
fn seen(pod: &Pod) -> Option<Seen> {
    let labels = pod.metadata.labels.as_ref()?;
    if labels
        .get(infera_core::naming::LWS_LABEL_WORKER_INDEX)
        .is_some_and(|index| index != "0")
    {
        return None;
    }
    Some(Seen {
        service: labels.get(LABEL_SERVICE)?.clone(),
        revision: labels.get(LABEL_REVISION)?.clone(),
        ready: is_ready(pod),
        terminating: pod.metadata.deletion_timestamp.is_some(),
    })
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The Progressing condition's reason and message.
fn progressing(idep: &InferaDeployment) -> Option<(String, String)> {
    let status = idep.status.as_ref()?;
    let condition = status.conditions.iter().find(|c| c.type_ == PROGRESSING)?;
    Some((condition.reason.clone(), condition.message.clone()))
}

/// What the watcher recorded, taken out of the shared record.
fn taken(record: &Mutex<Record>) -> anyhow::Result<Record> {
    let mut record = record
        .lock()
        .map_err(|_| anyhow::anyhow!("the watcher panicked"))?;
    Ok(std::mem::take(&mut *record))
}

/// Waits until `name` has rolled out completely; returns its revision.
async fn rolled_out(
    ideps: &Api<InferaDeployment>,
    name: &str,
    not: &str,
) -> anyhow::Result<String> {
    eventually(TIMEOUT, || async {
        let idep = ideps.get(name).await?;
        let status = idep.status.clone().unwrap_or_default();
        let revision = status.update_revision.clone().unwrap_or_default();
        anyhow::ensure!(
            revision != not
                && status.current_revision.as_deref() == Some(revision.as_str())
                && progressing(&idep).is_some_and(|(reason, _)| reason == ROLLOUT_COMPLETE),
            "revision {revision}, current {:?}, progressing {:?}",
            status.current_revision,
            progressing(&idep)
        );
        Ok(revision)
    })
    .await
}

/// Rolls `name` out to a new image while the watcher records; returns the record and how long
/// the rollout took.
async fn roll_out(
    admin: &Client,
    ns: &TestNamespace,
    name: &str,
    pools: &'static [PoolSpec],
) -> anyhow::Result<(Record, Duration)> {
    let ideps: Api<InferaDeployment> = ns.api();
    let old = rolled_out(&ideps, name, "").await?;
    let (record, task) = watch(admin, ns.name(), name, pools, old.clone());
    // The watcher's initial list is in before the rollout starts.
    eventually(TIMEOUT, || async {
        let events = record.lock().map_or(0, |r| r.events);
        anyhow::ensure!(events > 0, "no pod listed yet");
        Ok(())
    })
    .await?;
    let start = Instant::now();
    let patch = json!({"spec": {"image": "rocm/infera:sglang-v0.1.2"}});
    ideps
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    rolled_out(&ideps, name, &old).await?;
    let took = start.elapsed();
    task.abort();
    Ok((taken(&record)?, took))
}

/// Deploys graph `name` of `pools` with `strategy` on `node`, then [`roll_out`].
async fn deploy_and_roll_out(
    admin: &Client,
    ns: &TestNamespace,
    node: &FakeNode,
    name: &str,
    strategy: &str,
    pools: &'static [PoolSpec],
) -> anyhow::Result<(Record, Duration)> {
    apply_yaml_in(admin, ns.name(), &graph(name, node, strategy, pools)).await?;
    roll_out(admin, ns, name, pools).await
}

static UNEVEN: [PoolSpec; 2] = [
    // The prefill pool may surge all at once; the decode pool one at a time.
    PoolSpec {
        service: "prefill",
        role: "prefill",
        replicas: 4,
        nodes: 1,
        max_surge: 4,
        max_unavailable: 0,
    },
    PoolSpec {
        service: "decode",
        role: "decode",
        replicas: 4,
        nodes: 1,
        max_surge: 1,
        max_unavailable: 0,
    },
];

#[tokio::test(flavor = "multi_thread")]
async fn lockstep_keeps_prefill_and_decode_together_where_independent_pools_drift_apart()
-> anyhow::Result<()> {
    let (admin, ns, node, _operator) = stage("op-lockstep", "lockstep", 16).await?;
    let (lockstep, took) =
        deploy_and_roll_out(&admin, &ns, &node, "steady", "Lockstep", &UNEVEN).await?;
    eprintln!(
        "Lockstep rollout of 4 prefill (maxSurge 4) + 4 decode (maxSurge 1): {:.1} s, {} pod events",
        took.as_secs_f64(),
        lockstep.events
    );
    // `rollout status` of a complete rollout says so and exits 0.
    let status = kubectl(&["infera", "rollout", "status", "steady", "-n", ns.name()])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        status
            .stdout
            .starts_with("RolloutComplete: every worker pool runs revision"),
        "{status:?}"
    );
    lockstep.held(rollout_events(&UNEVEN))?;

    let ideps: Api<InferaDeployment> = ns.api();
    ideps.delete("steady", &Default::default()).await?;
    let (independent, took) =
        deploy_and_roll_out(&admin, &ns, &node, "drift", "Independent", &UNEVEN).await?;
    eprintln!(
        "Independent rollout of the same: {:.1} s, {} pod events, {} violating",
        took.as_secs_f64(),
        independent.events,
        independent.violations.len()
    );
    anyhow::ensure!(
        independent
            .violations
            .iter()
            .any(|v| v.contains("prefill 4/4") || v.contains("prefill 3/4")),
        "independent pools stayed together: {:#?}",
        independent.violations
    );
    ns.cleanup().await?;
    node.delete(&admin).await
}

/// One prefill replica and two decode replicas: the prefill pool's new replica, once ready,
/// takes its old one with it (a complete new ReplicaSet), so it may only be created once a new
/// decode replica is ready.
static SMALL: [PoolSpec; 2] = pair(1, 2, 1, 1, 0);

#[tokio::test(flavor = "multi_thread")]
async fn a_single_replica_side_waits_for_the_other_sides_first_new_replica() -> anyhow::Result<()> {
    let (admin, ns, node, _operator) = stage("op-lockstep-small", "lockstep-small", 8).await?;
    // Decode replicas take longer to be ready than the prefill one.
    let mut small: serde_json::Value =
        serde_json::from_str(&graph("small", &node, "Lockstep", &SMALL))?;
    small["spec"]["services"]["decode"]["podTemplate"] = json!({"metadata": {"annotations": {
        "pod-ready.stage.kwok.x-k8s.io/delay": "3s",
    }}});
    apply_yaml_in(&admin, ns.name(), &small.to_string()).await?;
    let (record, took) = roll_out(&admin, &ns, "small", &SMALL).await?;
    eprintln!(
        "Lockstep rollout of 1 prefill + 2 decode: {:.1} s, {} pod events",
        took.as_secs_f64(),
        record.events
    );
    record.held(rollout_events(&SMALL))?;
    ns.cleanup().await?;
    node.delete(&admin).await
}

/// Replacement only: no surge, one replica down at a time.
static FULL: [PoolSpec; 2] = pair(4, 4, 1, 0, 1);

/// Surge only: one replica above desired, none below.
static SURGE_ONLY: [PoolSpec; 2] = pair(4, 4, 1, 1, 0);

#[tokio::test(flavor = "multi_thread")]
async fn without_a_spare_gpu_lockstep_replaces_within_max_unavailable_or_reports_blocked()
-> anyhow::Result<()> {
    // Exactly the GPUs of the graph: no surge fits.
    let (admin, ns, node, _operator) = stage("op-lockstep-full", "full", 8).await?;
    let (replaced, took) =
        deploy_and_roll_out(&admin, &ns, &node, "full", "Lockstep", &FULL).await?;
    eprintln!(
        "Lockstep rollout by replacement (no spare GPU, maxSurge 0, maxUnavailable 1): {:.1} s, {} pod events",
        took.as_secs_f64(),
        replaced.events
    );
    replaced.held(rollout_events(&FULL))?;

    // maxSurge 1 and maxUnavailable 0: the surge replicas find no GPU and nothing may go down.
    let ideps: Api<InferaDeployment> = ns.api();
    let old = rolled_out(&ideps, "full", "").await?;
    let (record, task) = watch(&admin, ns.name(), "full", &SURGE_ONLY, old);
    let bounds = json!({"rollout": {"maxSurge": 1, "maxUnavailable": 0}});
    let patch = json!({"spec": {
        "image": "rocm/infera:sglang-v0.1.3",
        "services": {"prefill": bounds, "decode": bounds},
    }});
    ideps
        .patch("full", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let (reason, message) = eventually(TIMEOUT, || async {
        let idep = ideps.get("full").await?;
        let progressing = progressing(&idep).unwrap_or_default();
        anyhow::ensure!(progressing.0 == ROLLOUT_BLOCKED, "{progressing:?}");
        Ok(progressing)
    })
    .await?;
    anyhow::ensure!(
        message.contains("waits for a free GPU") && message.contains("maxUnavailable is 0"),
        "{reason}: {message}"
    );
    // Blocked, not broken: every pool kept its old replicas ready throughout.
    tokio::time::sleep(Duration::from_secs(2)).await;
    task.abort();
    let blocked = taken(&record)?;
    // At least the list it started from, checked.
    blocked.held(1)?;

    // Past its deadline the rollout is reported, with what blocks it: `rollout status` exits 3.
    let patch = json!({"spec": {"rollout": {"progressDeadlineSeconds": 1}}});
    ideps
        .patch("full", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let late = kubectl(&[
        "infera",
        "rollout",
        "status",
        "full",
        "-n",
        ns.name(),
        "--timeout",
        "60s",
    ])
    .await?
    .expect_code(3)?;
    anyhow::ensure!(
        late.stdout.contains("ProgressDeadlineExceeded")
            && late.stderr.contains("progressDeadlineSeconds (1s)")
            && late.stderr.contains("waits for a free GPU"),
        "{late:?}"
    );
    ns.cleanup().await?;
    node.delete(&admin).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollout_paused_part_way_holds_its_pods_and_resumes() -> anyhow::Result<()> {
    let (admin, ns, node, _operator) = stage("op-lockstep-pause", "lockstep-pause", 16).await?;
    apply_yaml_in(
        &admin,
        ns.name(),
        &graph("held", &node, "Lockstep", &UNEVEN),
    )
    .await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let old = rolled_out(&ideps, "held", "").await?;
    let (record, task) = watch(&admin, ns.name(), "held", &UNEVEN, old.clone());
    let patch = json!({"spec": {"image": "rocm/infera:sglang-v0.1.2"}});
    ideps
        .patch("held", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    // Part-way: some pods of the new revision exist, not all.
    eventually(TIMEOUT, || async {
        let idep = ideps.get("held").await?;
        let status = idep.status.unwrap_or_default();
        let updated: i32 = status
            .services
            .values()
            .filter_map(|s| s.updated_replicas)
            .sum();
        anyhow::ensure!((1..8).contains(&updated), "{updated} updated");
        Ok(())
    })
    .await?;
    kubectl(&["infera", "rollout", "pause", "held", "-n", ns.name()])
        .await?
        .expect_code(0)?;
    eventually(TIMEOUT, || async {
        let idep = ideps.get("held").await?;
        let (reason, message) = progressing(&idep).unwrap_or_default();
        anyhow::ensure!(
            reason == "RolloutPaused" && message.contains("updated)"),
            "{reason}: {message}"
        );
        Ok(())
    })
    .await?;
    // Held: after the pods created before the pause are Ready, nothing changes.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pods = |record: &Mutex<Record>| -> anyhow::Result<Vec<String>> {
        let record = record
            .lock()
            .map_err(|_| anyhow::anyhow!("the watcher panicked"))?;
        Ok(record.pods.keys().cloned().collect())
    };
    let before = pods(&record)?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    anyhow::ensure!(pods(&record)? == before, "pods changed while paused");
    let idep = ideps.get("held").await?;
    let status = idep.status.clone().unwrap_or_default();
    anyhow::ensure!(
        status.current_revision.as_deref() == Some(old.as_str()),
        "{status:?}"
    );
    kubectl(&["infera", "rollout", "resume", "held", "-n", ns.name()])
        .await?
        .expect_code(0)?;
    rolled_out(&ideps, "held", &old).await?;
    task.abort();
    let record = taken(&record)?;
    record.held(rollout_events(&UNEVEN))?;
    ns.cleanup().await?;
    node.delete(&admin).await
}

/// Multi-node pools: LeaderWorkerSets of 2-pod groups, 2 prefill and 4 decode groups (so a
/// prefill group is half of its side and may only be one decode step ahead), surging one group.
static GROUPS: [PoolSpec; 2] = pair(2, 4, 2, 1, 0);

#[tokio::test(flavor = "multi_thread")]
async fn lockstep_keeps_multi_node_pools_together() -> anyhow::Result<()> {
    let (admin, ns, node, _operator) = stage("op-lockstep-lws", "lockstep-lws", 24).await?;
    let (record, took) =
        deploy_and_roll_out(&admin, &ns, &node, "wide", "Lockstep", &GROUPS).await?;
    eprintln!(
        "Lockstep rollout of 2 prefill + 4 decode groups of 2 pods: {:.1} s, {} pod events",
        took.as_secs_f64(),
        record.events
    );
    record.held(rollout_events(&GROUPS))?;
    ns.cleanup().await?;
    node.delete(&admin).await
}

/// The give-back of a surge GPU and holding a pool one short (`infera_core::lockstep::plan`) rest
/// on how the Deployment controller scales a paused Deployment: lowering its `maxSurge` by one
/// takes a pod from its larger ReplicaSet — the old one, then the new one — and creates nothing;
/// and once its new ReplicaSet is complete and available, its old pods go, paused or not.
#[tokio::test(flavor = "multi_thread")]
async fn a_paused_deployment_scales_down_its_larger_replica_set_and_drops_old_pods_once_complete()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "give-back").await?;
    let node = FakeNode::create(&admin, "give-back", 5).await?;
    let deployment = |image: &str, paused: bool, max_surge: i32| {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "pool"},
            "spec": {
                "replicas": 4, "paused": paused,
                "selector": {"matchLabels": {"app": "pool"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                    "maxSurge": max_surge, "maxUnavailable": i32::from(max_surge == 0),
                }},
                "template": {
                    "metadata": {
                        "labels": {"app": "pool"},
                        "annotations": {"pod-ready.stage.kwok.x-k8s.io/delay": "3s"},
                    },
                    "spec": {
                        "containers": [{"name": "engine", "image": image}],
                        "tolerations": [node.toleration()],
                        "nodeSelector": {"kubernetes.io/hostname": node.name()},
                    },
                },
            },
        })
        .to_string()
    };
    let pods: Api<Pod> = ns.api();
    // Each ReplicaSet's pods by image, ready ones only with `ready`.
    let count = |image: &'static str, ready: bool| {
        let pods = pods.clone();
        async move {
            let list = pods.list(&Default::default()).await?;
            anyhow::Ok(
                list.items
                    .iter()
                    .filter(|pod| pod.metadata.deletion_timestamp.is_none())
                    .filter(|pod| {
                        pod.spec.as_ref().map(|s| s.containers[0].image.as_deref())
                            == Some(Some(image))
                    })
                    .filter(|pod| !ready || is_ready(pod))
                    .count(),
            )
        }
    };
    let counts = |ready: bool| async move {
        anyhow::Ok((
            count("engine:old", ready).await?,
            count("engine:new", ready).await?,
        ))
    };
    // Applies `spec`, then waits for `want` old and new pods (ready ones only with `ready`).
    let (client, namespace) = (&admin, ns.name());
    let step = |spec: String, ready: bool, want: (usize, usize)| async move {
        apply_yaml_in(client, namespace, &spec).await?;
        eventually(TIMEOUT, || async {
            let pods = counts(ready).await?;
            anyhow::ensure!(pods == want, "old and new pods (ready: {ready}): {pods:?}");
            Ok(())
        })
        .await
    };
    step(deployment("engine:old", false, 1), true, (4, 0)).await?;
    // The rollout's first step, its surge pod; paused before that pod is ready, it stays.
    step(deployment("engine:new", false, 1), false, (4, 1)).await?;
    step(deployment("engine:new", true, 1), true, (4, 1)).await?;
    // One less surge: an old pod goes, no new one comes.
    step(deployment("engine:new", true, 0), false, (3, 1)).await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let pods = counts(false).await?;
    anyhow::ensure!(pods == (3, 1), "old and new pods a while later: {pods:?}");
    // On to 2 old and 3 new pods (a new pod is not ready for 3 s), paused there.
    step(deployment("engine:new", false, 1), false, (2, 3)).await?;
    step(deployment("engine:new", true, 1), true, (2, 3)).await?;
    // One less surge now takes a new pod, a ready one, from the larger ReplicaSet.
    step(deployment("engine:new", true, 0), false, (2, 2)).await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let pods = counts(true).await?;
    anyhow::ensure!(
        pods == (2, 2),
        "ready old and new pods a while later: {pods:?}"
    );
    // On to 1 old and 4 new pods, paused while the fourth is not ready yet: once it is, the
    // old pod goes all the same.
    step(deployment("engine:new", false, 1), false, (1, 4)).await?;
    apply_yaml_in(client, namespace, &deployment("engine:new", true, 1)).await?;
    let ready = counts(true).await?;
    anyhow::ensure!(
        ready == (1, 3),
        "paused too late: ready old and new pods {ready:?}"
    );
    step(deployment("engine:new", true, 1), true, (0, 4)).await?;
    ns.cleanup().await?;
    node.delete(&admin).await
}

/// [`GROUPS`] that may also replace one group.
static GROUPS_REPLACEABLE: [PoolSpec; 2] = pair(2, 4, 2, 1, 1);

#[tokio::test(flavor = "multi_thread")]
async fn without_a_spare_gpu_multi_node_pools_switch_from_surge_to_replacement()
-> anyhow::Result<()> {
    // Exactly the GPUs of the graph's 12 pods: a surge group finds none.
    let (admin, ns, node, _operator) = stage("op-lockstep-lws-full", "lws-full", 12).await?;
    let (record, took) = deploy_and_roll_out(
        &admin,
        &ns,
        &node,
        "packed",
        "Lockstep",
        &GROUPS_REPLACEABLE,
    )
    .await?;
    eprintln!(
        "Lockstep rollout of 2 prefill + 4 decode groups without a spare GPU: {:.1} s, {} pod events",
        took.as_secs_f64(),
        record.events
    );
    record.held(rollout_events(&GROUPS_REPLACEABLE))?;
    // Replacing lasted that rollout only: the next one surges first again.
    for pool in ["prefill", "decode"] {
        let lws = format!("packed-{pool}");
        eventually(TIMEOUT, || async {
            let max_surge = kubectl(&[
                "get",
                "leaderworkerset",
                &lws,
                "-n",
                ns.name(),
                "-o",
                "jsonpath={.spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge}",
            ])
            .await?
            .expect_code(0)?;
            anyhow::ensure!(max_surge.stdout == "1", "{lws}: maxSurge {max_surge:?}");
            Ok(())
        })
        .await?;
    }
    ns.cleanup().await?;
    node.delete(&admin).await
}
