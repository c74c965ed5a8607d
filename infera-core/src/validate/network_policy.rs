//! `spec.networkPolicy`: whether the graph's NetworkPolicies are rendered, who may scrape its
//! metrics, and where its pods may connect.

use k8s_openapi::api::networking::v1::NetworkPolicyPeer;

use super::rules::{ALLOW_WITHOUT_RESTRICT, PEER_FORM, RESTRICT_WITHOUT_POLICIES};
use super::{
    Errors,
    limits::{MAX_EGRESS_RULES, MAX_METRICS_FROM},
};
use crate::types::{EgressRule, NetworkPolicySpec};

/// The graph's NetworkPolicies, resolved: present unless `enabled: false`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkPolicy {
    /// Who may reach the metrics ports, besides the graph's own pods.
    pub metrics_from: Vec<NetworkPolicyPeer>,
    /// The further destinations of restricted egress; `None` while egress is open.
    pub egress: Option<Vec<EgressRule>>,
}

/// Checks `spec.networkPolicy` and resolves it; `None` when it is turned off.
pub(super) fn policy(
    errors: &mut Errors,
    spec: Option<&NetworkPolicySpec>,
) -> Option<NetworkPolicy> {
    let spec = spec.cloned().unwrap_or_default();
    let enabled = spec.is_enabled();
    let egress = spec.egress.unwrap_or_default();
    let allow = "spec.networkPolicy.egress.allow";
    if !enabled {
        if egress.is_restricted() {
            errors.push(
                "spec.networkPolicy.egress.restrict",
                RESTRICT_WITHOUT_POLICIES,
            );
        }
        return None;
    }
    let path = "spec.networkPolicy.metricsFrom";
    at_most(
        errors,
        path,
        "peers",
        spec.metrics_from.len(),
        MAX_METRICS_FROM,
    );
    if !spec.metrics_from.iter().all(peer_form) {
        errors.push(path, PEER_FORM);
    }
    if !egress.allow.is_empty() && !egress.is_restricted() {
        errors.push(allow, ALLOW_WITHOUT_RESTRICT);
    }
    at_most(errors, allow, "rules", egress.allow.len(), MAX_EGRESS_RULES);
    for (i, rule) in egress.allow.iter().enumerate() {
        let at = |field: &str| format!("{allow}[{i}].{field}");
        at_most(errors, &at("to"), "peers", rule.to.len(), MAX_EGRESS_RULES);
        at_most(
            errors,
            &at("ports"),
            "ports",
            rule.ports.len(),
            MAX_EGRESS_RULES,
        );
    }
    if !egress.allow.iter().flat_map(|r| &r.to).all(peer_form) {
        errors.push(allow, PEER_FORM);
    }
    Some(NetworkPolicy {
        metrics_from: spec.metrics_from,
        egress: egress.is_restricted().then_some(egress.allow),
    })
}

/// At most `max` of `what` at `path`.
fn at_most(errors: &mut Errors, path: &str, what: &str, count: usize, max: usize) {
    if count > max {
        errors.push(
            path,
            format!("at most {max} {what} are allowed (now {count}); remove some"),
        );
    }
}

