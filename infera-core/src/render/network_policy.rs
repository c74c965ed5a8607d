//! The graph's NetworkPolicies. Who talks to whom, from upstream's code:
//! - every pod of the graph is a NATS client (KV events, and requests with upstream's default
//!   NATS transport): NATS accepts the graph's pods only;
//! - the router (or each worker's GAIE frontend sidecar, on localhost) sends requests to the
//!   engines; the EPP finds and scores them (`infera/gaie/__main__.py:83-106`); a decode pool pulls
//!   the KV cache from the prefill pool it is paired with and multi-node ranks talk among
//!   themselves (`infera/server/metrics.py:129-132`: `p_unreachable`, `d_unreachable`): the
//!   workers accept the graph's pods, on any port;
//! - the Gateway reaches the frontend sidecars and the EPP's gRPC port: a NetworkPolicy cannot
//!   name a Gateway's pods without knowing its implementation, so those two ports accept the
//!   Gateway's namespace;
//! - `metricsFrom` reaches the engines' ports (they serve `/metrics` where they serve requests)
//!   and NATS's monitoring port;
//! - with `spec.planner`, the operator's pods (`app.kubernetes.io/name: infera-operator`, in any
//!   namespace) reach the engines' ports: the planner reads their `/metrics`.
//!
//! The router Service is the graph's front door and has no policy. Kubelet probes come from the
//! node, which NetworkPolicies do not restrict.
//!
//! Egress stays open unless restricted. Restricted, the graph's pods reach one another, DNS, the
//! Kubernetes API — the router's discovery watches the worker pods and each worker patches its
//! own pod (`infera/common/k8s_client.py`, used by `discovery_k8s.py`, `registration_k8s.py` and
//! `server/scaling.py`), the EPP watches its pool — and what `egress.allow` adds.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::discovery::v1::EndpointSlice,
    api::networking::v1::{
        IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule,
        NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
    },
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{Child, Context, meta, nats::MONITOR_PORT};
use crate::{
    flags::EPP_GRPC_PORT,
    naming::{self, Component},
    types::EgressRule,
    validate::{Nats, NetworkPolicy as Settings},
};

/// The ports DNS is served on: 53, and 5353 where the DNS pods listen on it behind a Service on 53
/// (OpenShift's: openshift/cluster-dns-operator `assets/dns/daemonset.yaml`), which a
/// NetworkPolicy sees after the Service's translation.
const DNS_PORTS: [i32; 2] = [53, 5353];

/// The Kubernetes API server's endpoints, as it publishes them: what a pod's connection to the
/// `kubernetes` Service is translated to, and so what a NetworkPolicy sees.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiServer {
    /// IP addresses.
    pub addresses: Vec<String>,
    /// TCP ports.
    pub ports: Vec<i32>,
}

impl ApiServer {
    /// The EndpointSlice the API server keeps of itself, as `(namespace, name)`: named after the
    /// `kubernetes` Service (kubernetes `pkg/controlplane/reconcilers/endpointsadapter.go`).
    pub const SLICE: (&'static str, &'static str) = ("default", "kubernetes");

    /// The endpoints of [`Self::SLICE`]: the addresses of those not known to be unready, and the
    /// TCP ports; `None` when it lists none.
    pub fn of(slice: &EndpointSlice) -> Option<ApiServer> {
        let mut addresses: Vec<String> = slice
            .endpoints
            .iter()
            .filter(|endpoint| {
                let ready = endpoint.conditions.as_ref().and_then(|c| c.ready);
                ready != Some(false)
            })
            .flat_map(|endpoint| endpoint.addresses.iter().cloned())
            .collect();
        let mut ports: Vec<i32> = slice
            .ports
            .iter()
            .flatten()
            .filter(|port| port.protocol.as_deref().is_none_or(|p| p == "TCP"))
            .filter_map(|port| port.port)
            .collect();
        addresses.sort();
        addresses.dedup();
        ports.sort_unstable();
        ports.dedup();
        (!addresses.is_empty() && !ports.is_empty()).then_some(ApiServer { addresses, ports })
    }
}

