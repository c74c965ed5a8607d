//! INF301, INF302, INF303: AMD GPUs — which nodes have them (whole GPUs, partitions of the device
//! plugin's `mixed` strategy, or DRA) and of which product, how many are free, and whether a spec
//! fits them now, product by product.

use std::collections::{BTreeMap, BTreeSet};

use infera_core::{ValidDeployment, gpu_product};
use k8s_openapi::api::core::v1::{Node, Pod};

use super::{Check, Facts, Read, check};

/// The extended resource Infera requests by default.
const GPU: &str = "amd.com/gpu";
/// AMD's DRA driver and DeviceClass name.
pub const AMD_DRA: &str = "gpu.amd.com";

/// GPU capacity of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGpus {
    pub node: String,
    pub resource: String,
    pub allocatable: i64,
    pub requested: i64,
    pub schedulable: bool,
    /// The node's `amd.com/gpu.product-name` label, if AMD's node labeller set it.
    pub product: Option<String>,
    /// Free amount of each other extended resource of the node (`prefix/name`, such as an RDMA
    /// device plugin's `rdma/hca`), for pools that request one next to the GPUs.
    pub extended_free: BTreeMap<String, i64>,
}

impl NodeGpus {
    pub fn free(&self) -> i64 {
        (self.allocatable - self.requested).max(0)
    }

    /// The product as users name it (`MI300X`), if the node is labelled.
    pub fn product_name(&self) -> Option<String> {
        self.product.as_deref().map(gpu_product::product_of)
    }

    /// Whether a pool that names `product` (or none) may run here.
    fn has_product(&self, product: Option<&str>) -> bool {
        match (product, &self.product) {
            (None, _) => true,
            (Some(wanted), Some(label)) => gpu_product::matches(wanted, label),
            (Some(_), None) => false,
        }
    }
}

/// Free GPUs of `resource` per product on schedulable nodes (unlabelled nodes left out), by
/// product name.
pub fn free_per_product(capacity: &[NodeGpus], resource: &str) -> BTreeMap<String, i64> {
    let mut free = BTreeMap::new();
    for gpus in capacity
        .iter()
        .filter(|g| g.schedulable && g.resource == resource)
    {
        if let Some(product) = gpus.product_name() {
            *free.entry(product).or_insert(0) += gpus.free();
        }
    }
    free
}

/// A whole-number quantity (GPUs); anything else counts as 0.
fn quantity(q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity) -> i64 {
    q.0.trim().parse().unwrap_or(0)
}

/// Whether a node takes new pods: not cordoned and Ready.
fn schedulable(node: &Node) -> bool {
    let cordoned = node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false);
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    !cordoned && ready
}

/// GPUs requested on a node by pods that hold resources.
fn requested(pods: &[Pod], node: &str, resource: &str) -> i64 {
    pods.iter()
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node))
        .filter(|p| {
            !matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            )
        })
        .map(|p| {
            let spec = p.spec.clone().unwrap_or_default();
            let of = |c: &k8s_openapi::api::core::v1::Container| {
                let r = c.resources.clone().unwrap_or_default();
                r.limits
                    .as_ref()
                    .and_then(|l| l.get(resource))
                    .or_else(|| r.requests.as_ref().and_then(|l| l.get(resource)))
                    .map(quantity)
                    .unwrap_or(0)
            };
            let containers: i64 = spec.containers.iter().map(of).sum();
            let init: i64 = spec
                .init_containers
                .iter()
                .flatten()
                .map(of)
                .max()
                .unwrap_or(0);
            containers.max(init)
        })
        .sum()
}

/// Every node's capacity of every AMD GPU resource (`amd.com/gpu` and partition names).
pub fn gpu_capacity(nodes: &[Node], pods: &[Pod]) -> Vec<NodeGpus> {
    let mut out = Vec::new();
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let product = node
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(gpu_product::PRODUCT_LABEL))
            .cloned();
        let extended_free: BTreeMap<String, i64> = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .into_iter()
            .flatten()
            .filter(|(resource, _)| resource.contains('/') && !is_amd_gpu_resource(resource))
            .map(|(resource, q)| {
                let free = quantity(q) - requested(pods, &name, resource);
                (resource.clone(), free.max(0))
            })
            .collect();
        let allocatable: BTreeMap<String, _> = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.clone())
            .unwrap_or_default();
        for (resource, q) in allocatable.iter().filter(|(k, _)| is_amd_gpu_resource(k)) {
            let allocatable = quantity(q);
            if allocatable > 0 {
                out.push(NodeGpus {
                    node: name.clone(),
                    resource: resource.clone(),
                    allocatable,
                    requested: requested(pods, &name, resource),
                    schedulable: schedulable(node),
                    product: product.clone(),
                    extended_free: extended_free.clone(),
                });
            }
        }
    }
    out
}

