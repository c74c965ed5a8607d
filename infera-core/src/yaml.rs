//! Reading and writing Kubernetes YAML (one YAML stack: serde-saphyr, as kube itself uses).

use serde::{Serialize, de::DeserializeOwned};

use crate::types::InferaDeployment;

/// YAML that could not be read or written, with where and why.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The text is not YAML (or JSON) at all.
    #[error("not valid YAML: {0}")]
    Syntax(String),
    /// A document is YAML but not an InferaDeployment the API accepts.
    #[error("document {document}: {message}")]
    Shape {
        /// 1-based position of the document in the stream.
        document: usize,
        /// What is wrong, with the field path.
        message: String,
    },
    /// A value could not be serialized.
    #[error("cannot write YAML: {0}")]
    Write(String),
}

/// Every InferaDeployment in a (multi-document) YAML or JSON text. Empty documents are skipped;
/// any other kind, and any field the API does not know, is an error that names the path.
pub fn parse_deployments(text: &str) -> Result<Vec<InferaDeployment>, YamlError> {
    let documents: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| YamlError::Syntax(e.to_string()))?;
    let mut deployments = Vec::new();
    for (index, value) in documents
        .into_iter()
        .enumerate()
        .filter(|(_, v)| !v.is_null())
    {
        let document = index + 1;
        let shape = |message: String| YamlError::Shape { document, message };
        let api_version = value
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let kind = value
            .get("kind")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        if (api_version, kind) != ("infera.amd.com/v1alpha1", "InferaDeployment") {
            return Err(shape(format!(
                "expected apiVersion: infera.amd.com/v1alpha1 and kind: InferaDeployment, found {:?} {:?}",
                api_version, kind
            )));
        }
        let unknown = unknown_fields::<InferaDeployment>(&value);
        if let Some(path) = unknown.first() {
            return Err(shape(format!(
                "{path}: unknown field; remove it or fix its spelling (kubectl explain idep.spec)"
            )));
        }
        deployments.push(from_value(value).map_err(shape)?);
    }
    if deployments.is_empty() {
        return Err(YamlError::Shape {
            document: 1,
            message: "no InferaDeployment found".into(),
        });
    }
    Ok(deployments)
}

/// Deserializes a JSON value, naming the path of the first field that does not fit.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })
}

/// Paths of the fields in `value` that `T` does not have. The CRD types themselves accept unknown
/// fields, so an operator keeps working with objects written for a newer CRD; users writing a spec
/// get told about typos instead.
fn unknown_fields<T: DeserializeOwned>(value: &serde_json::Value) -> Vec<String> {
    let mut unknown = Vec::new();
    let _: Result<T, _> =
        serde_ignored::deserialize(value.clone(), |path| unknown.push(path.to_string()));
    // The root's type metadata is read by kube's own deserializer, which serde_ignored cannot see.
    unknown.retain(|path| path != "apiVersion" && path != "kind");
    unknown
}

/// One object as YAML.
pub fn to_yaml<T: Serialize>(object: &T) -> Result<String, YamlError> {
    serde_saphyr::to_string(object).map_err(|e| YamlError::Write(e.to_string()))
}

/// Objects as one multi-document YAML stream, each document starting with `---`.
pub fn to_yaml_stream<T: Serialize>(objects: &[T]) -> Result<String, YamlError> {
    let mut out = String::new();
    for object in objects {
        out.push_str("---\n");
        out.push_str(&to_yaml(object)?);
    }
    Ok(out)
}
