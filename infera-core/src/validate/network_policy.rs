//! `spec.networkPolicy`: whether the graph's NetworkPolicies are rendered, who may scrape its
//! metrics, and where its pods may connect.

use std::net::IpAddr;

use k8s_openapi::{
    api::networking::v1::{NetworkPolicyPeer, NetworkPolicyPort},
    apimachinery::pkg::util::intstr::IntOrString,
};

use super::rules::{
    ALLOW_WITHOUT_RESTRICT, CIDR_FORM, PEER_FORM, PORT_FORM, RESTRICT_WITHOUT_POLICIES,
};
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

/// Checks `spec.networkPolicy` and resolves it; `None` when it is turned off. Its parts are checked
/// whether or not it is on, as the CRD's schema and CEL rules check theirs (the networks and
/// ports are checked here only).
pub(super) fn policy(
    errors: &mut Errors,
    spec: Option<&NetworkPolicySpec>,
) -> Option<NetworkPolicy> {
    let spec = spec.cloned().unwrap_or_default();
    let egress = spec.egress.clone().unwrap_or_default();
    let path = "spec.networkPolicy.metricsFrom";
    errors.at_most(path, "peers", spec.metrics_from.len(), MAX_METRICS_FROM);
    peers(errors, path, &spec.metrics_from);
    let allow = "spec.networkPolicy.egress.allow";
    if !egress.allow.is_empty() && !egress.is_restricted() {
        errors.push(allow, ALLOW_WITHOUT_RESTRICT);
    }
    errors.at_most(allow, "rules", egress.allow.len(), MAX_EGRESS_RULES);
    for (i, rule) in egress.allow.iter().enumerate() {
        let at = |field: &str| format!("{allow}[{i}].{field}");
        errors.at_most(&at("to"), "peers", rule.to.len(), MAX_EGRESS_RULES);
        errors.at_most(&at("ports"), "ports", rule.ports.len(), MAX_EGRESS_RULES);
        if !rule.ports.iter().all(port_form) {
            errors.push(at("ports"), PORT_FORM);
        }
    }
    let to: Vec<NetworkPolicyPeer> = egress.allow.iter().flat_map(|r| r.to.clone()).collect();
    peers(errors, allow, &to);
    if !spec.is_enabled() {
        if egress.is_restricted() {
            errors.push(
                "spec.networkPolicy.egress.restrict",
                RESTRICT_WITHOUT_POLICIES,
            );
        }
        return None;
    }
    Some(NetworkPolicy {
        metrics_from: spec.metrics_from,
        egress: egress.is_restricted().then_some(egress.allow),
    })
}

/// Every peer at `path` in a form the API server accepts, with well-formed networks.
fn peers(errors: &mut Errors, path: &str, peers: &[NetworkPolicyPeer]) {
    if !peers.iter().all(peer_form) {
        errors.push(path, PEER_FORM);
    }
    let block = |peer: &NetworkPolicyPeer| {
        peer.ip_block.as_ref().is_none_or(|block| {
            ip_block_form(&block.cidr, block.except.as_deref().unwrap_or_default())
        })
    };
    if !peers.iter().all(block) {
        errors.push(path, CIDR_FORM);
    }
}

/// A port the API server accepts (kubernetes `pkg/apis/networking/validation`,
/// `ValidateNetworkPolicyPort`): TCP, UDP or SCTP; a number from 1 to 65535 or a port name (at
/// most 15 lowercase letters, digits and `-`, a letter among them); `endPort` only after a numeric
/// port, not below it.
fn port_form(port: &NetworkPolicyPort) -> bool {
    let protocol = port
        .protocol
        .as_deref()
        .is_none_or(|p| ["TCP", "UDP", "SCTP"].contains(&p));
    let valid = |number: i32| (1..=65535).contains(&number);
    let number = match &port.port {
        Some(IntOrString::Int(number)) => valid(*number).then_some(Some(*number)),
        Some(IntOrString::String(name)) => {
            let named = !name.is_empty()
                && name.len() <= 15
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && name.chars().any(|c| c.is_ascii_lowercase())
                && !name.starts_with('-')
                && !name.ends_with('-')
                && !name.contains("--");
            named.then_some(None)
        }
        None => Some(None),
    };
    let end = match (number, port.end_port) {
        (Some(_), None) => true,
        (Some(Some(start)), Some(end)) => valid(end) && end >= start,
        _ => false,
    };
    protocol && end
}

/// An `ipBlock` the API server accepts: `cidr` an IP network, each `except` a network strictly
/// inside it — in the strict form the API server requires from Kubernetes 1.36
/// (`StrictIPCIDRValidation`) and warns about before.
fn ip_block_form(cidr: &str, except: &[String]) -> bool {
    let Some(outer) = network(cidr) else {
        return false;
    };
    except.iter().all(|inner| {
        network(inner).is_some_and(|inner| {
            inner.bits == outer.bits && inner.prefix > outer.prefix && outer.contains(inner.address)
        })
    })
}

