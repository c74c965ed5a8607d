//! Pod Security, judged by the real API server's PodSecurity admission on the tier-2 cluster:
//! `doctor --for FILE` dry-runs every pod the spec renders in the target namespace and names the
//! pods its `enforce` level refuses. On the MI300X example (managed NATS, an `hf://` model, RDMA
//! with IPC_LOCK) with GAIE, what the operator runs itself — NATS, the download Job, the EPP —
//! passes `restricted`; the router and the engines run the image as built (root) and need
//! `baseline`; IPC_LOCK needs `privileged`. docs/security.md has the table these tests prove.
//! When the pods are refused anyway, the operator's `Ready` condition says `PodsRefused` in the
//! API server's words, and `deploy --wait` stops on it instead of waiting out its timeout.

use std::collections::BTreeSet;

use anyhow::Context as _;
use infera_e2e::{
    TestNamespace, admin,
    operator::{Operator, install},
    plugin::kubectl,
    target_dir,
};

/// The MI300X example with GAIE, in `namespace`, written where doctor reads it.
fn spec_file(namespace: &str) -> anyhow::Result<String> {
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/pd-mi300x.yaml"
    ))?;
    let idep = infera_core::yaml::parse_deployments(&example)?.remove(0);
    let mut spec = serde_json::to_value(&idep)?;
    spec["metadata"]["namespace"] = namespace.into();
    spec["spec"]["gaie"] = serde_json::json!({"enabled": true, "gatewayName": "gw", "tokenizerPath": "Qwen/Qwen3-0.6B"});
    let dir = target_dir().join("e2e-logs");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("pod-security-{namespace}.yaml"));
    std::fs::write(&path, serde_json::to_string_pretty(&spec)?)?;
    Ok(path.display().to_string())
}

/// Has `ns` enforce `level`, then returns doctor's INF601 check for `file`.
async fn inf601_at(
    ns: &TestNamespace,
    level: &str,
    file: &str,
) -> anyhow::Result<serde_json::Value> {
    ns.enforce(level).await?;
    let run = kubectl(&["infera", "doctor", "--for", file, "-o", "json"]).await?;
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .with_context(|| format!("one JSON document:\n{}\n{}", run.stdout, run.stderr))?;
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["id"] == "INF601"))
        .cloned()
        .with_context(|| format!("no INF601 in {report}"))
}

/// The pods a failing INF601 names (`Kind name (role)`), and its details joined.
fn refused(check: &serde_json::Value) -> (BTreeSet<String>, String) {
    let details: Vec<&str> = check["details"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d.as_str())
        .collect();
    let pods = details
        .iter()
        .filter_map(|d| d.split_once(": ").map(|(pod, _)| pod.to_string()))
        .collect();
    (pods, details.join("\n"))
}

#[tokio::test]
async fn what_the_operator_runs_passes_restricted_and_doctor_names_the_pods_a_level_refuses()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "pod-security").await?;
    let n = ns.name();
    let file = spec_file(n)?;
    let engines = |names: &[&str]| -> BTreeSet<String> {
        names
            .iter()
            .map(|name| format!("Deployment mi300x-{name} (pod)"))
            .collect()
    };

    // restricted: only the router and the engines are refused, each for running as root.
    let check = inf601_at(&ns, "restricted", &file).await?;
    anyhow::ensure!(check["severity"] == "fail", "{check}");
    let (pods, details) = refused(&check);
    anyhow::ensure!(
        pods == engines(&["server", "prefill", "decode"]),
        "restricted refuses exactly the router and the engines, not NATS, the Job or the EPP: {pods:?}\n{details}"
    );
    anyhow::ensure!(
        details.contains("violates PodSecurity \"restricted:latest\"")
            && details.contains("runAsNonRoot != true"),
        "{details}"
    );
    anyhow::ensure!(
        check["message"]
            .as_str()
            .is_some_and(|m| m.contains("refuses 3 of the 6 pod(s)")),
        "six pods: NATS, the Job, the EPP, the router, prefill, decode: {check}"
    );

    // baseline: the engines that add IPC_LOCK for RDMA are refused for it.
    let check = inf601_at(&ns, "baseline", &file).await?;
    let (pods, details) = refused(&check);
    anyhow::ensure!(
        check["severity"] == "fail" && pods == engines(&["prefill", "decode"]),
        "baseline refuses the RDMA engines only: {pods:?}\n{details}"
    );
    anyhow::ensure!(details.contains("IPC_LOCK"), "{details}");

    // privileged admits all six.
    let check = inf601_at(&ns, "privileged", &file).await?;
    anyhow::ensure!(check["severity"] == "pass", "{check}");
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_pods_are_reported_as_pod_security_by_the_operator_and_deploy_wait()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "pod-security-refused").await?;
    let n = ns.name();
    ns.enforce("restricted").await?;
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml");
    let run = kubectl(&[
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
    .await?;
    anyhow::ensure!(
        run.code == 1
            && run.stderr.contains("cannot become Ready")
            && run.stderr.contains(
                "Pod Security refuses its pods: violates PodSecurity \"restricted:latest\""
            ),
        "deploy --wait fails on the refusal (exit 1), not at its timeout (exit 3): exit {}:\n{}",
        run.code,
        run.stderr
    );
    let idep = kubectl(&["get", "idep", "-n", n, "-o", "json"]).await?;
    let list: serde_json::Value = serde_json::from_str(&idep.stdout)?;
    let status = &list["items"][0]["status"];
    let ready = status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .cloned()
        .unwrap_or_default();
    anyhow::ensure!(
        ready["reason"] == "PodsRefused" && status["state"] == "Degraded",
        "{status}"
    );
    ns.cleanup().await
}
