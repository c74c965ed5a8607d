//! `spec.model`: where the weights come from (`pvc://`, `hostPath://`, `hf://`), where the
//! engines find them, and the engine's model flag it injects.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{
    Errors,
    limits::{MAX_PROBE_PATH_LENGTH, MAX_REFERENCE_LENGTH, check_length},
    syntax::check_quantity,
};
use crate::{
    flags,
    naming::MAX_DNS_SUBDOMAIN,
    types::{AccessMode, BackendFramework, ComponentType, InferaDeploymentSpec, ModelSpec},
};

/// Default `model.mountPath`.
pub const DEFAULT_MOUNT_PATH: &str = "/models";
/// Default key of `model.tokenSecretRef`: the variable huggingface_hub reads the token from.
pub const DEFAULT_TOKEN_KEY: &str = "HF_TOKEN";

/// `model.source` does not parse.
pub(super) const SOURCE_FORM: &str =
    "must be pvc://CLAIM[/SUBPATH], hostPath:///PATH or hf://ORG/NAME[@REVISION]; fix the source";
/// `cache` missing with `hf://`, or set with another source.
pub(super) const CACHE_WITH_HF: &str =
    "is required with an hf:// source and only allowed with one; add or remove model.cache";
/// `tokenSecretRef` or `downloadImage` with a source that downloads nothing.
pub(super) const HF_ONLY: &str =
    "tokenSecretRef and downloadImage are only used with an hf:// source; remove them";
/// The model flag in a worker's `args` while `spec.model` injects it.
pub(super) fn model_flag_in_args(flag: &str) -> String {
    format!("{flag} is injected from spec.model; remove it from args or remove spec.model")
}

/// Where the weights come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// An existing PersistentVolumeClaim, optionally a directory of it.
    Pvc {
        /// The claim's name.
        claim: String,
        /// The directory inside the volume, if not its root.
        sub_path: Option<String>,
    },
    /// A directory on every GPU node.
    HostPath {
        /// The absolute path.
        path: String,
    },
    /// A Hugging Face repository, downloaded by the operator's Job.
    HuggingFace {
        /// `ORG/NAME`.
        repo: String,
        /// A branch, tag or commit; `None`: the default branch.
        revision: Option<String>,
    },
}

/// `spec.model`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Where the weights come from.
    pub source: ModelSource,
    /// Where the engine containers find them.
    pub mount_path: String,
    /// `hf://`: the download volume's size.
    pub cache_size: Option<Quantity>,
    /// `hf://`: its StorageClass.
    pub storage_class_name: Option<String>,
    /// `hf://`: its access modes.
    pub access_modes: Vec<AccessMode>,
    /// `hf://`: the Secret and key holding the token.
    pub token: Option<(String, String)>,
    /// `hf://`: the download Job's image.
    pub download_image: String,
    /// `hf://`: whether the download Job has succeeded. Validation cannot know and says no; the
    /// operator sets it from the Job's status before rendering. Until then the GPU pools are
    /// rendered with zero replicas.
    pub downloaded: bool,
}

impl Model {
    /// Whether the GPU pools must wait for the download.
    pub fn holds_gpu_pools(&self) -> bool {
        matches!(self.source, ModelSource::HuggingFace { .. }) && !self.downloaded
    }
}

/// The flag that names the model, per engine (SGLang `--model-path`, vLLM `--model`).
pub fn model_flag(backend: BackendFramework) -> &'static str {
    match backend {
        BackendFramework::Sglang => flags::SGLANG_MODEL_FLAG,
        BackendFramework::Vllm => flags::VLLM_MODEL_FLAG,
    }
}

/// Parses `model.source` as [`super::limits::MODEL_SOURCE_PATTERN`] admits it.
pub fn parse_source(source: &str) -> Option<ModelSource> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let hf_name =
        |s: &str| s.starts_with(|c: char| c.is_ascii_alphanumeric()) && s.chars().all(name_char);
    if let Some(rest) = source.strip_prefix("pvc://") {
        let (claim, sub_path) = match rest.split_once('/') {
            Some((claim, sub_path)) => (claim, Some(sub_path)),
            None => (rest, None),
        };
        let claim_ok = claim.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && claim.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && claim
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'));
        let sub_path_ok = sub_path.is_none_or(|p| p.split('/').all(|segment| !segment.is_empty()));
        (claim_ok && sub_path_ok).then(|| ModelSource::Pvc {
            claim: claim.to_string(),
            sub_path: sub_path.map(String::from),
        })
    } else if let Some(path) = source.strip_prefix("hostPath://") {
        (path.starts_with('/') && path.chars().all(|c| c.is_ascii_graphic())).then(|| {
            ModelSource::HostPath {
                path: path.to_string(),
            }
        })
    } else if let Some(rest) = source.strip_prefix("hf://") {
        let (repo, revision) = match rest.split_once('@') {
            Some((repo, revision)) => (repo, Some(revision)),
            None => (rest, None),
        };
        let (org, name) = repo.split_once('/')?;
        let revision_ok = revision.is_none_or(|r| {
            !r.is_empty()
                && r.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        });
        (hf_name(org) && hf_name(name) && revision_ok).then(|| ModelSource::HuggingFace {
            repo: repo.to_string(),
            revision: revision.map(String::from),
        })
    } else {
        None
    }
}

