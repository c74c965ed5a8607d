//! The operator install bundle, embedded in the binary so `init` works offline and installs
//! exactly the version of the plugin: the InferaDeployment CRD and the files of `deploy/`.

use kube::{
    api::DynamicObject,
    core::{ApiResource, GroupVersionKind},
};

use crate::error::{Error, Result};

/// Label every object of the bundle carries; `uninstall` deletes only objects that have it.
pub const PART_OF: (&str, &str) = ("app.kubernetes.io/part-of", "infera");
/// Namespace the operator runs in.
pub const NAMESPACE: &str = "infera-system";
/// Name of the operator Deployment (and of its ServiceAccount).
pub const OPERATOR: &str = "infera-operator";
/// Label on the operator Deployment with its version.
pub const VERSION_LABEL: &str = "app.kubernetes.io/version";
/// Label selector of the operator's pods.
pub const OPERATOR_PODS: &str = "app.kubernetes.io/name=infera-operator";
/// The operator image of a release build, by digest (`ghcr.io/amd/infera/operator@sha256:…`): `make release`
/// (release/build.sh) builds the image first and sets `INFERA_OPERATOR_IMAGE` for this build. A
/// development build leaves it unset and keeps the tag of deploy/deployment.yaml.
pub const RELEASE_OPERATOR_IMAGE: Option<&str> = option_env!("INFERA_OPERATOR_IMAGE");

/// The `deploy/` files, in apply order (the CRD comes first, from infera-core).
const FILES: [(&str, &str); 8] = [
    (
        "deploy/namespace.yaml",
        include_str!("../../deploy/namespace.yaml"),
    ),
    (
        "deploy/serviceaccount.yaml",
        include_str!("../../deploy/serviceaccount.yaml"),
    ),
    (
        "deploy/clusterrole.yaml",
        include_str!("../../deploy/clusterrole.yaml"),
    ),
    (
        "deploy/clusterrolebinding.yaml",
        include_str!("../../deploy/clusterrolebinding.yaml"),
    ),
    (
        "deploy/leader-election.yaml",
        include_str!("../../deploy/leader-election.yaml"),
    ),
    (
        "deploy/api-server.yaml",
        include_str!("../../deploy/api-server.yaml"),
    ),
    (
        "deploy/service.yaml",
        include_str!("../../deploy/service.yaml"),
    ),
    (
        "deploy/deployment.yaml",
        include_str!("../../deploy/deployment.yaml"),
    ),
];

/// One object of the bundle with how to address it.
#[derive(Debug, Clone)]
pub struct BundleObject {
    /// The bundle file it comes from (`deploy/service.yaml`), or `crd`.
    pub source: &'static str,
    pub object: DynamicObject,
    pub resource: ApiResource,
    pub namespaced: bool,
}

impl BundleObject {
    pub fn name(&self) -> &str {
        self.object.metadata.name.as_deref().unwrap_or_default()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.object.metadata.namespace.as_deref()
    }

    /// `deployment.apps/infera-operator`, as kubectl prints it.
    pub fn display(&self) -> String {
        let kind = self.resource.kind.to_lowercase();
        if self.resource.group.is_empty() {
            format!("{kind}/{}", self.name())
        } else {
            format!("{kind}.{}/{}", self.resource.group, self.name())
        }
    }
}

/// Where a bundle kind lives: plural and scope.
fn resource_of(api_version: &str, kind: &str) -> Option<(ApiResource, bool)> {
    let (plural, namespaced) = match (api_version, kind) {
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            ("customresourcedefinitions", false)
        }
        ("v1", "Namespace") => ("namespaces", false),
        ("v1", "ServiceAccount") => ("serviceaccounts", true),
        ("v1", "Service") => ("services", true),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => ("clusterroles", false),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => ("clusterrolebindings", false),
        ("rbac.authorization.k8s.io/v1", "Role") => ("roles", true),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => ("rolebindings", true),
        ("apps/v1", "Deployment") => ("deployments", true),
        _ => return None,
    };
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Some((
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural),
        namespaced,
    ))
}

/// One parsed document of `source` as a bundle object, or why the bundle is broken.
fn to_bundle_object(source: &'static str, value: serde_json::Value) -> Result<BundleObject> {
    let api_version = value
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let kind = value
        .get("kind")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let (resource, namespaced) = resource_of(&api_version, &kind).ok_or_else(|| Error::Bundle {
        file: source.into(),
        problem: format!("unexpected kind {api_version}/{kind}"),
        source: None,
    })?;
    let object: DynamicObject = serde_json::from_value(value).map_err(|e| Error::Bundle {
        file: source.into(),
        problem: "not a Kubernetes object".into(),
        source: Some(Box::new(e)),
    })?;
    Ok(BundleObject {
        source,
        object,
        resource,
        namespaced,
    })
}

/// The InferaDeployment CRD as committed (`make generate` writes it from the types; a test checks
/// it is current): embedded rather than generated at run time, which keeps the schema generator
/// and every Kubernetes type's schema out of the binary.
pub const CRD_YAML: &str = include_str!("../../crds/inferadeployments.infera.amd.com.yaml");

/// Every object `init` applies, in order: CRD, namespace, ServiceAccount, RBAC, Service, Deployment.
pub fn objects() -> Result<Vec<BundleObject>> {
    let crd: serde_json::Value = serde_saphyr::from_str(CRD_YAML).map_err(|e| Error::Bundle {
        file: "crds/inferadeployments.infera.amd.com.yaml".into(),
        problem: "not valid YAML".into(),
        source: Some(Box::new(e)),
    })?;
    let mut objects = vec![to_bundle_object("crd", crd)?];
    for (source, text) in FILES {
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(text).map_err(|e| Error::Bundle {
                file: source.into(),
                problem: "not valid YAML".into(),
                source: Some(Box::new(e)),
            })?;
        for mut document in documents.into_iter().filter(|d| !d.is_null()) {
            if let Some(image) = RELEASE_OPERATOR_IMAGE {
                pin_operator_image(&mut document, image);
            }
            objects.push(to_bundle_object(source, document)?);
        }
    }
    Ok(objects)
}

