//! What `init` installed, as the cluster reports it: the versions the CRD and the operator
//! Deployment carry, how they differ from the plugin's, and whether the operator has rolled out.
//! Pure functions of objects already read; `version`, `init` and `doctor` share them.

use infera_core::crd::VERSION_ANNOTATION;
use k8s_openapi::{
    api::apps::v1::Deployment,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};

use crate::bundle;

/// The release that installed the InferaDeployment CRD (its version annotation).
pub fn crd_version(crd: &CustomResourceDefinition) -> Option<String> {
    crd.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(VERSION_ANNOTATION))
        .cloned()
}

/// The release of the operator Deployment (its version label).
pub fn operator_version(operator: &Deployment) -> Option<String> {
    operator
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(bundle::VERSION_LABEL))
        .cloned()
}

/// The Helm release that owns an object, from the ownership annotations Helm writes on every object
/// it installs (`meta.helm.sh/release-name`, `meta.helm.sh/release-namespace`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelmRelease {
    pub name: String,
    pub namespace: String,
}

impl HelmRelease {
    pub fn of(object: &Deployment) -> Option<Self> {
        let annotations = object.metadata.annotations.as_ref()?;
        Some(Self {
            name: annotations.get("meta.helm.sh/release-name")?.clone(),
            namespace: annotations
                .get("meta.helm.sh/release-namespace")
                .cloned()
                .unwrap_or_else(|| bundle::NAMESPACE.to_string()),
        })
    }

    /// `init` and `uninstall` leave the operator to Helm: `what` to do with it and the `command`.
    pub fn refuse(self, what: &'static str, command: String) -> crate::error::Error {
        crate::error::Error::HelmManaged {
            namespace: bundle::NAMESPACE.into(),
            release: self.name,
            release_namespace: self.namespace,
            what,
            command,
        }
    }

    /// What upgrades it to the plugin's release: Helm, never `init` (whose apply would fight
    /// Helm's field manager) — the chart's CRD first, which `helm upgrade` leaves as it was.
    pub fn upgrade(&self) -> String {
        let version = infera_core::crd::VERSION;
        format!(
            "`{}` then `helm upgrade {} {} --version {version} -n {}`",
            infera_core::crd::helm_crd_upgrade(version),
            self.name,
            infera_core::crd::CHART,
            self.namespace
        )
    }
}

/// How far a Deployment has rolled out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollout {
    pub available: i32,
    pub desired: i32,
    /// The current generation is observed and every desired replica is updated and available.
    pub done: bool,
}

/// The rollout of a Deployment, as `kubectl rollout status` judges it.
pub fn rollout(deployment: &Deployment) -> Rollout {
    let desired = deployment
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1);
    let status = deployment.status.clone().unwrap_or_default();
    let available = status.available_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    let observed =
        status.observed_generation.unwrap_or(0) >= deployment.metadata.generation.unwrap_or(0);
    Rollout {
        available,
        desired,
        done: observed && updated >= desired && available >= desired,
    }
}

/// Skew between the plugin and what is installed: one warning per side that differs, saying
/// which side to upgrade. Empty when everything matches (or nothing is installed).
pub fn skew(plugin: &str, crd: Option<&str>, operator: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let minor = |v: &str| bundle::parse_version(v).map(|(a, b, _)| (a, b));
    for (what, installed) in [("CRD", crd), ("operator", operator)] {
        if let Some(installed) = installed
            && installed != plugin
        {
            let advice = match (
                bundle::parse_version(installed),
                bundle::parse_version(plugin),
            ) {
                (Some(i), Some(p)) if i < p => "run `kubectl infera init` to upgrade it",
                (Some(_), Some(_)) => "upgrade the plugin (kubectl krew upgrade infera)",
                _ => "reinstall with `kubectl infera init`",
            };
            let severity = if minor(installed) == minor(plugin) {
                "patch"
            } else {
                "minor"
            };
            out.push(format!(
                "{what} is {installed}, plugin is {plugin} ({severity} skew): {advice}"
            ));
        }
    }
    out
}

/// A CRD older than the operator: the operator may write status fields the CRD does not declare,
/// which the API server refuses (the operator's Events and `/readyz` then say so).
pub fn crd_behind(crd: Option<&str>, operator: Option<&str>) -> Option<String> {
    let (crd, operator) = (crd?, operator?);
    (bundle::parse_version(crd)? < bundle::parse_version(operator)?).then(|| {
        format!("CRD is {crd}, older than the operator {operator}: the API server refuses a status naming a field the CRD lacks, if the operator writes one")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crd_older_than_the_operator_is_behind() {
        assert_eq!(
            crd_behind(Some("0.1.0"), Some("0.2.0")).as_deref(),
            Some(
                "CRD is 0.1.0, older than the operator 0.2.0: the API server refuses a status naming a field the CRD lacks, if the operator writes one"
            )
        );
        for (crd, operator) in [
            (Some("0.2.0"), Some("0.2.0")),
            (Some("0.3.0"), Some("0.2.0")),
            (None, Some("0.2.0")),
            (Some("0.1.0"), None),
            (Some("dev"), Some("0.2.0")),
        ] {
            assert_eq!(crd_behind(crd, operator), None, "{crd:?} {operator:?}");
        }
    }

    #[test]
    fn no_skew_when_versions_match_or_nothing_is_installed() {
        assert!(skew("0.1.0", Some("0.1.0"), Some("0.1.0")).is_empty());
        assert!(skew("0.1.0", None, None).is_empty());
    }

    #[test]
    fn skew_says_which_side_to_upgrade() {
        assert_eq!(
            skew("0.2.0", Some("0.1.0"), Some("0.3.1")),
            [
                "CRD is 0.1.0, plugin is 0.2.0 (minor skew): run `kubectl infera init` to upgrade it",
                "operator is 0.3.1, plugin is 0.2.0 (minor skew): upgrade the plugin (kubectl krew upgrade infera)",
            ]
        );
    }
}
