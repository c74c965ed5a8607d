//! Pod Security for what the operator runs itself — the managed NATS, the model download Job and
//! the Endpoint Picker: each passes the `restricted` profile of the Pod Security Standards
//! (kubernetes.io/docs/concepts/security/pod-security-standards, "Restricted"): not root, no
//! privilege escalation, every capability dropped, the runtime's default seccomp profile. Their
//! root filesystem is read-only too; what they write goes to their volume or to [`scratch`].
//!
//! The engines and the router run the user's `rocm/infera` image as it is built, as root
//! (upstream's `deploy/docker/Dockerfile.{sglang,vllm}` set no `USER`), with the GPU devices:
//! they are left as the image needs them; `docs/security.md` lists what each pod needs.

use k8s_openapi::api::core::v1::{
    Capabilities, EmptyDirVolumeSource, EnvVar, PodSecurityContext, SeccompProfile,
    SecurityContext, Volume, VolumeMount,
};

/// The user and group the restricted pods run as, and the group that owns their volumes (the
/// `nonroot` user of distroless images; no image we run names a user of its own).
pub const NON_ROOT: i64 = 65532;
/// Where a restricted container may write besides its volumes.
pub const SCRATCH_PATH: &str = "/tmp";
const SCRATCH_VOLUME: &str = "tmp";

/// The pod's half of `restricted`: non-root, RuntimeDefault seccomp, and volumes writable by
/// [`NON_ROOT`]'s group where the volume's driver supports `fsGroup` (block and CSI volumes do;
/// hostPath and NFS do not, and need a directory the user can write).
pub fn restricted_pod() -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(NON_ROOT),
        run_as_group: Some(NON_ROOT),
        fs_group: Some(NON_ROOT),
        fs_group_change_policy: Some("OnRootMismatch".into()),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The container's half of `restricted`, with a read-only root filesystem.
pub fn restricted_container() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Default::default()
        }),
        read_only_root_filesystem: Some(true),
        ..Default::default()
    }
}

/// An `emptyDir` at [`SCRATCH_PATH`] for a Python program on a read-only root.
pub struct Scratch {
    /// The pod's volume.
    pub volume: Volume,
    /// The container's mount of it.
    pub mount: VolumeMount,
    /// `HOME` and `HF_HOME` under it, where huggingface_hub caches and locks (huggingface_hub
    /// docs, package_reference/environment_variables, `HF_HOME`).
    pub env: [EnvVar; 2],
}

/// The [`Scratch`] volume.
pub fn scratch() -> Scratch {
    let env = |name: &str, value: String| EnvVar {
        name: name.into(),
        value: Some(value),
        ..Default::default()
    };
    Scratch {
        volume: Volume {
            name: SCRATCH_VOLUME.into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        },
        mount: VolumeMount {
            name: SCRATCH_VOLUME.into(),
            mount_path: SCRATCH_PATH.into(),
            ..Default::default()
        },
        env: [
            env("HOME", SCRATCH_PATH.into()),
            env("HF_HOME", format!("{SCRATCH_PATH}/huggingface")),
        ],
    }
}
