//! A kube client configured like kubectl: the kubeconfig files of `--kubeconfig` or `$KUBECONFIG`
//! (missing files skipped, as kubectl does), `--context/--cluster/--user`, `-n`, `--as/--as-group`
//! and `--request-timeout`. There is no silent in-cluster fallback.
//!
//! [`connect`] is the only way in: it reads the kubeconfig and resolves the context and namespace
//! once, into a [`Kube`] that a command passes down to everything that needs the cluster or says
//! where it is (`deploy`: the wizard's defaults and confirmation, the apply, the wait).
//!
//! Where kube-rs reads a kubeconfig differently from kubectl, [`kubectl_parity`] makes it read it
//! as kubectl does (a token file's surrounding whitespace, an exec plugin's interactivity); a
//! failing exec plugin is reported by [`crate::error::chain`] as kubectl reports it.

use std::{io::IsTerminal, path::PathBuf};

use kube::{
    Client, Config,
    config::{AuthInfo, ExecInteractiveMode, KubeConfigOptions, Kubeconfig},
};

use crate::{
    cli::GlobalArgs,
    error::{Error, Result},
};

/// A connected client and where it points, resolved once per command.
#[derive(Clone)]
pub struct Kube {
    pub client: Client,
    /// `-n`, else the context's namespace, else `default`.
    pub namespace: String,
    /// Whether `-n` was given.
    pub namespace_explicit: bool,
    /// Name of the context in use (for messages).
    pub context: String,
}

/// The kubeconfig files in effect, in merge order.
fn kubeconfig_paths(explicit: Option<&PathBuf>) -> Result<Vec<PathBuf>> {
    if let Some(path) = explicit {
        return Ok(vec![path.clone()]);
    }
    if let Some(var) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let paths: Vec<PathBuf> = std::env::split_paths(&var)
            .filter(|p| !p.as_os_str().is_empty() && p.is_file())
            .collect();
        if paths.is_empty() {
            return Err(Error::Kubeconfig(format!(
                "none of the files in KUBECONFIG ({}) exists",
                var.to_string_lossy()
            )));
        }
        return Ok(paths);
    }
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    match home.map(|h| PathBuf::from(h).join(".kube").join("config")) {
        Some(path) if path.is_file() => Ok(vec![path]),
        _ => Err(Error::Kubeconfig(
            "no kubeconfig: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config".into(),
        )),
    }
}

/// Loads and merges the kubeconfig files.
fn load_kubeconfig(global: &GlobalArgs) -> Result<Kubeconfig> {
    let mut merged: Option<Kubeconfig> = None;
    for path in kubeconfig_paths(global.kubeconfig.as_ref())? {
        let config = Kubeconfig::read_from(&path).map_err(|e| {
            Error::Kubeconfig(format!("{}: {}", path.display(), crate::error::chain(&e)))
        })?;
        merged = Some(match merged {
            None => config,
            Some(m) => m
                .merge(config)
                .map_err(|e| Error::Kubeconfig(e.to_string()))?,
        });
    }
    merged.ok_or_else(|| Error::Kubeconfig("no kubeconfig".into()))
}

/// The client config the global flags describe, and the context's name.
async fn config(global: &GlobalArgs) -> Result<(Config, String)> {
    let kubeconfig = load_kubeconfig(global)?;
    let context = global
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .ok_or_else(|| Error::Kubeconfig("no current context; pass --context".into()))?;
    let options = KubeConfigOptions {
        context: Some(context.clone()),
        cluster: global.cluster.clone(),
        user: global.user.clone(),
    };
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| {
            Error::Kubeconfig(format!("context {context:?}: {}", crate::error::chain(&e)))
        })?;
    if let Some(user) = &global.as_user {
        config.auth_info.impersonate = Some(user.clone());
    }
    if !global.as_group.is_empty() {
        if global.as_user.is_none() {
            return Err(Error::Usage("--as-group needs --as".into()));
        }
        config.auth_info.impersonate_groups = Some(global.as_group.clone());
    }
    if let Some(timeout) = global.request_timeout.filter(|t| !t.is_zero()) {
        config.connect_timeout = Some(timeout);
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
    }
    if let Some(namespace) = &global.namespace {
        config.default_namespace = namespace.clone();
    }
    kubectl_parity(&mut config.auth_info, std::io::stdin().is_terminal())
        .map_err(|e| Error::Kubeconfig(format!("context {context:?}: {e}")))?;
    Ok((config, context))
}

