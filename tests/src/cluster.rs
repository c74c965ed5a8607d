//! A control plane of a test's own, for tests that need a cluster without what the shared one has
//! (LeaderWorkerSet, GPU nodes) or that break it (kill its API server or etcd): started by
//! `tests/cluster/up.sh` in a private state directory, stopped and removed on drop.

use std::{
    ffi::OsString,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use anyhow::{Context as _, bail};
use kube::{
    Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
};

use crate::unique_suffix;

/// A private control plane; `up.sh`'s processes are stopped by `down.sh` on drop.
pub struct PrivateCluster {
    dir: PathBuf,
    /// Its kubeconfig, with the same contexts as the shared cluster's (`admin`, `alice`, `bob`).
    pub kubeconfig: PathBuf,
}

impl PrivateCluster {
    /// Starts a cluster of `tier` (1: etcd + kube-apiserver; 2: everything) and waits until it is
    /// ready.
    pub fn up(tier: u8) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("infera-private-{}", unique_suffix()));
        let out = Command::new(scripts().join("up.sh"))
            .args(["--tier", &tier.to_string()])
            .env("K8S_TEST_DIR", &dir)
            .output()
            .context("running tests/cluster/up.sh")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Dropped on failure too, so whatever up.sh started is stopped.
        let mut this = Self {
            dir,
            kubeconfig: PathBuf::new(),
        };
        let Some(kubeconfig) = stdout
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("export KUBECONFIG="))
        else {
            bail!(
                "up.sh failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        this.kubeconfig = PathBuf::from(kubeconfig);
        Ok(this)
    }

    /// A client for one of its contexts.
    pub async fn client(&self, context: &str) -> anyhow::Result<Client> {
        let options = KubeConfigOptions {
            context: Some(context.into()),
            ..Default::default()
        };
        let config =
            Config::from_custom_kubeconfig(Kubeconfig::read_from(&self.kubeconfig)?, &options)
                .await?;
        Ok(Client::try_from(config)?)
    }

    /// The cluster admin (`system:masters`).
    pub async fn admin(&self) -> anyhow::Result<Client> {
        self.client("admin").await
    }

    /// SIGKILLs a component `up.sh` started (`kube-apiserver`, `etcd`, …), as a crash or a node
    /// failure would, and returns its command line for [`PrivateCluster::restart`].
    pub fn kill(&self, component: &str) -> anyhow::Result<Vec<OsString>> {
        let pid_file = self.dir.join(format!("{component}.pid"));
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .with_context(|| format!("reading {}", pid_file.display()))?
            .trim()
            .parse()
            .with_context(|| format!("{} holds no pid", pid_file.display()))?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .with_context(|| format!("{component} (pid {pid}) is not running"))?;
        let argv: Vec<OsString> = cmdline
            .split(|byte| *byte == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| std::ffi::OsStr::from_bytes(arg).to_owned())
            .collect();
        if !argv.iter().any(|arg| {
            arg.as_bytes()
                .windows(self.dir.as_os_str().len())
                .any(|w| w == self.dir.as_os_str().as_bytes())
        }) {
            bail!("pid {pid} is not {component} of {}", self.dir.display());
        }
        let status = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()?;
        anyhow::ensure!(status.success(), "kill -KILL {pid} failed");
        // Gone once it has no command line (a zombie of ours keeps its /proc entry, without one).
        for _ in 0..100 {
            if std::fs::read(format!("/proc/{pid}/cmdline")).map_or(true, |c| c.is_empty()) {
                return Ok(argv);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!("{component} (pid {pid}) still exists 5 s after SIGKILL")
    }

    /// Starts a killed component again with the same command line, as its supervisor would:
    /// in its own session, appending to its log, its pid where `down.sh` finds it.
    pub fn restart(&self, component: &str, argv: &[OsString]) -> anyhow::Result<()> {
        let Some((program, args)) = argv.split_first() else {
            bail!("no command line to restart {component} with");
        };
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(self.dir.join("logs").join(format!("{component}.log")))?;
        let mut command = Command::new("setsid");
        command
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // etcd reads every ETCD_* variable as a flag (up.sh unsets them likewise).
        for (name, _) in std::env::vars_os() {
            if name.as_bytes().starts_with(b"ETCD_") {
                command.env_remove(name);
            }
        }
        let child = command
            .spawn()
            .with_context(|| format!("restarting {component}"))?;
        std::fs::write(
            self.dir.join(format!("{component}.pid")),
            child.id().to_string(),
        )?;
        Ok(())
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = Command::new(scripts().join("down.sh"))
            .env("K8S_TEST_DIR", &self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `tests/cluster/`, where up.sh and down.sh live.
fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cluster")
}