/// The NetworkPolicies of the graph: NATS's (when managed), the workers' and the EPP's (with
/// GAIE), and the egress of all its pods when restricted.
pub fn policies(cx: &Context<'_>, settings: &Settings) -> Vec<Child> {
    let d = cx.deployment;
    let graph = vec![graph_pods(&d.name)];
    let gateway = d.gaie.as_ref().map(|gaie| {
        vec![namespace(
            gaie.gateway_namespace.as_deref().unwrap_or(&d.namespace),
        )]
    });
    let mut policies = Vec::new();
    if matches!(d.nats, Nats::Managed { .. }) {
        let mut rules = vec![from(graph.clone(), &[])];
        rules.extend(metrics(settings, &[MONITOR_PORT]));
        policies.push(policy(
            cx,
            "nats",
            naming::selector(&d.name, Component::Nats),
            rules,
        ));
    }
    let mut engine_ports: Vec<i32> = d.workers.iter().map(|w| w.pod.port).collect();
    engine_ports.sort_unstable();
    engine_ports.dedup();
    let mut rules = vec![from(graph, &[])];
    if let (Some(gateway), Some(gaie)) = (&gateway, &d.gaie) {
        rules.push(from(gateway.clone(), &[gaie.frontend_port]));
    }
    rules.extend(metrics(settings, &engine_ports));
    if d.planner.is_some() {
        rules.push(from(vec![operator_pods()], &engine_ports));
    }
    let workers = BTreeMap::from([
        (naming::LABEL_DEPLOYMENT.into(), d.name.clone()),
        (naming::LABEL_COMPONENT.into(), "worker".into()),
    ]);
    policies.push(policy(cx, "workers", workers, rules));
    if let Some(gateway) = gateway {
        policies.push(policy(
            cx,
            "epp",
            naming::selector(&d.name, Component::EndpointPicker),
            vec![from(gateway, &[EPP_GRPC_PORT])],
        ));
    }
    if let Some(allow) = &settings.egress {
        let rules = egress(&d.name, cx.apis.api_server.as_ref(), allow);
        policies.push(named(
            cx,
            "egress",
            NetworkPolicySpec {
                pod_selector: Some(labels(graph_selector(&d.name))),
                policy_types: Some(vec!["Egress".into()]),
                egress: Some(rules),
                ..Default::default()
            },
        ));
    }
    policies
}

/// The NetworkPolicy `<deployment>-<protects>` admitting `rules` to the pods `selector` matches.
fn policy(
    cx: &Context<'_>,
    protects: &str,
    selector: BTreeMap<String, String>,
    rules: Vec<NetworkPolicyIngressRule>,
) -> Child {
    named(
        cx,
        protects,
        NetworkPolicySpec {
            pod_selector: Some(labels(selector)),
            policy_types: Some(vec!["Ingress".into()]),
            ingress: Some(rules),
            ..Default::default()
        },
    )
}

/// The NetworkPolicy `<deployment>-<what>`.
fn named(cx: &Context<'_>, what: &str, spec: NetworkPolicySpec) -> Child {
    let name = format!("{}-{what}", cx.deployment.name);
    Child::NetworkPolicy(NetworkPolicy {
        metadata: meta::object_meta(cx.deployment, Component::NetworkPolicy, name),
        spec: Some(spec),
    })
}

