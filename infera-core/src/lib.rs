//! The InferaDeployment API and everything about it that needs no cluster: the CRD types,
//! validation into a [`ValidDeployment`], naming and labels, the injected engine flags, and the
//! pure rendering of a deployment into the child objects the operator applies.
//!
//! This crate has no client and no async runtime by construction: its dependency graph makes API
//! calls impossible, so everything here is a pure function and is tested as one.

#![deny(missing_docs)]

pub mod condition;
pub mod conflict;
pub mod crd;
pub mod dashboard;
pub mod external;
pub mod flags;
pub mod gpu_product;
pub mod hash;
pub mod history;
pub mod load;
pub mod lockstep;
pub mod metrics;
pub mod naming;
pub mod planner;
pub mod pod_health;
pub mod pod_security;
pub mod quota;
pub mod render;
pub mod replicas;
pub mod role;
pub mod types;
pub mod validate;
pub mod yaml;

pub use condition::{
    ALL_IMAGES_PINNED, DOWNLOAD_FAILED, DOWNLOADED, DOWNLOADING, IMAGES_PINNED, MODEL_READY,
    MUTABLE_IMAGES, PROGRESS_DEADLINE_EXCEEDED, PROGRESSING, READY, RECONCILE_FAILED,
    RECONCILE_SUCCEEDED, RECONCILED, ROLLING_OUT, ROLLOUT_BLOCKED, ROLLOUT_COMPLETE,
    ROLLOUT_PAUSED, ReadyReason,
};
pub use pod_health::PodHealth;
pub use render::{Child, ChildKind, Crd, render};
pub use types::*;
pub use validate::{FieldError, ValidDeployment, ValidationErrors, validate};
