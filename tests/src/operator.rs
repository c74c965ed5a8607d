//! The operator under test: installed with exactly the shipped CRD and RBAC, and run as a local
//! process authenticated as its own ServiceAccount.

use std::{path::PathBuf, process::Stdio, time::Duration};

use anyhow::{Context as _, bail};
use kube::Client;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{ServiceAccountIdentity, apply_yaml, binary, target_dir};

const CRD: &str = include_str!("../../crds/inferadeployments.infera.amd.com.yaml");
/// The shipped RBAC, exactly as `kubectl infera init` installs it.
const RBAC: [&str; 6] = [
    include_str!("../../deploy/namespace.yaml"),
    include_str!("../../deploy/serviceaccount.yaml"),
    include_str!("../../deploy/clusterrole.yaml"),
    include_str!("../../deploy/clusterrolebinding.yaml"),
    include_str!("../../deploy/leader-election.yaml"),
    include_str!("../../deploy/api-server.yaml"),
];

/// Installs the CRD and the shipped RBAC, and returns the operator's ServiceAccount identity.
pub async fn install(admin: &Client) -> anyhow::Result<ServiceAccountIdentity> {
    install_on(&crate::kubeconfig_path()?, admin).await
}

/// [`install`] on the cluster of another kubeconfig than `$KUBECONFIG`, e.g. a
/// [`crate::cluster::PrivateCluster`].
pub async fn install_on(
    cluster: &std::path::Path,
    admin: &Client,
) -> anyhow::Result<ServiceAccountIdentity> {
    apply_yaml(admin, CRD).await.context("installing the CRD")?;
    // A new or changed CRD takes a moment to be served (Established comes first): wait until it
    // answers, so the test's first request does not meet a 404.
    let ideps: kube::Api<infera_core::InferaDeployment> = kube::Api::all(admin.clone());
    let one = kube::api::ListParams::default().limit(1);
    crate::eventually(Duration::from_secs(30), || ideps.list(&one))
        .await
        .context("waiting for the CRD to be served")?;
    for manifest in RBAC {
        apply_yaml(admin, manifest)
            .await
            .context("installing the shipped RBAC")?;
    }
    let dir = target_dir().join("e2e-logs");
    std::fs::create_dir_all(&dir)?;
    let kubeconfig = dir.join(format!("operator-{}.kubeconfig", crate::unique_suffix()));
    ServiceAccountIdentity::create_on(
        cluster,
        admin,
        "infera-system",
        "infera-operator",
        Duration::from_secs(3600),
        &kubeconfig,
    )
    .await
}

/// A running `infera-operator`, killed (SIGKILL) on drop.
pub struct Operator {
    child: tokio::process::Child,
    port: u16,
    pub log: PathBuf,
}

impl Operator {
    /// Starts the operator with `args` as `identity` and waits until `/readyz` answers 200.
    /// `$INFERA_E2E_OPERATOR`, when set, is the binary to run instead of the workspace's.
    pub async fn start(
        identity: &ServiceAccountIdentity,
        args: &[&str],
        log_name: &str,
    ) -> anyhow::Result<Self> {
        let port = free_port()?;
        let log = target_dir()
            .join("e2e-logs")
            .join(format!("{log_name}.log"));
        let out = std::fs::File::create(&log)?;
        let program = match std::env::var_os("INFERA_E2E_OPERATOR") {
            Some(path) => path.into(),
            None => binary("infera-operator")?,
        };
        let child = tokio::process::Command::new(program)
            .args(args)
            .arg(format!("--http-addr=127.0.0.1:{port}"))
            .env("KUBECONFIG", &identity.kubeconfig)
            .env("RUST_LOG", "info,infera_operator=debug,kube=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::from(out.try_clone()?))
            .stderr(Stdio::from(out))
            .kill_on_drop(true)
            .spawn()
            .context("spawning infera-operator")?;
        eprintln!(
            "infera-operator pid {:?}, log {}",
            child.id(),
            log.display()
        );
        let mut operator = Self { child, port, log };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            operator.ensure_running()?;
            match http_get(port, "/readyz").await {
                Ok((200, _)) => return Ok(operator),
                _ if tokio::time::Instant::now() > deadline => {
                    bail!("infera-operator not ready after 30s")
                }
                _ => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }

    /// Starts the operator for `namespace` only, its log named after the namespace.
    pub async fn start_in(
        identity: &ServiceAccountIdentity,
        namespace: &str,
    ) -> anyhow::Result<Self> {
        Self::start(
            identity,
            &["--namespace", namespace],
            &format!("operator-{namespace}"),
        )
        .await
    }

    pub fn ensure_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = log
                .lines()
                .rev()
                .take(30)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            bail!("infera-operator exited with {status}:\n{}", tail.join("\n"));
        }
        Ok(())
    }