/// Validates `spec.model` and the workers' args against it.
pub(super) fn model(errors: &mut Errors, spec: &InferaDeploymentSpec) -> Option<Model> {
    let model = spec.model.as_ref()?;
    let flag = model_flag(spec.backend_framework);
    for (service, svc) in &spec.services {
        if svc.component_type != ComponentType::Worker {
            continue;
        }
        for (i, arg) in svc.args.iter().enumerate() {
            if flags::flag_name(arg) == Some(flag) {
                errors.push(
                    format!("spec.services.{service}.args[{i}]"),
                    model_flag_in_args(flag),
                );
            }
        }
    }
    resolve(errors, "spec.model", model, spec.image.as_deref())
}

fn resolve(
    errors: &mut Errors,
    path: &str,
    model: &ModelSpec,
    image: Option<&str>,
) -> Option<Model> {
    check_length(
        errors,
        &format!("{path}.source"),
        &model.source,
        MAX_REFERENCE_LENGTH,
    );
    let source = parse_source(&model.source);
    if source.is_none() && !model.source.is_empty() {
        errors.push(format!("{path}.source"), SOURCE_FORM);
    }
    let hf = model.source.starts_with("hf://");
    if hf != model.cache.is_some() {
        errors.push(format!("{path}.cache"), CACHE_WITH_HF);
    }
    if !hf && (model.token_secret_ref.is_some() || model.download_image.is_some()) {
        errors.push(path, HF_ONLY);
    }
    let mount_path = model
        .mount_path
        .clone()
        .unwrap_or_else(|| DEFAULT_MOUNT_PATH.into());
    let mount_at = format!("{path}.mountPath");
    check_length(errors, &mount_at, &mount_path, MAX_PROBE_PATH_LENGTH);
    if !(mount_path.starts_with('/')
        && mount_path.chars().all(|c| c.is_ascii_graphic() && c != ':'))
    {
        errors.push(
            &mount_at,
            "must be an absolute path without ':', such as /models; fix the path",
        );
    }
    if let Some(cache) = &model.cache {
        check_quantity(errors, &format!("{path}.cache.size"), &cache.size);
        if let Some(class) = &cache.storage_class_name {
            check_length(
                errors,
                &format!("{path}.cache.storageClassName"),
                class,
                MAX_DNS_SUBDOMAIN,
            );
        }
    }
    if let Some(token) = &model.token_secret_ref {
        check_length(
            errors,
            &format!("{path}.tokenSecretRef.name"),
            &token.name,
            MAX_DNS_SUBDOMAIN,
        );
        if let Some(key) = &token.key {
            check_length(
                errors,
                &format!("{path}.tokenSecretRef.key"),
                key,
                MAX_DNS_SUBDOMAIN,
            );
        }
    }
    if let Some(image) = &model.download_image {
        check_length(
            errors,
            &format!("{path}.downloadImage"),
            image,
            MAX_REFERENCE_LENGTH,
        );
    }
    Some(Model {
        source: source?,
        mount_path,
        cache_size: model.cache.as_ref().map(|c| c.size.clone()),
        storage_class_name: model
            .cache
            .as_ref()
            .and_then(|c| c.storage_class_name.clone()),
        access_modes: model
            .cache
            .as_ref()
            .map(|c| c.access_modes.clone())
            .unwrap_or_default(),
        token: model.token_secret_ref.as_ref().map(|r| {
            (
                r.name.clone(),
                r.key.clone().unwrap_or_else(|| DEFAULT_TOKEN_KEY.into()),
            )
        }),
        download_image: model
            .download_image
            .clone()
            .or_else(|| image.map(String::from))
            .unwrap_or_default(),
        downloaded: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_as_the_schema_pattern_admits_them() {
        assert_eq!(
            parse_source("pvc://weights/qwen/Qwen3-0.6B"),
            Some(ModelSource::Pvc {
                claim: "weights".into(),
                sub_path: Some("qwen/Qwen3-0.6B".into())
            })
        );
        assert_eq!(
            parse_source("hostPath:///data/models"),
            Some(ModelSource::HostPath {
                path: "/data/models".into()
            })
        );
        assert_eq!(
            parse_source("hf://Qwen/Qwen3-0.6B@main"),
            Some(ModelSource::HuggingFace {
                repo: "Qwen/Qwen3-0.6B".into(),
                revision: Some("main".into())
            })
        );
        for bad in [
            "Qwen/Qwen3-0.6B",
            "pvc://",
            "pvc://Weights",
            "pvc://w//x",
            "pvc://w/",
            "hostPath://data",
            "hf://Qwen",
            "hf://Qwen/",
            "hf://Qwen/Qwen3@",
            "hf://-a/b",
            "s3://bucket/x",
        ] {
            assert_eq!(parse_source(bad), None, "{bad}");
        }
    }
}
