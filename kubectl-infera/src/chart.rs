//! The operator's Helm chart (`deploy/helm/infera-operator`, written by `make generate`), made from
//! the bundle `init` applies so that the two cannot drift: every object of the bundle but the
//! Namespace (Helm's `--create-namespace` makes it) becomes a template, the CRD goes under `crds/`
//! (Helm installs it and never deletes it), and the values change only what `values.yaml`
//! documents. Rendered with its default values into `infera-system`, the chart gives exactly the
//! bundle's objects (tests/tests/shared/helm.rs checks it with Helm itself).
//!
//! How a template is made: the bundle object is written as YAML with markers (`@@name@@`) in place
//! of the values the chart sets, then each marker's line is replaced by its template text at that
//! line's indentation, and the namespace (also part of the cluster-scoped names) by
//! `{{ .Release.Namespace }}`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{
    bundle::{self, BundleObject},
    error::{Error, Result},
};

/// Where the chart lives in the repository.
pub const DIR: &str = "deploy/helm/infera-operator";
/// The chart's name (and Helm's release name the docs use).
pub const NAME: &str = "infera-operator";
/// The operator's default log format (infera-operator/src/main.rs `--log-format`).
const DEFAULT_LOG_FORMAT: &str = "json";

/// Every file of the chart, relative to the repository root.
pub fn files() -> Result<Vec<(PathBuf, String)>> {
    let objects = bundle::objects()?;
    let dir = Path::new(DIR);
    let mut files = vec![
        (dir.join("Chart.yaml"), chart_yaml()),
        (dir.join("values.yaml"), values_yaml(operator(&objects)?)?),
    ];
    for object in &objects {
        match object.resource.kind.as_str() {
            "CustomResourceDefinition" => files.push((
                dir.join("crds").join(format!("{}.yaml", object.name())),
                yaml(&object.object)?,
            )),
            "Namespace" => {}
            _ => {
                let file = dir.join("templates").join(template_name(object));
                let text = template(object)?;
                match files.iter_mut().find(|(path, _)| *path == file) {
                    Some((_, existing)) => {
                        existing.push_str("---\n");
                        existing.push_str(&text);
                    }
                    None => files.push((file, text)),
                }
            }
        }
    }
    files.push((dir.join("templates/podmonitor.yaml"), pod_monitor()));
    files.push((
        dir.join("templates/namespace-check.yaml"),
        namespace_check(),
    ));
    files.push((dir.join("templates/NOTES.txt"), notes()));
    Ok(files)
}

/// The bundle file an object came from names its template (`deploy/service.yaml` → `service.yaml`).
fn template_name(object: &BundleObject) -> String {
    Path::new(object.source)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{}.yaml", object.resource.kind.to_lowercase()))
}

fn operator(objects: &[BundleObject]) -> Result<&Value> {
    objects
        .iter()
        .find(|o| o.resource.kind == "Deployment" && o.name() == bundle::OPERATOR)
        .map(|o| &o.object.data)
        .ok_or_else(|| broken(format!("no {} Deployment", bundle::OPERATOR)))
}

fn broken(problem: String) -> Error {
    Error::Bundle {
        file: DIR.into(),
        problem,
        source: None,
    }
}

fn yaml<T: serde::Serialize>(value: &T) -> Result<String> {
    infera_core::yaml::to_yaml(value).map_err(|e| Error::serialize("the Helm chart", "YAML", e))
}

fn chart_yaml() -> String {
    let version = env!("CARGO_PKG_VERSION");
    format!(
        "# Generated from the bundle `kubectl infera init` applies (make generate): do not edit.\n\
         apiVersion: v2\n\
         name: {NAME}\n\
         description: The Infera operator, which reconciles InferaDeployments (infera.amd.com/v1alpha1) into LLM inference graphs on AMD GPUs.\n\
         type: application\n\
         version: {version}\n\
         appVersion: \"{version}\"\n"
    )
}

/// The container of the operator Deployment.
fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

