//! `spec.model` and a worker's own `model`: where the weights come from (`pvc://`,
//! `hostPath://`, `hf://`), where the engines find them, and the engine's model flag it injects.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::rules::{CACHE_WITH_HF, HF_ONLY, MODEL_VOLUME_OURS, SERVER_MODEL};
use super::{
    Errors,
    limits::{MAX_PROBE_PATH_LENGTH, MAX_REFERENCE_LENGTH},
    syntax::{check_length, check_quantity},
};
use crate::{
    flags,
    naming::{Component, ENGINE_CONTAINER, MAX_DNS_SUBDOMAIN, MODEL_VOLUME},
    types::{
        AccessMode, BackendFramework, ComponentType, InferaDeploymentSpec, ModelSpec,
        PodTemplateOverlay,
    },
};

/// Default `model.mountPath`.
pub const DEFAULT_MOUNT_PATH: &str = "/models";
/// Default key of `model.tokenSecretRef`: the variable huggingface_hub reads the token from.
pub const DEFAULT_TOKEN_KEY: &str = "HF_TOKEN";

/// `model.source` does not parse.
pub(super) const SOURCE_FORM: &str =
    "must be pvc://CLAIM[/SUBPATH], hostPath:///PATH or hf://ORG/NAME[@REVISION]; fix the source";
/// The model flag in a worker's `args` while its model (`from`) injects it.
pub(super) fn model_flag_in_args(flag: &str, from: &str) -> String {
    format!("{flag} is injected from {from}; remove it from args or remove {from}")
}

/// A `podTemplate` mount of the engine container at the model's mount path.
pub(super) const MODEL_MOUNT_OURS: &str = "the engine container's mount at the model's mountPath is the operator's (the model weights); mount at another path or change model.mountPath";

/// Checks that no `podTemplate` that reaches a worker with a model adds a volume named like the
/// model's, or mounts into the engine container where the weights are mounted: the pod would be
/// refused by the API server (duplicate volume name or mount path). `models` are the workers'.
pub(super) fn overlay_collisions(
    errors: &mut Errors,
    spec: &InferaDeploymentSpec,
    models: &BTreeMap<String, Model>,
) {
    let mut check = |path: &str, overlay: Option<&PodTemplateOverlay>, mount_paths: Vec<&str>| {
        let Some(overlay) = overlay.and_then(|o| o.spec.as_ref()) else {
            return;
        };
        if mount_paths.is_empty() {
            return;
        }
        if overlay.volumes.iter().any(|v| v.name == MODEL_VOLUME) {
            errors.push(format!("{path}.spec.volumes"), MODEL_VOLUME_OURS);
        }
        let mut taken: Vec<&str> = overlay
            .containers
            .iter()
            .filter(|c| c.name == ENGINE_CONTAINER)
            .flat_map(|c| c.volume_mounts.iter().flatten())
            .map(|m| m.mount_path.as_str())
            .filter(|mount| mount_paths.contains(mount))
            .collect();
        taken.dedup();
        if !taken.is_empty() {
            errors.push(
                format!("{path}.spec.containers"),
                format!("{MODEL_MOUNT_OURS} (now {})", taken.join(", ")),
            );
        }
    };
    // Every model's mount path, `spec.model`'s even when each pool has its own (as the CRD's
    // rule, which cannot tell, has it).
    let deployment_mount = spec
        .model
        .as_ref()
        .map(|m| m.mount_path.as_deref().unwrap_or(DEFAULT_MOUNT_PATH));
    let mut every_model: Vec<&str> = models.values().map(|m| m.mount_path.as_str()).collect();
    every_model.extend(deployment_mount);
    check("spec.podTemplate", spec.pod_template.as_ref(), every_model);
    for (service, model) in models {
        let overlay = spec
            .services
            .get(service)
            .and_then(|s| s.pod_template.as_deref());
        check(
            &format!("spec.services.{service}.podTemplate"),
            overlay,
            vec![model.mount_path.as_str()],
        );
    }
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

impl std::fmt::Display for ModelSource {
    /// The source as `model.source` spells it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pvc { claim, sub_path } => {
                write!(f, "pvc://{claim}")?;
                sub_path.iter().try_for_each(|p| write!(f, "/{p}"))
            }
            Self::HostPath { path } => write!(f, "hostPath://{path}"),
            Self::HuggingFace { repo, revision } => {
                write!(f, "hf://{repo}")?;
                revision.iter().try_for_each(|r| write!(f, "@{r}"))
            }
        }
    }
}

/// A worker's model (its own `model`, else `spec.model`), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Where the weights come from.
    pub source: ModelSource,
    /// `hf://`: name of the PersistentVolumeClaim and the download Job, `<deployment>-model` for
    /// `spec.model` and `<deployment>-<service>-model` for a worker's own.
    pub download_name: String,
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

/// Validates `spec.model` and every service's `model`, and the workers' args against them: the
/// model of each worker by service name (none for a worker without any).
pub(super) fn models(
    errors: &mut Errors,
    deployment: &str,
    spec: &InferaDeploymentSpec,
) -> BTreeMap<String, Model> {
    let image = spec.image.as_deref();
    let shared = spec.model.as_ref().and_then(|model| {
        let download_name = Component::Model.object_name(deployment);
        resolve(errors, "spec.model", model, image, download_name)
    });
    let flag = model_flag(spec.backend_framework);
    let mut models = BTreeMap::new();
    for (service, svc) in &spec.services {
        let path = format!("spec.services.{service}.model");
        if svc.component_type != ComponentType::Worker {
            if svc.model.is_some() {
                errors.push(path, SERVER_MODEL);
            }
            continue;
        }
        let (model, from) = match &svc.model {
            Some(own) => {
                let download_name =
                    format!("{deployment}-{service}-{}", Component::Model.service());
                let image = svc.image.as_deref().or(image);
                (resolve(errors, &path, own, image, download_name), path)
            }
            None if spec.model.is_some() => (shared.clone(), "spec.model".to_string()),
            None => continue,
        };
        for (i, arg) in svc.args.iter().enumerate() {
            if flags::flag_name(arg) == Some(flag) {
                errors.push(
                    format!("spec.services.{service}.args[{i}]"),
                    model_flag_in_args(flag, &from),
                );
            }
        }
        if let Some(model) = model {
            models.insert(service.clone(), model);
        }
    }
    models
}

fn resolve(
    errors: &mut Errors,
    path: &str,
    model: &ModelSpec,
    image: Option<&str>,
    download_name: String,
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
    check_download_settings(errors, path, model);
    Some(Model {
        source: source?,
        download_name,
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

/// The download's own settings: the cache's size (a quantity) and class, the token's Secret,
/// the download image, each within its limit.
fn check_download_settings(errors: &mut Errors, path: &str, model: &ModelSpec) {
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
        for source in [
            "pvc://weights",
            "pvc://weights/qwen/Qwen3-0.6B",
            "hostPath:///data/models",
            "hf://Qwen/Qwen3-0.6B",
            "hf://Qwen/Qwen3-0.6B@refs/pr/1",
        ] {
            let parsed = parse_source(source).map(|s| s.to_string());
            assert_eq!(parsed.as_deref(), Some(source));
        }
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
