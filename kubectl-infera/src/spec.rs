//! Where an InferaDeployment comes from, and the one validation every spec goes through.
//!
//! A spec has one [`Source`], chosen once from `deploy`'s arguments: a file (`-f`, also what
//! `render` and `doctor --for` read), flags alone ([`crate::plan`] turns them into a spec), or the
//! wizard ([`crate::wizard`] asks for the flags that are missing, then it is the flags path).
//! Whatever the source, the result is an [`InferaDeployment`] checked by [`validate`], infera-core's
//! rules, before anything is sent.

use std::{
    io::Read,
    path::{Path, PathBuf},
};

use infera_core::{InferaDeployment, ValidDeployment, validate::MutableImage};

use crate::{
    cli::SpecFlags,
    error::{Error, Result},
    plan,
};

/// Where `deploy`'s spec comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// `-f FILE` (`-` is stdin): every InferaDeployment in it, see [`read`].
    File(&'a Path),
    /// Spec flags that say enough on their own, see [`plan::resolve`].
    Flags(&'a SpecFlags),
    /// Spec flags that do not say enough, on a terminal: the wizard asks for the rest.
    Wizard(&'a SpecFlags),
}

impl<'a> Source<'a> {
    /// `-f` if given, else the flags when none is missing, else the wizard when it `can_ask` (a
    /// terminal, no `--no-interactive`). Without a terminal, the missing flags are a usage error.
    pub fn of(file: Option<&'a Path>, flags: &'a SpecFlags, can_ask: bool) -> Result<Self> {
        let missing = plan::missing(flags);
        match file {
            Some(path) => Ok(Self::File(path)),
            None if missing.is_empty() => Ok(Self::Flags(flags)),
            None if can_ask => Ok(Self::Wizard(flags)),
            None => Err(Error::Usage(format!(
                "missing {} — there is no terminal to ask on. Pass them, use -f FILE, or run on a terminal for the wizard \
                 (see `kubectl infera deploy --help`)",
                missing.join(", ")
            ))),
        }
    }
}

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

/// The warning `deploy` and `doctor --for` give for an image the spec names by a mutable tag.
pub fn mutable_image_warning(image: &MutableImage) -> String {
    format!(
        "{} {} is a mutable tag; pin it by digest (spec.imagePolicy.requireDigest makes this an error)",
        image.path, image.image
    )
}

/// A `gaie` block that stays off: `enabled` defaults to false, as upstream's, and a user who wrote
/// the block most likely meant it on.
pub fn gaie_off_warning(idep: &InferaDeployment) -> Option<String> {
    let gaie = idep.spec.gaie.as_ref()?;
    (gaie.enabled.is_none()).then(|| {
        "spec.gaie is set without enabled, so the Inference Gateway objects are not created (off by default, as upstream's); set spec.gaie.enabled: true, or false to say it is off".to_string()
    })
}

/// The [`Source::File`] source: every InferaDeployment of a file, with `namespace` filled in as
/// [`parse`] does. Not validated yet.
pub fn read(path: &Path, namespace: Option<&str>) -> Result<Vec<InferaDeployment>> {
    parse(path, &read_text(path)?, namespace)
}

/// Reads, parses and validates a file: each deployment with its validated form.
pub fn load(
    path: &Path,
    namespace: Option<&str>,
) -> Result<Vec<(InferaDeployment, ValidDeployment)>> {
    let deployments = read(path, namespace)?;
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
        _ => Err(Error::InvalidSpecs(invalid)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Backend;

    fn complete() -> SpecFlags {
        SpecFlags {
            name: Some("demo".into()),
            backend: Some(Backend::Vllm),
            model: Some("org/model".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_mutable_image_warning_names_the_field_and_the_fix() {
        let image = MutableImage {
            path: "spec.services.decode.image".into(),
            image: "rocm/infera:sglang-v0.1.1".into(),
        };
        assert_eq!(
            mutable_image_warning(&image),
            "spec.services.decode.image rocm/infera:sglang-v0.1.1 is a mutable tag; pin it by digest (spec.imagePolicy.requireDigest makes this an error)"
        );
    }

    #[test]
    fn a_gaie_block_without_enabled_is_warned_about() {
        let with = |gaie: serde_json::Value| -> InferaDeployment {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
                "metadata": {"name": "demo"}, "spec": {"gaie": gaie, "services": {}},
            }))
            .expect("a deployment")
        };
        let block = serde_json::json!({"gatewayName": "gw", "tokenizerPath": "t"});
        let warning = gaie_off_warning(&with(block.clone())).expect("a warning");
        assert!(warning.contains("set spec.gaie.enabled: true"), "{warning}");
        for enabled in [true, false] {
            let mut gaie = block.clone();
            gaie["enabled"] = enabled.into();
            assert_eq!(gaie_off_warning(&with(gaie)), None);
        }
        assert_eq!(gaie_off_warning(&with(serde_json::Value::Null)), None);
    }

    #[test]
    fn the_source_is_the_file_else_the_flags_else_the_wizard() {
        let file = Some(Path::new("pd.yaml"));
        let (flags, partial) = (complete(), SpecFlags::default());
        assert!(
            matches!(Source::of(file, &partial, false), Ok(Source::File(p)) if p == Path::new("pd.yaml"))
        );
        assert!(matches!(
            Source::of(None, &flags, true),
            Ok(Source::Flags(_))
        ));
        assert!(matches!(
            Source::of(None, &flags, false),
            Ok(Source::Flags(_))
        ));
        assert!(matches!(
            Source::of(None, &partial, true),
            Ok(Source::Wizard(_))
        ));
    }

    #[test]
    fn without_a_terminal_missing_flags_are_a_usage_error_naming_them() {
        let error = Source::of(None, &SpecFlags::default(), false).err();
        assert!(matches!(error, Some(Error::Usage(_))), "{error:?}");
        let message = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.starts_with(
                "missing --name, --backend sglang|vllm, --model — there is no terminal"
            ),
            "{message}"
        );
    }
}