/// `values.yaml`: each value as the bundle has it, so the default render is the bundle.
fn values_yaml(deployment: &Value) -> Result<String> {
    let container = container(deployment);
    let image = container["image"].as_str().unwrap_or_default();
    let (repository, tag, digest) = match image.split_once('@') {
        Some((repository, digest)) => (repository, "", digest),
        None => match image.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, tag, ""),
            _ => (image, "", ""),
        },
    };
    let leader_elect = args(container).any(|a| a == "--leader-elect");
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let resources = indent(&yaml(&container["resources"])?, "  ");
    Ok(format!(
        "# Generated from the bundle `kubectl infera init` applies (make generate): do not edit.\n\
         # Install into infera-system, where kubectl infera looks for the operator:\n\
         #   helm install {NAME} <chart> -n infera-system --create-namespace\n\
         \n\
         # The operator image; a digest, when set, wins over the tag (a release sets it).\n\
         image:\n  repository: {repository}\n  tag: \"{tag}\"\n  digest: \"{digest}\"\n\
         \n\
         # Replicas of the operator; with leader election one of them reconciles at a time.\n\
         replicas: {replicas}\n\
         leaderElection: {leader_elect}\n\
         \n\
         resources:\n{resources}\
         \n\
         # Log format: json or text.\n\
         logFormat: {DEFAULT_LOG_FORMAT}\n\
         \n\
         # Reconcile the InferaDeployments of this namespace only (\"\": every namespace). The\n\
         # operator's RBAC stays cluster-wide, as with kubectl infera init.\n\
         watchNamespace: \"\"\n\
         \n\
         nodeSelector: {{}}\n\
         tolerations: []\n\
         \n\
         # A PodMonitor for the Prometheus Operator, scraping the operator's /metrics.\n\
         podMonitor:\n  enabled: false\n  interval: 30s\n"
    ))
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| format!("{prefix}{line}\n"))
        .collect()
}

