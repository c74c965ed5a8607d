//! The generated CustomResourceDefinition, as committed in `crds/`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube::CustomResourceExt;

use crate::types::InferaDeployment;

/// Annotation with the version of the Infera release that generated an object (CRD, bundle).
pub const VERSION_ANNOTATION: &str = "infera.amd.com/version";
/// This release.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where the releases' Helm chart is published (an OCI artifact beside the operator image;
/// .github/workflows/release.yml).
pub const CHART: &str = "oci://ghcr.io/amd/infera/charts/infera-operator";

/// The command that brings the CRD of a Helm install to release `version`: Helm installs a chart's
/// `crds/` once and never upgrades them. Helm v4 applies them server-side as field manager `helm`
/// (helm v4.3.2 pkg/action/install.go:208-210, cmd/helm/helm.go:36), which this keeps; it forces
/// because an install by Helm v3 (a client-side create) owns the fields under another operation.
pub fn helm_crd_upgrade(version: &str) -> String {
    format!(
        "helm show crds {CHART} --version {version} | kubectl apply --server-side --field-manager=helm --force-conflicts -f -"
    )
}

/// The InferaDeployment CRD, stamped with this release's version; its descriptions are paragraphs
/// (see [`reflow`]) and its optional enums list no null.
pub fn crd() -> CustomResourceDefinition {
    let mut crd = InferaDeployment::crd();
    for version in &mut crd.spec.versions {
        if let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            reflow_schema(schema);
        }
    }
    crd.metadata.annotations = Some([(VERSION_ANNOTATION.to_string(), VERSION.to_string())].into());
    crd.metadata.labels = Some(
        [(
            "app.kubernetes.io/part-of".to_string(),
            "infera".to_string(),
        )]
        .into(),
    );
    crd
}

/// Every description of `schema` and below [`reflow`]ed, and every optional enum listed without
/// its null (see [`without_null`]).
fn reflow_schema(schema: &mut JSONSchemaProps) {
    if let Some(description) = schema.description.as_mut() {
        *description = reflow(description);
    }
    without_null(schema);
    let mut children: Vec<&mut JSONSchemaProps> = Vec::new();
    children.extend(schema.properties.iter_mut().flat_map(|p| p.values_mut()));
    match schema.items.as_mut() {
        Some(JSONSchemaPropsOrArray::Schema(item)) => children.push(item),
        Some(JSONSchemaPropsOrArray::Schemas(items)) => children.extend(items.iter_mut()),
        None => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = schema.additional_properties.as_mut() {
        children.push(values);
    }
    for list in [&mut schema.all_of, &mut schema.any_of, &mut schema.one_of] {
        children.extend(list.iter_mut().flatten());
    }
    for child in children {
        reflow_schema(child);
    }
}

/// An optional enum's schema as the generator writes it lists `null` among its values and is
/// `nullable`, so `kubectl explain` shows `enum: kubernetes, etcd, <no value>`. Without both, the
/// API server prunes a null before validating (as for any field not `nullable`): a spec that
/// sends `null` reads as one that leaves the field out, as the operator reads it.
fn without_null(schema: &mut JSONSchemaProps) {
    if let Some(values) = schema.enum_.as_mut()
        && values.iter().any(|value| value.0.is_null())
    {
        values.retain(|value| !value.0.is_null());
        schema.nullable = None;
    }
}

/// A doc comment's hard-wrapped lines joined into paragraphs (blank lines kept), so `kubectl explain`
/// wraps them to the terminal instead of breaking sentences where the source did.
pub fn reflow(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The CRD as YAML, exactly as committed in `crds/inferadeployments.infera.amd.com.yaml`.
pub fn crd_yaml() -> Result<String, crate::yaml::YamlError> {
    crate::yaml::to_yaml(&crd())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_its_paragraphs_on_one_line_each() {
        assert_eq!(
            reflow("worker pools\n(aggregated or\n  prefill/decode).\n\nSecond\nparagraph."),
            "worker pools (aggregated or prefill/decode).\n\nSecond paragraph."
        );
        assert_eq!(reflow("one line"), "one line");
    }

    /// `kubectl explain` lists an optional enum's values without a null.
    #[test]
    fn no_enum_of_the_crd_lists_null() {
        let yaml = crd_yaml().expect("yaml");
        let value: serde_json::Value = serde_saphyr::from_str(&yaml).expect("the CRD parses");
        fn walk(value: &serde_json::Value, found: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    if let Some(values) = map.get("enum").and_then(|e| e.as_array())
                        && (values.iter().any(serde_json::Value::is_null)
                            || map.get("nullable").is_some())
                    {
                        found.push(format!("{values:?}"));
                    }
                    map.values().for_each(|v| walk(v, found));
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        walk(&value, &mut found);
        assert!(found.is_empty(), "enums with a null or nullable: {found:?}");
        assert!(yaml.contains("enum:\n                - kubernetes\n                - etcd\n                type: string"), "discoveryBackend");
    }

    /// No description of the generated CRD breaks a line inside a paragraph.
    #[test]
    fn the_crd_has_no_hard_wrapped_description() {
        let yaml = crd_yaml().expect("yaml");
        let value: serde_json::Value = serde_saphyr::from_str(&yaml).expect("the CRD parses");
        let mut wrapped = Vec::new();
        fn walk(value: &serde_json::Value, wrapped: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    for (key, value) in map {
                        match (key.as_str(), value.as_str()) {
                            ("description", Some(text))
                                if text.replace("\n\n", "").contains('\n') =>
                            {
                                wrapped.push(text.to_string())
                            }
                            _ => walk(value, wrapped),
                        }
                    }
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, wrapped)),
                _ => {}
            }
        }
        walk(&value, &mut wrapped);
        assert!(
            wrapped.is_empty(),
            "{} wrapped, e.g. {:?}",
            wrapped.len(),
            wrapped.first()
        );
    }
}
