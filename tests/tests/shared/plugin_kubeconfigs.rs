//! Kubeconfigs from real clusters that kubectl reads, read by the real plugin binary against the
//! test cluster: `proxy-url` (HTTP and SOCKS5 proxies of the test on loopback), a `tokenFile`
//! ending in a newline, exec credential plugins (interactivity, a failing one whose `env` holds a
//! secret), and `version` without a kubeconfig or a reachable cluster. Then `doctor`'s INF003
//! (the `kubectl` on PATH against the server) and INF004 (another `kubectl-infera` on PATH), and
//! the progress spinner: on a terminal only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use infera_e2e::{
    binary, kubeconfig_path,
    plugin::{Pty, Run},
    proxy::Proxy,
    unique_suffix,
};
use serde_json::{Value, json};

/// A directory of its own for a test's files, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("infera-kubeconfigs-{}", unique_suffix()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }

    fn write(&self, name: &str, text: &str) -> anyhow::Result<PathBuf> {
        let path = self.0.join(name);
        std::fs::write(&path, text)?;
        Ok(path)
    }

    /// An executable shell script.
    fn script(&self, name: &str, body: &str) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(name, &format!("#!/bin/sh\n{body}\n"))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The test cluster's kubeconfig, as JSON.
fn cluster_kubeconfig() -> anyhow::Result<Value> {
    let path = kubeconfig_path()?;
    let text = std::fs::read_to_string(&path)?;
    serde_saphyr::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// A kubeconfig of one context `test`: the test cluster (with `cluster_extra` fields such as
/// `proxy-url`) and the given user.
fn kubeconfig(scratch: &Scratch, cluster_extra: Value, user: Value) -> anyhow::Result<PathBuf> {
    let base = cluster_kubeconfig()?;
    let mut cluster = base["clusters"][0]["cluster"].clone();
    if let (Some(cluster), Some(extra)) = (cluster.as_object_mut(), cluster_extra.as_object()) {
        cluster.extend(extra.clone());
    }
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [{"name": "test", "user": user}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test", "namespace": "default"}}],
        "current-context": "test",
    });
    scratch.write(
        &format!("kubeconfig-{}", unique_suffix()),
        &serde_json::to_string_pretty(&config)?,
    )
}

/// A user of the test cluster's kubeconfig (`admin`, `bob`).
fn user_of_cluster(name: &str) -> anyhow::Result<Value> {
    let base = cluster_kubeconfig()?;
    base["users"]
        .as_array()
        .and_then(|users| users.iter().find(|u| u["name"] == name))
        .map(|u| u["user"].clone())
        .with_context(|| format!("no user {name} in the test kubeconfig"))
}

