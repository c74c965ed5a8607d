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

/// The InferaDeployment CRD, stamped with this release's version; its descriptions are paragraphs
/// (see [`reflow`]).
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

/// Every description of `schema` and below, [`reflow`]ed.
fn reflow_schema(schema: &mut JSONSchemaProps) {
    if let Some(description) = schema.description.as_mut() {
        *description = reflow(description);
    }
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