/// A peer the API server accepts: selectors, or an `ipBlock` alone.
fn peer_form(peer: &NetworkPolicyPeer) -> bool {
    let selectors = peer.pod_selector.is_some() || peer.namespace_selector.is_some();
    selectors != peer.ip_block.is_some()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::networking::v1::IPBlock, apimachinery::pkg::apis::meta::v1::LabelSelector,
    };

    use super::*;
    use crate::{types::EgressSpec, validate::found};

    fn spec(enabled: Option<bool>, metrics_from: Vec<NetworkPolicyPeer>) -> NetworkPolicySpec {
        NetworkPolicySpec {
            enabled,
            metrics_from,
            egress: None,
        }
    }

    fn namespace() -> NetworkPolicyPeer {
        NetworkPolicyPeer {
            namespace_selector: Some(LabelSelector::default()),
            ..Default::default()
        }
    }

    fn ip_block() -> NetworkPolicyPeer {
        NetworkPolicyPeer {
            ip_block: Some(IPBlock {
                cidr: "10.0.0.0/8".into(),
                except: None,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn on_by_default_and_off_when_disabled() {
        let mut errors = Errors::default();
        assert_eq!(policy(&mut errors, None), Some(NetworkPolicy::default()));
        assert_eq!(
            policy(&mut errors, Some(&spec(Some(false), vec![namespace()]))),
            None
        );
        assert!(errors.0.is_empty());
    }

    #[test]
    fn peers_name_selectors_or_an_ip_block_alone() {
        let mixed = NetworkPolicyPeer {
            pod_selector: Some(LabelSelector::default()),
            ..ip_block()
        };
        assert_eq!(
            found(|e| {
                policy(e, Some(&spec(None, vec![namespace(), ip_block()])));
            }),
            Vec::<String>::new()
        );
        for bad in [NetworkPolicyPeer::default(), mixed] {
            assert_eq!(
                found(|e| {
                    policy(e, Some(&spec(None, vec![namespace(), bad])));
                }),
                vec![format!("spec.networkPolicy.metricsFrom: {PEER_FORM}")]
            );
        }
    }

    #[test]
    fn at_most_sixteen_peers() {
        let many = vec![namespace(); MAX_METRICS_FROM + 1];
        assert_eq!(
            found(|e| {
                policy(e, Some(&spec(None, many)));
            }),
            vec![
                "spec.networkPolicy.metricsFrom: at most 16 peers are allowed (now 17); remove some"
            ]
        );
    }

    fn egress(restrict: Option<bool>, to: Vec<NetworkPolicyPeer>) -> EgressSpec {
        EgressSpec {
            restrict,
            allow: vec![EgressRule { to, ports: vec![] }],
        }
    }

    fn with_egress(enabled: Option<bool>, egress: EgressSpec) -> NetworkPolicySpec {
        NetworkPolicySpec {
            egress: Some(egress),
            ..spec(enabled, vec![])
        }
    }

    #[test]
    fn egress_is_open_unless_restricted() {
        let mut errors = Errors::default();
        let open = EgressSpec::default();
        let resolved = policy(&mut errors, Some(&with_egress(None, open)));
        assert_eq!(resolved.and_then(|p| p.egress), None);
        let restricted = egress(Some(true), vec![ip_block()]);
        let resolved = policy(&mut errors, Some(&with_egress(None, restricted.clone())));
        assert_eq!(resolved.and_then(|p| p.egress), Some(restricted.allow));
        assert!(errors.0.is_empty());
    }

    #[test]
    fn allow_needs_restrict_and_restrict_needs_policies() {
        for restrict in [None, Some(false)] {
            assert_eq!(
                found(|e| {
                    policy(
                        e,
                        Some(&with_egress(None, egress(restrict, vec![ip_block()]))),
                    );
                }),
                vec![format!(
                    "spec.networkPolicy.egress.allow: {ALLOW_WITHOUT_RESTRICT}"
                )]
            );
        }
        assert_eq!(
            found(|e| {
                policy(
                    e,
                    Some(&with_egress(Some(false), egress(Some(true), vec![]))),
                );
            }),
            vec![format!(
                "spec.networkPolicy.egress.restrict: {RESTRICT_WITHOUT_POLICIES}"
            )]
        );
    }

    #[test]
    fn allowed_peers_name_selectors_or_an_ip_block_alone() {
        assert_eq!(
            found(|e| {
                let bad = egress(Some(true), vec![namespace(), NetworkPolicyPeer::default()]);
                policy(e, Some(&with_egress(None, bad)));
            }),
            vec![format!("spec.networkPolicy.egress.allow: {PEER_FORM}")]
        );
        assert_eq!(
            found(|e| {
                let many = egress(Some(true), vec![namespace(); MAX_EGRESS_RULES + 1]);
                policy(e, Some(&with_egress(None, many)));
            }),
            vec![
                "spec.networkPolicy.egress.allow[0].to: at most 16 peers are allowed (now 17); remove some"
            ]
        );
    }
}
