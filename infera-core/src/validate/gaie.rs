//! Gateway API Inference Extension: the Gateway is named by a DNS subdomain in a namespace named
//! by a DNS label.

use super::{
    Errors, Gaie,
    limits::{MAX_HOSTNAMES, MAX_REFERENCE_LENGTH, check_length, check_range},
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
    if let Some(path) = &gaie.tokenizer_path {
        check_length(
            errors,
            "spec.gaie.tokenizerPath",
            path,
            MAX_REFERENCE_LENGTH,
        );
    }
    if let Some(name) = &gaie.model_name {
        check_length(errors, "spec.gaie.modelName", name, MAX_REFERENCE_LENGTH);
    }
    if gaie.hostnames.len() > MAX_HOSTNAMES {
        errors.push(
            "spec.gaie.hostnames",
            format!(
                "at most {MAX_HOSTNAMES} hostnames are allowed (now {}); remove some",
                gaie.hostnames.len()
            ),
        );
    }
    for (i, hostname) in gaie.hostnames.iter().enumerate() {
        let name = hostname.strip_prefix("*.").unwrap_or(hostname);
        if !is_dns_subdomain(name) {
            errors.push(
                format!("spec.gaie.hostnames[{i}]"),
                "must be a hostname such as chat.example.com or *.example.com; fix it",
            );
        }
    }
    if let Some(port) = gaie.frontend_port {
        check_range(
            errors,
            "spec.gaie.frontendPort",
            port,
            1..=65535,
            "must be a port number from 1 to 65535; fix it",
        );
    }
    Gaie {
        gateway_name: gaie.gateway_name.clone(),
        gateway_namespace: gaie.gateway_namespace.clone(),
        gateway_section_name: gaie.gateway_section_name.clone(),
        epp_image: gaie.epp_image.clone(),
        tokenizer_path: gaie.tokenizer_path.clone(),
        hostnames: gaie.hostnames.clone(),
        frontend_port: gaie.frontend_port,
        model_name: gaie.model_name.clone(),
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
                tokenizer_path: None,
                hostnames: Vec::new(),
                frontend_port: None,
                model_name: None,
            })
        );
    }

    #[test]
    fn upstream_fields_are_kept_and_checked() {
        let spec: GaieSpec = serde_json::from_value(json!({
            "gatewayName": "gw", "enabled": true, "tokenizerPath": "Qwen/Qwen3-0.6B",
            "hostnames": ["chat.example.com", "*.example.com"], "frontendPort": 8000,
            "modelName": "qwen"
        }))
        .expect("a gaie spec");
        let mut built = None;
        assert!(found(|e| built = Some(settings(e, &spec))).is_empty());
        let built = built.expect("settings");
        assert_eq!(
            (
                built.tokenizer_path.as_deref(),
                built.hostnames.as_slice(),
                built.frontend_port,
                built.model_name.as_deref()
            ),
            (
                Some("Qwen/Qwen3-0.6B"),
                &["chat.example.com".to_string(), "*.example.com".to_string()][..],
                Some(8000),
                Some("qwen")
            )
        );
        assert_eq!(
            errors_of(json!({"gatewayName": "gw", "hostnames": ["Chat"], "frontendPort": 0})),
            [
                "spec.gaie.hostnames[0]: must be a hostname such as chat.example.com or *.example.com; fix it",
                "spec.gaie.frontendPort: must be a port number from 1 to 65535; fix it",
            ]
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