/// An IP network: address, prefix length and the address family's bits.
struct Network {
    address: u128,
    prefix: u32,
    bits: u32,
}

impl Network {
    fn contains(&self, address: u128) -> bool {
        let host = self.bits - self.prefix;
        host >= 128 || address >> host == self.address >> host
    }

    /// Whether the host bits of the address are zero (`10.0.0.0/8`, not `10.0.0.1/8`).
    fn is_masked(&self) -> bool {
        let host = self.bits - self.prefix;
        host == 0 || self.address & (u128::MAX >> (128 - host)) == 0
    }
}

/// `ADDRESS/PREFIX` in its strict form: decimal prefix without leading zeros, an address without
/// leading zeros (Rust's parser refuses them) and not IPv4-mapped IPv6, no host bits set.
fn network(text: &str) -> Option<Network> {
    let (address, prefix) = text.split_once('/')?;
    let digits = !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit());
    if !digits || (prefix.len() > 1 && prefix.starts_with('0')) {
        return None;
    }
    let prefix: u32 = prefix.parse().ok()?;
    let (address, bits) = match address.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => (u128::from(v6), 128),
        IpAddr::V6(_) => return None,
    };
    let network = Network {
        address,
        prefix,
        bits,
    };
    (prefix <= bits && network.is_masked()).then_some(network)
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

    #[test]
    fn networks_are_parsed_as_the_api_server_parses_them() {
        let except = |e: &[&str]| e.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(ip_block_form(
            "0.0.0.0/0",
            &except(&["10.0.0.0/8", "192.168.1.0/24"])
        ));
        assert!(ip_block_form("10.0.0.0/8", &except(&["10.1.0.0/16"])));
        assert!(ip_block_form("fd00::/8", &except(&["fd00:1::/32"])));
        assert!(ip_block_form("::/0", &except(&["fd00::/8"])));
        assert!(ip_block_form("10.0.0.1/32", &[]));
        assert!(ip_block_form("fd00::1/128", &[]));
        for (cidr, inner) in [
            ("10.0.0.0", vec![]),
            ("10.0.0.0/33", vec![]),
            ("10.0.0.300/8", vec![]),
            ("10.0.0.1/8", vec![]),
            ("010.0.0.0/8", vec![]),
            ("10.0.0.0/08", vec![]),
            ("10.0.0.0/+8", vec![]),
            ("10.0.0.0/", vec![]),
            ("::ffff:10.0.0.0/104", vec![]),
            ("10.0.0.0/8", vec!["::ffff:10.1.0.0/112"]),
            ("10.0.0.0/8", vec!["10.1.0.1/16"]),
            ("10.0.0.0/8", vec!["11.0.0.0/16"]),
            ("10.0.0.0/8", vec!["10.0.0.0/8"]),
            ("10.0.0.0/8", vec!["fd00::/16"]),
        ] {
            assert!(
                !ip_block_form(cidr, &except(&inner)),
                "{cidr} except {inner:?}"
            );
        }
    }

    #[test]
    fn ports_are_checked_as_the_api_server_checks_them() {
        let port = |protocol: Option<&str>, port: Option<IntOrString>, end: Option<i32>| {
            NetworkPolicyPort {
                protocol: protocol.map(str::to_string),
                port,
                end_port: end,
            }
        };
        let int = |n| Some(IntOrString::Int(n));
        let name = |n: &str| Some(IntOrString::String(n.into()));
        for good in [
            port(None, int(443), None),
            port(Some("UDP"), int(53), None),
            port(Some("TCP"), int(30000), Some(32767)),
            port(None, name("https"), None),
            port(Some("SCTP"), None, None),
        ] {
            assert!(port_form(&good), "{good:?}");
        }
        for bad in [
            port(Some("tcp"), int(443), None),
            port(None, int(0), None),
            port(None, int(65536), None),
            port(None, name("HTTPS"), None),
            port(None, name("a-very-long-port-name"), None),
            port(None, name("8080"), None),
            port(None, int(443), Some(80)),
            port(None, name("https"), Some(8443)),
            port(None, None, Some(8443)),
        ] {
            assert!(!port_form(&bad), "{bad:?}");
        }
    }

    #[test]
    fn policies_turned_off_are_still_checked_as_admission_checks_them() {
        assert_eq!(
            found(|e| {
                let spec = with_egress(
                    Some(false),
                    egress(Some(true), vec![NetworkPolicyPeer::default()]),
                );
                policy(e, Some(&spec));
            }),
            vec![
                format!("spec.networkPolicy.egress.allow: {PEER_FORM}"),
                format!("spec.networkPolicy.egress.restrict: {RESTRICT_WITHOUT_POLICIES}"),
            ]
        );
    }
}
