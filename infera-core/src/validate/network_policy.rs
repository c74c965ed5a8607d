//! `spec.networkPolicy`: whether the graph's NetworkPolicies are rendered, and who may scrape its
//! metrics.

use k8s_openapi::api::networking::v1::NetworkPolicyPeer;

use super::rules::PEER_FORM;
use super::{Errors, limits::MAX_METRICS_FROM};
use crate::types::NetworkPolicySpec;

/// The graph's NetworkPolicies, resolved: present unless `enabled: false`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkPolicy {
    /// Who may reach the metrics ports, besides the graph's own pods.
    pub metrics_from: Vec<NetworkPolicyPeer>,
}

/// Checks `spec.networkPolicy` and resolves it; `None` when it is turned off.
pub(super) fn policy(
    errors: &mut Errors,
    spec: Option<&NetworkPolicySpec>,
) -> Option<NetworkPolicy> {
    let spec = spec.cloned().unwrap_or_default();
    if !spec.is_enabled() {
        return None;
    }
    let path = "spec.networkPolicy.metricsFrom";
    if spec.metrics_from.len() > MAX_METRICS_FROM {
        errors.push(
            path,
            format!(
                "at most {MAX_METRICS_FROM} peers are allowed (now {}); remove some",
                spec.metrics_from.len()
            ),
        );
    }
    if !spec.metrics_from.iter().all(peer_form) {
        errors.push(path, PEER_FORM);
    }
    Some(NetworkPolicy {
        metrics_from: spec.metrics_from,
    })
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
    use crate::validate::found;

    fn spec(enabled: Option<bool>, metrics_from: Vec<NetworkPolicyPeer>) -> NetworkPolicySpec {
        NetworkPolicySpec {
            enabled,
            metrics_from,
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
}
