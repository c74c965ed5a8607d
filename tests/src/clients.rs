//! Clients for the test cluster, by kubeconfig context, impersonation, or a ServiceAccount token.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

/// The kubeconfig `tests/cluster/up.sh` wrote: `$KUBECONFIG` (a single path).
pub fn kubeconfig_path() -> anyhow::Result<PathBuf> {
    let raw = std::env::var_os("KUBECONFIG").ok_or_else(|| {
        anyhow!(
            "KUBECONFIG is not set: start a cluster with `eval \"$(tests/cluster/up.sh)\"` \
             or run the suite through tests/run-e2e.sh"
        )
    })?;
    let first = std::env::split_paths(&raw)
        .next()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| anyhow!("KUBECONFIG is empty"))?;
    Ok(first)
}

/// Tier of the running cluster (1: etcd + apiserver only; 2: full), from the `tier` file `up.sh`
/// leaves next to the kubeconfig. A kubeconfig not made by `up.sh` counts as tier 2.
pub fn cluster_tier() -> u8 {
    kubeconfig_path()
        .ok()
        .and_then(|p| std::fs::read_to_string(p.with_file_name("tier")).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2)
}

async fn config_for(context: &str) -> anyhow::Result<Config> {
    let path = kubeconfig_path()?;
    let kc = Kubeconfig::read_from(&path)
        .with_context(|| format!("reading kubeconfig {}", path.display()))?;
    let opts = KubeConfigOptions {
        context: Some(context.to_owned()),
        ..Default::default()
    };
    Config::from_custom_kubeconfig(kc, &opts)
        .await
        .with_context(|| format!("context {context:?} of {}", path.display()))
}

/// A client for a context of `$KUBECONFIG`.
pub async fn context(name: &str) -> anyhow::Result<Client> {
    let cfg = config_for(name).await?;
    Client::try_from(cfg).with_context(|| format!("building a client for context {name:?}"))
}

/// The cluster admin (context `admin`, group `system:masters`).
pub async fn admin() -> anyhow::Result<Client> {
    context("admin").await
}

/// An authenticated user without RBAC bindings: `alice` (client certificate) or `bob` (token),
/// both in group `dev-team`. Bind roles to them in a test's namespace to grant exactly what it needs.
pub async fn user(name: &str) -> anyhow::Result<Client> {
    context(name).await
}

/// The admin's credentials impersonating ServiceAccount `namespace/name` (with the groups the
/// apiserver gives a real ServiceAccount token), so requests are authorized by that account's RBAC.
pub async fn impersonating(namespace: &str, name: &str) -> anyhow::Result<Client> {
    let mut cfg = config_for("admin").await?;
    cfg.auth_info.impersonate = Some(format!("system:serviceaccount:{namespace}:{name}"));
    cfg.auth_info.impersonate_groups = Some(vec![
        "system:serviceaccounts".to_owned(),
        format!("system:serviceaccounts:{namespace}"),
        "system:authenticated".to_owned(),
    ]);
    Client::try_from(cfg).context("building an impersonating client")
}

/// A ServiceAccount's real identity: a TokenRequest-minted bearer token and a kubeconfig file
/// holding only that token (plus the cluster's address and CA). Point a spawned process at it with
/// `KUBECONFIG=<kubeconfig>` and it is authorized exactly by the account's RBAC, nothing more.
#[derive(Debug, Clone)]
pub struct ServiceAccountIdentity {
    pub namespace: String,
    pub name: String,
    pub token: String,
    pub kubeconfig: PathBuf,
}

impl ServiceAccountIdentity {
    /// Creates the ServiceAccount if it does not exist, mints a token valid for `ttl` (the apiserver
    /// enforces a minimum of 10 minutes) and writes a kubeconfig for it to `kubeconfig`.
    pub async fn create(
        admin: &Client,
        namespace: &str,
        name: &str,
        ttl: Duration,
        kubeconfig: &Path,
    ) -> anyhow::Result<Self> {
        Self::create_on(&kubeconfig_path()?, admin, namespace, name, ttl, kubeconfig).await
    }

