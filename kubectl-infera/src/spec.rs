//! Reading InferaDeployment files and validating them with infera-core's rules, the same for
//! `render`, `deploy -f` and `doctor --for`.

use std::{
    io::Read,
    path::{Path, PathBuf},
};

use infera_core::{InferaDeployment, ValidDeployment};

use crate::error::{Error, Result};

/// The text of `path`, or of stdin for `-`.
pub fn read_text(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|source| Error::ReadFile {
                path: PathBuf::from("<stdin>"),
                source,
            })?;
        return Ok(text);
    }
    std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    })
}

/// Every InferaDeployment in a text, with `namespace` filled in where the document has none. A
/// document whose namespace differs from an explicit `-n` is an error, as in kubectl.
pub fn parse(path: &Path, text: &str, namespace: Option<&str>) -> Result<Vec<InferaDeployment>> {
    let mut deployments =
        infera_core::yaml::parse_deployments(text).map_err(|source| Error::Yaml {
            path: path.to_path_buf(),
            source,
        })?;
    if let Some(namespace) = namespace {
        for idep in &mut deployments {
            match &idep.metadata.namespace {
                Some(ns) if ns != namespace => {
                    return Err(Error::Usage(format!(
                        "{}: the namespace of {:?} is {ns:?}, which does not match -n {namespace:?}; remove one of them",
                        path.display(),
                        idep.metadata.name.as_deref().unwrap_or_default()
                    )));
                }
                _ => idep.metadata.namespace = Some(namespace.to_string()),
            }
        }
    }
    Ok(deployments)
}

/// Validates one deployment; every broken rule at once.
pub fn validate(idep: &InferaDeployment) -> Result<ValidDeployment> {
    infera_core::validate(idep).map_err(|errors| Error::Invalid {
        name: idep
            .metadata
            .name
            .clone()
            .unwrap_or_else(|| "<unnamed>".into()),
        errors,
    })
}

/// Reads, parses and validates a file: each deployment with its validated form.
pub fn load(
    path: &Path,
    namespace: Option<&str>,
) -> Result<Vec<(InferaDeployment, ValidDeployment)>> {
    let text = read_text(path)?;
    let deployments = parse(path, &text, namespace)?;
    let mut valid = Vec::new();
    let mut invalid: Vec<Error> = Vec::new();
    for idep in deployments {
        match validate(&idep) {
            Ok(v) => valid.push((idep, v)),
            Err(e) => invalid.push(e),
        }
    }
    match invalid.len() {
        0 => Ok(valid),
        1 => Err(invalid.remove(0)),
        _ => Err(Error::Failed(
            invalid
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        )),
    }
}
