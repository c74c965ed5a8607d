//! `kubectl infera` end to end on the tier-2 cluster, always through the real kubectl (which finds
//! the plugin on PATH): init → doctor → deploy --wait → status, idempotent re-runs, the wizard on
//! a pseudo-terminal, explanations on timeout, and an unprivileged user's doctor.
//!
//! The InferaDeployments are reconciled by a local `infera-operator` scoped to the test's
//! namespace and authenticated as the ServiceAccount `init` created (the in-cluster operator
//! Deployment is only simulated by kwok).

use std::{collections::BTreeMap, sync::OnceLock, time::Duration};

use anyhow::Context as _;
use infera_e2e::{
    Process, ServiceAccountIdentity, TestNamespace, admin, binary,
    k8s_openapi::{
        api::{
            apps::v1::Deployment,
            core::v1::{Namespace, Service, ServiceAccount},
            rbac::v1::{ClusterRole, ClusterRoleBinding},
        },
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    },
    kube::{
        Api, Client,
        api::{DynamicObject, ListParams},
        core::{ApiResource, GroupVersionKind},
    },
    plugin::{DOWN, ENTER, Pty, doctor_check, kubectl},
    target_dir,
};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");

/// `kubectl infera init --wait` once per test binary (tests run in parallel and share it).
fn init_once() -> anyhow::Result<()> {
    static INIT: OnceLock<Result<String, String>> = OnceLock::new();
    let result = INIT.get_or_init(|| {
        let run = std::process::Command::new("kubectl")
            .args(["infera", "init", "--wait", "--timeout", "2m"])
            .env(
                "PATH",
                infera_e2e::plugin::path_with_plugin().map_err(|e| e.to_string())?,
            )
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let out = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        if run.status.success() {
            Ok(out)
        } else {
            Err(format!(
                "kubectl infera init failed ({}):\n{out}",
                run.status
            ))
        }
    });
    result
        .as_ref()
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// A local operator for one namespace, as the ServiceAccount `init` installed.
async fn operator(admin: &Client, namespace: &str) -> anyhow::Result<Process> {
    let dir = target_dir().join("e2e-logs");
    std::fs::create_dir_all(&dir)?;
    let kubeconfig = dir.join(format!("plugin-operator-{namespace}.kubeconfig"));
    let identity = ServiceAccountIdentity::create(
        admin,
        "infera-system",
        "infera-operator",
        Duration::from_secs(3600),
        &kubeconfig,
    )
    .await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let args = [
        "--namespace".to_string(),
        namespace.to_string(),
        format!("--http-addr=127.0.0.1:{port}"),
    ];
    Process::spawn(
        &binary("infera-operator")?,
        &args,
        &identity.kubeconfig,
        &[("RUST_LOG", "info")],
        &format!("plugin-operator-{namespace}"),
    )
}

/// resourceVersions of everything `init` installs.
async fn bundle_versions(admin: &Client) -> anyhow::Result<BTreeMap<String, String>> {
    let rv = |m: &infera_e2e::kube::api::ObjectMeta| m.resource_version.clone().unwrap_or_default();
    let mut out = BTreeMap::new();
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    out.insert(
        "crd".into(),
        rv(&crds.get("inferadeployments.infera.amd.com").await?.metadata),
    );
    out.insert(
        "ns".into(),
        rv(&Api::<Namespace>::all(admin.clone())
            .get("infera-system")
            .await?
            .metadata),
    );
    out.insert(
        "cr".into(),
        rv(&Api::<ClusterRole>::all(admin.clone())
            .get("infera-system:infera-operator")
            .await?
            .metadata),
    );
    out.insert(
        "crb".into(),
        rv(&Api::<ClusterRoleBinding>::all(admin.clone())
            .get("infera-system:infera-operator")
            .await?
            .metadata),
    );
    let ns = "infera-system";
    out.insert(
        "sa".into(),
        rv(&Api::<ServiceAccount>::namespaced(admin.clone(), ns)
            .get("infera-operator")
            .await?
            .metadata),
    );
    out.insert(
        "svc".into(),
        rv(&Api::<Service>::namespaced(admin.clone(), ns)
            .get("infera-operator-metrics")
            .await?
            .metadata),
    );
    out.insert(
        "deploy".into(),
        rv(&Api::<Deployment>::namespaced(admin.clone(), ns)
            .get("infera-operator")
            .await?
            .metadata),
    );
    Ok(out)
}

fn idep_api(admin: &Client, namespace: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("infera.amd.com", "v1alpha1", "InferaDeployment"),
        "inferadeployments",
    );
    Api::namespaced_with(admin.clone(), namespace, &resource)
}

