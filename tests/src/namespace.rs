//! A unique namespace per test.

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client};

use crate::{cluster_tier, eventually};

/// Label put on every namespace a test creates, so leftovers are easy to find:
/// `kubectl get ns -l infera-e2e`.
pub const NAMESPACE_LABEL: &str = "infera-e2e";

/// A namespace named `<prefix>-<unique suffix>`, created by [`TestNamespace::new`] and deleted by
/// [`TestNamespace::cleanup`] or, failing that (a panicking test), best-effort on drop. Set
/// `INFERA_E2E_KEEP_NAMESPACES=1` to keep them for debugging.
pub struct TestNamespace {
    name: String,
    client: Client,
    cleaned: bool,
}

impl TestNamespace {
    /// Creates the namespace as `admin`. On a tier-2 cluster it also waits until the controller
    /// manager has created the namespace's `default` ServiceAccount, without which the
    /// ServiceAccount admission plugin rejects pods.
    pub async fn new(admin: &Client, prefix: &str) -> anyhow::Result<Self> {
        let mut prefix: String = prefix
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        prefix.truncate(40);
        let name = format!("{}-{}", prefix.trim_matches('-'), crate::unique_suffix());
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(NAMESPACE_LABEL.to_owned(), prefix.clone())].into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let api: Api<Namespace> = Api::all(admin.clone());
        api.create(&PostParams::default(), &ns)
            .await
            .with_context(|| format!("creating namespace {name}"))?;
        let this = Self {
            name,
            client: admin.clone(),
            cleaned: false,
        };
        if cluster_tier() >= 2 {
            let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), &this.name);
            eventually(Duration::from_secs(30), || async {
                sas.get("default").await.map(|_| ())
            })
            .await
            .with_context(|| format!("waiting for ServiceAccount {}/default", this.name))?;
        }
        Ok(this)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Has Pod Security enforce `level` (`privileged`, `baseline`, `restricted`) here.
    pub async fn enforce(&self, level: &str) -> anyhow::Result<()> {
        let labels = serde_json::json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": level}}});
        Api::<Namespace>::all(self.client.clone())
            .patch(&self.name, &PatchParams::default(), &Patch::Merge(&labels))
            .await
            .with_context(|| format!("labelling namespace {} to enforce {level}", self.name))?;
        Ok(())
    }

    /// A namespaced API in this namespace, with the admin client.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.name)
    }

    /// Deletes the namespace (foreground is not needed: the namespace controller removes the
    /// content). Does not wait for it to be gone.
    pub async fn cleanup(mut self) -> anyhow::Result<()> {
        self.cleaned = true;
        if keep() {
            return Ok(());
        }
        let api: Api<Namespace> = Api::all(self.client.clone());
        match api.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e).with_context(|| format!("deleting namespace {}", self.name)),
        }
    }
}

impl TestNamespace {
    /// [`TestNamespace::cleanup`], then waits up to `timeout` until the namespace is gone (the
    /// namespace controller has deleted everything in it). Use it before deleting something the
    /// content depends on, e.g. the [`crate::FakeNode`] its pods run on.
    pub async fn cleanup_and_wait(self, timeout: Duration) -> anyhow::Result<()> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let name = self.name.clone();
        let kept = keep();
        self.cleanup().await?;
        if kept {
            return Ok(());
        }
        eventually(timeout, || async {
            match api.get_opt(&name).await? {
                None => Ok(()),
                Some(ns) => Err(anyhow::anyhow!(
                    "namespace {name} still exists: {:?}",
                    ns.status.and_then(|s| s.conditions)
                )),
            }
        })
        .await
    }
}

fn keep() -> bool {
    std::env::var_os("INFERA_E2E_KEEP_NAMESPACES").is_some_and(|v| !v.is_empty() && v != "0")
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        if self.cleaned || keep() {
            return;
        }
        crate::clients::delete_from_drop::<Namespace>(self.name.clone());
    }
}