/// Sets the image of every container of the operator Deployment (other documents are left alone).
fn pin_operator_image(document: &mut serde_json::Value, image: &str) {
    if document["kind"] != "Deployment" || document["metadata"]["name"] != OPERATOR {
        return;
    }
    if let Some(containers) = document
        .pointer_mut("/spec/template/spec/containers")
        .and_then(serde_json::Value::as_array_mut)
    {
        for container in containers {
            container["image"] = image.into();
        }
    }
}

/// The operator image `init` installs, and whether it is pinned by digest (a release build) rather
/// than a tag (a development build).
pub fn operator_image() -> Result<(String, bool)> {
    let image = objects()?
        .iter()
        .find(|o| o.resource.kind == "Deployment" && o.name() == OPERATOR)
        .and_then(|o| {
            o.object.data["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .map(str::to_string)
        })
        .ok_or_else(|| Error::Bundle {
            file: "deploy/deployment.yaml".into(),
            problem: format!("the {OPERATOR} Deployment has no container image"),
            source: None,
        })?;
    let pinned = image.contains("@sha256:");
    Ok((image, pinned))
}

/// The name of the Infera CRD.
pub fn crd_name() -> String {
    format!("inferadeployments.{}", "infera.amd.com")
}

/// A `major.minor.patch` version as a comparable tuple (pre-release suffixes ignored).
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text
        .trim()
        .trim_start_matches('v')
        .split(['-', '+'])
        .next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((
        parts.next()??,
        parts.next()?.unwrap_or(0),
        parts.next().flatten().unwrap_or(0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_is_every_file_in_apply_order() {
        let objects = objects().unwrap_or_default();
        let names: Vec<String> = objects.iter().map(BundleObject::display).collect();
        assert_eq!(
            names,
            [
                "customresourcedefinition.apiextensions.k8s.io/inferadeployments.infera.amd.com",
                "namespace/infera-system",
                "serviceaccount/infera-operator",
                "clusterrole.rbac.authorization.k8s.io/infera-system:infera-operator",
                "clusterrolebinding.rbac.authorization.k8s.io/infera-system:infera-operator",
                "role.rbac.authorization.k8s.io/infera-operator-leader-election",
                "rolebinding.rbac.authorization.k8s.io/infera-operator-leader-election",
                "role.rbac.authorization.k8s.io/infera-system:infera-operator",
                "rolebinding.rbac.authorization.k8s.io/infera-system:infera-operator",
                "service/infera-operator-metrics",
                "deployment.apps/infera-operator",
            ]
        );
        assert_eq!(crd_name(), objects[0].name());
        for o in &objects {
            let labels = o.object.metadata.labels.clone().unwrap_or_default();
            assert_eq!(
                labels.get(PART_OF.0).map(String::as_str),
                Some(PART_OF.1),
                "{}",
                o.display()
            );
            assert_eq!(o.namespaced, o.namespace().is_some(), "{}", o.display());
        }
    }

    #[test]
    fn a_release_build_pins_the_operator_image_by_digest_and_a_development_build_keeps_the_tag() {
        let mut deployment: serde_json::Value =
            serde_saphyr::from_str(include_str!("../../deploy/deployment.yaml"))
                .unwrap_or_default();
        let tag = deployment["spec"]["template"]["spec"]["containers"][0]["image"].clone();
        assert_eq!(tag, "ghcr.io/amd/infera/operator:0.1.0");
        let digest = format!("ghcr.io/amd/infera/operator@sha256:{}", "0".repeat(64));
        let mut other: serde_json::Value =
            serde_json::json!({"kind": "Service", "metadata": {"name": OPERATOR}});
        let before = other.clone();
        pin_operator_image(&mut other, &digest);
        assert_eq!(other, before);
        pin_operator_image(&mut deployment, &digest);
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            digest.as_str()
        );
        // This test binary is a development build (make release sets INFERA_OPERATOR_IMAGE only
        // for the release binaries).
        let (image, pinned) = operator_image().unwrap_or_default();
        assert_eq!(
            (image.as_str(), pinned),
            match RELEASE_OPERATOR_IMAGE {
                Some(release) => (release, true),
                None => ("ghcr.io/amd/infera/operator:0.1.0", false),
            }
        );
    }

    /// The Role lets the operator renew exactly the Lease it elects with (one name, one source).
    #[test]
    fn the_leader_election_role_names_the_operators_lease() {
        let objects = objects().unwrap_or_default();
        let role = objects
            .iter()
            .find(|o| o.resource.kind == "Role")
            .map(|o| o.object.data.clone())
            .unwrap_or_default();
        let named: Vec<&serde_json::Value> = role["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|rule| rule.get("resourceNames"))
            .collect();
        assert_eq!(
            named,
            [&serde_json::json!([infera_core::naming::LEADER_LEASE])]
        );
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(parse_version("0.10.1"), Some((0, 10, 1)));
        assert_eq!(parse_version("v1.2.3-rc.1"), Some((1, 2, 3)));
        assert_eq!(parse_version("1.33"), Some((1, 33, 0)));
        assert!(parse_version("0.9.0") < parse_version("0.10.0"));
        assert_eq!(parse_version("garbage"), None);
    }
}