#[tokio::test]
async fn init_doctor_deploy_status_and_rerun_changes_nothing() -> anyhow::Result<()> {
    let admin = admin().await?;
    init_once()?;
    let ns = TestNamespace::new(&admin, "plugin-flow").await?;
    let n = ns.name();

    // doctor is green (warnings allowed) and prints exactly one JSON document.
    let doctor = kubectl(&["infera", "doctor", "-n", n, "-o", "json"]).await?;
    let report: serde_json::Value =
        serde_json::from_str(&doctor.stdout).context("doctor -o json is one JSON document")?;
    anyhow::ensure!(
        doctor.code == 0 && report["success"] == true,
        "doctor is not green:\n{}",
        doctor.stdout
    );
    let fails: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["severity"] == "fail")
        .collect();
    anyhow::ensure!(fails.is_empty(), "{fails:?}");

    // --for: the seed's PD example fits the free GPUs; 2 groups × 2 nodes × 8 GPUs do not.
    let pd = format!("{EXAMPLES}/pd.yaml");
    let fits = kubectl(&["infera", "doctor", "-n", n, "--for", &pd, "-o", "json"])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        fits.stdout.contains("\"INF303\"") && fits.stdout.contains("demo fits the free GPUs now"),
        "{}",
        fits.stdout
    );
    let big = format!("{EXAMPLES}/multinode.yaml");
    let nofit = kubectl(&["infera", "doctor", "-n", n, "--for", &big])
        .await?
        .expect_code(1)?;
    anyhow::ensure!(
        nofit.stdout.contains("FAIL  INF303")
            && nofit
                .stdout
                .contains("worker: 4 pod(s) × 8 amd.com/gpu needed"),
        "{}",
        nofit.stdout
    );

    let mut operator = operator(&admin, n).await?;
    let deploy = kubectl(&[
        "infera",
        "deploy",
        "-f",
        &pd,
        "-n",
        n,
        "--wait",
        "--timeout",
        "150s",
    ])
    .await?;
    operator.ensure_running()?;
    let deploy = deploy.expect_code(0)?;
    anyhow::ensure!(
        deploy
            .stdout
            .contains("inferadeployment.infera.amd.com/demo created"),
        "{}",
        deploy.stdout
    );

    // status: Ready per role, in text and JSON.
    let status = kubectl(&["infera", "status", "demo", "-n", n, "-o", "json"])
        .await?
        .expect_code(0)?;
    let detail: serde_json::Value = serde_json::from_str(&status.stdout)?;
    anyhow::ensure!(detail["state"] == "Ready", "{}", status.stdout);
    let roles: BTreeMap<String, (String, i64, i64)> = detail["services"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let name = s["name"].as_str().unwrap_or_default().to_string();
            (
                name,
                (
                    s["role"].as_str().unwrap_or_default().into(),
                    s["readyReplicas"].as_i64().unwrap_or(-1),
                    s["desiredReplicas"].as_i64().unwrap_or(-2),
                ),
            )
        })
        .collect();
    for (service, role) in [
        ("server", "server"),
        ("prefill", "prefill"),
        ("decode", "decode"),
    ] {
        let (r, ready, desired) = roles.get(service).cloned().unwrap_or_default();
        anyhow::ensure!(
            r == role && ready == desired && desired > 0,
            "{service}: {:?}\n{}",
            roles.get(service),
            status.stdout
        );
    }
    let text = kubectl(&["infera", "status", "demo", "-n", n])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(text.stdout.contains("State:      Ready"), "{}", text.stdout);
    let list = kubectl(&["infera", "status", "-A"]).await?.expect_code(0)?;
    anyhow::ensure!(
        list.stdout
            .lines()
            .any(|l| l.starts_with(n) && l.contains(" demo ") && l.contains("Ready")),
        "{}",
        list.stdout
    );

    // logs: a pool the deployment does not have fails naming those it has (as scale), a rank it
    // does not have is a usage error, a deployment that does not exist is not found (tier 3 reads
    // real logs).
    for (args, code, message) in [
        (
            vec!["demo", "decode", "router"],
            1,
            "has no pool router; its pools are decode, prefill, server, nats, epp, model",
        ),
        (
            vec!["demo", "--rank", "1"],
            2,
            "error: --rank 1: no pool of demo spans nodes (numberOfNodes > 1)",
        ),
        (
            vec!["nothere"],
            1,
            "not found; `kubectl infera status -A` lists them all",
        ),
        (
            vec!["demo", "-f", "--previous"],
            2,
            "the argument '--follow' cannot be used with '--previous'",
        ),
    ] {
        let mut all = vec!["infera", "logs", "-n", n];
        all.extend(&args);
        let run = kubectl(&all).await?.expect_code(code)?;
        anyhow::ensure!(
            run.stderr.contains(message) && run.stdout.is_empty(),
            "{args:?}: {}",
            run.stderr
        );
    }

    // Re-running init and deploy changes no resourceVersion.
    let before = bundle_versions(&admin).await?;
    let idep_before = idep_api(&admin, n)
        .get("demo")
        .await?
        .metadata
        .resource_version;
    let again = kubectl(&["infera", "init"]).await?.expect_code(0)?;
    anyhow::ensure!(
        again.stdout.lines().all(|l| l.ends_with(" unchanged")),
        "{}",
        again.stdout
    );
    let redeploy = kubectl(&["infera", "deploy", "-f", &pd, "-n", n])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        redeploy.stdout.contains("demo unchanged"),
        "{}",
        redeploy.stdout
    );
    anyhow::ensure!(
        bundle_versions(&admin).await? == before,
        "init changed a resourceVersion"
    );
    anyhow::ensure!(
        idep_api(&admin, n)
            .get("demo")
            .await?
            .metadata
            .resource_version
            == idep_before,
        "deploy changed the resourceVersion"
    );

    operator.stop().await?;
    ns.cleanup().await
}

