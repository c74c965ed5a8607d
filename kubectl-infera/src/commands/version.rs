//! `kubectl infera version`: plugin, CRD and operator versions, and whether they are skewed.

use infera_core::crd::VERSION;
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
    installed,
    printer::{Printer, Style},
};

/// What `version` prints (and serializes for `-o json|yaml`).
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

/// Reads the server version, the CRD and the operator Deployment; a user who may not read the
/// cluster-scoped CRD or the operator namespace still gets the rest.
pub async fn gather(global: &GlobalArgs) -> Result<Versions> {
    let kube = client::connect(global).await?;
    let server = kube
        .client
        .apiserver_version()
        .await
        .map_err(|e| Error::kube("reading the server version", e))?;
    let crds: Api<CustomResourceDefinition> = Api::all(kube.client.clone());
    let crd = match crds.get_opt(&bundle::crd_name()).await {
        Ok(crd) => crd.as_ref().and_then(installed::crd_version),
        Err(kube::Error::Api(s)) if s.code == 403 => None,
        Err(e) => return Err(Error::kube("reading the InferaDeployment CRD", e)),
    };
    let deployments: Api<Deployment> = Api::namespaced(kube.client.clone(), bundle::NAMESPACE);
    let operator = match deployments.get_opt(bundle::OPERATOR).await {
        Ok(d) => d.as_ref().and_then(installed::operator_version),
        Err(kube::Error::Api(s)) if s.code == 403 => None,
        Err(e) => return Err(Error::kube("reading the operator Deployment", e)),
    };
    let skew = installed::skew(VERSION, crd.as_deref(), operator.as_deref());
    Ok(Versions {
        plugin: VERSION.into(),
        server: Some(server.git_version),
        crd,
        operator,
        skew,
    })
}

/// The operator image `init` installs, saying whether this is a release build (pinned by digest)
/// or a development build (a tag: `make release` pins it).
fn operator_image_line() -> Result<String> {
    let (image, pinned) = bundle::operator_image()?;
    Ok(if pinned {
        format!("{image} (release build, pinned by digest)")
    } else {
        format!("{image} (development build: a tag, not a digest; `make release` pins it)")
    })
}

/// Prints the versions; skew is a warning on stderr, never a failure. When the cluster cannot be
/// read (no kubeconfig, unreachable, credentials refused) the plugin's version is still printed,
/// then the error (its exit code), as `kubectl version` prints the client's version first.
pub async fn run(args: &VersionArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let client_only = Versions {
        plugin: VERSION.into(),
        ..Default::default()
    };
    if args.client {
        return print(args, &client_only, printer);
    }
    match gather(global).await {
        Ok(versions) => print(args, &versions, printer),
        Err(error) => {
            print(args, &client_only, printer)?;
            Err(error)
        }
    }
}

/// The versions read, in the output format asked for: only the plugin's when the server's were
/// not read.
fn print(args: &VersionArgs, versions: &Versions, printer: &Printer) -> Result<()> {
    match args.output {
        Output::Json => printer.json(versions)?,
        Output::Yaml => printer.yaml(versions)?,
        Output::Table | Output::Wide => {
            let none = || "not installed".to_string();
            let mut text = format!("Plugin:   {}\n", versions.plugin);
            text.push_str(&format!("Image:    {}\n", operator_image_line()?));
            if versions.server.is_some() {
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