/// Makes kube-rs (5.0) use the user's credentials as kubectl (client-go 0.36) does:
///
/// - A `tokenFile` is trimmed of surrounding whitespace (client-go `transport/token_source.go`,
///   `fileTokenSource.Token`: `strings.TrimSpace`); kube-rs sends the file as is
///   (`client/auth/mod.rs`, `TokenFile::new`), so a token ending in a newline is not a valid
///   header. Such a file is read once here; a file without the whitespace is left to kube-rs,
///   which re-reads it every minute (rotated ServiceAccount tokens).
/// - An exec plugin is interactive only when stdin is a terminal (client-go
///   `plugin/pkg/client/auth/exec/exec.go`, `isInteractive`: `IfAvailable` means "if stdin is a
///   terminal", `Always` without one fails); kube-rs treats every mode but `Never` as interactive.
fn kubectl_parity(auth: &mut AuthInfo, stdin_tty: bool) -> std::result::Result<(), String> {
    if auth.token.is_none()
        && let Some(file) = auth.token_file.clone()
    {
        let raw = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read tokenFile {file}: {e}"))?;
        let token = raw.trim();
        if token.is_empty() {
            return Err(format!("tokenFile {file} is empty"));
        }
        if token.len() != raw.len() {
            auth.token = Some(token.to_string().into());
            auth.token_file = None;
        }
    }
    if let Some(exec) = &mut auth.exec {
        if let Some(command) = &exec.command {
            crate::error::remember_exec_command(command);
        }
        match (&exec.interactive_mode, stdin_tty) {
            (Some(ExecInteractiveMode::Always), false) => {
                return Err(
                    "getting credentials: exec plugin cannot support interactive mode: standard input is not a terminal"
                        .into(),
                );
            }
            (Some(ExecInteractiveMode::Never), _) | (_, true) => {}
            (None | Some(ExecInteractiveMode::IfAvailable), false) => {
                exec.interactive_mode = Some(ExecInteractiveMode::Never);
            }
        }
    }
    Ok(())
}

/// Runs an optimistic read-modify-write again while the API server refuses its write as stale:
/// `attempt` reads the object, decides, and writes guarded by the resourceVersion it read; a 409
/// means someone wrote in between (the operator writes the status all through a rollout), so it
/// reads and decides anew. Five attempts 10 ms apart, as client-go's `retry.RetryOnConflict` with
/// `retry.DefaultRetry`. A merge patch meets no field-manager conflicts, so a 409 is always this.
pub async fn retry_on_conflict<T, F, Fut>(mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    const ATTEMPTS: usize = 5;
    for _ in 1..ATTEMPTS {
        match attempt().await {
            Err(Error::Api { code: 409, .. }) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            done => return done,
        }
    }
    attempt().await
}

