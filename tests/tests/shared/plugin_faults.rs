//! The plugin through the fault proxy (`infera_e2e::fault_proxy`), as a ServiceAccount with admin
//! rights in the test's namespace: `deploy --wait` survives watches cut every half second and a
//! resume answered `410 Expired` (it re-lists and resumes) and still ends Ready; `status --watch`
//! whose API server disappears mid-command exits 5 with one clear line, within
//! `--request-timeout`, without a backtrace.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use infera_e2e::{
    ServiceAccountIdentity, TestNamespace, admin, apply_yaml_in, eventually,
    fault_proxy::{Fault, FaultProxy},
    operator::{Operator, install},
    plugin::kubectl,
    target_dir,
};

const SMALL: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: cut}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    worker:
      componentType: worker
      resources: {gpu: 1}
      # Ready 3 s after it starts (kwok's stage delay): the plugin's watch is cut and resumed
      # before the deployment is Ready.
      podTemplate: {metadata: {annotations: {pod-ready.stage.kwok.x-k8s.io/delay: 3s}}}
"#;

/// A ServiceAccount bound to `cluster-admin` in namespace `n` only.
async fn namespace_admin(
    admin: &infera_e2e::kube::Client,
    n: &str,
) -> anyhow::Result<ServiceAccountIdentity> {
    let kubeconfig = target_dir()
        .join("e2e-logs")
        .join(format!("{n}-user.kubeconfig"));
    let identity =
        ServiceAccountIdentity::create(admin, n, "user", Duration::from_secs(3600), &kubeconfig)
            .await?;
    apply_yaml_in(
        admin,
        n,
        &format!(
            r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: user-admin}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}
subjects: [{{kind: ServiceAccount, name: user, namespace: {n}}}]
"#
        ),
    )
    .await?;
    Ok(identity)
}

#[tokio::test(flavor = "multi_thread")]
async fn deploy_wait_survives_cut_watches_and_an_expired_resume() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "plugin-cut").await?;
    let n = ns.name();
    let operator_identity = install(&admin).await?;
    let mut operator = Operator::start(
        &operator_identity,
        &["--namespace", n],
        &format!("operator-{n}"),
    )
    .await?;
    let user = namespace_admin(&admin, n).await?;
    let proxy = FaultProxy::start(&user.kubeconfig).await?;
    // Every watch is cut after half a second (the deployment takes longer to be Ready, so the
    // plugin's watch is cut before it is); the second watch of InferaDeployments (the first
    // resume) is answered 410 Expired.
    let watches = AtomicU64::new(0);
    proxy.script(move |seen| {
        if !seen.is_watch() {
            return None;
        }
        if seen.resource == "inferadeployments" && watches.fetch_add(1, Ordering::SeqCst) == 1 {
            Some(Fault::Expired)
        } else {
            Some(Fault::CutAfter(Duration::from_millis(500)))
        }
    });
    let file = target_dir().join("e2e-logs").join(format!("{n}-cut.yaml"));
    std::fs::write(&file, SMALL)?;
    let config = proxy.kubeconfig().display().to_string();
    let deploy = kubectl(&[
        "infera",
        "deploy",
        "-f",
        &file.display().to_string(),
        "-n",
        n,
        "--kubeconfig",
        &config,
        "--wait",
        "--timeout",
        "120s",
    ])
    .await?;
    eprintln!("requests through the proxy: {:?}", proxy.counts());
    anyhow::ensure!(deploy.code == 0, "exit {}: {}", deploy.code, deploy.stderr);
    // A watch was cut, its resume answered 410 Expired, and the plugin watched again after it.
    anyhow::ensure!(
        proxy.faulted("cut GET inferadeployments") >= 1
            && proxy.faulted("expired GET inferadeployments") == 1
            && proxy.count("GET inferadeployments") >= 3,
        "the watch was not cut, expired and resumed: requests {:?}, faults {:?}",
        proxy.counts(),
        proxy.faults()
    );
    operator.ensure_running()?;
    ns.cleanup().await
}

#[tokio::test(flavor = "multi_thread")]
async fn status_watch_exits_5_when_the_api_server_disappears() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "plugin-gone").await?;
    let n = ns.name();
    install(&admin).await?;
    // On a fresh cluster another test may have created the CRD a moment ago: wait for discovery.
    eventually(Duration::from_secs(30), || apply_yaml_in(&admin, n, SMALL)).await?;
    let user = namespace_admin(&admin, n).await?;
    let proxy = FaultProxy::start(&user.kubeconfig).await?;
    // After three seconds the server is gone: every watch so far is cut, every request reset.
    let gone = Instant::now() + Duration::from_secs(3);
    proxy.script(move |seen| {
        if Instant::now() >= gone {
            Some(Fault::Reset)
        } else if seen.is_watch() {
            Some(Fault::CutAfter(
                gone.saturating_duration_since(Instant::now()),
            ))
        } else {
            None
        }
    });
    let config = proxy.kubeconfig().display().to_string();
    let started = Instant::now();
    let status = kubectl(&[
        "infera",
        "status",
        "cut",
        "-n",
        n,
        "--kubeconfig",
        &config,
        "--watch",
        "--request-timeout",
        "5s",
    ])
    .await?;
    let took = started.elapsed();
    anyhow::ensure!(
        status.code == 5,
        "exit {} after {took:?}: {}",
        status.code,
        status.stderr
    );
    anyhow::ensure!(took < Duration::from_secs(3 + 5 + 5), "took {took:?}");
    anyhow::ensure!(
        status.stderr.starts_with("error: ")
            && !status.stderr.contains("panicked")
            && !status.stderr.contains("backtrace"),
        "{}",
        status.stderr
    );
    ns.cleanup().await
}