#[tokio::test]
async fn deploy_wait_explains_unschedulable_pods_on_timeout() -> anyhow::Result<()> {
    let admin = admin().await?;
    init_once()?;
    let ns = TestNamespace::new(&admin, "plugin-timeout").await?;
    let n = ns.name();
    let _operator = operator(&admin, n).await?;
    let too_big = format!("{}/too-big.yaml", target_dir().join("e2e-logs").display());
    std::fs::write(
        &too_big,
        "apiVersion: infera.amd.com/v1alpha1\nkind: InferaDeployment\nmetadata: {name: huge}\nspec:\n  backendFramework: vllm\n  image: rocm/infera:vllm-v0.1.1\n  services:\n    server: {componentType: server, args: [--router-tokenizer-path, m]}\n    worker:\n      componentType: worker\n      resources: {gpu: 16}\n      args: [--model, m, --tensor-parallel-size, \"16\"]\n",
    )?;
    let run = kubectl(&[
        "infera",
        "deploy",
        "-f",
        &too_big,
        "-n",
        n,
        "--wait",
        "--timeout",
        "25s",
    ])
    .await?
    .expect_code(3)?;
    anyhow::ensure!(run.stderr.contains("timed out after 25s"), "{}", run.stderr);
    anyhow::ensure!(
        run.stderr.contains("unschedulable") && run.stderr.contains("Insufficient amd.com/gpu"),
        "{}",
        run.stderr
    );
    ns.cleanup().await
}

