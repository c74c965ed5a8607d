//! A kube client configured like kubectl: the kubeconfig files of `--kubeconfig` or `$KUBECONFIG`
//! (missing files skipped, as kubectl does), `--context/--cluster/--user`, `-n`, `--as/--as-group`
//! and `--request-timeout`. There is no silent in-cluster fallback.
//!
//! [`connect`] is the only way in: it reads the kubeconfig and resolves the context and namespace
//! once, into a [`Kube`] that a command passes down to everything that needs the cluster or says
//! where it is (`deploy`: the wizard's defaults and confirmation, the apply, the wait).

use std::path::PathBuf;

use kube::{
    Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
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
    Ok((config, context))
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
