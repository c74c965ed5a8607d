//! `kubectl infera version`: plugin, CRD and operator versions, and whether they are skewed.

use infera_core::crd::{VERSION, VERSION_ANNOTATION};
use k8s_openapi::{
    api::apps::v1::Deployment,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::Api;
use serde::Serialize;

use crate::{
    bundle,
    cli::{GlobalArgs, Output, VersionArgs},
    client,
    error::{Error, Result},
    printer::{Printer, Style},
};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Versions {
    pub plugin: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Version annotation of the installed InferaDeployment CRD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crd: Option<String>,
    /// Version label of the operator Deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Human-readable skew warnings; empty when everything matches.
    pub skew: Vec<String>,
}

/// Skew between the plugin and what is installed.
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

pub async fn gather(global: &GlobalArgs) -> Result<Versions> {
    let kube = client::connect(global).await?;
    let server = kube
        .client
        .apiserver_version()
        .await
        .map_err(|e| Error::kube("reading the server version", e))?;
    let crds: Api<CustomResourceDefinition> = Api::all(kube.client.clone());
    let crd = match crds.get_opt(&bundle::crd_name()).await {
        Ok(crd) => crd.and_then(|c| {
            c.metadata
                .annotations
                .and_then(|a| a.get(VERSION_ANNOTATION).cloned())
        }),
        // Users without cluster-scoped read access still get the rest.
        Err(kube::Error::Api(s)) if s.code == 403 => None,
        Err(e) => return Err(Error::kube("reading the InferaDeployment CRD", e)),
    };
    let deployments: Api<Deployment> = Api::namespaced(kube.client.clone(), bundle::NAMESPACE);
    let operator = match deployments.get_opt(bundle::OPERATOR).await {
        Ok(d) => d.and_then(|d| {
            d.metadata
                .labels
                .and_then(|l| l.get(bundle::VERSION_LABEL).cloned())
        }),
        Err(kube::Error::Api(s)) if s.code == 403 => None,
        Err(e) => return Err(Error::kube("reading the operator Deployment", e)),
    };
    let skew = skew(VERSION, crd.as_deref(), operator.as_deref());
    Ok(Versions {
        plugin: VERSION.into(),
        server: Some(server.git_version),
        crd,
        operator,
        skew,
    })
}

pub async fn run(args: &VersionArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let versions = if args.client {
        Versions {
            plugin: VERSION.into(),
            ..Default::default()
        }
    } else {
        gather(global).await?
    };
    match args.output {
        Output::Json => printer.json(&versions)?,
        Output::Yaml => printer.yaml(&versions)?,
        Output::Table | Output::Wide => {
            let none = || "not installed".to_string();
            let mut text = format!("Plugin:   {}\n", versions.plugin);
            if !args.client {
                text.push_str(&format!(
                    "Server:   {}\n",
                    versions.server.clone().unwrap_or_default()
                ));
                text.push_str(&format!(
                    "CRD:      {}\n",
                    versions.crd.clone().unwrap_or_else(none)
                ));
                text.push_str(&format!(
                    "Operator: {}\n",
                    versions.operator.clone().unwrap_or_else(none)
                ));
            }
            printer.out(&text);
            for s in &versions.skew {
                printer.warn(&printer.paint_err(Style::Warn, s));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