fn args(container: &Value) -> impl Iterator<Item = &str> {
    container["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// One bundle object as a template.
fn template(object: &BundleObject) -> Result<String> {
    let mut value = serde_json::to_value(&object.object)
        .map_err(|e| Error::serialize(object.name(), "JSON", e))?;
    let is_operator = object.resource.kind == "Deployment" && object.name() == bundle::OPERATOR;
    let fills = if is_operator {
        deployment_fills(&value)
    } else {
        Vec::new()
    };
    if is_operator {
        value["spec"]["replicas"] = json!("@@replicas@@");
        let pod = &mut value["spec"]["template"]["spec"];
        pod["nodeSelector"] = json!("@@nodeSelector@@");
        pod["tolerations"] = json!("@@tolerations@@");
        let container = &mut pod["containers"][0];
        container["image"] = json!("@@image@@");
        container["args"] = json!("@@args@@");
        container["resources"] = json!("@@resources@@");
    }
    let mut text = yaml(&value)?;
    for (marker, fill) in &fills {
        text = replace_marker(&text, marker, fill)?;
    }
    Ok(text.replace(bundle::NAMESPACE, "{{ .Release.Namespace }}"))
}

/// The template text of each marker of the operator Deployment; `{indent}` is the marker line's
/// indentation.
fn deployment_fills(deployment: &Value) -> Vec<(&'static str, String)> {
    let mut block = String::from("{indent}args:\n");
    for arg in args(container(deployment)) {
        if arg == "--leader-elect" {
            block.push_str("{indent}  {{- if .Values.leaderElection }}\n{indent}  - --leader-elect\n{indent}  {{- end }}\n");
        } else {
            block.push_str(&format!("{{indent}}  - {}\n", serde_json::Value::from(arg)));
        }
    }
    block.push_str(&format!(
        "{{indent}}  {{{{- if ne .Values.logFormat \"{DEFAULT_LOG_FORMAT}\" }}}}\n\
         {{indent}}  - --log-format={{{{ .Values.logFormat }}}}\n\
         {{indent}}  {{{{- end }}}}\n\
         {{indent}}  {{{{- with .Values.watchNamespace }}}}\n\
         {{indent}}  - --namespace={{{{ . }}}}\n\
         {{indent}}  {{{{- end }}}}\n"
    ));
    let with = |key: &str| {
        format!(
            "{{indent}}{{{{- with .Values.{key} }}}}\n{{indent}}{key}:\n{{indent}}  {{{{- toYaml . | nindent {{nindent}} }}}}\n{{indent}}{{{{- end }}}}\n"
        )
    };
    vec![
        ("replicas", "{indent}replicas: {{ .Values.replicas }}\n".into()),
        (
            "image",
            "{indent}image: \"{{ .Values.image.repository }}{{ with .Values.image.digest }}@{{ . }}{{ else }}:{{ .Values.image.tag }}{{ end }}\"\n".into(),
        ),
        ("args", block),
        (
            "resources",
            "{indent}resources:\n{indent}  {{- toYaml .Values.resources | nindent {nindent} }}\n".into(),
        ),
        ("nodeSelector", with("nodeSelector")),
        ("tolerations", with("tolerations")),
    ]
}

/// Replaces the line holding `@@marker@@` (as `key: '@@marker@@'`) by `fill`, whose `{indent}` is
/// that line's indentation and `{nindent}` the indentation of the key's children.
fn replace_marker(text: &str, marker: &str, fill: &str) -> Result<String> {
    let needle = format!("@@{marker}@@");
    let mut out = String::with_capacity(text.len() + fill.len());
    let mut found = false;
    for line in text.lines() {
        if !line.contains(&needle) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        found = true;
        let key = line.trim_start();
        let mut indent = line[..line.len() - key.len()].to_string();
        // The first key of a list item ("- key:"): the dash stays, the key is indented past it.
        if key.starts_with("- ") {
            out.push_str(&indent);
            out.push_str("- ");
            indent.push_str("  ");
        }
        let filled = fill
            .replace("{indent}", &indent)
            .replace("{nindent}", &(indent.len() + 2).to_string());
        out.push_str(if key.starts_with("- ") {
            filled.trim_start()
        } else {
            &filled
        });
    }
    if found {
        Ok(out)
    } else {
        Err(broken(format!(
            "the operator Deployment has no {marker} to template"
        )))
    }
}

/// A PodMonitor for the Prometheus Operator, when `podMonitor.enabled`.
fn pod_monitor() -> String {
    let (key, value) = bundle::OPERATOR_PODS
        .split_once('=')
        .unwrap_or((bundle::OPERATOR_PODS, ""));
    let (part_of, infera) = bundle::PART_OF;
    format!(
        "{{{{- if .Values.podMonitor.enabled }}}}\n\
         apiVersion: monitoring.coreos.com/v1\n\
         kind: PodMonitor\n\
         metadata:\n  name: {operator}\n  namespace: {{{{ .Release.Namespace }}}}\n  labels:\n    {key}: {value}\n    {part_of}: {infera}\n\
         spec:\n  selector:\n    matchLabels:\n      {key}: {value}\n  podMetricsEndpoints:\n    - port: http\n      path: /metrics\n      interval: {{{{ .Values.podMonitor.interval }}}}\n\
         {{{{- end }}}}\n",
        operator = bundle::OPERATOR,
    )
}

/// The plugin (`init`, `doctor`, `status`) finds the operator in its namespace only: a release
/// elsewhere is refused before anything is installed.
fn namespace_check() -> String {
    let ns = bundle::NAMESPACE;
    format!(
        "{{{{- if ne .Release.Namespace \"{ns}\" }}}}\n\
         {{{{- fail \"install the {NAME} chart into the namespace {ns} (helm install {NAME} <chart> -n {ns} --create-namespace): kubectl infera looks for the operator there\" }}}}\n\
         {{{{- end }}}}\n"
    )
}

/// The chart's NOTES.txt: what to do next, and how to upgrade (the CRD first).
fn notes() -> String {
    let upgrade = infera_core::crd::helm_crd_upgrade("<new>");
    format!(
        "\
The Infera operator {{{{ .Chart.AppVersion }}}} is installed in {{{{ .Release.Namespace }}}}.
Check it, and the cluster it runs in:  kubectl infera doctor
Deploy a model:                       kubectl infera deploy
Upgrade: the new release's CRD first, since Helm never upgrades crds/:
  {upgrade}
then helm upgrade.
helm uninstall keeps the CRD and your InferaDeployments.
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_is_filled_and_the_namespace_is_the_releases() {
        let files = files().unwrap_or_default();
        let names: Vec<String> = files
            .iter()
            .map(|(path, _)| path.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "deploy/helm/infera-operator/Chart.yaml",
                "deploy/helm/infera-operator/values.yaml",
                "deploy/helm/infera-operator/crds/inferadeployments.infera.amd.com.yaml",
                "deploy/helm/infera-operator/templates/serviceaccount.yaml",
                "deploy/helm/infera-operator/templates/clusterrole.yaml",
                "deploy/helm/infera-operator/templates/clusterrolebinding.yaml",
                "deploy/helm/infera-operator/templates/leader-election.yaml",
                "deploy/helm/infera-operator/templates/api-server.yaml",
                "deploy/helm/infera-operator/templates/service.yaml",
                "deploy/helm/infera-operator/templates/deployment.yaml",
                "deploy/helm/infera-operator/templates/podmonitor.yaml",
                "deploy/helm/infera-operator/templates/namespace-check.yaml",
                "deploy/helm/infera-operator/templates/NOTES.txt",
            ]
        );
        for (path, text) in &files {
            assert!(!text.contains("@@"), "{}: a marker is left", path.display());
            if path.starts_with(Path::new(DIR).join("templates"))
                && !path.ends_with("namespace-check.yaml")
            {
                assert!(
                    !text.contains(bundle::NAMESPACE),
                    "{}: {} instead of the release's namespace",
                    path.display(),
                    bundle::NAMESPACE
                );
            }
        }
    }

    #[test]
    fn a_marker_line_becomes_its_template_at_its_indentation() {
        let text = "spec:\n  replicas: '@@r@@'\n  containers:\n  - name: x\n    args: '@@a@@'\n";
        let text = replace_marker(text, "r", "{indent}replicas: {{ .Values.replicas }}\n")
            .unwrap_or_default();
        let text = replace_marker(&text, "a", "{indent}args:\n{indent}  - {nindent}\n")
            .unwrap_or_default();
        assert_eq!(
            text,
            "spec:\n  replicas: {{ .Values.replicas }}\n  containers:\n  - name: x\n    args:\n      - 6\n"
        );
        assert!(replace_marker("a: b\n", "r", "").is_err());
    }

    #[test]
    fn the_default_values_are_the_bundles() {
        let objects = bundle::objects().unwrap_or_default();
        let deployment = operator(&objects).cloned().unwrap_or_default();
        let values: Value = serde_saphyr::from_str(&values_yaml(&deployment).unwrap_or_default())
            .unwrap_or_default();
        let (image, pinned) = bundle::operator_image().unwrap_or_default();
        let rendered = if pinned {
            format!(
                "{}@{}",
                values["image"]["repository"].as_str().unwrap_or_default(),
                values["image"]["digest"].as_str().unwrap_or_default()
            )
        } else {
            format!(
                "{}:{}",
                values["image"]["repository"].as_str().unwrap_or_default(),
                values["image"]["tag"].as_str().unwrap_or_default()
            )
        };
        assert_eq!(rendered, image);
        assert_eq!(values["replicas"], deployment["spec"]["replicas"]);
        assert_eq!(values["leaderElection"], true);
        assert_eq!(values["resources"], container(&deployment)["resources"]);
        assert_eq!(values["logFormat"], DEFAULT_LOG_FORMAT);
        assert_eq!(values["podMonitor"]["enabled"], false);
    }
}
