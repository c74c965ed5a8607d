//! Server-side apply of YAML manifests (any kind the cluster serves), e.g. the shipped RBAC.

use anyhow::{Context as _, anyhow};
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use kube::{Api, Client};

use crate::FIELD_MANAGER;

/// Applies every document of `yaml` (server-side apply, forced, field manager `infera-e2e`).
/// Namespaced objects without a namespace go to the client's default namespace.
pub async fn apply_yaml(client: &Client, yaml: &str) -> anyhow::Result<Vec<DynamicObject>> {
    apply(client, yaml, None).await
}

/// Like [`apply_yaml`], but every namespaced object is put into `namespace` (whatever the YAML
/// says), and the `namespace` of ServiceAccount subjects in (Cluster)RoleBindings is rewritten too,
/// so shipped RBAC can be installed per test namespace.
pub async fn apply_yaml_in(
    client: &Client,
    namespace: &str,
    yaml: &str,
) -> anyhow::Result<Vec<DynamicObject>> {
    apply(client, yaml, Some(namespace)).await
}

async fn apply(
    client: &Client,
    yaml: &str,
    namespace: Option<&str>,
) -> anyhow::Result<Vec<DynamicObject>> {
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(yaml).map_err(|e| anyhow!("parsing YAML: {e}"))?;
    let mut applied = Vec::new();
    for mut doc in docs.into_iter().filter(|d| !d.is_null()) {
        let mut obj: DynamicObject = serde_json::from_value(doc.take())
            .context("a YAML document is not a Kubernetes object")?;
        let types = obj
            .types
            .clone()
            .ok_or_else(|| anyhow!("object without apiVersion/kind"))?;
        let gvk = GroupVersionKind::try_from(&types).map_err(|e| anyhow!("{e}"))?;
        let (ar, caps) = pinned_kind(client, &gvk)
            .await
            .with_context(|| format!("discovering {}/{}", types.api_version, types.kind))?;
        let name = obj
            .metadata
            .name
            .clone()
            .ok_or_else(|| anyhow!("{} without metadata.name", types.kind))?;
        let api: Api<DynamicObject> = if caps.scope == Scope::Namespaced {
            if let Some(ns) = namespace {
                obj.metadata.namespace = Some(ns.to_owned());
            }
            match obj.metadata.namespace.as_deref() {
                Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
                None => Api::default_namespaced_with(client.clone(), &ar),
            }
        } else {
            obj.metadata.namespace = None;
            Api::all_with(client.clone(), &ar)
        };
        if let Some(ns) = namespace
            && (types.kind == "RoleBinding" || types.kind == "ClusterRoleBinding")
            && let Some(subjects) = obj.data.get_mut("subjects").and_then(|s| s.as_array_mut())
        {
            for s in subjects {
                if s.get("kind").and_then(|k| k.as_str()) == Some("ServiceAccount") {
                    s["namespace"] = serde_json::Value::String(ns.to_owned());
                }
            }
        }
        let out = api
            .patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&obj),
            )
            .await
            .with_context(|| format!("applying {} {name}", types.kind))?;
        applied.push(out);
    }
    Ok(applied)
}
