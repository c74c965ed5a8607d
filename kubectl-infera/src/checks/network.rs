//! INF305: a `--for FILE` spec's RDMA networks exist: Multus's NetworkAttachmentDefinition CRD
//! is installed and every network a pool attaches is there.

use std::collections::BTreeSet;

use infera_core::ValidDeployment;

use super::{Check, Facts, Read, check};

/// The CRD Multus installs (k8snetworkplumbingwg/multus-cni deployments/multus-daemonset.yml).
pub const NAD_CRD: &str = "network-attachment-definitions.k8s.cni.cncf.io";

/// The NetworkAttachmentDefinitions of the spec, as `(namespace, name)`, once each: a bare name
/// is in the spec's namespace (as Multus resolves it, docs/how-to-use.md).
pub fn networks_of(spec: &ValidDeployment) -> BTreeSet<(String, String)> {
    spec.workers
        .iter()
        .filter_map(|worker| worker.rdma.as_ref())
        .flat_map(|rdma| rdma.networks.iter())
        .map(|network| match network.split_once('/') {
            Some((namespace, name)) => (namespace.to_string(), name.to_string()),
            None => (spec.namespace.clone(), network.clone()),
        })
        .collect()
}

/// What doctor found of the spec's networks: `None` without the CRD, else each network and
/// whether it exists.
pub type NetworkFacts = Option<Vec<((String, String), bool)>>;

/// INF305, only for a `--for` spec whose pools attach networks.
pub(super) fn networks(f: &Facts) -> Option<Check> {
    let found: &Read<NetworkFacts> = f.rdma_networks.as_ref()?;
    let c = check("INF305", "network", "rdma-networks");
    Some(match found {
        Err(e) => c.unreadable("reading the NetworkAttachmentDefinitions", e),
        Ok(None) => c.fail(
            format!("the spec attaches RDMA networks, but the {NAD_CRD} CRD is not installed"),
            "install Multus (k8snetworkplumbingwg/multus-cni) and create the NetworkAttachmentDefinitions, or remove network.rdma.networks",
        ),
        Ok(Some(networks)) => {
            let name = |((namespace, name), _): &((String, String), bool)| format!("{namespace}/{name}");
            let missing: Vec<String> = networks.iter().filter(|(_, exists)| !exists).map(name).collect();
            if missing.is_empty() {
                c.pass(format!(
                    "every RDMA network exists: {}",
                    networks.iter().map(name).collect::<Vec<_>>().join(", ")
                ))
            } else {
                c.fail(
                    format!("missing NetworkAttachmentDefinition(s): {}", missing.join(", ")),
                    "create them (kubectl get network-attachment-definitions -A lists those there are), or fix network.rdma.networks",
                )
            }
        }
    })
}
