//! A worker pool's role (`spec.services.*.role`), in a room of its own: the names and labels of
//! [`crate::naming`] read it, and the spec types re-export it, so neither reaches the other.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Worker role.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    #[default]
    Mixed,
    Prefill,
    Decode,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Mixed => "mixed",
            Self::Prefill => "prefill",
            Self::Decode => "decode",
        })
    }
}
