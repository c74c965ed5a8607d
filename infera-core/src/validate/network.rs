//! `network.rdma`: RDMA NICs for the pools that move KV caches or tensors between nodes
//! (prefill, decode and multi-node pools), deployment-wide or per pool, and the engine's
//! IB-device flag it injects.

use super::rules::{IB_DEVICE_IN_ARGS, IB_DEVICE_ON_VLLM, RDMA_NOT_ACROSS_NODES};
use super::{
    Errors,
    limits::{MAX_GPUS, MAX_IB_DEVICE_LENGTH, MAX_NETWORK_NAME_LENGTH, MAX_RDMA_NETWORKS},
    syntax::{check_length, check_range, has_label_form, is_resource_name},
};
use crate::{
    flags::{self, IB_DEVICE_FLAG},
    types::{BackendFramework, ComponentType, RdmaSpec, Role, ServiceSpec},
};

/// A pool's RDMA, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rdma {
    /// The RDMA device plugin's extended resource.
    pub resource_name: String,
    /// How many of it each pod requests.
    pub per_pod: i32,
    /// Multus NetworkAttachmentDefinitions (`name` or `namespace/name`).
    pub networks: Vec<String>,
    /// The IB device(s) the engine is told to use.
    pub device: Option<String>,
    /// Whether the engine container gets `IPC_LOCK`.
    pub ipc_lock: bool,
}

/// Whether a service moves KV caches or tensors between nodes: a prefill or decode pool, or a
/// multi-node one.
pub(super) fn across_nodes(svc: &ServiceSpec) -> bool {
    svc.component_type == ComponentType::Worker
        && (svc.role.is_some_and(|role| role != Role::Mixed)
            || svc.number_of_nodes.is_some_and(|nodes| nodes > 1))
}

/// Checks `spec.network.rdma` (at `path`) on its own.
pub(super) fn deployment(
    errors: &mut Errors,
    path: &str,
    rdma: &RdmaSpec,
    backend: BackendFramework,
) {
    syntax(errors, path, rdma, backend);
}

/// The RDMA of the worker pool `svc` (at `path`, with `gpu` GPUs per pod): its own
/// `network.rdma`, or the deployment's when it has no `network` and moves data between nodes.
pub(super) fn of_service(
    errors: &mut Errors,
    path: &str,
    svc: &ServiceSpec,
    deployment: Option<&RdmaSpec>,
    backend: BackendFramework,
    gpu: i32,
) -> Option<Rdma> {
    let own = svc.network.as_ref().map(|network| network.rdma.as_ref());
    if let Some(Some(rdma)) = own {
        if !across_nodes(svc) {
            errors.push(format!("{path}.network.rdma"), RDMA_NOT_ACROSS_NODES);
        }
        syntax(errors, &format!("{path}.network.rdma"), rdma, backend);
    }
    let rdma = match own {
        Some(own) => own,
        None => deployment.filter(|_| across_nodes(svc)),
    }?;
    if rdma.device.is_some() {
        for (i, arg) in svc.args.iter().enumerate() {
            if flags::flag_name(arg) == Some(IB_DEVICE_FLAG) {
                errors.push(format!("{path}.args[{i}]"), IB_DEVICE_IN_ARGS);
            }
        }
    }
    (svc.component_type == ComponentType::Worker).then(|| Rdma {
        resource_name: rdma.resource_name.clone(),
        per_pod: rdma.per_pod.unwrap_or(gpu),
        networks: rdma.networks.clone(),
        device: rdma.device.clone(),
        ipc_lock: rdma.ipc_lock.unwrap_or(true),
    })
}

/// The form of one `network.rdma` at `path`: the schema's limits and patterns, and a device only
/// for an engine that takes one.
fn syntax(errors: &mut Errors, path: &str, rdma: &RdmaSpec, backend: BackendFramework) {
    if !is_resource_name(&rdma.resource_name) {
        errors.push(
            format!("{path}.resourceName"),
            "must be an extended resource name such as rdma/hca or amd.com/vnic; fix the name",
        );
    }
    if let Some(per_pod) = rdma.per_pod {
        check_range(
            errors,
            &format!("{path}.perPod"),
            per_pod,
            1..=MAX_GPUS,
            "must be at least 1; set how many of the resource each pod requests",
        );
    }
    if rdma.networks.len() > MAX_RDMA_NETWORKS {
        errors.push(
            format!("{path}.networks"),
            format!("at most {MAX_RDMA_NETWORKS} networks are allowed; remove some"),
        );
    }
    for (i, network) in rdma.networks.iter().enumerate() {
        let at = format!("{path}.networks[{i}]");
        if !is_network_name(network) {
            errors.push(
                &at,
                format!("must name a NetworkAttachmentDefinition as name or namespace/name (lowercase DNS names, at most {MAX_NETWORK_NAME_LENGTH} characters); fix the name"),
            );
        }
    }
    if let Some(device) = &rdma.device {
        let at = format!("{path}.device");
        check_length(errors, &at, device, MAX_IB_DEVICE_LENGTH);
        if !device.is_empty() && !is_ib_device(device) {
            errors.push(
                &at,
                "must be IB device names separated by commas, such as rdma0 or mlx5_0,mlx5_1; fix the names",
            );
        }
        if backend == BackendFramework::Vllm {
            errors.push(&at, IB_DEVICE_ON_VLLM);
        }
    }
}

/// What [`super::limits::NETWORK_NAME_PATTERN`] and its length admit.
fn is_network_name(s: &str) -> bool {
    let (namespace, name) = match s.split_once('/') {
        Some((namespace, name)) => (Some(namespace), name),
        None => (None, s),
    };
    s.len() <= MAX_NETWORK_NAME_LENGTH
        && namespace.is_none_or(has_label_form)
        && name.split('.').all(has_label_form)
}

/// What [`super::limits::IB_DEVICE_PATTERN`] admits.
fn is_ib_device(s: &str) -> bool {
    s.split(',').all(|name| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_names_and_devices_have_the_schemas_form() {
        for good in ["rdma-net", "team-a/rdma-net", "net.v1", "a"] {
            assert!(is_network_name(good), "{good}");
        }
        for bad in ["", "Net", "a/b/c", "-a", "a-", "/a", "a/", "a..b"] {
            assert!(!is_network_name(bad), "{bad}");
        }
        for good in ["rdma0", "mlx5_0,mlx5_1", "ionic_0"] {
            assert!(is_ib_device(good), "{good}");
        }
        for bad in ["", "a,", ",a", "a b", "<rdma-nic>"] {
            assert!(!is_ib_device(bad), "{bad}");
        }
    }
}