/// `amd.com/gpu`, or a partition name of AMD's device plugin (`amd.com/cpx_nps4`, `amd.com/spx_nps1`…).
pub fn is_amd_gpu_resource(name: &str) -> bool {
    match name.strip_prefix("amd.com/") {
        Some("gpu") => true,
        Some(rest) => {
            let mut parts = rest.split('_');
            matches!(parts.next(), Some("spx" | "dpx" | "tpx" | "qpx" | "cpx"))
                && parts.next().is_some_and(|p| p.starts_with("nps"))
        }
        None => false,
    }
}

/// Places every pod of every worker pool on the free GPUs (best fit) of its resource and, when it
/// names one, its GPU product, with the RDMA NICs it requests free on the same node, pool by pool.
pub fn fit(spec: &ValidDeployment, capacity: &[NodeGpus]) -> (bool, Vec<String>) {
    let mut free: Vec<(&NodeGpus, i64, BTreeMap<String, i64>)> = capacity
        .iter()
        .filter(|c| c.schedulable)
        .map(|c| (c, c.free(), c.extended_free.clone()))
        .collect();
    let mut ok = true;
    let mut lines = Vec::new();
    for worker in &spec.workers {
        let pods = i64::from(worker.pod.replicas) * i64::from(worker.nodes);
        let gpus = i64::from(worker.gpu);
        let product = worker.gpu_product.as_deref();
        let nics = worker
            .rdma
            .as_ref()
            .map(|rdma| (rdma.resource_name.as_str(), i64::from(rdma.per_pod)));
        let usable =
            |node: &NodeGpus| node.resource == worker.gpu_type && node.has_product(product);
        let has_nics = |extended: &BTreeMap<String, i64>| {
            nics.is_none_or(|(resource, count)| {
                extended.get(resource).is_some_and(|free| *free >= count)
            })
        };
        let mut placed = 0;
        for _ in 0..pods {
            let best = free
                .iter_mut()
                .filter(|(node, f, extended)| usable(node) && *f >= gpus && has_nics(extended))
                .min_by_key(|(_, f, _)| *f);
            match best {
                Some(slot) => {
                    slot.1 -= gpus;
                    if let Some((resource, count)) = nics
                        && let Some(free) = slot.2.get_mut(resource)
                    {
                        *free -= count;
                    }
                    placed += 1;
                }
                None => break,
            }
        }
        let of_product = product.map_or(String::new(), |p| format!(" of product {p}"));
        let with_nics = nics.map_or(String::new(), |(resource, count)| {
            format!(" with {count} {resource}")
        });
        let shape = format!(
            "{pods} pod(s) × {gpus} {}{of_product}{with_nics}",
            worker.gpu_type
        );
        if placed == pods {
            lines.push(format!("{}: {shape} fit", worker.pod.service));
        } else {
            ok = false;
            let largest = free
                .iter()
                .filter(|(node, _, extended)| usable(node) && has_nics(extended))
                .map(|(_, f, _)| *f)
                .max()
                .unwrap_or(0);
            let mut line = format!(
                "{}: {shape} needed, only {placed} fit (largest free block left: {largest} on one node)",
                worker.pod.service
            );
            if let Some(product) = product
                && !capacity.iter().any(|node| node.has_product(Some(product)))
            {
                line.push_str(&format!(
                    "; no node has {product}, the cluster has {}",
                    products_present(capacity)
                ));
            } else if let Some((resource, _)) = nics
                && !capacity
                    .iter()
                    .any(|node| usable(node) && node.extended_free.contains_key(resource))
            {
                line.push_str(&format!("; no node with these GPUs advertises {resource}"));
            }
            lines.push(line);
        }
    }
    (ok, lines)
}

/// The GPU products of `capacity`'s nodes, by name, or "no labelled GPU product".
pub fn products_present(capacity: &[NodeGpus]) -> String {
    let products: BTreeSet<String> = capacity.iter().filter_map(NodeGpus::product_name).collect();
    if products.is_empty() {
        format!("no node labelled {}", gpu_product::PRODUCT_LABEL)
    } else {
        products.into_iter().collect::<Vec<_>>().join(", ")
    }
}

/// INF301, INF302, INF303: the node list comes first; without it the others are skipped.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let nodes_check = check("INF301", "gpu", "gpu-nodes");
    let free_check = check("INF302", "gpu", "gpu-free");
    let fit_check = check("INF303", "gpu", "gpu-fit");
    match &f.nodes {
        Some(Ok(nodes)) => {
            let pods: &[Pod] = match &f.pods {
                Some(Ok(p)) => p,
                _ => &[],
            };
            let capacity = gpu_capacity(nodes, pods);
            out.push(nodes_found(nodes_check, nodes.len(), &capacity, &f.dra));
            out.push(free(free_check, &f.pods, &capacity));
            out.push(match &f.spec {
                Some(spec) => fits(fit_check, spec, &capacity),
                None => fit_check.skip("pass --for FILE to check a spec"),
            });
        }
        Some(Err(e)) => {
            out.push(nodes_check.unreadable("listing nodes", e));
            out.push(free_check.skip("needs the node list"));
            out.push(fit_check.skip("needs the node list"));
        }
        None => {
            out.push(nodes_check.skip("not checked"));
            out.push(free_check.skip("not checked"));
            out.push(fit_check.skip("not checked"));
        }
    }
}

