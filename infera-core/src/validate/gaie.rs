//! Gateway API Inference Extension: the Gateway is named by a DNS subdomain in a namespace named
//! by a DNS label.

use super::{
    Errors, Gaie,
    limits::{MAX_REFERENCE_LENGTH, check_length},
    syntax::{is_dns_subdomain, is_rfc1123_label},
};
use crate::types::GaieSpec;

/// The GAIE settings of `spec.gaie`.
pub(super) fn settings(errors: &mut Errors, gaie: &GaieSpec) -> Gaie {
    if !is_dns_subdomain(&gaie.gateway_name) {
        errors.push(
            "spec.gaie.gatewayName",
            "must be the name of a Gateway (a DNS subdomain); fix the name",
        );
    }
    if let Some(namespace) = &gaie.gateway_namespace
        && !is_rfc1123_label(namespace)
    {
        errors.push(
            "spec.gaie.gatewayNamespace",
            "must be a namespace name (a DNS label); fix the name",
        );
    }
    if let Some(section) = &gaie.gateway_section_name
        && !is_dns_subdomain(section)
    {
        errors.push(
            "spec.gaie.gatewaySectionName",
            "must be the name of a listener of the Gateway (a DNS subdomain); fix the name",
        );
    }
    if let Some(image) = &gaie.epp_image {
        check_length(errors, "spec.gaie.eppImage", image, MAX_REFERENCE_LENGTH);
    }
    Gaie {
        gateway_name: gaie.gateway_name.clone(),
        gateway_namespace: gaie.gateway_namespace.clone(),
        gateway_section_name: gaie.gateway_section_name.clone(),
        epp_image: gaie.epp_image.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn errors_of(json: serde_json::Value) -> Vec<String> {
        let spec: GaieSpec = serde_json::from_value(json).expect("a gaie spec");
        found(|e| {
            settings(e, &spec);
        })
    }

    #[test]
    fn a_gateway_elsewhere_with_an_epp_image() {
        let spec: GaieSpec = serde_json::from_value(
            json!({"gatewayName": "gw.x", "gatewayNamespace": "infra", "gatewaySectionName": "https", "eppImage": "epp:1"}),
        )
        .expect("a gaie spec");
        let mut built = None;
        assert!(found(|e| built = Some(settings(e, &spec))).is_empty());
        assert_eq!(
            built,
            Some(Gaie {
                gateway_name: "gw.x".into(),
                gateway_namespace: Some("infra".into()),
                gateway_section_name: Some("https".into()),
                epp_image: Some("epp:1".into()),
            })
        );
    }

    #[test]
    fn bad_gateway_name() {
        for bad in ["My Gateway", "", &"g".repeat(254)] {
            assert_eq!(
                errors_of(json!({"gatewayName": bad})),
                [
                    "spec.gaie.gatewayName: must be the name of a Gateway (a DNS subdomain); fix the name"
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn a_gateway_namespace_may_start_with_a_digit() {
        assert!(errors_of(json!({"gatewayName": "gw", "gatewayNamespace": "1-infra"})).is_empty());
    }

    #[test]
    fn bad_gateway_namespace() {
        for bad in ["Infra", "", &"n".repeat(64)] {
            assert_eq!(
                errors_of(json!({"gatewayName": "gw", "gatewayNamespace": bad})),
                [
                    "spec.gaie.gatewayNamespace: must be a namespace name (a DNS label); fix the name"
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn bad_gateway_section_name() {
        for bad in ["HTTPS", "", &"s".repeat(254)] {
            assert_eq!(
                errors_of(json!({"gatewayName": "gw", "gatewaySectionName": bad})),
                [
                    "spec.gaie.gatewaySectionName: must be the name of a listener of the Gateway (a DNS subdomain); fix the name"
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn the_epp_image_is_not_empty_nor_too_long() {
        assert_eq!(
            errors_of(json!({"gatewayName": "gw", "eppImage": ""})),
            ["spec.gaie.eppImage: must not be empty; set a value or remove the field"]
        );
        assert_eq!(
            errors_of(json!({"gatewayName": "gw", "eppImage": "e".repeat(513)})),
            ["spec.gaie.eppImage: must be at most 512 characters (now 513); shorten it"]
        );
    }
}
