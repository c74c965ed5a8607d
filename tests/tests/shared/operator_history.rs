//! The revision history on the tier-2 cluster: the operator keeps one ControllerRevision per
//! revision of the worker pods (owned by the InferaDeployment), `kubectl infera rollout history`
//! lists them with what changed, `rollout undo` returns to an earlier one (renumbering it, as a
//! StatefulSet's rollback does) and the pods follow, and `spec.revisionHistoryLimit` prunes the
//! oldest. `rollout status` draws a bar per pool on a terminal, and only there.

use std::time::Duration;

use infera_core::{
    InferaDeployment,
    naming::{LABEL_DEPLOYMENT, LABEL_REVISION, LABEL_SERVICE},
};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api,
        api::{ListParams, Patch, PatchParams},
    },
    operator::{Operator, install},
    plugin::{Pty, kubectl},
};
use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::Pod};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(120);

fn image(tag: &str) -> String {
    format!("rocm/infera:sglang-{tag}")
}

/// A graph with one decode pool of two replicas, on `image(tag)`.
fn graph(name: &str, tag: &str, limit: Option<i32>) -> String {
    let mut spec = json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "sglang", "image": image(tag), "services": {
            "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "m"]},
            "decode": {
                "componentType": "worker", "replicas": 2, "resources": {"gpu": 1},
                "args": ["--model-path", "Qwen/Qwen3-0.6B"],
            },
        }},
    });
    if let Some(limit) = limit {
        spec["spec"]["revisionHistoryLimit"] = json!(limit);
    }
    spec.to_string()
}

async fn set_image(ideps: &Api<InferaDeployment>, name: &str, tag: &str) -> anyhow::Result<()> {
    let patch = json!({"spec": {"image": image(tag)}});
    ideps
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// Waits until the rollout of the spec's generation is complete; returns its revision, which
/// every running decode pod then carries.
async fn rolled_out(
    ideps: &Api<InferaDeployment>,
    pods: &Api<Pod>,
    name: &str,
) -> anyhow::Result<String> {
    eventually(TIMEOUT, || async {
        let idep = ideps.get(name).await?;
        let status = idep.status.clone().unwrap_or_default();
        let progressing = status
            .conditions
            .iter()
            .find(|c| c.type_ == infera_core::PROGRESSING)
            .map(|c| c.reason.clone());
        anyhow::ensure!(
            status.observed_generation == idep.metadata.generation
                && progressing.as_deref() == Some(infera_core::ROLLOUT_COMPLETE)
                && status.current_revision == status.update_revision,
            "{progressing:?} {:?} {:?}",
            status.current_revision,
            status.update_revision
        );
        let revision = status.current_revision.unwrap_or_default();
        let selector = format!("{LABEL_DEPLOYMENT}={name},{LABEL_SERVICE}=decode");
        let running: Vec<Option<String>> = pods
            .list(&ListParams::default().labels(&selector))
            .await?
            .items
            .into_iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none())
            .map(|pod| {
                pod.metadata
                    .labels
                    .unwrap_or_default()
                    .get(LABEL_REVISION)
                    .cloned()
            })
            .collect();
        anyhow::ensure!(
            running.len() == 2
                && running
                    .iter()
                    .all(|r| r.as_deref() == Some(revision.as_str())),
            "decode pods run {running:?}, not {revision}"
        );
        Ok(revision)
    })
    .await
}

/// The history as (revision, hash) pairs, oldest first, from the cluster.
async fn history(
    revisions: &Api<ControllerRevision>,
    name: &str,
) -> anyhow::Result<Vec<(i64, String)>> {
    let selector = format!("{LABEL_DEPLOYMENT}={name}");
    let mut pairs: Vec<(i64, String)> = revisions
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .into_iter()
        // The NATS StatefulSet's own revisions carry the deployment's label too.
        .filter_map(|r| {
            let hash = r.metadata.labels?.get(LABEL_REVISION)?.clone();
            Some((r.revision, hash))
        })
        .collect();
    pairs.sort();
    Ok(pairs)
}

