//! The workspace's binaries (built before the suite by `tests/run-e2e.sh`) and child processes.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context as _, bail};

/// Cargo's target directory: `$CARGO_TARGET_DIR` (at run time, else at build time), else
/// `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return absolute(PathBuf::from(dir));
    }
    if let Some(dir) = option_env!("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return absolute(PathBuf::from(dir));
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
}

fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
    }
}

/// Path of a workspace binary, e.g. `binary("infera-operator")` or `binary("kubectl-infera")`, in
/// the same profile as the test (`debug` unless the tests were built with `--release`). Cargo only
/// provides `CARGO_BIN_EXE_*` for binaries of the test's own package, hence the lookup; build them
/// first with `cargo build -p infera-operator -p kubectl-infera` (run-e2e.sh does).
/// `$INFERA_E2E_PLUGIN`, when set, is the kubectl-infera to run instead (a benchmark measures the
/// release build; it must keep that name for kubectl to find it as a plugin).
pub fn binary(name: &str) -> anyhow::Result<PathBuf> {
    if name == "kubectl-infera"
        && let Some(plugin) = std::env::var_os("INFERA_E2E_PLUGIN").filter(|p| !p.is_empty())
    {
        return Ok(PathBuf::from(plugin));
    }
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let path = target_dir()
        .join(profile)
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        bail!(
            "{} not found: build it first with `cargo build -p <package of {name}>` \
             (tests/run-e2e.sh builds infera-operator and kubectl-infera)",
            path.display()
        );
    }
    Ok(path)
}

/// A child process that is killed (and reaped) when dropped. Its stdout and stderr go to a log file
/// under `target/e2e-logs/`, whose path is printed on spawn and on drop, so a failing test's
/// output points at it.
pub struct Process {
    child: tokio::process::Child,
    log: PathBuf,
    name: String,
}

impl Process {
    /// Spawns `program args…` with `KUBECONFIG=<kubeconfig>` (and `envs`), logging to
    /// `target/e2e-logs/<log_name>.log`.
    pub fn spawn<I, S>(
        program: &Path,
        args: I,
        kubeconfig: &Path,
        envs: &[(&str, &str)],
        log_name: &str,
    ) -> anyhow::Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let dir = target_dir().join("e2e-logs");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let log = dir.join(format!("{log_name}.log"));
        let out =
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let err = out.try_clone()?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .env("KUBECONFIG", kubeconfig)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .with_context(|| format!("spawning {}", program.display()))?;
        eprintln!(
            "spawned {} (pid {:?}), log: {}",
            program.display(),
            child.id(),
            log.display()
        );
        Ok(Self {
            child,
            log,
            name: log_name.to_owned(),
        })
    }

    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The log so far (for assertions or for printing when a test fails).
    pub fn log_contents(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Returns an error (with the log's tail) if the process has already exited.
    pub fn ensure_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            let log = self.log_contents();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "{} exited with {status}; last log lines:\n{}",
                self.name,
                tail.join("\n")
            );
        }
        Ok(())
    }

    /// Kills the process and waits for it.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if self.child.try_wait()?.is_none() {
            self.child.kill().await?;
        }
        Ok(())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // kill_on_drop sends SIGKILL; tokio reaps the child in the background.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.start_kill();
        }
        eprintln!("stopped {} (log: {})", self.name, self.log.display());
    }
}

/// The control plane's cache directory: `$K8S_TEST_BIN` (set by `tests/run-e2e.sh`), else the one
/// `tests/cluster/versions.sh` names. Holds the binaries and, under `share/`, the CRDs the build
/// fetched.
pub fn test_bin_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("K8S_TEST_BIN").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let versions = Path::new(env!("CARGO_MANIFEST_DIR")).join("cluster/versions.sh");
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            &format!(
                "source {} && printf %s \"$K8S_TEST_BIN\"",
                versions.display()
            ),
        ])
        .output()
        .with_context(|| format!("sourcing {}", versions.display()))?;
    Ok(PathBuf::from(
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}
