//! `spec.model`: the weights' volume in the worker pods and, for `hf://`, the volume the
//! operator creates and the Job that downloads into it.
//!
//! The Job runs huggingface_hub's CLI, `hf download ORG/NAME [--revision REV] --local-dir DIR`
//! (huggingface_hub docs, guides/cli, "hf download"; the token comes from `HF_TOKEN`, guides/cli
//! "Download with token" and package_reference/environment_variables). Downloading into a local
//! directory keeps metadata under `DIR/.cache/huggingface/`, so a re-run (the Job's retry, or a
//! new Job on the kept volume) skips the files it already has (guides/download, "Download files
//! to a local folder"). That metadata is one file per downloaded file,
//! `DIR/.cache/huggingface/download/<file>.metadata`, whose first line is the commit the file was
//! downloaded at (huggingface_hub src/huggingface_hub/_local_folder.py,
//! `write_download_metadata`): the Job writes the first line of the newest one to its container's
//! termination message, which the operator reports as the resolved revision.

use k8s_openapi::api::{
    batch::v1::{Job, JobSpec},
    core::v1::{
        Container, EnvVar, EnvVarSource, HostPathVolumeSource, PersistentVolumeClaim,
        PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec,
        SecretKeySelector, Volume, VolumeMount, VolumeResourceRequirements,
    },
};

use super::{Child, Context, meta, pull_policy, security};
use crate::{
    naming::{Component, MODEL_SOURCE_ANNOTATION, MODEL_VOLUME},
    types::AccessMode,
    validate::{Model, ModelSource, ValidDeployment},
};

/// Container of the download Job.
const DOWNLOAD_CONTAINER: &str = "download";
/// The download Job's script: `$1` is the directory, the rest `hf download`'s arguments. After
/// the download, the commit it got goes to the termination message (see the module's doc); a
/// download without metadata still succeeds, without a resolved revision.
const DOWNLOAD_SCRIPT: &str = r#"dir="$1"; shift
hf download "$@" --local-dir "$dir" || exit
newest=$(ls -t "$dir"/.cache/huggingface/download/*.metadata 2>/dev/null | head -n 1)
[ -z "$newest" ] || head -n 1 "$newest" > /dev/termination-log
exit 0"#;
/// Tries of the download before the Job fails (Kubernetes' default `backoffLimit`).
const DOWNLOAD_RETRIES: i32 = 6;

/// The `hf://` model's PersistentVolumeClaim and download Job, both named
/// [`Model::download_name`]; nothing for the other sources.
pub fn download(cx: &Context<'_>, model: &Model) -> Vec<Child> {
    let ModelSource::HuggingFace { repo, revision } = &model.source else {
        return Vec::new();
    };
    let d = cx.deployment;
    let name = model.download_name.clone();
    let claim = claim(d, model, &name);
    let mut command = vec![
        "sh".to_string(),
        "-c".into(),
        DOWNLOAD_SCRIPT.into(),
        "hf-download".into(),
        model.mount_path.clone(),
        repo.clone(),
    ];
    if let Some(revision) = revision {
        command.extend(["--revision".into(), revision.clone()]);
    }
    let scratch = security::scratch();
    let mut env = scratch.env.to_vec();
    env.extend(model.token.as_ref().map(|(secret, key)| EnvVar {
        name: "HF_TOKEN".into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.clone(),
                key: key.clone(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }));
    let mut job_meta = meta::object_meta(d, Component::Model, name.clone());
    job_meta.annotations =
        Some([(MODEL_SOURCE_ANNOTATION.into(), model.source.to_string())].into());
    let job = Job {
        metadata: job_meta,
        spec: Some(JobSpec {
            backoff_limit: Some(DOWNLOAD_RETRIES),
            template: PodTemplateSpec {
                metadata: Some(meta::pod_meta(d, Component::Model)),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    automount_service_account_token: Some(false),
                    security_context: Some(security::restricted_pod()),
                    containers: vec![Container {
                        name: DOWNLOAD_CONTAINER.into(),
                        image: Some(model.download_image.clone()),
                        image_pull_policy: pull_policy(&model.download_image),
                        command: Some(command),
                        env: Some(env),
                        volume_mounts: Some(vec![
                            VolumeMount {
                                name: MODEL_VOLUME.into(),
                                mount_path: model.mount_path.clone(),
                                ..Default::default()
                            },
                            scratch.mount,
                        ]),
                        security_context: Some(security::restricted_container()),
                        ..Default::default()
                    }],
                    volumes: Some(vec![
                        scratch.volume,
                        Volume {
                            name: MODEL_VOLUME.into(),
                            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                                claim_name: name,
                                read_only: None,
                            }),
                            ..Default::default()
                        },
                    ]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    };
    vec![Child::PersistentVolumeClaim(claim), Child::Job(job)]
}

/// The download's volume: `model.accessModes` (ReadWriteMany unless set), its storage class
/// and `model.cacheSize`.
fn claim(d: &ValidDeployment, model: &Model, name: &str) -> PersistentVolumeClaim {
    let access_modes = if model.access_modes.is_empty() {
        vec!["ReadWriteMany".to_string()]
    } else {
        model.access_modes.iter().map(access_mode).collect()
    };
    PersistentVolumeClaim {
        metadata: meta::object_meta(d, Component::Model, name.to_string()),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(access_modes),
            storage_class_name: model.storage_class_name.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: model
                    .cache_size
                    .clone()
                    .map(|size| [("storage".to_string(), size)].into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The weights' volume in a worker pod (read-only) and its mount in the engine container.
pub fn volume(model: &Model) -> (Volume, VolumeMount) {
    let claim = |claim_name: String| Volume {
        name: MODEL_VOLUME.into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name,
            read_only: Some(true),
        }),
        ..Default::default()
    };
    let (volume, sub_path) = match &model.source {
        ModelSource::Pvc {
            claim: name,
            sub_path,
        } => (claim(name.clone()), sub_path.clone()),
        ModelSource::HuggingFace { .. } => (claim(model.download_name.clone()), None),
        ModelSource::HostPath { path } => (
            Volume {
                name: MODEL_VOLUME.into(),
                host_path: Some(HostPathVolumeSource {
                    path: path.clone(),
                    type_: Some("Directory".into()),
                }),
                ..Default::default()
            },
            None,
        ),
    };
    let mount = VolumeMount {
        name: MODEL_VOLUME.into(),
        mount_path: model.mount_path.clone(),
        sub_path,
        read_only: Some(true),
        ..Default::default()
    };
    (volume, mount)
}

/// The claim's spelling of an access mode.
fn access_mode(mode: &AccessMode) -> String {
    match mode {
        AccessMode::ReadWriteOnce => "ReadWriteOnce",
        AccessMode::ReadOnlyMany => "ReadOnlyMany",
        AccessMode::ReadWriteMany => "ReadWriteMany",
        AccessMode::ReadWriteOncePod => "ReadWriteOncePod",
    }
    .into()
}

/// Replicas of a GPU pool: none while an `hf://` download is not done.
pub fn gpu_replicas(model: Option<&Model>, replicas: i32) -> i32 {
    if model.is_some_and(Model::holds_gpu_pools) {
        0
    } else {
        replicas
    }
}
