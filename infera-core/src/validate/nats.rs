//! The KV-event plane: an operator-managed NATS with a volume size, or an external NATS with a
//! URL, never both.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{
    DEFAULT_NATS_STORAGE, Errors, Nats,
    limits::{MAX_REFERENCE_LENGTH, check_length},
    syntax::check_quantity,
};
use crate::types::NatsSpec;

/// The KV-event plane `spec.nats` asks for (none where it is wrong).
pub(super) fn plane(errors: &mut Errors, nats: Option<&NatsSpec>) -> Nats {
    let Some(nats) = nats else {
        return Nats::None;
    };
    if nats.deploy {
        if nats.url.is_some() {
            errors.push(
                "spec.nats.url",
                "is only used when deploy is false; remove it or set deploy: false",
            );
        }
        let storage = nats
            .storage_size
            .clone()
            .unwrap_or_else(|| Quantity(DEFAULT_NATS_STORAGE.into()));
        check_quantity(errors, "spec.nats.storageSize", &storage);
        return Nats::Managed { storage };
    }
    if nats.storage_size.is_some() {
        errors.push(
            "spec.nats.storageSize",
            "is only used when deploy is true; remove it or set deploy: true",
        );
    }
    let Some(url) = &nats.url else {
        errors.push(
            "spec.nats.url",
            "is required when deploy is false; set the URL of your NATS, or set deploy: true",
        );
        return Nats::None;
    };
    check_length(errors, "spec.nats.url", url, MAX_REFERENCE_LENGTH);
    Nats::External { url: url.clone() }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn nats_of(json: serde_json::Value) -> (Nats, Vec<String>) {
        let spec: NatsSpec = serde_json::from_value(json).expect("a nats spec");
        let mut built = Nats::None;
        let errors = found(|e| built = plane(e, Some(&spec)));
        (built, errors)
    }

    #[test]
    fn no_nats() {
        assert!(found(|e| assert_eq!(plane(e, None), Nats::None)).is_empty());
    }

    #[test]
    fn managed_with_the_default_or_a_given_size() {
        assert_eq!(
            nats_of(json!({"deploy": true})),
            (
                Nats::Managed {
                    storage: Quantity("1Gi".into())
                },
                vec![]
            )
        );
        assert_eq!(
            nats_of(json!({"deploy": true, "storageSize": "4Gi"})),
            (
                Nats::Managed {
                    storage: Quantity("4Gi".into())
                },
                vec![]
            )
        );
    }

    #[test]
    fn managed_with_a_bad_size() {
        assert_eq!(
            nats_of(json!({"deploy": true, "storageSize": "4 GB"})).1,
            [
                r#"spec.nats.storageSize: "4 GB" is not a size; write a non-negative quantity like 64Gi or 500m"#
            ]
        );
    }

    #[test]
    fn managed_with_a_url() {
        assert_eq!(
            nats_of(json!({"deploy": true, "url": "nats://x:4222"})).1,
            ["spec.nats.url: is only used when deploy is false; remove it or set deploy: false"]
        );
    }

    #[test]
    fn external_with_a_url() {
        assert_eq!(
            nats_of(json!({"url": "nats://x:4222"})),
            (
                Nats::External {
                    url: "nats://x:4222".into()
                },
                vec![]
            )
        );
    }

    #[test]
    fn external_without_a_url() {
        assert_eq!(
            nats_of(json!({"deploy": false})).1,
            [
                "spec.nats.url: is required when deploy is false; set the URL of your NATS, or set deploy: true"
            ]
        );
    }

    #[test]
    fn external_with_a_size() {
        assert_eq!(
            nats_of(json!({"url": "nats://x:4222", "storageSize": "1Gi"})).1,
            [
                "spec.nats.storageSize: is only used when deploy is true; remove it or set deploy: true"
            ]
        );
    }

    #[test]
    fn the_url_is_not_empty_nor_too_long() {
        assert_eq!(
            nats_of(json!({"url": ""})).1,
            ["spec.nats.url: must not be empty; set a value or remove the field"]
        );
        assert_eq!(
            nats_of(json!({"url": "n".repeat(MAX_REFERENCE_LENGTH + 1)})).1,
            ["spec.nats.url: must be at most 512 characters (now 513); shorten it"]
        );
    }
}
