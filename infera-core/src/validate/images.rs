//! Image policy: the images a spec names, which of them are pinned by digest, and the rule of
//! `imagePolicy.requireDigest` that every one is. The operator-created NATS and Endpoint Picker
//! defaults are Infera's own, not the spec's, and are not counted.

use std::fmt;

use super::Errors;
use super::rules::UNPINNED;
use crate::types::{InferaDeployment, InferaDeploymentSpec};

/// An image the spec names by a mutable tag (or by no tag at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutableImage {
    /// The field that names it, e.g. `spec.services.decode.image`.
    pub path: String,
    /// The image as written.
    pub image: String,
}

impl fmt::Display for MutableImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.image)
    }
}

/// Whether `image` is pinned by digest: `name@sha256:` followed by 64 lowercase hex digits
/// ([`DIGEST_PATTERN`](super::DIGEST_PATTERN)). A tag before the digest (`name:tag@sha256:…`) is allowed; the digest wins.
pub fn is_pinned(image: &str) -> bool {
    let Some((name, digest)) = image.split_once('@') else {
        return false;
    };
    let hex = digest.strip_prefix("sha256:").unwrap_or_default();
    !name.is_empty()
        && hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Every image the spec names with its field path, in spec order: `spec.image`, each service's
/// `image`, `spec.gaie.eppImage`.
fn named(spec: &InferaDeploymentSpec) -> Vec<(String, &str)> {
    let services = spec.services.iter().filter_map(|(name, svc)| {
        let image = svc.image.as_deref()?;
        Some((format!("spec.services.{name}.image"), image))
    });
    let gaie = spec.gaie.as_ref().and_then(|g| g.epp_image.as_deref());
    spec.image
        .as_deref()
        .map(|image| ("spec.image".to_string(), image))
        .into_iter()
        .chain(services)
        .chain(gaie.map(|image| ("spec.gaie.eppImage".to_string(), image)))
        .collect()
}

/// The images `idep` names that are not pinned by digest, with their field paths, in spec order.
pub fn mutable_images(idep: &InferaDeployment) -> Vec<MutableImage> {
    named(&idep.spec)
        .into_iter()
        .filter(|(_, image)| !is_pinned(image))
        .map(|(path, image)| MutableImage {
            path,
            image: image.to_string(),
        })
        .collect()
}

/// With `imagePolicy.requireDigest`, every image the spec names is pinned by digest.
pub(super) fn require_digest(errors: &mut Errors, spec: &InferaDeploymentSpec) {
    if !spec.image_policy.as_ref().is_some_and(|p| p.require_digest) {
        return;
    }
    for (path, image) in named(spec) {
        if !is_pinned(image) {
            errors.push(path, UNPINNED);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    const DIGEST: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn deployment(spec: serde_json::Value) -> InferaDeployment {
        serde_json::from_value(json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "demo"}, "spec": spec,
        }))
        .expect("a deployment")
    }

    /// A spec naming an image in every place one can be named.
    fn everywhere(policy: serde_json::Value) -> InferaDeployment {
        deployment(json!({
            "backendFramework": "sglang",
            "image": "rocm/infera:sglang-v0.1.1",
            "imagePolicy": policy,
            "gaie": {"enabled": true, "gatewayName": "gw", "eppImage": "epp"},
            "services": {
                "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
                "decode": {"componentType": "worker", "image": format!("rocm/infera@sha256:{DIGEST}")},
                "prefill": {"componentType": "worker", "image": "rocm/infera:latest"},
            },
        }))
    }

    #[test]
    fn pinned_images_carry_a_sha256_digest() {
        for pinned in [
            format!("rocm/infera@sha256:{DIGEST}"),
            format!("registry.example:5000/rocm/infera:v1@sha256:{DIGEST}"),
        ] {
            assert!(is_pinned(&pinned), "{pinned}");
        }
        for mutable in [
            "rocm/infera".to_string(),
            "rocm/infera:latest".to_string(),
            format!("@sha256:{DIGEST}"),
            format!("rocm/infera@sha256:{}", DIGEST.to_uppercase()),
            format!("rocm/infera@sha256:{}", &DIGEST[1..]),
            format!("rocm/infera@sha256:{DIGEST}0"),
            format!("rocm/infera@sha512:{DIGEST}"),
            format!("rocm/infera@sha256:{DIGEST}@sha256:{DIGEST}"),
        ] {
            assert!(!is_pinned(&mutable), "{mutable}");
        }
    }

    #[test]
    fn mutable_images_are_listed_with_their_paths_in_spec_order() {
        let found: Vec<String> = mutable_images(&everywhere(json!({})))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "spec.image rocm/infera:sglang-v0.1.1",
                "spec.services.prefill.image rocm/infera:latest",
                "spec.gaie.eppImage epp",
            ]
        );
    }

    #[test]
    fn a_spec_without_images_has_none_to_list() {
        let idep = deployment(json!({"backendFramework": "vllm", "services": {}}));
        assert_eq!(mutable_images(&idep), []);
    }

    #[test]
    fn require_digest_refuses_every_mutable_image() {
        let idep = everywhere(json!({"requireDigest": true}));
        let message = "must be pinned by digest because imagePolicy.requireDigest is true; pin it by digest, e.g. rocm/infera@sha256:<64 hex>; find it with `crane digest IMAGE` or your registry";
        assert_eq!(
            found(|e| require_digest(e, &idep.spec)),
            [
                format!("spec.image: {message}"),
                format!("spec.services.prefill.image: {message}"),
                format!("spec.gaie.eppImage: {message}"),
            ]
        );
    }

    #[test]
    fn without_require_digest_mutable_images_are_allowed() {
        for policy in [json!({}), json!({"requireDigest": false})] {
            let idep = everywhere(policy);
            assert_eq!(found(|e| require_digest(e, &idep.spec)), [] as [String; 0]);
        }
        let mut idep = everywhere(json!({}));
        idep.spec.image_policy = None;
        assert_eq!(found(|e| require_digest(e, &idep.spec)), [] as [String; 0]);
    }

    #[test]
    fn require_digest_accepts_pinned_images() {
        let pinned = format!("rocm/infera@sha256:{DIGEST}");
        let idep = deployment(json!({
            "backendFramework": "sglang",
            "image": pinned,
            "imagePolicy": {"requireDigest": true},
            "gaie": {"enabled": true, "gatewayName": "gw", "eppImage": pinned},
            "services": {"server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}, "decode": {"componentType": "worker", "image": pinned}},
        }));
        assert_eq!(found(|e| require_digest(e, &idep.spec)), [] as [String; 0]);
        assert_eq!(mutable_images(&idep), []);
    }
}
