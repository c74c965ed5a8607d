//! The KV-event plane: an operator-managed NATS (the default), an external NATS with a URL, or
//! none.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::rules::{EXTERNAL_ONLY, MANAGED_ONLY, URL_TWICE};
use super::{
    DEFAULT_NATS_STORAGE, Errors, NATS_IMAGE, Nats, NatsUrl,
    limits::MAX_REFERENCE_LENGTH,
    syntax::{check_length, check_quantity},
};
use crate::{
    naming::{MAX_DNS_SUBDOMAIN, NATS_ROTATION_ANNOTATION, nats_credentials_name},
    types::NatsSpec,
};

/// The key of `urlSecretRef` when it names none.
const DEFAULT_URL_KEY: &str = "url";

/// The KV-event plane `spec.nats` asks for (none where it is wrong). As upstream's
/// (`deploy/operator/internal/controller/builders.go:308-310`, `nats.go:27-40`): omitted, or
/// without `deploy`, the operator deploys NATS; `deploy: false` means none. Ours only: `url` or
/// `urlSecretRef`, an external NATS, which makes `deploy` default to false.
pub(super) fn plane(errors: &mut Errors, nats: Option<&NatsSpec>, credentials: String) -> Nats {
    let Some(nats) = nats else {
        return managed(errors, &NatsSpec::default(), credentials);
    };
    if nats.url.is_some() && nats.url_secret_ref.is_some() {
        errors.push("spec.nats.urlSecretRef", URL_TWICE);
    }
    let external = nats.url.is_some() || nats.url_secret_ref.is_some();
    if nats.deploy.unwrap_or(!external) {
        for (field, set) in [
            ("url", nats.url.is_some()),
            ("urlSecretRef", nats.url_secret_ref.is_some()),
        ] {
            if set {
                errors.push(format!("spec.nats.{field}"), EXTERNAL_ONLY);
            }
        }
        return managed(errors, nats, credentials);
    }
    for (field, set) in [
        ("image", nats.image.is_some()),
        ("storageSize", nats.storage_size.is_some()),
        ("storageClassName", nats.storage_class_name.is_some()),
    ] {
        if set {
            errors.push(format!("spec.nats.{field}"), MANAGED_ONLY);
        }
    }
    if let Some(secret) = &nats.url_secret_ref {
        let path = "spec.nats.urlSecretRef";
        check_length(
            errors,
            &format!("{path}.name"),
            &secret.name,
            MAX_DNS_SUBDOMAIN,
        );
        if let Some(key) = &secret.key {
            check_length(errors, &format!("{path}.key"), key, MAX_DNS_SUBDOMAIN);
        }
        return Nats::External {
            url: NatsUrl::Secret {
                name: secret.name.clone(),
                key: secret.key.clone().unwrap_or_else(|| DEFAULT_URL_KEY.into()),
            },
        };
    }
    let Some(url) = &nats.url else {
        return Nats::None;
    };
    check_length(errors, "spec.nats.url", url, MAX_REFERENCE_LENGTH);
    Nats::External {
        url: NatsUrl::Value(url.clone()),
    }
}

