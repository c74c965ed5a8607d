//! Names. Every child is named `<deployment>-<service>` or `<deployment>-<suffix>`, so both names
//! must be DNS labels, a service must not take a suffix the operator uses itself, and together they
//! must leave room for the suffixes Kubernetes controllers add to pod and revision names.

use std::collections::BTreeMap;

use super::rules::{
    name_not_a_dns_label, name_too_long, names_too_long, service_name_not_a_dns_label,
    service_name_reserved,
};
use super::{Errors, syntax::has_dns_label_form};
use crate::{
    naming::{MAX_DEPLOYMENT_NAME, MAX_DEPLOYMENT_PLUS_SERVICE, RESERVED_SERVICE_NAMES},
    types::ServiceSpec,
};

/// `metadata.name` is a DNS label of at most [`MAX_DEPLOYMENT_NAME`] characters; the two are
/// separate rules with separate messages. True when the name is good.
pub(super) fn deployment_name(errors: &mut Errors, name: &str) -> bool {
    if name.is_empty() {
        errors.push("metadata.name", "is required; give the deployment a name");
        return false;
    }
    let form_ok = has_dns_label_form(name);
    if !form_ok {
        errors.push("metadata.name", name_not_a_dns_label());
    }
    let length_ok = name.chars().count() <= MAX_DEPLOYMENT_NAME;
    if !length_ok {
        errors.push("metadata.name", name_too_long());
    }
    form_ok && length_ok
}

/// Each service name is a DNS label, not reserved, and short enough next to `deployment` (empty
/// when the deployment name is itself bad, to report that once). At most one error per service.
pub(super) fn service_names(
    errors: &mut Errors,
    deployment: &str,
    services: &BTreeMap<String, Box<ServiceSpec>>,
) {
    for service in services.keys() {
        let path = format!("spec.services.{service}");
        let length = deployment.chars().count() + service.chars().count();
        if !has_dns_label_form(service) {
            errors.push(path, service_name_not_a_dns_label());
        } else if RESERVED_SERVICE_NAMES.contains(&service.as_str()) {
            errors.push(path, service_name_reserved());
        } else if length > MAX_DEPLOYMENT_PLUS_SERVICE {
            errors.push(path, names_too_long(Some(length)));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn services(names: &[&str]) -> BTreeMap<String, Box<ServiceSpec>> {
        let worker = super::super::service(json!({"componentType": "worker"}));
        names
            .iter()
            .map(|n| (n.to_string(), Box::new(worker.clone())))
            .collect()
    }

    #[test]
    fn a_good_deployment_name_passes() {
        assert!(found(|e| assert!(deployment_name(e, "demo-2"))).is_empty());
    }

    #[test]
    fn a_missing_deployment_name_is_required() {
        assert_eq!(
            found(|e| assert!(!deployment_name(e, ""))),
            ["metadata.name: is required; give the deployment a name"]
        );
    }

    #[test]
    fn a_deployment_name_that_is_not_a_dns_label_says_so_not_that_it_is_too_long() {
        assert_eq!(
            found(|e| assert!(!deployment_name(e, "Demo_Bad"))),
            [
                "metadata.name: must be a DNS label (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit); rename the deployment"
            ]
        );
        for bad in ["demo-", "2demo", "-demo", "demo.x", "démo"] {
            assert_eq!(
                found(|e| assert!(!deployment_name(e, bad))),
                [format!("metadata.name: {}", name_not_a_dns_label())],
                "{bad}"
            );
        }
    }

    #[test]
    fn a_deployment_name_too_long_says_so_only() {
        assert!(found(|e| assert!(deployment_name(e, &"x".repeat(42)))).is_empty());
        assert_eq!(
            found(|e| assert!(!deployment_name(e, &"x".repeat(43)))),
            ["metadata.name: must be a DNS label of at most 42 characters; choose a shorter name"]
        );
    }

    #[test]
    fn a_deployment_name_both_malformed_and_too_long_gets_both_errors() {
        assert_eq!(
            found(|e| assert!(!deployment_name(e, &"X".repeat(43)))),
            [
                format!("metadata.name: {}", name_not_a_dns_label()),
                format!("metadata.name: {}", name_too_long()),
            ]
        );
    }

    #[test]
    fn service_names_are_dns_labels() {
        assert_eq!(
            found(|e| service_names(e, "demo", &services(&["Decode_2", "decode", "decode-"]))),
            [
                "spec.services.Decode_2: service names must be DNS labels (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit); rename the service",
                "spec.services.decode-: service names must be DNS labels (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit); rename the service",
            ]
        );
    }

    #[test]
    fn every_reserved_service_name_is_refused() {
        for reserved in RESERVED_SERVICE_NAMES {
            assert_eq!(
                found(|e| service_names(e, "demo", &services(&[reserved]))),
                [format!(
                    "spec.services.{reserved}: the names nats, nats-headless, epp, discovery, pool, route, model are reserved for objects the operator creates; rename the service"
                )]
            );
        }
    }

    #[test]
    fn deployment_plus_service_name_is_at_most_46() {
        let deployment = "x".repeat(40);
        assert!(found(|e| service_names(e, &deployment, &services(&["server"]))).is_empty());
        assert_eq!(
            found(|e| service_names(e, &deployment, &services(&["decode-1"]))),
            [
                "spec.services.decode-1: the deployment name plus a service name must be at most 46 characters so that every child name fits in 63 (now 48); shorten the service name or metadata.name"
            ]
        );
    }

    #[test]
    fn a_bad_deployment_name_is_not_blamed_on_every_service() {
        assert!(found(|e| service_names(e, "", &services(&[&"x".repeat(46)]))).is_empty());
    }
}
