//! INF602: for a `--for FILE` spec with NetworkPolicies (the default), whether something in the
//! cluster enforces them. Kubernetes stores NetworkPolicies whether or not the network plugin
//! enforces them, and no API says which does: doctor looks for the DaemonSet of a known
//! policy engine and warns when there is none.

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