/// Tier 2 as a new user finds it: `init` reports the operator available, but its kwok pod runs no
/// process, so nothing reconciles. `deploy --wait` says so after 30 s and on timeout, `status`
/// says so, and `doctor` tells the available Deployment from a reconciling one by its leader
/// Lease, which no replica renews (issue 27).
#[tokio::test]
async fn a_deployment_no_operator_picks_up_says_so_and_doctor_finds_why() -> anyhow::Result<()> {
    let admin = admin().await?;
    init_once()?;
    let ns = TestNamespace::new(&admin, "plugin-unreported").await?;
    let n = ns.name();
    let seed = format!("{EXAMPLES}/pd.yaml");
    let run = kubectl(&[
        "infera",
        "deploy",
        "-f",
        &seed,
        "-n",
        n,
        "--wait",
        "--timeout",
        "35s",
    ])
    .await?
    .expect_code(3)?;
    let hint = "no operator has reported on generation 1 for 30s: is one running and reconciling this namespace? check with `kubectl infera doctor`";
    anyhow::ensure!(run.stderr.contains(hint), "{}", run.stderr);
    // Once as the warning, once among what blocks at the timeout.
    anyhow::ensure!(
        run.stderr.contains("timed out after 35s")
            && run
                .stderr
                .matches("no operator has reported on generation 1 for ")
                .count()
                >= 2,
        "{}",
        run.stderr
    );
    let status = kubectl(&["infera", "status", "demo", "-n", n])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        status
            .stdout
            .contains("no operator has reported on generation 1 for"),
        "{}",
        status.stdout
    );
    let inf103 = doctor_check(&["-n", n], "INF103").await?;
    // The Lease was never acquired, or (after operator.rs's leader-election test, which holds
    // it for a while) is no longer renewed.
    let message = inf103["message"].as_str().unwrap_or_default();
    anyhow::ensure!(
        inf103["severity"] == "warn"
            && message.contains("leader Lease infera-system/infera-operator")
            && (message.contains("no replica has acquired")
                || message.contains("no replica is reconciling")),
        "{inf103}"
    );
    ns.cleanup().await
}