/// Restricted egress: to the graph's pods on every port, to DNS on its ports anywhere (the
/// cluster's DNS pods, a node-local cache, or the node's resolver), to the API server's
/// endpoints, and to what `allow` names.
fn egress(
    deployment: &str,
    api_server: Option<&ApiServer>,
    allow: &[EgressRule],
) -> Vec<NetworkPolicyEgressRule> {
    let dns = DNS_PORTS.into_iter().flat_map(|port| {
        ["UDP", "TCP"].map(|protocol| NetworkPolicyPort {
            port: Some(IntOrString::Int(port)),
            protocol: Some(protocol.into()),
            ..Default::default()
        })
    });
    let mut rules = vec![
        to(vec![graph_pods(deployment)], vec![]),
        to(vec![], dns.collect()),
    ];
    if let Some(api) = api_server {
        let hosts = api.addresses.iter().map(|address| NetworkPolicyPeer {
            ip_block: Some(IPBlock {
                cidr: host_cidr(address),
                except: None,
            }),
            ..Default::default()
        });
        rules.push(to(hosts.collect(), tcp(&api.ports)));
    }
    rules.extend(
        allow
            .iter()
            .map(|rule| to(rule.to.clone(), rule.ports.clone())),
    );
    rules
}

/// Egress to `peers` (anywhere when empty) on `ports` (every port when empty).
fn to(peers: Vec<NetworkPolicyPeer>, ports: Vec<NetworkPolicyPort>) -> NetworkPolicyEgressRule {
    NetworkPolicyEgressRule {
        to: (!peers.is_empty()).then_some(peers),
        ports: (!ports.is_empty()).then_some(ports),
    }
}

/// The CIDR of one host: `/32` for IPv4, `/128` for IPv6.
fn host_cidr(address: &str) -> String {
    let bits = if address.contains(':') { 128 } else { 32 };
    format!("{address}/{bits}")
}

/// TCP on each of `ports`.
fn tcp(ports: &[i32]) -> Vec<NetworkPolicyPort> {
    ports
        .iter()
        .map(|&port| NetworkPolicyPort {
            port: Some(IntOrString::Int(port)),
            protocol: Some("TCP".into()),
            ..Default::default()
        })
        .collect()
}

fn labels(selector: BTreeMap<String, String>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(selector),
        ..Default::default()
    }
}

/// Ingress from `peers` on `ports` (every port when empty).
fn from(peers: Vec<NetworkPolicyPeer>, ports: &[i32]) -> NetworkPolicyIngressRule {
    NetworkPolicyIngressRule {
        from: Some(peers),
        ports: (!ports.is_empty()).then(|| tcp(ports)),
    }
}

/// Ingress from `metricsFrom` on the metrics `ports`; none when nobody is named.
fn metrics(settings: &Settings, ports: &[i32]) -> Option<NetworkPolicyIngressRule> {
    (!settings.metrics_from.is_empty()).then(|| from(settings.metrics_from.clone(), ports))
}

/// Every pod of the deployment's graph.
fn graph_pods(deployment: &str) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        pod_selector: Some(labels(graph_selector(deployment))),
        ..Default::default()
    }
}

/// The label every pod of the deployment's graph carries.
fn graph_selector(deployment: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(naming::LABEL_DEPLOYMENT.into(), deployment.into())])
}

/// The operator's pods, in whichever namespace it runs.
fn operator_pods() -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        namespace_selector: Some(LabelSelector::default()),
        pod_selector: Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(
                naming::LABEL_NAME.into(),
                naming::OPERATOR_APP_NAME.into(),
            )])),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Every pod of `namespace` (by the `kubernetes.io/metadata.name` label the API server sets on
/// every namespace).
fn namespace(namespace: &str) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        namespace_selector: Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(
                "kubernetes.io/metadata.name".into(),
                namespace.into(),
            )])),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_server_is_its_ready_endpoints_on_its_tcp_ports() {
        let slice: EndpointSlice = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kubernetes", "namespace": "default"},
            "addressType": "IPv4",
            "endpoints": [
                {"addresses": ["172.18.0.3"], "conditions": {"ready": true}},
                {"addresses": ["172.18.0.2"]},
                {"addresses": ["172.18.0.4"], "conditions": {"ready": false}},
            ],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            ApiServer::of(&slice),
            Some(ApiServer {
                addresses: vec!["172.18.0.2".into(), "172.18.0.3".into()],
                ports: vec![6443],
            })
        );
        let empty = EndpointSlice {
            ports: slice.ports.clone(),
            ..EndpointSlice::default()
        };
        assert_eq!(ApiServer::of(&empty), None);
    }
}
