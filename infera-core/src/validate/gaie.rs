//! Gateway API Inference Extension: the Gateway is named by a DNS subdomain in a namespace named
//! by a DNS label; the tokenizer is required, as upstream's CRD requires it
//! (`deploy/operator/api/v1alpha1/inferadeployment_types.go:159-162`), and the Endpoint Picker and
//! the frontend sidecar need an image with Infera in it (upstream `gaie.go:58-63`).

use super::rules::{IMAGE_REQUIRED, TOKENIZER_REQUIRED};
use super::{
    Errors, Gaie, Worker,
    limits::{MAX_HOSTNAMES, MAX_REFERENCE_LENGTH},
    syntax::{check_length, check_range, is_dns_subdomain, is_rfc1123_label},
};
use crate::{flags::FRONTEND_PORT, types::GaieSpec};

/// The GAIE settings of `spec.gaie`; `image` is `spec.image`, the default of `eppImage`.
pub(super) fn settings(errors: &mut Errors, gaie: &GaieSpec, image: Option<&str>) -> Gaie {
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
    match &gaie.tokenizer_path {
        Some(path) => check_length(
            errors,
            "spec.gaie.tokenizerPath",
            path,
            MAX_REFERENCE_LENGTH,
        ),
        None => errors.push("spec.gaie.tokenizerPath", TOKENIZER_REQUIRED),
    }
    let image = gaie.epp_image.as_deref().or(image);
    if image.is_none() && gaie.is_enabled() {
        errors.push("spec.gaie.eppImage", IMAGE_REQUIRED);
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
        image: image.unwrap_or_default().into(),
        tokenizer_path: gaie.tokenizer_path.clone().unwrap_or_default(),
        hostnames: gaie.hostnames.clone(),
        frontend_port: gaie.frontend_port.unwrap_or(FRONTEND_PORT),
        model_name: gaie.model_name.clone(),
    }
}

/// The frontend sidecar shares each worker pod's network, so its port is none of the workers'
/// engine ports (vLLM's default is 8000, the sidecar's default too).
pub(super) fn frontend_port_free(errors: &mut Errors, gaie: &Gaie, workers: &[Worker]) {
    for worker in workers.iter().filter(|w| w.pod.port == gaie.frontend_port) {
        errors.push(
            "spec.gaie.frontendPort",
            format!(
                "is {}, the port of service {}'s engine, and the frontend sidecar runs in its pods; set another frontendPort or give the service another port",
                gaie.frontend_port, worker.pod.service
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn errors_of(json: serde_json::Value) -> Vec<String> {
        let spec: GaieSpec = serde_json::from_value(json).expect("a gaie spec");
        found(|e| {
            settings(e, &spec, Some("img"));
        })
    }

    #[test]
    fn a_gateway_elsewhere_with_an_epp_image() {
        let spec: GaieSpec = serde_json::from_value(
            json!({"gatewayName": "gw.x", "gatewayNamespace": "infra", "gatewaySectionName": "https", "eppImage": "epp:1", "tokenizerPath": "t"}),
        )
        .expect("a gaie spec");
        let mut built = None;
        assert!(found(|e| built = Some(settings(e, &spec, Some("img")))).is_empty());
        assert_eq!(
            built,
            Some(Gaie {
                gateway_name: "gw.x".into(),
                gateway_namespace: Some("infra".into()),
                gateway_section_name: Some("https".into()),
                image: "epp:1".into(),
                tokenizer_path: "t".into(),
                hostnames: Vec::new(),
                frontend_port: FRONTEND_PORT,
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
        assert!(found(|e| built = Some(settings(e, &spec, Some("img")))).is_empty());
        let built = built.expect("settings");
        assert_eq!(
            (
                built.tokenizer_path.as_str(),
                built.hostnames.as_slice(),
                built.frontend_port,
                built.model_name.as_deref()
            ),
            (
                "Qwen/Qwen3-0.6B",
                &["chat.example.com".to_string(), "*.example.com".to_string()][..],
                8000,
                Some("qwen")
            )
        );
        assert_eq!(
            errors_of(
                json!({"gatewayName": "gw", "tokenizerPath": "t", "hostnames": ["Chat"], "frontendPort": 0})
            ),
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
                errors_of(json!({"gatewayName": bad, "tokenizerPath": "t"})),
                [
                    "spec.gaie.gatewayName: must be the name of a Gateway (a DNS subdomain); fix the name"
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn a_gateway_namespace_may_start_with_a_digit() {
        assert!(
            errors_of(
                json!({"gatewayName": "gw", "tokenizerPath": "t", "gatewayNamespace": "1-infra"})
            )
            .is_empty()
        );
    }

    #[test]
    fn bad_gateway_namespace() {
        for bad in ["Infra", "", &"n".repeat(64)] {
            assert_eq!(
                errors_of(
                    json!({"gatewayName": "gw", "tokenizerPath": "t", "gatewayNamespace": bad})
                ),
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
                errors_of(
                    json!({"gatewayName": "gw", "tokenizerPath": "t", "gatewaySectionName": bad})
                ),
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
            errors_of(json!({"gatewayName": "gw", "tokenizerPath": "t", "eppImage": ""})),
            ["spec.gaie.eppImage: must not be empty; set a value or remove the field"]
        );
        assert_eq!(
            errors_of(
                json!({"gatewayName": "gw", "tokenizerPath": "t", "eppImage": "e".repeat(513)})
            ),
            ["spec.gaie.eppImage: must be at most 512 characters (now 513); shorten it"]
        );
    }

    #[test]
    fn the_tokenizer_is_required_and_an_image_when_gaie_is_on() {
        let spec: GaieSpec = serde_json::from_value(json!({"enabled": true, "gatewayName": "gw"}))
            .expect("a gaie spec");
        assert_eq!(
            found(|e| {
                settings(e, &spec, None);
            }),
            [
                format!("spec.gaie.tokenizerPath: {TOKENIZER_REQUIRED}"),
                format!("spec.gaie.eppImage: {IMAGE_REQUIRED}"),
            ]
        );
        // Off (`enabled: false`, or absent: upstream's default) needs no image.
        for off in [json!({"enabled": false}), json!({})] {
            let mut off = off;
            off["gatewayName"] = json!("gw");
            off["tokenizerPath"] = json!("t");
            let off: GaieSpec = serde_json::from_value(off).expect("a gaie spec");
            assert!(
                found(|e| {
                    settings(e, &off, None);
                })
                .is_empty()
            );
        }
    }
}
