//! `kubectl infera render -f FILE`: every object the operator would create, offline.

use infera_core::{Child, ValidDeployment};

use crate::{
    cli::{ManifestOutput, RenderArgs},
    error::{Error, Result},
    printer::Printer,
    spec,
};

pub fn run(args: &RenderArgs, namespace: Option<&str>, printer: &Printer) -> Result<()> {
    let deployments = spec::load(&args.file, namespace)?;
    let valid: Vec<ValidDeployment> = deployments.into_iter().map(|(_, v)| v).collect();
    printer.out(&render_output(&valid, args.output)?);
    for deployment in &valid {
        if deployment
            .network_policy
            .as_ref()
            .is_some_and(|p| p.egress.is_some())
        {
            printer.note(&format!(
                "{}: the egress policy lacks the rule for the API server's endpoints, which the operator adds from EndpointSlice default/kubernetes",
                deployment.name
            ));
        }
    }
    Ok(())
}

/// The children of every deployment: a multi-document YAML stream, or a JSON `v1/List`.
pub fn render_output(deployments: &[ValidDeployment], output: ManifestOutput) -> Result<String> {
    let children: Vec<Child> = deployments.iter().flat_map(infera_core::render).collect();
    match output {
        ManifestOutput::Yaml => infera_core::yaml::to_yaml_stream(&children)
            .map_err(|e| Error::serialize("the rendered objects", "YAML", e)),
        ManifestOutput::Json => {
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": children});
            serde_json::to_string_pretty(&list)
                .map_err(|e| Error::serialize("the rendered objects", "JSON", e))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn example(name: &str) -> Vec<ValidDeployment> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples")
            .join(name);
        let loaded = spec::load(&path, None);
        assert!(loaded.is_ok(), "{name}: {:?}", loaded.err());
        loaded.into_iter().flatten().map(|(_, v)| v).collect()
    }

    #[test]
    fn pd_example_renders_every_child_as_one_yaml_stream() {
        let text = render_output(&example("pd.yaml"), ManifestOutput::Yaml).unwrap_or_default();
        assert!(text.starts_with("---\n"));
        // Parse the stream back: every document is an object with a kind and a name.
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&text).unwrap_or_default();
        let mut objects: Vec<String> = documents
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d["kind"].as_str().unwrap_or("?"),
                    d["metadata"]["name"].as_str().unwrap_or("?")
                )
            })
            .collect();
        objects.sort();
        insta::assert_snapshot!("pd_objects", objects.join("\n"));
    }

    #[test]
    fn json_output_is_one_list_document() {
        let text =
            render_output(&example("multinode.yaml"), ManifestOutput::Json).unwrap_or_default();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(value["kind"], "List");
        let kinds: Vec<&str> = value["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"LeaderWorkerSet"), "{kinds:?}");
    }

    #[test]
    fn invalid_spec_reports_every_error_with_its_path() {
        let text = "apiVersion: infera.amd.com/v1alpha1\nkind: InferaDeployment\nmetadata: {name: bad}\nspec:\n  backendFramework: sglang\n  discoveryBackend: etcd\n  services:\n    w: {componentType: worker, role: prefill}\n";
        let parsed = spec::parse(Path::new("bad.yaml"), text, None).unwrap_or_default();
        let error = spec::validate(&parsed[0])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        insta::assert_snapshot!("invalid_errors", error);
    }

    #[test]
    fn non_yaml_and_wrong_kind_get_clear_errors() {
        let err = |text: &str| {
            spec::parse(Path::new("x.yaml"), text, None)
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(
            err("kind: ConfigMap\napiVersion: v1\n").as_deref(),
            Some(
                "x.yaml: document 1: expected apiVersion: infera.amd.com/v1alpha1 and kind: InferaDeployment, found \"v1\" \"ConfigMap\""
            )
        );
        assert!(err("{{{ not yaml").is_some_and(|e| e.starts_with("x.yaml: not valid YAML")));
        let missing = spec::read_text(Path::new("/nonexistent/x.yaml"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            missing.as_deref(),
            Some("cannot read /nonexistent/x.yaml: No such file or directory (os error 2)")
        );
    }

    #[test]
    fn explicit_namespace_must_match_the_document() {
        let text = "apiVersion: infera.amd.com/v1alpha1\nkind: InferaDeployment\nmetadata: {name: a, namespace: x}\nspec: {backendFramework: vllm, services: {}}\n";
        let e = spec::parse(Path::new("a.yaml"), text, Some("y")).err();
        assert!(matches!(e, Some(Error::Usage(_))), "{e:?}");
    }
}