#[tokio::test]
async fn deploy_without_a_terminal_lists_missing_flags_and_invalid_specs_list_every_error()
-> anyhow::Result<()> {
    let run = kubectl(&["infera", "deploy", "--backend", "sglang"])
        .await?
        .expect_code(2)?;
    anyhow::ensure!(
        run.stderr.contains("missing --name, --model"),
        "{}",
        run.stderr
    );
    let bad = target_dir().join("e2e-logs").join("plugin-invalid.yaml");
    std::fs::create_dir_all(bad.parent().context("dir")?)?;
    std::fs::write(
        &bad,
        "apiVersion: infera.amd.com/v1alpha1\nkind: InferaDeployment\nmetadata: {name: bad}\nspec:\n  backendFramework: sglang\n  services:\n    w: {componentType: worker, role: prefill}\n",
    )?;
    let path = bad.display().to_string();
    for args in [
        vec!["infera", "render", "-f", &path],
        vec!["infera", "deploy", "-f", &path, "--dry-run=server"],
    ] {
        let run = kubectl(&args).await?.expect_code(1)?;
        for field in [
            "spec.services: exactly one service",
            "spec.services: prefill pools need decode pools",
            "spec.services.w.resources.gpu",
        ] {
            anyhow::ensure!(
                run.stderr.contains(field),
                "{args:?}: {field} missing in\n{}",
                run.stderr
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn doctor_as_an_unprivileged_user_names_the_missing_permissions() -> anyhow::Result<()> {
    init_once()?;
    let run = kubectl(&[
        "infera",
        "doctor",
        "--context",
        "alice",
        "-n",
        "default",
        "-o",
        "json",
    ])
    .await?
    .expect_code(1)?;
    let report: serde_json::Value = serde_json::from_str(&run.stdout)?;
    let check = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "INF402")
        .cloned()
        .unwrap_or_default();
    anyhow::ensure!(check["severity"] == "fail", "{check}");
    let details: Vec<&str> = check["details"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d.as_str())
        .collect();
    anyhow::ensure!(
        details.contains(&"missing: create inferadeployments.infera.amd.com in namespace default"),
        "{details:?}"
    );
    anyhow::ensure!(
        check["hint"].as_str().is_some_and(|h| !h.is_empty()),
        "{check}"
    );
    // The day-2 reads (logs, report, status --load), subresources included: a warning.
    let day2 = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "INF403")
        .cloned()
        .unwrap_or_default();
    anyhow::ensure!(
        day2["severity"] == "warn"
            && day2["details"].as_array().is_some_and(|d| d
                .iter()
                .any(|d| d == "missing: get pods/log in namespace default")),
        "{day2}"
    );
    // Table output: same exit code.
    let table = kubectl(&["infera", "doctor", "--context", "alice"])
        .await?
        .expect_code(1)?;
    anyhow::ensure!(table.stdout.contains("FAIL  INF402"), "{}", table.stdout);
    Ok(())
}

/// Answers the wizard; `answers` are (prompt text to wait for, keys to type).
async fn wizard(command: &str, answers: &[(&str, &str)]) -> anyhow::Result<(i32, String)> {
    let mut pty = Pty::spawn(command)?;
    for (prompt, keys) in answers {
        pty.expect(prompt, Duration::from_secs(30))
            .await
            .with_context(|| format!("waiting for {prompt:?}"))?;
        pty.send(keys).await?;
    }
    let screen_before = pty.screen();
    let code = pty.wait(Duration::from_secs(120)).await?;
    Ok((code, screen_before))
}

#[tokio::test]
async fn the_wizard_on_a_terminal_makes_pd_and_multinode_specs_that_deploy() -> anyhow::Result<()> {
    let admin = admin().await?;
    init_once()?;
    let ns = TestNamespace::new(&admin, "plugin-wizard").await?;
    let n = ns.name();
    let mut operator = operator(&admin, n).await?;
    let dir = target_dir().join("e2e-logs");
    let pd_file = dir.join(format!("{n}-pd.yaml"));
    let command = format!(
        "kubectl infera deploy -n {n} --wait --timeout 150s --save {}",
        pd_file.display()
    );
    let (code, screen) = wizard(
        &command,
        &[
            ("Name of the deployment", &format!("wiz-pd{ENTER}")),
            ("Inference engine", ENTER),             // sglang
            ("Model", ENTER),                        // Qwen/Qwen3-0.6B
            ("Topology", &format!("{DOWN}{ENTER}")), // pd
            ("Image", ENTER),
            ("GPUs per worker pod", ENTER),  // 1
            ("Tensor-parallel size", ENTER), // 1
            ("Prefill replicas", ENTER),
            ("Decode replicas", ENTER),
            ("Memory per worker pod", ENTER),           // 64Gi
            ("Shared memory", &format!("16Gi{ENTER}")), // instead of 32Gi
            ("KV transfer backend", ENTER),             // mori
            ("Router policy", ENTER),                   // kv-aware
            ("NATS JetStream", ENTER),                  // yes
            ("Discovery backend", ENTER),               // kubernetes
            ("Apply wiz-pd", ENTER),
        ],
    )
    .await?;
    operator.ensure_running()?;
    anyhow::ensure!(code == 0, "wizard exited {code}:\n{screen}");
    anyhow::ensure!(
        screen.contains("The same without the wizard:") && screen.contains("--topology pd"),
        "{screen}"
    );
    // The command without the wizard deploys where the wizard did.
    let without = screen
        .split("The same without the wizard:")
        .nth(1)
        .unwrap_or_default();
    anyhow::ensure!(without.contains(&format!("-n {n} \\")), "{screen}");
    // No question draws an empty help line.
    anyhow::ensure!(!screen.contains("[]"), "an empty help line:\n{screen}");
    // No RDMA NICs on this cluster's nodes: said once, and nothing asked about them.
    anyhow::ensure!(
        screen.matches("No node advertises RDMA NICs").count() == 1
            && !screen.contains("RDMA device"),
        "{screen}"
    );
    let saved = std::fs::read_to_string(&pd_file)?;
    anyhow::ensure!(
        saved.contains("role: prefill")
            && saved.contains("role: decode")
            && saved.contains("memory: 64Gi")
            && saved.contains("sharedMemory: 16Gi"),
        "{saved}"
    );
    kubectl(&["infera", "render", "-f", &pd_file.display().to_string()])
        .await?
        .expect_code(0)?;
    let pd = idep_api(&admin, n).get("wiz-pd").await?;
    anyhow::ensure!(
        pd.data["status"]["state"] == "Ready",
        "{:?}",
        pd.data["status"]
    );

    let mn_file = dir.join(format!("{n}-mn.yaml"));
    let command = format!(
        "kubectl infera deploy -n {n} --wait --timeout 150s --save {}",
        mn_file.display()
    );
    let (code, screen) = wizard(
        &command,
        &[
            ("Name of the deployment", &format!("wiz-mn{ENTER}")),
            ("Inference engine", &format!("{DOWN}{ENTER}")), // vllm
            ("Model", ENTER),
            ("Topology", &format!("{DOWN}{DOWN}{ENTER}")), // multinode
            ("Image", ENTER),
            ("GPUs per worker pod", &format!("2{ENTER}")),
            ("Nodes per replica", ENTER),    // 2
            ("Tensor-parallel size", ENTER), // 2 → pipeline 2
            ("Worker replicas", ENTER),
            ("Memory per worker pod", ENTER), // 2 GPUs: 128Gi
            ("Shared memory", ENTER),         // 64Gi
            ("Router policy", ENTER),
            ("NATS JetStream", &format!("n{ENTER}")),
            ("Discovery backend", ENTER),
            ("Apply wiz-mn", ENTER),
        ],
    )
    .await?;
    operator.ensure_running()?;
    anyhow::ensure!(code == 0, "wizard exited {code}:\n{screen}");
    anyhow::ensure!(!screen.contains("[]"), "an empty help line:\n{screen}");
    let saved = std::fs::read_to_string(&mn_file)?;
    anyhow::ensure!(
        saved.contains("numberOfNodes: 2")
            && saved.contains("--pipeline-parallel-size")
            && saved.contains("memory: 128Gi")
            && saved.contains("sharedMemory: 64Gi"),
        "{saved}"
    );
    let lws = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
        "leaderworkersets",
    );
    let lwss = Api::<DynamicObject>::namespaced_with(admin.clone(), n, &lws)
        .list(&ListParams::default())
        .await?;
    anyhow::ensure!(
        lwss.items
            .iter()
            .any(|l| l.data["spec"]["leaderWorkerTemplate"]["size"] == 2),
        "no LeaderWorkerSet of size 2"
    );
    // status shows the pool's groups and each pod's group index.
    let status = kubectl(&["infera", "status", "wiz-mn", "-n", n, "-o", "json"])
        .await?
        .expect_code(0)?;
    let detail: serde_json::Value = serde_json::from_str(&status.stdout)?;
    let worker = detail["services"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "worker"))
        .cloned()
        .unwrap_or_default();
    anyhow::ensure!(
        worker["kind"] == "LeaderWorkerSet"
            && worker["nodesPerGroup"] == 2
            && worker["readyGroups"] == 1,
        "{worker}"
    );
    let grouped = detail["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["service"] == "worker" && p["group"] == "0")
        .count();
    anyhow::ensure!(
        grouped == 2,
        "expected 2 pods in group 0:\n{}",
        status.stdout
    );
    operator.stop().await?;
    ns.cleanup().await
}

#[tokio::test]
async fn kubectl_completes_through_the_shipped_shim() -> anyhow::Result<()> {
    let admin = admin().await?;
    init_once()?;
    let ns = TestNamespace::new(&admin, "plugin-complete").await?;
    let pd = format!("{EXAMPLES}/pd.yaml");
    kubectl(&["infera", "deploy", "-f", &pd, "-n", ns.name()])
        .await?
        .expect_code(0)?;
    // kubectl (>= 1.26) runs kubectl_complete-infera from PATH: put the committed shim there.
    let shim_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../completions");
    let path = std::env::join_paths(std::iter::once(shim_dir).chain(std::env::split_paths(
        &infera_e2e::plugin::path_with_plugin()?,
    )))?;
    let path = path.to_string_lossy().into_owned();
    let env = [("PATH", path.as_str())];
    let subcommands = infera_e2e::plugin::kubectl_env(&["__complete", "infera", "st"], &env)
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        subcommands
            .stdout
            .lines()
            .any(|l| l.starts_with("status\t")),
        "{}",
        subcommands.stdout
    );
    let names = infera_e2e::plugin::kubectl_env(
        &["__complete", "infera", "status", "-n", ns.name(), ""],
        &env,
    )
    .await?
    .expect_code(0)?;
    anyhow::ensure!(
        names.stdout.lines().any(|l| l == "demo"),
        "{}",
        names.stdout
    );
    // `logs demo <TAB>`: the seed's pools and the parts the operator adds, those typed so far
    // narrowing them.
    // `logs demo <TAB>`'s candidates for the words after `demo`.
    let (env, n) = (&env, ns.name());
    let offered = |typed: &'static [&'static str]| async move {
        let mut args = vec!["__complete", "infera", "logs", "-n", n, "demo"];
        args.extend(typed);
        let run = infera_e2e::plugin::kubectl_env(&args, env)
            .await?
            .expect_code(0)?;
        anyhow::Ok(
            run.stdout
                .lines()
                .filter(|l| !l.starts_with(':'))
                .map(String::from)
                .collect::<Vec<_>>(),
        )
    };
    let narrowed = offered(&["decode", "p"]).await?;
    anyhow::ensure!(narrowed == ["prefill"], "{narrowed:?}");
    let all = offered(&[""]).await?;
    anyhow::ensure!(
        all == ["decode", "prefill", "server", "nats", "epp", "model"],
        "{all:?}"
    );
    ns.cleanup().await
}

