//! INF602: for a `--for FILE` spec with NetworkPolicies (the default), whether something in the
//! cluster enforces them. Kubernetes stores NetworkPolicies whether or not the network plugin
//! enforces them, and no API says which does: doctor looks for the DaemonSet of a known
//! policy engine and warns when there is none.
//!
//! INF603: for a spec with restricted egress, whether the API server publishes its endpoints, which
//! the egress policy names (the operator applies nothing of the graph until it can).

use super::{Check, Facts, check};

/// Names (or name prefixes) of the DaemonSets of the NetworkPolicy engines doctor knows.
pub const ENGINES: [&str; 11] = [
    "calico-node",
    "canal",
    "cilium",
    "anetd",
    "antrea-agent",
    "kube-router",
    "kube-network-policies",
    "weave-net",
    "kube-ovn-cni",
    "ovnkube-node",
    "azure-npm",
];

/// The DaemonSets, as `namespace/name`, that run a known engine.
pub fn engines<'a>(daemonsets: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    daemonsets
        .into_iter()
        .filter(|ds| {
            let name = ds.rsplit('/').next().unwrap_or(ds);
            ENGINES.iter().any(|engine| name.starts_with(engine))
        })
        .map(str::to_owned)
        .collect()
}

/// INF602, only for a `--for` spec that renders NetworkPolicies.
pub(super) fn enforcement(f: &Facts) -> Option<Check> {
    let found = f.network_policy_engines.as_ref()?;
    let c = check("INF602", "security", "network-policy");
    Some(match found {
        Err(e) => c.unreadable("listing DaemonSets", e),
        Ok(engines) if engines.is_empty() => c.warn(
            format!(
                "no NetworkPolicy engine found among the cluster's DaemonSets (looked for {}): the graph's NetworkPolicies will be created, but nothing may enforce them",
                ENGINES.join(", ")
            ),
            "ask your platform team which engine enforces NetworkPolicies here (one running outside a DaemonSet is not seen), or install one; set networkPolicy.enabled: false to create none",
        ),
        Ok(engines) => c.pass(format!(
            "NetworkPolicies are enforced by {}",
            engines.join(", ")
        )),
    })
}

/// INF603, only for a `--for` spec with restricted egress.
pub(super) fn api_server(f: &Facts) -> Option<Check> {
    let read = f.api_server.as_ref()?;
    let c = check("INF603", "security", "egress-api-server");
    let (namespace, name) = infera_core::render::ApiServer::SLICE;
    Some(match read {
        Err(e) => c.unreadable(&format!("reading EndpointSlice {namespace}/{name}"), e),
        Ok(None) => c.fail(
            format!(
                "the API server publishes no endpoints (EndpointSlice {namespace}/{name} is missing or lists none): with restricted egress the operator cannot let the graph's pods reach it, and applies nothing of the graph"
            ),
            "run the API server with an endpoint reconciler (--endpoint-reconciler-type=lease, its default), or leave egress open (remove networkPolicy.egress.restrict)",
        ),
        Ok(Some(api)) => c.pass(format!(
            "restricted egress lets the graph's pods reach the API server at {} (port {})",
            api.addresses.join(", "),
            api.ports
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    })
}