/// Connects (lazily: no request is made until the first call).
pub async fn connect(global: &GlobalArgs) -> Result<Kube> {
    let (config, context) = config(global).await?;
    let namespace = config.default_namespace.clone();
    let client =
        Client::try_from(config).map_err(|e| Error::Kubeconfig(crate::error::chain(&e)))?;
    Ok(Kube {
        client,
        namespace,
        namespace_explicit: global.namespace.is_some(),
        context,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use kube::config::ExecConfig;
    use secrecy::ExposeSecret;

    use super::*;

    fn exec_user(mode: Option<ExecInteractiveMode>) -> AuthInfo {
        AuthInfo {
            exec: Some(ExecConfig {
                command: Some("get-token".into()),
                interactive_mode: mode,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn mode(auth: &AuthInfo) -> Option<ExecInteractiveMode> {
        auth.exec.as_ref().and_then(|e| e.interactive_mode.clone())
    }

    #[test]
    fn exec_plugins_are_interactive_only_on_a_terminal_like_kubectl() {
        use ExecInteractiveMode::{Always, IfAvailable, Never};
        for (given, tty, expected) in [
            (None, false, Some(Never)),
            (Some(IfAvailable), false, Some(Never)),
            (Some(Never), false, Some(Never)),
            (None, true, None),
            (Some(IfAvailable), true, Some(IfAvailable)),
            (Some(Always), true, Some(Always)),
        ] {
            let mut auth = exec_user(given.clone());
            assert_eq!(kubectl_parity(&mut auth, tty), Ok(()), "{given:?} {tty}");
            assert_eq!(mode(&auth), expected, "{given:?} tty={tty}");
        }
        let mut always = exec_user(Some(Always));
        assert_eq!(
            kubectl_parity(&mut always, false),
            Err("getting credentials: exec plugin cannot support interactive mode: standard input is not a terminal".into())
        );
        assert_eq!(crate::error::exec_command(), Some("get-token"));
    }

    #[test]
    fn a_token_file_is_trimmed_like_kubectl() -> std::result::Result<(), Box<dyn std::error::Error>>
    {
        let dir = std::env::temp_dir().join(format!("infera-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let user = |file: &Path| AuthInfo {
            token_file: Some(file.display().to_string()),
            ..Default::default()
        };
        let newline = dir.join("newline");
        std::fs::write(&newline, "abc.def\n")?;
        let mut auth = user(&newline);
        kubectl_parity(&mut auth, false)?;
        assert_eq!(
            auth.token.as_ref().map(|t| t.expose_secret().to_string()),
            Some("abc.def".into())
        );
        assert_eq!(auth.token_file, None);

        let clean = dir.join("clean");
        std::fs::write(&clean, "abc.def")?;
        let mut auth = user(&clean);
        kubectl_parity(&mut auth, false)?;
        assert!(auth.token.is_none(), "left to kube-rs, which re-reads it");
        assert_eq!(auth.token_file, Some(clean.display().to_string()));

        let blank = dir.join("blank");
        std::fs::write(&blank, " \n")?;
        let error = kubectl_parity(&mut user(&blank), false).err();
        assert_eq!(
            error,
            Some(format!("tokenFile {} is empty", blank.display()))
        );
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }

    fn api_error(code: u16) -> Error {
        Error::Api {
            action: "scaling".into(),
            message: "the object has been modified".into(),
            code,
        }
    }

    /// Runs `retry_on_conflict` over attempts that fail with `codes` in turn, then succeed.
    fn attempts(codes: &[u16]) -> (Result<usize>, usize) {
        let calls = std::cell::Cell::new(0);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let result = runtime.block_on(retry_on_conflict(|| {
            let call = calls.get();
            calls.set(call + 1);
            let outcome = codes
                .get(call)
                .map_or(Ok(call), |&code| Err(api_error(code)));
            async move { outcome }
        }));
        (result, calls.get())
    }

    #[test]
    fn a_stale_write_is_read_and_decided_anew_up_to_five_times() {
        let (result, calls) = attempts(&[409, 409]);
        assert_eq!((result.ok(), calls), (Some(2), 3));
        let (result, calls) = attempts(&[409; 6]);
        assert!(matches!(result, Err(Error::Api { code: 409, .. })));
        assert_eq!(calls, 5);
    }

    #[test]
    fn any_other_error_ends_it_at_once() {
        let (result, calls) = attempts(&[422, 409]);
        assert!(matches!(result, Err(Error::Api { code: 422, .. })));
        assert_eq!(calls, 1);
    }
}