#[tokio::test]
async fn status_watch_appends_ndjson_without_a_terminal_and_redraws_on_one() -> anyhow::Result<()> {
    let admin = admin().await?;
    init_once()?;
    let ns = TestNamespace::new(&admin, "plugin-watch").await?;
    let n = ns.name().to_string();
    let _operator = operator(&admin, &n).await?;
    // Not a terminal: one JSON object per change.
    let watch = tokio::process::Command::new("kubectl")
        .args(["infera", "status", "-n", &n, "--watch", "-o", "json"])
        .env("PATH", infera_e2e::plugin::path_with_plugin()?)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    // On a terminal: the table is redrawn in place.
    let mut pty = Pty::spawn(&format!("kubectl infera status -n {n} --watch"))?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pd = format!("{EXAMPLES}/pd.yaml");
    kubectl(&[
        "infera",
        "deploy",
        "-f",
        &pd,
        "-n",
        &n,
        "--wait",
        "--timeout",
        "150s",
    ])
    .await?
    .expect_code(0)?;
    pty.expect("watching InferaDeployments", Duration::from_secs(30))
        .await?;
    pty.expect("Ready", Duration::from_secs(30)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut watch = watch;
    watch.start_kill()?;
    let out = watch.wait_with_output().await?;
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("every line is one JSON document")?;
    anyhow::ensure!(
        lines
            .first()
            .is_some_and(|l| l["type"] == "ADDED" && l["object"]["name"] == "demo"),
        "{lines:?}"
    );
    anyhow::ensure!(
        lines
            .last()
            .is_some_and(|l| l["object"]["state"] == "Ready"),
        "{lines:?}"
    );
    ns.cleanup().await
}