/// Runs the plugin binary itself with `KUBECONFIG`, no proxy variables, stdin closed (not a
/// terminal), and `PATH` as given (else the test's).
async fn plugin(args: &[&str], kubeconfig: &Path, path: Option<OsString>) -> anyhow::Result<Run> {
    let mut command = tokio::process::Command::new(binary("kubectl-infera")?);
    command
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::null());
    for proxy in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ] {
        command.env_remove(proxy);
    }
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let output = command.output().await.context("running kubectl-infera")?;
    Ok(Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// `host:port` of the test cluster's API server.
fn api_address() -> anyhow::Result<String> {
    let server = cluster_kubeconfig()?["clusters"][0]["cluster"]["server"]
        .as_str()
        .map(str::to_string)
        .context("no server in the test kubeconfig")?;
    Ok(server.trim_start_matches("https://").to_string())
}

#[tokio::test]
async fn proxy_url_http_and_socks5_carry_the_requests() -> anyhow::Result<()> {
    let scratch = Scratch::new()?;
    for proxy in [Proxy::http().await?, Proxy::socks5().await?] {
        let config = kubeconfig(
            &scratch,
            json!({"proxy-url": proxy.url}),
            user_of_cluster("admin")?,
        )?;
        let run = plugin(&["version"], &config, None).await?.expect_code(0)?;
        assert!(
            run.stdout.contains("Server:   v1."),
            "{}: {}",
            proxy.url,
            run.stdout
        );
        assert!(
            proxy.tunnels().contains(&api_address()?),
            "{} opened no tunnel to the API server: {:?}",
            proxy.url,
            proxy.tunnels()
        );
        let url = proxy.url.clone();
        drop(proxy);
        // With the proxy gone the cluster is unreachable: the requests did go through it.
        let run = plugin(&["version"], &config, None).await?.expect_code(5)?;
        assert!(
            run.stderr.contains("cannot reach the cluster"),
            "{url}: {}",
            run.stderr
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_token_file_ending_in_a_newline_authenticates_like_kubectl() -> anyhow::Result<()> {
    let scratch = Scratch::new()?;
    let token = user_of_cluster("bob")?["token"]
        .as_str()
        .map(str::to_string)
        .context("bob has no token")?;
    let file = scratch.write("token", &format!("{token}\n"))?;
    let config = kubeconfig(&scratch, json!({}), json!({"tokenFile": file}))?;
    // bob may read no InferaDeployment: the API server's refusal names him, so the token was sent
    // and accepted (`version`, which anonymous requests may call, would pass either way).
    let run = plugin(&["status"], &config, None).await?;
    assert!(
        run.code != 0 && run.stderr.contains(r#"User "bob" cannot list"#),
        "exit {}: {}",
        run.code,
        run.stderr
    );
    let wrong = scratch.write("wrong", "not-a-token\n")?;
    let config = kubeconfig(&scratch, json!({}), json!({"tokenFile": wrong}))?;
    // A refused token is unusable credentials: exit 5.
    let run = plugin(&["status"], &config, None).await?.expect_code(5)?;
    assert!(run.stderr.contains("Unauthorized"), "{}", run.stderr);
    Ok(())
}

#[tokio::test]
async fn a_failing_exec_plugin_is_reported_like_kubectl_without_its_environment()
-> anyhow::Result<()> {
    let scratch = Scratch::new()?;
    let helper = scratch.script(
        "corp-login",
        "echo 'your session expired: run corp-login --renew' >&2\nexit 3",
    )?;
    let config = kubeconfig(
        &scratch,
        json!({}),
        json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": helper,
            "interactiveMode": "IfAvailable",
            "env": [{"name": "CORP_CLIENT_SECRET", "value": "s3cr3t-do-not-print"}],
        }}),
    )?;
    let run = plugin(&["version"], &config, None).await?.expect_code(5)?;
    let expected = format!(
        "getting credentials: exec: executable {} failed with exit code 3, writing on stderr:\n  your session expired: run corp-login --renew",
        helper.display()
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(
        !run.stderr.contains("s3cr3t") && !run.stderr.contains("CORP_CLIENT_SECRET"),
        "the environment leaked: {}",
        run.stderr
    );
    // `version` still says its own version first, as `kubectl version` does.
    assert!(run.stdout.starts_with("Plugin:   "), "{}", run.stdout);
    Ok(())
}

#[tokio::test]
async fn exec_plugins_are_not_interactive_without_a_terminal() -> anyhow::Result<()> {
    let scratch = Scratch::new()?;
    let token = user_of_cluster("bob")?["token"]
        .as_str()
        .map(str::to_string)
        .context("bob has no token")?;
    let seen = scratch.0.join("exec-info.json");
    let helper = scratch.script(
        "get-token",
        &format!(
            "printf '%s' \"$KUBERNETES_EXEC_INFO\" > '{}'\n\
             printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'",
            seen.display()
        ),
    )?;
    let exec = |mode: &str| {
        json!({"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": helper,
            "interactiveMode": mode,
        }})
    };
    let config = kubeconfig(&scratch, json!({}), exec("IfAvailable"))?;
    let run = plugin(&["version"], &config, None).await?.expect_code(0)?;
    assert!(run.stdout.contains("Server:   v1."), "{}", run.stdout);
    let info: Value = serde_json::from_str(&std::fs::read_to_string(&seen)?)?;
    assert_eq!(info["spec"]["interactive"], json!(false), "{info}");

    // `Always` cannot be honoured without a terminal: refused as kubectl refuses it.
    let config = kubeconfig(&scratch, json!({}), exec("Always"))?;
    let run = plugin(&["version"], &config, None).await?.expect_code(5)?;
    assert!(
        run.stderr.contains(
            "getting credentials: exec plugin cannot support interactive mode: standard input is not a terminal"
        ),
        "{}",
        run.stderr
    );
    Ok(())
}

#[tokio::test]
async fn version_prints_the_plugin_version_without_a_kubeconfig_or_a_cluster() -> anyhow::Result<()>
{
    let scratch = Scratch::new()?;
    let missing = scratch.0.join("no-such-kubeconfig");
    let run = plugin(&["version"], &missing, None).await?.expect_code(5)?;
    assert!(run.stdout.starts_with("Plugin:   "), "{}", run.stdout);
    assert!(!run.stdout.contains("Server:"), "{}", run.stdout);
    assert!(run.stderr.contains("error: kubeconfig:"), "{}", run.stderr);

    let down = kubeconfig(
        &scratch,
        json!({"server": "https://127.0.0.1:1"}),
        user_of_cluster("admin")?,
    )?;
    let run = plugin(&["version", "-o", "json"], &down, None)
        .await?
        .expect_code(5)?;
    let printed: Value = serde_json::from_str(&run.stdout)?;
    assert!(
        printed["plugin"].is_string() && printed.get("server").is_none(),
        "{printed}"
    );
    assert!(
        run.stderr.contains("cannot reach the cluster"),
        "{}",
        run.stderr
    );
    Ok(())
}

/// `PATH` with `first` directories, then the built plugin's, then the test's.
fn path_with(first: &[&Path]) -> anyhow::Result<OsString> {
    let mut dirs: Vec<PathBuf> = first.iter().map(|p| p.to_path_buf()).collect();
    dirs.extend(std::env::split_paths(
        &infera_e2e::plugin::path_with_plugin()?,
    ));
    Ok(std::env::join_paths(dirs)?)
}

fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn doctor_checks_the_kubectl_and_the_kubectl_infera_on_path() -> anyhow::Result<()> {
    let scratch = Scratch::new()?;
    let config = kubeconfig(&scratch, json!({}), user_of_cluster("admin")?)?;
    // As the plugin names itself: its canonical path (`current_exe`).
    let this = binary("kubectl-infera")?.canonicalize()?;

    // The kubectl built with the control plane, and this plugin alone on PATH: both pass.
    let run = plugin(&["doctor", "-o", "json"], &config, Some(path_with(&[])?)).await?;
    let report: Value = serde_json::from_str(&run.stdout)?;
    let kubectl = check(&report, "INF003");
    assert_eq!(kubectl["severity"], "pass", "{kubectl}");
    assert!(
        kubectl["message"]
            .as_str()
            .unwrap_or_default()
            .contains("within ±1 minor")
    );
    let on_path = check(&report, "INF004");
    assert_eq!(on_path["severity"], "pass", "{on_path}");

    // Another kubectl-infera earlier on PATH, and a kubectl three minors behind the server.
    let other = scratch.0.join("other");
    std::fs::create_dir_all(&other)?;
    let other = Scratch(other);
    let shadow = other.script("kubectl-infera", "echo shadow")?;
    other.script(
        "kubectl",
        r#"echo '{"clientVersion": {"major": "1", "minor": "30", "gitVersion": "v1.30.0"}}'"#,
    )?;
    let run = plugin(
        &["doctor", "-o", "json"],
        &config,
        Some(path_with(&[&other.0])?),
    )
    .await?;
    let report: Value = serde_json::from_str(&run.stdout)?;
    let on_path = check(&report, "INF004");
    assert_eq!(on_path["severity"], "warn", "{on_path}");
    assert_eq!(
        on_path["message"],
        format!(
            "`kubectl infera` runs {}, not this binary ({})",
            shadow.display(),
            this.display()
        )
    );
    let kubectl = check(&report, "INF003");
    assert_eq!(kubectl["severity"], "warn", "{kubectl}");
    assert!(
        kubectl["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("v1.30.0 ("),
        "{kubectl}"
    );
    Ok(())
}

/// Whether `text` holds a frame of indicatif's default spinner (braille patterns).
fn has_spinner(text: &str) -> bool {
    text.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c))
}

#[tokio::test]
async fn progress_is_a_spinner_on_a_terminal_and_nothing_when_piped() -> anyhow::Result<()> {
    // On a terminal: what init waits for, behind a spinner, on the terminal.
    let mut pty = Pty::spawn("kubectl infera init --wait --timeout 2m")?;
    pty.expect("waiting for", Duration::from_secs(60)).await?;
    let screen = pty.screen();
    assert_eq!(pty.wait(Duration::from_secs(150)).await?, 0, "{screen}");
    assert!(
        has_spinner(&screen),
        "no spinner on the terminal:\n{screen}"
    );

    // Piped: the same command shows no progress at all, only its result.
    let run = infera_e2e::plugin::kubectl(&["infera", "init", "--wait", "--timeout", "2m"])
        .await?
        .expect_code(0)?;
    assert!(
        !has_spinner(&run.stderr)
            && !run.stderr.contains("waiting for")
            && !run.stderr.contains('\x1b'),
        "progress leaked off a terminal:\n{}",
        run.stderr
    );
    Ok(())
}