    /// What `/readyz` answers: 200 when ready, 503 when not.
    pub async fn readyz(&self) -> anyhow::Result<u16> {
        Ok(self.readiness().await?.0)
    }

    /// `/readyz`'s status and body (why it is not ready).
    pub async fn readiness(&self) -> anyhow::Result<(u16, String)> {
        http_get(self.port, "/readyz").await
    }

    /// The `/metrics` text.
    pub async fn metrics(&self) -> anyhow::Result<String> {
        let (code, body) = http_get(self.port, "/metrics").await?;
        anyhow::ensure!(code == 200, "/metrics answered {code}");
        Ok(body)
    }

    /// The value of one sample, e.g. `infera_leader` or `infera_api_requests_total{verb="PATCH deployments"}`.
    pub async fn sample(&self, name: &str) -> anyhow::Result<f64> {
        Ok(sample(&self.metrics().await?, name))
    }

    /// Writes and dry runs (POST, PUT, PATCH, DELETE) sent so far, leaving out Lease renewals and
    /// Events: what an operator with nothing to change must not send.
    pub async fn writes_or_dry_runs(&self) -> anyhow::Result<u64> {
        Ok(writes_or_dry_runs(&self.metrics().await?))
    }

    /// Peak resident memory in KiB (VmHWM).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.memory_kib("VmHWM")
    }

    /// Resident memory now, in KiB (VmRSS).
    pub fn rss_kib(&self) -> Option<u64> {
        self.memory_kib("VmRSS")
    }

    /// A memory figure of `/proc/PID/status` (proc(5)), in KiB.
    fn memory_kib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// SIGKILL, as an OOM kill or a node failure would.
    pub async fn kill(mut self) -> anyhow::Result<()> {
        self.child.kill().await?;
        Ok(())
    }

    /// SIGTERM, then wait for a clean exit.
    pub async fn terminate(mut self) -> anyhow::Result<std::process::ExitStatus> {
        let pid = self.child.id().context("already exited")?;
        std::process::Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()?;
        Ok(tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await??)
    }
}

/// Requests that write (POST, PUT, PATCH, DELETE) in a metrics text, each as its label (`verb`,
/// the metric's only one) and count, leaving out Lease renewals and Events; dry runs
/// (`PATCH deployments (dry run)`) when `dry_run`, else the writes themselves.
fn writing(metrics: &str, dry_run: bool) -> impl Iterator<Item = (&str, u64)> {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("infera_api_requests_total{verb=\""))
        .filter_map(|l| {
            let (request, count) = l.split_once("\"} ")?;
            Some((request, count.trim().parse::<f64>().ok()? as u64))
        })
        .filter(|(request, _)| {
            ["POST ", "PUT ", "PATCH ", "DELETE "]
                .iter()
                .any(|verb| request.starts_with(verb))
        })
        .filter(|(request, _)| !request.ends_with(" leases") && !request.ends_with(" events"))
        .filter(move |(request, _)| request.ends_with(" (dry run)") == dry_run)
}

/// Write requests in a metrics text, leaving out dry runs, Lease renewals and Events.
pub fn writes(metrics: &str) -> u64 {
    writing(metrics, false).map(|(_, count)| count).sum()
}

/// Dry runs in a metrics text.
pub fn dry_runs(metrics: &str) -> u64 {
    writing(metrics, true).map(|(_, count)| count).sum()
}

/// Writes and dry runs in a metrics text.
pub fn writes_or_dry_runs(metrics: &str) -> u64 {
    writes(metrics) + dry_runs(metrics)
}

/// Writes and dry runs by request (`PATCH deployments`, `PATCH services (dry run)`…), most first.
pub fn writes_and_dry_runs_by_request(metrics: &str) -> Vec<(String, u64)> {
    let mut by: Vec<(String, u64)> = writing(metrics, false)
        .chain(writing(metrics, true))
        .map(|(request, count)| (request.to_string(), count))
        .collect();
    by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    by
}

/// The value of one sample in a metrics text (0 when absent).
pub fn sample(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// The sum of every sample of a metric family in a metrics text, e.g.
/// `infera_api_requests_total{`.
pub fn sum(metrics: &str, prefix: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        // Not `.sum()`: the sum of no f64 is -0.0, printed "-0".
        .fold(0.0, |total, value| total + value)
}

/// A TCP port free on loopback now.
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// `GET path` on loopback `port` (HTTP/1.0): the status code and the body.
pub async fn http_get(port: u16, path: &str) -> anyhow::Result<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes())
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let code = response
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("no HTTP status")?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}