/// INF301: whole GPUs pass; partition names and DRA warn with what to do instead of failing.
fn nodes_found(
    c: Check,
    nodes: usize,
    capacity: &[NodeGpus],
    dra: &Option<Read<(Vec<String>, usize)>>,
) -> Check {
    let whole: Vec<&NodeGpus> = capacity.iter().filter(|g| g.resource == GPU).collect();
    let partitions: BTreeSet<&str> = capacity
        .iter()
        .filter(|g| g.resource != GPU)
        .map(|g| g.resource.as_str())
        .collect();
    let partitioned_nodes = capacity.iter().filter(|g| g.resource != GPU).count();
    let dra = match dra {
        Some(Ok((classes, slices))) => classes.iter().any(|class| class == AMD_DRA) || *slices > 0,
        _ => false,
    };
    if !whole.is_empty() {
        let total: i64 = whole.iter().map(|g| g.allocatable).sum();
        let mut per_product: BTreeMap<String, usize> = BTreeMap::new();
        for product in whole.iter().filter_map(|g| g.product_name()) {
            *per_product.entry(product).or_insert(0) += 1;
        }
        let products: Vec<String> = per_product
            .iter()
            .map(|(product, nodes)| format!("{nodes} {product}"))
            .collect();
        let products = if products.is_empty() {
            String::new()
        } else {
            format!("; GPU products: {}", products.join(", "))
        };
        c.pass(format!(
            "{} node(s) with {total} allocatable {GPU}{products}",
            whole.len()
        ))
    } else if let Some(first) = partitions.first() {
        let names: Vec<&str> = partitions.iter().copied().collect();
        c.warn(
            format!("no node has {GPU}, but {partitioned_nodes} node(s) have partitioned AMD GPUs: {}", names.join(", ")),
            format!("the device plugin uses the `mixed` naming strategy: set `resources.gpuType: {first}` on your worker pools"),
        )
    } else if dra {
        c.warn(
            format!("no node has {GPU}: AMD GPUs are exposed through DRA (DeviceClass {AMD_DRA})"),
            format!("Infera requests GPUs as an extended resource; use a pool with AMD's device plugin (amd.com/gpu), or map DeviceClass {AMD_DRA} to an extended resource name (DRA extended-resource mapping) and set resources.gpuType"),
        )
    } else {
        c.fail(
            format!("no node has allocatable {GPU} (of {nodes} node(s))"),
            "install the AMD GPU Operator or device plugin (ROCm/k8s-device-plugin) on your GPU nodes, and check `kubectl describe node` shows amd.com/gpu",
        )
    }
}

/// INF302: free GPUs per node; a warning when none is free on a schedulable node.
fn free(c: Check, pods: &Option<Read<Vec<Pod>>>, capacity: &[NodeGpus]) -> Check {
    if let Some(Err(e)) = pods {
        return c.unreadable("listing pods to count GPUs in use", e);
    }
    if capacity.is_empty() {
        return c.skip("no GPU nodes");
    }
    let details: Vec<String> = capacity
        .iter()
        .map(|g| {
            let note = if g.schedulable {
                ""
            } else {
                " (cordoned or NotReady)"
            };
            let product = g.product_name().map_or(String::new(), |p| format!(" {p}"));
            format!(
                "{}: {}/{}{product} {} free{note}",
                g.node,
                g.free(),
                g.allocatable,
                g.resource
            )
        })
        .collect();
    let free: i64 = capacity
        .iter()
        .filter(|g| g.schedulable)
        .map(NodeGpus::free)
        .sum();
    if free > 0 {
        c.pass(format!("{free} GPU(s) free on schedulable nodes"))
            .details(details)
    } else {
        c.warn(
            "every GPU is in use (or on an unschedulable node)",
            "new worker pods will stay Pending until GPUs free up",
        )
        .details(details)
    }
}

/// INF303: `--for FILE` placed pool by pool on the free GPUs.
fn fits(c: Check, spec: &ValidDeployment, capacity: &[NodeGpus]) -> Check {
    let (ok, lines) = fit(spec, capacity);
    if ok {
        c.pass(format!("{} fits the free GPUs now", spec.name))
            .details(lines)
    } else {
        c.fail(
            format!("{} does not fit the free GPUs now", spec.name),
            "reduce replicas, GPUs per pod or nodes per group, or free/add GPU nodes",
        )
        .details(lines)
    }
}