/// The name of the managed NATS's credentials: the deployment's, rotated by the annotation
/// [`NATS_ROTATION_ANNOTATION`] (`rotation`, checked here).
pub(super) fn credentials(errors: &mut Errors, deployment: &str, rotation: Option<&str>) -> String {
    let valid = |r: &str| {
        (1..=MAX_ROTATION_LENGTH).contains(&r.len())
            && r.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    if let Some(rotation) = rotation.filter(|r| !valid(r)) {
        errors.push(
            format!("metadata.annotations[{NATS_ROTATION_ANNOTATION}]"),
            format!(
                "{rotation:?} must be 1 to {MAX_ROTATION_LENGTH} lowercase letters or digits, e.g. 2 or 20261205; fix it"
            ),
        );
    }
    nats_credentials_name(deployment, rotation)
}

/// The longest value of [`NATS_ROTATION_ANNOTATION`].
const MAX_ROTATION_LENGTH: usize = 16;

/// The managed NATS of `nats`, with the defaults.
fn managed(errors: &mut Errors, nats: &NatsSpec, credentials: String) -> Nats {
    let storage = nats
        .storage_size
        .clone()
        .unwrap_or_else(|| Quantity(DEFAULT_NATS_STORAGE.into()));
    check_quantity(errors, "spec.nats.storageSize", &storage);
    if let Some(image) = &nats.image {
        check_length(errors, "spec.nats.image", image, MAX_REFERENCE_LENGTH);
    }
    if let Some(class) = &nats.storage_class_name {
        check_length(
            errors,
            "spec.nats.storageClassName",
            class,
            MAX_DNS_SUBDOMAIN,
        );
    }
    Nats::Managed {
        storage,
        image: nats.image.clone().unwrap_or_else(|| NATS_IMAGE.into()),
        storage_class_name: nats.storage_class_name.clone(),
        credentials,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn nats_of(json: serde_json::Value) -> (Nats, Vec<String>) {
        let spec: NatsSpec = serde_json::from_value(json).expect("a nats spec");
        let mut built = Nats::None;
        let errors = found(|e| built = plane(e, Some(&spec), "d-nats-auth".into()));
        (built, errors)
    }

    fn managed(size: &str) -> Nats {
        Nats::Managed {
            storage: Quantity(size.into()),
            image: NATS_IMAGE.into(),
            storage_class_name: None,
            credentials: "d-nats-auth".into(),
        }
    }

    /// `NAME=value` of release/versions.sh, the table of the images the release builds.
    fn release_table(name: &str) -> String {
        include_str!("../../../release/versions.sh")
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{name} in release/versions.sh"))
            .to_string()
    }

    #[test]
    fn the_default_nats_image_is_the_release_tables_pinned_in_a_release_build() {
        let tag = format!(
            "{}:{}",
            release_table("NATS_IMAGE_REPO"),
            release_table("NATS_SERVER_VERSION").trim_start_matches('v')
        );
        match option_env!("INFERA_NATS_IMAGE") {
            None => assert_eq!(NATS_IMAGE, tag),
            Some(_) => {
                let digest = NATS_IMAGE
                    .strip_prefix(&format!("{tag}@sha256:"))
                    .unwrap_or_else(|| panic!("{NATS_IMAGE} is {tag}@sha256:<digest>"));
                assert!(digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()));
            }
        }
    }

    #[test]
    fn omitted_is_managed_as_upstream() {
        assert!(
            found(|e| assert_eq!(plane(e, None, "d-nats-auth".into()), managed("4Gi"))).is_empty()
        );
        assert_eq!(nats_of(json!({})), (managed("4Gi"), vec![]));
    }

    #[test]
    fn managed_with_an_image_and_a_class() {
        assert_eq!(
            nats_of(json!({"image": "nats:2.12", "storageClassName": "fast"})),
            (
                Nats::Managed {
                    storage: Quantity("4Gi".into()),
                    image: "nats:2.12".into(),
                    storage_class_name: Some("fast".into()),
                    credentials: "d-nats-auth".into(),
                },
                vec![]
            )
        );
        assert_eq!(
            nats_of(json!({"storageClassName": ""})).1,
            ["spec.nats.storageClassName: must not be empty; set a value or remove the field"]
        );
    }

    #[test]
    fn credentials_are_rotated_by_the_annotation() {
        assert!(found(|e| assert_eq!(credentials(e, "d", None), "d-nats-auth")).is_empty());
        assert!(found(|e| assert_eq!(credentials(e, "d", Some("2")), "d-nats-auth-2")).is_empty());
        for bad in ["", "Two", "2-1", "12345678901234567"] {
            assert_eq!(
                found(|e| {
                    credentials(e, "d", Some(bad));
                }),
                [format!(
                    "metadata.annotations[infera.amd.com/nats-credentials]: {bad:?} must be 1 to 16 lowercase letters or digits, e.g. 2 or 20261205; fix it"
                )]
            );
        }
    }

    #[test]
    fn managed_with_the_default_or_a_given_size() {
        assert_eq!(nats_of(json!({"deploy": true})), (managed("4Gi"), vec![]));
        assert_eq!(
            nats_of(json!({"deploy": true, "storageSize": "8Gi"})),
            (managed("8Gi"), vec![])
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
                    url: NatsUrl::Value("nats://x:4222".into())
                },
                vec![]
            )
        );
    }

    #[test]
    fn external_with_a_url_from_a_secret() {
        let secret = |key: &str| NatsUrl::Secret {
            name: "nats-url".into(),
            key: key.into(),
        };
        assert_eq!(
            nats_of(json!({"urlSecretRef": {"name": "nats-url"}})),
            (Nats::External { url: secret("url") }, vec![])
        );
        assert_eq!(
            nats_of(json!({"deploy": false, "urlSecretRef": {"name": "nats-url", "key": "u"}})),
            (Nats::External { url: secret("u") }, vec![])
        );
        assert_eq!(
            nats_of(json!({"url": "nats://x:4222", "urlSecretRef": {"name": "nats-url"}})).1,
            [format!("spec.nats.urlSecretRef: {URL_TWICE}")]
        );
        assert_eq!(
            nats_of(json!({"deploy": true, "urlSecretRef": {"name": "nats-url"}})).1,
            [format!("spec.nats.urlSecretRef: {EXTERNAL_ONLY}")]
        );
    }

    #[test]
    fn none_when_not_deployed_without_a_url() {
        assert_eq!(nats_of(json!({"deploy": false})), (Nats::None, vec![]));
    }

    #[test]
    fn external_with_a_size() {
        assert_eq!(
            nats_of(json!({"url": "nats://x:4222", "storageSize": "1Gi"})).1,
            [
                "spec.nats.storageSize: is only used when the operator deploys NATS; remove it, or remove url and deploy: false"
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