/// `rollout history`'s table without its AGE column: columns joined by ` | `.
fn table(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|line| {
            let mut columns: Vec<&str> = line
                .split("   ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            if columns.len() >= 4 {
                columns.remove(3);
            }
            columns.join(" | ")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn history_lists_each_revision_and_undo_returns_to_an_earlier_one() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-history").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    apply_yaml_in(&admin, ns.name(), &graph("hist", "v0.1.1", None)).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let pods: Api<Pod> = ns.api();
    let revisions: Api<ControllerRevision> = ns.api();
    let a = rolled_out(&ideps, &pods, "hist").await?;
    set_image(&ideps, "hist", "v0.1.2").await?;
    let b = rolled_out(&ideps, &pods, "hist").await?;
    set_image(&ideps, "hist", "v0.1.3").await?;
    let c = rolled_out(&ideps, &pods, "hist").await?;
    assert_eq!(
        history(&revisions, "hist").await?,
        [(1, a.clone()), (2, b.clone()), (3, c.clone())]
    );

    let n = ns.name();
    let listed = kubectl(&["infera", "rollout", "history", "hist", "-n", n])
        .await?
        .expect_code(0)?;
    assert_eq!(
        table(&listed.stdout),
        [
            "REVISION | HASH | CHANGE | CURRENT".to_string(),
            format!("1 | {a} | initial"),
            format!("2 | {b} | image: rocm/infera:sglang-v0.1.1 → rocm/infera:sglang-v0.1.2"),
            format!(
                "3 | {c} | image: rocm/infera:sglang-v0.1.2 → rocm/infera:sglang-v0.1.3 | current"
            ),
        ],
        "{}",
        listed.stdout
    );

    // Back to the previous revision: it is renumbered, not copied, and the pods follow.
    let undone = kubectl(&["infera", "rollout", "undo", "hist", "-n", n])
        .await?
        .expect_code(0)?;
    assert_eq!(
        undone.stdout.trim(),
        format!("inferadeployment.infera.amd.com/hist rolled back to revision 2 ({b})")
    );
    assert_eq!(rolled_out(&ideps, &pods, "hist").await?, b);
    let idep = ideps.get("hist").await?;
    assert_eq!(idep.spec.image.as_deref(), Some(image("v0.1.2").as_str()));
    eventually(TIMEOUT, || async {
        let now = history(&revisions, "hist").await?;
        anyhow::ensure!(
            now == [(1, a.clone()), (3, c.clone()), (4, b.clone())],
            "{now:?}"
        );
        Ok(())
    })
    .await?;

    // To the first revision by number.
    let undone = kubectl(&[
        "infera",
        "rollout",
        "undo",
        "hist",
        "--to-revision",
        "1",
        "-n",
        n,
    ])
    .await?
    .expect_code(0)?;
    assert_eq!(
        undone.stdout.trim(),
        format!("inferadeployment.infera.amd.com/hist rolled back to revision 1 ({a})")
    );
    assert_eq!(rolled_out(&ideps, &pods, "hist").await?, a);
    eventually(TIMEOUT, || async {
        let now = history(&revisions, "hist").await?;
        anyhow::ensure!(
            now == [(3, c.clone()), (4, b.clone()), (5, a.clone())],
            "{now:?}"
        );
        Ok(())
    })
    .await?;
    let listed = kubectl(&["infera", "rollout", "history", "hist", "-n", n])
        .await?
        .expect_code(0)?;
    assert_eq!(
        table(&listed.stdout)[1..],
        [
            format!("3 | {c} | -"),
            format!("4 | {b} | image: rocm/infera:sglang-v0.1.3 → rocm/infera:sglang-v0.1.2"),
            format!(
                "5 | {a} | image: rocm/infera:sglang-v0.1.2 → rocm/infera:sglang-v0.1.1 | current"
            ),
        ],
        "{}",
        listed.stdout
    );

    // One revision's spec, and the ControllerRevisions as JSON.
    let detail = kubectl(&[
        "infera",
        "rollout",
        "history",
        "hist",
        "--revision",
        "4",
        "-n",
        n,
    ])
    .await?
    .expect_code(0)?;
    assert!(
        detail.stdout.contains(&format!("revision 4 ({b})"))
            && detail.stdout.contains("image: rocm/infera:sglang-v0.1.2"),
        "{}",
        detail.stdout
    );
    let json = kubectl(&[
        "infera", "rollout", "history", "hist", "-o", "json", "-n", n,
    ])
    .await?
    .expect_code(0)?;
    let list: serde_json::Value = serde_json::from_str(&json.stdout)?;
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"][2]["data"]["spec"]["image"], image("v0.1.1"));
    assert_eq!(list["items"][2]["revision"], 5);

    // A revision the history lacks: exit 1, naming those it has; nothing changes.
    let missing = kubectl(&[
        "infera",
        "rollout",
        "undo",
        "hist",
        "--to-revision",
        "2",
        "-n",
        n,
    ])
    .await?
    .expect_code(1)?;
    assert!(
        missing
            .stderr
            .contains("revision 2 is not in the history, which has revisions 3, 4, 5"),
        "{}",
        missing.stderr
    );
    // Undo to the revision it runs: nothing to do.
    let same = kubectl(&[
        "infera",
        "rollout",
        "undo",
        "hist",
        "--to-revision",
        "5",
        "-n",
        n,
    ])
    .await?
    .expect_code(0)?;
    assert!(same.stdout.contains("skipped rollback"), "{}", same.stdout);
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn revision_history_limit_prunes_the_oldest_revisions() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-history-limit").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    apply_yaml_in(&admin, ns.name(), &graph("pruned", "v0.1.1", Some(2))).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let pods: Api<Pod> = ns.api();
    let revisions: Api<ControllerRevision> = ns.api();
    let mut hashes = vec![rolled_out(&ideps, &pods, "pruned").await?];
    for tag in ["v0.1.2", "v0.1.3", "v0.1.4", "v0.1.5"] {
        set_image(&ideps, "pruned", tag).await?;
        hashes.push(rolled_out(&ideps, &pods, "pruned").await?);
    }
    // The revision pods run and the two before it: revisions 3 to 5.
    eventually(TIMEOUT, || async {
        let now = history(&revisions, "pruned").await?;
        let expected: Vec<(i64, String)> = (3..=5).zip(hashes[2..].iter().cloned()).collect();
        anyhow::ensure!(now == expected, "{now:?}");
        Ok(())
    })
    .await?;
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn rollout_status_draws_a_bar_per_pool_on_a_terminal_only() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-history-bars").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    apply_yaml_in(&admin, ns.name(), &graph("bars", "v0.1.1", None)).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    let pods: Api<Pod> = ns.api();
    rolled_out(&ideps, &pods, "bars").await?;
    let n = ns.name();
    // Paused before the change, so the rollout waits for the terminal to show it.
    kubectl(&["infera", "rollout", "pause", "bars", "-n", n])
        .await?
        .expect_code(0)?;
    set_image(&ideps, "bars", "v0.1.2").await?;
    let mut terminal = Pty::spawn(&format!("kubectl infera rollout status bars -n {n}"))?;
    terminal
        .expect("RolloutPaused", Duration::from_secs(30))
        .await?;
    terminal.expect("decode [", Duration::from_secs(30)).await?;
    terminal
        .expect("0/2 updated, 2 ready", Duration::from_secs(30))
        .await?;
    kubectl(&["infera", "rollout", "resume", "bars", "-n", n])
        .await?
        .expect_code(0)?;
    terminal
        .expect("RolloutComplete", Duration::from_secs(60))
        .await?;
    assert_eq!(terminal.wait(Duration::from_secs(30)).await?, 0);
    // Piped: the lines only.
    let piped = kubectl(&["infera", "rollout", "status", "bars", "-n", n])
        .await?
        .expect_code(0)?;
    assert!(
        piped.stdout.starts_with("RolloutComplete: "),
        "{}",
        piped.stdout
    );
    assert_eq!(piped.stderr, "");
    operator.ensure_running()?;
    ns.cleanup().await
}

/// The seed example, whose args hold `<rdma-nic>`, through day 2 as a new user goes: two of each
/// worker, a new image, `rollout undo`, then a scale. The undo renumbers the seed's revision
/// (which the API server refused while its `data` was not written as it re-encodes it: issue 31),
/// every later reconcile succeeds, and the scale completes.
#[tokio::test(flavor = "multi_thread")]
async fn the_seed_example_rolls_back_and_then_scales() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-seed-undo").await?;
    let identity = install(&admin).await?;
    let mut operator = Operator::start_in(&identity, ns.name()).await?;
    let n = ns.name();
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml");
    kubectl(&[
        "infera",
        "deploy",
        "-f",
        seed,
        "-n",
        n,
        "--wait",
        "--timeout",
        "120s",
    ])
    .await?
    .expect_code(0)?;
    kubectl(&[
        "infera",
        "scale",
        "demo",
        "prefill=2",
        "decode=2",
        "--wait",
        "--timeout",
        "120s",
        "-n",
        n,
    ])
    .await?
    .expect_code(0)?;
    let ideps: Api<InferaDeployment> = ns.api();
    let pods: Api<Pod> = ns.api();
    let revisions: Api<ControllerRevision> = ns.api();
    let a = rolled_out(&ideps, &pods, "demo").await?;
    set_image(&ideps, "demo", "v0.1.2").await?;
    let b = rolled_out(&ideps, &pods, "demo").await?;

    let undone = kubectl(&["infera", "rollout", "undo", "demo", "-n", n])
        .await?
        .expect_code(0)?;
    assert!(
        undone.stdout.contains("rolled back to revision 1"),
        "{}",
        undone.stdout
    );
    assert_eq!(rolled_out(&ideps, &pods, "demo").await?, a);
    eventually(TIMEOUT, || async {
        let now = history(&revisions, "demo").await?;
        anyhow::ensure!(now == [(2, b.clone()), (3, a.clone())], "{now:?}");
        Ok(())
    })
    .await?;

    kubectl(&[
        "infera",
        "scale",
        "demo",
        "decode=3",
        "--wait",
        "--timeout",
        "120s",
        "-n",
        n,
    ])
    .await?
    .expect_code(0)?;
    let idep = ideps.get("demo").await?;
    let status = idep.status.clone().unwrap_or_default();
    let reconciled = status
        .conditions
        .iter()
        .find(|c| c.type_ == infera_core::RECONCILED)
        .map(|c| (c.status.as_str(), c.observed_generation));
    assert_eq!(reconciled, Some(("True", idep.metadata.generation)));
    let log = std::fs::read_to_string(&operator.log)?;
    assert!(
        !log.contains("cannot renumber"),
        "the operator failed to renumber:\n{log}"
    );
    operator.ensure_running()?;
    ns.cleanup().await
}
