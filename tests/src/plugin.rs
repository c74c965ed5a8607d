//! Running `kubectl infera …` through the real kubectl (which finds the plugin on PATH), and a
//! small expect-style driver for the interactive wizard on a pseudo-terminal (util-linux
//! `script` provides the pty, so no extra crate is needed).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{TestNamespace, binary};

/// Output of one command.
#[derive(Debug, Clone)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Fails with the command's output unless it exited with `code`.
    pub fn expect_code(self, code: i32) -> anyhow::Result<Self> {
        if self.code != code {
            bail!(
                "exit code {} (expected {code})\nstdout:\n{}\nstderr:\n{}",
                self.code,
                self.stdout,
                self.stderr
            );
        }
        Ok(self)
    }
}

/// `PATH` with the directory of the built `kubectl-infera` first.
pub fn path_with_plugin() -> anyhow::Result<OsString> {
    let plugin = binary("kubectl-infera")?;
    let dir = plugin.parent().map(PathBuf::from).unwrap_or_default();
    let mut paths = vec![dir];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    Ok(std::env::join_paths(paths)?)
}

/// Runs `kubectl <args>` (e.g. `["infera", "status", "-A"]`) with `$KUBECONFIG` and stdin closed.
pub async fn kubectl(args: &[&str]) -> anyhow::Result<Run> {
    kubectl_env(args, &[]).await
}

/// One check of `kubectl infera doctor -o json` run with `args` (e.g. `["-n", "team"]`), by id
/// (`INF103`); null when the report has none.
pub async fn doctor_check(args: &[&str], id: &str) -> anyhow::Result<serde_json::Value> {
    let mut all = vec!["infera", "doctor", "-o", "json"];
    all.extend(args);
    let run = kubectl(&all).await?;
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .with_context(|| format!("doctor -o json: {}{}", run.stdout, run.stderr))?;
    Ok(report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == id)
        .cloned()
        .unwrap_or_default())
}

/// [`kubectl`] with extra environment variables.
pub async fn kubectl_env(args: &[&str], envs: &[(&str, &str)]) -> anyhow::Result<Run> {
    let output = tokio::process::Command::new("kubectl")
        .args(args)
        .env("PATH", path_with_plugin()?)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .await
        .with_context(|| format!("running kubectl {}", args.join(" ")))?;
    Ok(Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// A command on a pseudo-terminal: [`Pty::expect`] waits for text, [`Pty::send`] types.
pub struct Pty {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    output: tokio::sync::watch::Receiver<String>,
    seen: usize,
}

/// Keys for [`Pty::send`].
pub const ENTER: &str = "\r";
pub const DOWN: &str = "\x1b[B";

impl Pty {
    /// Runs the shell command line `command` on a 120x40 pty, with the plugin on PATH.
    pub fn spawn(command: &str) -> anyhow::Result<Self> {
        let line = format!("stty cols 120 rows 40; exec {command}");
        let mut child = tokio::process::Command::new("script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .env("PATH", path_with_plugin()?)
            .env("TERM", "xterm")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("spawning script(1) for a pty")?;
        let stdin = child.stdin.take().context("pty stdin")?;
        let mut stdout = child.stdout.take().context("pty stdout")?;
        let (tx, rx) = tokio::sync::watch::channel(String::new());
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buffer[..n]).into_owned();
                tx.send_modify(|all| all.push_str(&text));
            }
        });
        Ok(Self {
            child,
            stdin,
            output: rx,
            seen: 0,
        })
    }

    /// Everything printed so far, with ANSI escape sequences removed.
    pub fn screen(&self) -> String {
        strip_ansi(&self.output.borrow())
    }

    /// Everything printed so far, as printed (colours included).
    pub fn raw(&self) -> String {
        self.output.borrow().clone()
    }

    /// Waits until `text` appears after the previous match.
    pub async fn expect(&mut self, text: &str, timeout: Duration) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(self.seen..).and_then(|s| s.find(text)) {
                self.seen += at + text.len();
                return Ok(());
            }
            match tokio::time::timeout_at(deadline, self.output.changed()).await {
                Ok(Ok(())) => {}
                // The reader is gone: the command exited, and nothing more will appear.
                Ok(Err(_)) => {
                    bail!("the command ended before {text:?} appeared; its screen:\n{screen}")
                }
                Err(_) => {
                    bail!("{text:?} did not appear within {timeout:?}; screen so far:\n{screen}")
                }
            }
        }
    }

    /// Types `keys` (see [`ENTER`], [`DOWN`]).
    pub async fn send(&mut self, keys: &str) -> anyhow::Result<()> {
        self.stdin.write_all(keys.as_bytes()).await?;
        self.stdin.flush().await?;
        // Let the prompt redraw before the next key.
        tokio::time::sleep(Duration::from_millis(150)).await;
        Ok(())
    }

    /// Waits for the command to exit and returns its exit code.
    pub async fn wait(mut self, timeout: Duration) -> anyhow::Result<i32> {
        let status = tokio::time::timeout(timeout, self.child.wait())
            .await
            .context("waiting for the pty command")??;
        Ok(status.code().unwrap_or(-1))
    }
}

/// Removes CSI/OSC escape sequences and carriage returns.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    for c in chars.by_ref() {
                        if c == '\x07' {
                            break;
                        }
                    }
                }
                _ => {
                    chars.next();
                }
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// `kubectl infera init --wait`, then a fresh namespace and `spec` (YAML) in a file for `deploy -f`;
/// returns the namespace and the file's path.
pub async fn namespace_with(prefix: &str, spec: &str) -> anyhow::Result<(TestNamespace, String)> {
    let admin = crate::admin().await?;
    kubectl(&["infera", "init", "--wait", "--timeout", "3m"])
        .await?
        .expect_code(0)?;
    let ns = TestNamespace::new(&admin, prefix).await?;
    let path = crate::target_dir()
        .join("e2e-logs")
        .join(format!("{}.yaml", ns.name()));
    std::fs::create_dir_all(path.parent().unwrap_or(&path))?;
    std::fs::write(&path, spec)?;
    Ok((ns, path.display().to_string()))
}

/// `kubectl infera deploy -f PATH -n NS --wait`, expected to end Ready.
pub async fn deploy_ready(ns: &TestNamespace, path: &str) -> anyhow::Result<()> {
    kubectl(&[
        "infera",
        "deploy",
        "-f",
        path,
        "-n",
        ns.name(),
        "--wait",
        "--timeout",
        "5m",
    ])
    .await?
    .expect_code(0)?;
    Ok(())
}