    /// [`ServiceAccountIdentity::create`] on the cluster of another kubeconfig than `$KUBECONFIG`
    /// (its `admin` context's cluster), e.g. a [`crate::cluster::PrivateCluster`].
    pub async fn create_on(
        cluster: &Path,
        admin: &Client,
        namespace: &str,
        name: &str,
        ttl: Duration,
        kubeconfig: &Path,
    ) -> anyhow::Result<Self> {
        let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), namespace);
        if sas.get_opt(name).await?.is_none() {
            let sa = ServiceAccount {
                metadata: ObjectMeta {
                    name: Some(name.to_owned()),
                    ..Default::default()
                },
                ..Default::default()
            };
            match sas.create(&PostParams::default(), &sa).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => {
                    return Err(e).context(format!("creating ServiceAccount {namespace}/{name}"));
                }
            }
        }
        let token = mint_token(admin, namespace, name, ttl).await?;
        write_token_kubeconfig(cluster, kubeconfig, namespace, name, &token)?;
        Ok(Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            token,
            kubeconfig: kubeconfig.to_owned(),
        })
    }

    /// A client authenticated with the token (not through impersonation).
    pub async fn client(&self) -> anyhow::Result<Client> {
        let kc = Kubeconfig::read_from(&self.kubeconfig)?;
        let cfg = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
        Client::try_from(cfg).context("building a ServiceAccount client")
    }

    /// `system:serviceaccount:<namespace>:<name>`
    pub fn username(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }
}

/// Mints a bound ServiceAccount token through the TokenRequest API.
pub async fn mint_token(
    admin: &Client,
    namespace: &str,
    name: &str,
    ttl: Duration,
) -> anyhow::Result<String> {
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), namespace);
    let req = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX).max(600)),
            ..Default::default()
        },
        ..Default::default()
    };
    let resp = sas
        .create_token_request(name, &PostParams::default(), &req)
        .await
        .with_context(|| format!("TokenRequest for ServiceAccount {namespace}/{name}"))?;
    match resp.status {
        Some(s) if !s.token.is_empty() => Ok(s.token),
        _ => bail!("TokenRequest for {namespace}/{name} returned no token"),
    }
}

/// Writes a kubeconfig with `src`'s admin context's cluster (server + CA) and a bearer token user.
/// The file is JSON, which every kubeconfig reader accepts as YAML.
fn write_token_kubeconfig(
    src: &Path,
    path: &Path,
    namespace: &str,
    name: &str,
    token: &str,
) -> anyhow::Result<()> {
    let kc = Kubeconfig::read_from(src)?;
    let ctx = kc
        .contexts
        .iter()
        .find(|c| c.name == "admin")
        .and_then(|c| c.context.as_ref())
        .ok_or_else(|| anyhow!("{} has no context \"admin\"", src.display()))?;
    let cluster = kc
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .ok_or_else(|| anyhow!("{} has no cluster {:?}", src.display(), ctx.cluster))?;
    let user = format!("{namespace}:{name}");
    let doc = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": cluster.name, "user": user, "namespace": namespace}}],
        "current-context": user,
    });
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_vec_pretty(&doc)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Deletes the cluster-scoped object `name` from a destructor, best effort and within 10 s. The
/// test's runtime may be single-threaded and blocked in that destructor, and the test's client runs
/// its connection tasks on it: so this uses a fresh runtime and client on a thread of its own.
pub(crate) fn delete_from_drop<K>(name: String)
where
    K: kube::Resource<Scope = kube::core::ClusterResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + 'static,
{
    let handle = std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            let Ok(client) = admin().await else {
                return;
            };
            let api: kube::Api<K> = kube::Api::all(client);
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                api.delete(&name, &kube::api::DeleteParams::default()),
            )
            .await;
        });
    });
    let _ = handle.join();
}
