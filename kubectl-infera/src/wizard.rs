//! The [`Source::Wizard`](crate::spec::Source) source of a spec: on a terminal, asks for every
//! spec flag `deploy` was not given and returns the completed flags, which then become a spec
//! exactly as flags do ([`crate::plan::resolve`]). Flags already given are not asked again;
//! defaults come from the cluster where it can tell ([`ClusterHints`]).

use std::collections::BTreeMap;

use inquire::{Confirm, CustomType, InquireError, Select, Text, validator::Validation};

use crate::{
    cli::{Backend, Discovery, SpecFlags, Topology},
    error::{Error, Result},
    plan,
};

/// What the cluster tells us for defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterHints {
    /// Largest allocatable `amd.com/gpu` on one node.
    pub gpus_per_node: Option<i32>,
    /// Nodes with at least one GPU.
    pub gpu_nodes: usize,
    /// Free `amd.com/gpu` per GPU product on schedulable nodes that AMD's node labeller labelled.
    pub free_per_product: BTreeMap<String, i64>,
    /// Allocatable RDMA NICs per resource name (see [`is_rdma_resource`]), over all nodes.
    pub rdma_per_resource: BTreeMap<String, i64>,
}

/// Whether a node's extended resource is RDMA NICs as the device plugins name them: the RDMA
/// shared device plugin's `rdma/<name>` (k8snetworkplumbingwg/k8s-rdma-shared-dev-plugin, e.g.
/// `rdma/hca`) and AMD's `amd.com/vnic`.
pub fn is_rdma_resource(name: &str) -> bool {
    name.starts_with("rdma/") || name == "amd.com/vnic"
}

/// The note printed once when the cluster has no RDMA NICs, instead of asking about them.
pub const NO_RDMA: &str = "No node advertises RDMA NICs (an rdma/* or amd.com/vnic resource): the KV transfer goes over the pod network, so the wizard asks nothing about RDMA (--rdma-resource, --rdma-network and --ib-device set it anyway).";

/// Asks for everything `given` does not already say, and returns the completed flags.
/// `note` prints a line between the questions.
pub fn run(given: &SpecFlags, hints: &ClusterHints, note: &dyn Fn(&str)) -> Result<SpecFlags> {
    let mut flags = given.clone();
    ask_what(&mut flags, hints)?;
    ask_product(&mut flags, hints)?;
    ask_sizes(&mut flags, hints)?;
    ask_rdma(&mut flags, hints, note)?;
    ask_transfer(&mut flags)?;
    ask_services(&mut flags)?;
    Ok(flags)
}

/// The final question before applying.
pub fn confirm(context: &str, namespace: &str, name: &str) -> Result<bool> {
    Confirm::new(&format!(
        "Apply {name} to namespace {namespace} of context {context}?"
    ))
    .with_default(true)
    .prompt()
    .map_err(cancelled)
}

/// Name, engine, model, topology and image.
fn ask_what(f: &mut SpecFlags, hints: &ClusterHints) -> Result<()> {
    if f.name.is_none() {
        let name = Text::new("Name of the deployment:")
            .with_default("demo")
            .with_validator(|s: &str| Ok(name_validation(s)))
            .prompt()
            .map_err(cancelled)?;
        f.name = Some(name);
    }
    if f.backend.is_none() {
        let engines = [("sglang", Backend::Sglang), ("vllm", Backend::Vllm)];
        f.backend = Some(choose("Inference engine:", &engines, "both run on ROCm")?);
    }
    if f.model.is_none() {
        f.model = Some(ask_text(
            "Model (Hugging Face id or path):",
            "Qwen/Qwen3-0.6B",
            "passed to every worker; or a volume: hf://ORG/NAME (downloaded first), pvc://CLAIM, hostPath:///PATH",
        )?);
    }
    if f.tokenizer.is_none()
        && f.model
            .as_deref()
            .is_some_and(|model| plan::model_tokenizer(model).is_none())
    {
        f.tokenizer = Some(ask_text(
            "Tokenizer of the model (Hugging Face id):",
            "Qwen/Qwen3-0.6B",
            "the router scores with it and does not mount the model's volume",
        )?);
    }
    if f.topology.is_none() {
        let multinode_help = if hints.gpu_nodes >= 2 {
            ""
        } else {
            " (the cluster has fewer than 2 GPU nodes)"
        };
        let topologies = [
            ("aggregated — one pool of workers", Topology::Aggregated),
            ("pd — disaggregated prefill and decode pools", Topology::Pd),
            (
                "multinode — each replica spans several nodes (LeaderWorkerSet)",
                Topology::Multinode,
            ),
        ];
        let help = format!("↑↓ to move, enter to select{multinode_help}");
        f.topology = Some(choose("Topology:", &topologies, &help)?);
    }
    if f.image.is_none() {
        let backend = f.backend.unwrap_or(Backend::Sglang);
        let default = plan::default_image(backend);
        f.image = Some(ask_text("Image:", &default, "used by every service")?);
    }
    Ok(())
}

/// The GPU product, when the cluster's nodes are labelled with products: each with its free GPUs.
fn ask_product(f: &mut SpecFlags, hints: &ClusterHints) -> Result<()> {
    if f.gpu_product.is_some() || hints.free_per_product.is_empty() {
        return Ok(());
    }
    let labels: Vec<String> = hints
        .free_per_product
        .iter()
        .map(|(product, free)| format!("{product} — {free} GPU(s) free"))
        .collect();
    let mut options: Vec<(&str, Option<&str>)> = vec![("any product", None)];
    options.extend(
        labels
            .iter()
            .zip(hints.free_per_product.keys())
            .map(|(label, product)| (label.as_str(), Some(product.as_str()))),
    );
    let help = "the workers run only on nodes of this product";
    f.gpu_product = choose("GPU product:", &options, help)?.map(String::from);
    Ok(())
}

/// GPUs, nodes and tensor parallelism per replica, and how many replicas.
fn ask_sizes(f: &mut SpecFlags, hints: &ClusterHints) -> Result<()> {
    let topology = f.topology.unwrap_or(Topology::Aggregated);
    if f.gpus.is_none() {
        let default = match topology {
            Topology::Multinode => hints.gpus_per_node.unwrap_or(8).max(1),
            Topology::Aggregated | Topology::Pd => 1,
        };
        let help = match hints.gpus_per_node {
            Some(n) => format!("the largest GPU node has {n} GPUs"),
            None => "could not read the nodes; check with `kubectl infera doctor`".into(),
        };
        f.gpus = Some(ask_number("GPUs per worker pod:", default, 1, &help)?);
    }
    if topology == Topology::Multinode && f.nodes.is_none() {
        let help = format!("the cluster has {} GPU node(s)", hints.gpu_nodes);
        f.nodes = Some(ask_number("Nodes per replica:", 2, 2, &help)?);
    }
    if f.tp.is_none() {
        let help = "tensor parallelism; with several nodes, pipeline parallelism covers the rest";
        let gpus = f.gpus.unwrap_or(1);
        f.tp = Some(ask_number("Tensor-parallel size:", gpus, 1, help)?);
    }
    let replicas = match topology {
        Topology::Pd => vec![
            ("Prefill replicas:", &mut f.prefill_replicas),
            ("Decode replicas:", &mut f.decode_replicas),
        ],
        Topology::Aggregated | Topology::Multinode => {
            vec![("Worker replicas:", &mut f.replicas)]
        }
    };
    for (message, slot) in replicas {
        if slot.is_none() {
            *slot = Some(ask_number(message, 1, 0, "")?);
        }
    }
    let gpus = f.gpus.unwrap_or(1);
    if f.memory.is_none() {
        let help = format!("{}Gi per GPU", plan::MEMORY_GIB_PER_GPU);
        f.memory = Some(ask_quantity(
            "Memory per worker pod:",
            &plan::default_memory(gpus),
            &help,
        )?);
    }
    if f.shared_memory.is_none() {
        let help = format!(
            "{}Gi per GPU; memory-backed, so it counts against the pod's memory",
            plan::SHARED_MEMORY_GIB_PER_GPU
        );
        f.shared_memory = Some(ask_quantity(
            "Shared memory (/dev/shm) per worker pod:",
            &plan::default_shared_memory(gpus),
            &help,
        )?);
    }
    Ok(())
}

/// A Kubernetes quantity such as `64Gi`, with a default.
fn ask_quantity(message: &str, default: &str, help: &str) -> Result<String> {
    text(message, default, help)
        .with_validator(|s: &str| {
            Ok(if infera_core::validate::is_quantity(s.trim()) {
                Validation::Valid
            } else {
                Validation::Invalid("a quantity such as 64Gi or 512Mi".into())
            })
        })
        .prompt()
        .map(|s| s.trim().to_string())
        .map_err(cancelled)
}

/// How SGLang moves the KV cache from prefill to decode (pd only).
fn ask_transfer(f: &mut SpecFlags) -> Result<()> {
    if f.topology != Some(Topology::Pd) || f.backend != Some(Backend::Sglang) {
        return Ok(());
    }
    if f.transfer_backend.is_none() {
        let backends = [("mori", "mori"), ("nixl", "nixl"), ("mooncake", "mooncake")];
        let help = "moves the KV cache from prefill to decode";
        f.transfer_backend = Some(choose("KV transfer backend:", &backends, help)?.into());
    }
    if f.ib_device.is_none() && f.rdma_resource.is_some() {
        let device = Text::new("RDMA device (empty: let the engine choose):")
            .with_help_message("e.g. rdma0 or mlx5_0")
            .prompt()
            .map_err(cancelled)?;
        f.ib_device = (!device.trim().is_empty()).then(|| device.trim().to_string());
    }
    Ok(())
}

/// The RDMA NICs of the prefill, decode and multi-node pools, when the topology has such pools
/// and no RDMA flag was given: offered only when the cluster's nodes advertise some, each with
/// how many there are; otherwise said once.
fn ask_rdma(f: &mut SpecFlags, hints: &ClusterHints, note: &dyn Fn(&str)) -> Result<()> {
    let across_nodes = matches!(f.topology, Some(Topology::Pd | Topology::Multinode));
    let given = f.rdma_resource.is_some() || !f.rdma_networks.is_empty() || f.ib_device.is_some();
    if !across_nodes || given {
        return Ok(());
    }
    if hints.rdma_per_resource.is_empty() {
        note(NO_RDMA);
        return Ok(());
    }
    let labels: Vec<String> = hints
        .rdma_per_resource
        .iter()
        .map(|(resource, count)| format!("{resource} — {count} on the nodes"))
        .collect();
    let mut options: Vec<(&str, Option<&str>)> = vec![("none — the pod network", None)];
    options.extend(
        labels
            .iter()
            .zip(hints.rdma_per_resource.keys())
            .map(|(label, resource)| (label.as_str(), Some(resource.as_str()))),
    );
    let help = "the NICs each prefill, decode and multi-node pod requests (one per GPU)";
    f.rdma_resource = choose("RDMA NICs for the KV transfer:", &options, help)?.map(String::from);
    if f.rdma_resource.is_some() {
        let networks = Text::new("Multus networks to attach (comma-separated; empty: none):")
            .with_help_message("NetworkAttachmentDefinition names, name or namespace/name")
            .prompt()
            .map_err(cancelled)?;
        f.rdma_networks = networks
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
    }
    Ok(())
}

/// Router policy, NATS and discovery.
fn ask_services(f: &mut SpecFlags) -> Result<()> {
    if f.router_policy.is_none() {
        // The plan's default policy first.
        let policies = match f.topology {
            Some(Topology::Pd) => ["kv-aware", "cache-aware", "round-robin", "random"],
            _ => ["round-robin", "kv-aware", "cache-aware", "random"],
        }
        .map(|p| (p, p));
        let help = "how the server picks a worker";
        f.router_policy = Some(choose("Router policy:", &policies, help)?.into());
    }
    if f.nats.is_none() {
        let nats = Confirm::new("Deploy a managed NATS JetStream for KV events?")
            .with_default(true)
            .with_help_message("needs a default StorageClass");
        f.nats = Some(nats.prompt().map_err(cancelled)?);
    }
    if f.discovery.is_none() {
        let backends = [
            ("kubernetes — no extra service", Discovery::Kubernetes),
            ("etcd — an external etcd", Discovery::Etcd),
        ];
        f.discovery = Some(choose("Discovery backend:", &backends, "")?);
    }
    if f.discovery == Some(Discovery::Etcd) && f.etcd_endpoint.is_none() {
        f.etcd_endpoint = Some(ask_text("etcd endpoint:", "http://etcd:2379", "")?);
    }
    Ok(())
}

/// A deployment name the API server and infera-core accept.
fn name_validation(name: &str) -> Validation {
    if infera_core::naming::is_dns_label(name)
        && name.len() <= infera_core::naming::MAX_DEPLOYMENT_NAME
    {
        Validation::Valid
    } else {
        Validation::Invalid(
            "lowercase letters, digits and '-', starting with a letter, at most 42".into(),
        )
    }
}

/// The help line under a prompt; none for an empty text, which inquire would draw as `[]`.
fn help_line(help: &str) -> Option<&str> {
    (!help.is_empty()).then_some(help)
}

/// A required text answer with a default.
fn text<'a>(message: &'a str, default: &'a str, help: &'a str) -> Text<'a, 'a> {
    let mut prompt = Text::new(message)
        .with_default(default)
        .with_validator(|s: &str| {
            Ok(if s.trim().is_empty() {
                Validation::Invalid("required".into())
            } else {
                Validation::Valid
            })
        });
    prompt.help_message = help_line(help);
    prompt
}

fn ask_text(message: &str, default: &str, help: &str) -> Result<String> {
    text(message, default, help)
        .prompt()
        .map(|s| s.trim().to_string())
        .map_err(cancelled)
}

/// A whole number of at least `min`, with a default.
fn number<'a>(message: &'a str, default: i32, min: i32, help: &'a str) -> CustomType<'a, i32> {
    let mut prompt = CustomType::<i32>::new(message)
        .with_default(default)
        .with_error_message("enter a whole number")
        .with_validator(move |v: &i32| {
            Ok(if *v >= min {
                Validation::Valid
            } else {
                Validation::Invalid(format!("at least {min}").into())
            })
        });
    prompt.help_message = help_line(help);
    prompt
}

fn ask_number(message: &str, default: i32, min: i32, help: &str) -> Result<i32> {
    number(message, default, min, help)
        .prompt()
        .map_err(cancelled)
}

/// One answer of a [`select`] question: what is shown, and what it means.
#[derive(Clone, Copy)]
struct Choice<'a, T> {
    label: &'a str,
    value: T,
}

impl<T> std::fmt::Display for Choice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label)
    }
}

/// One of `options` (label, value); without help, inquire's own (how to move and select).
fn select<'a, T: Copy>(
    message: &'a str,
    options: &[(&'a str, T)],
    help: &'a str,
) -> Select<'a, Choice<'a, T>> {
    let choices = options
        .iter()
        .map(|&(label, value)| Choice { label, value })
        .collect();
    let mut prompt = Select::new(message, choices);
    if let Some(help) = help_line(help) {
        prompt.help_message = Some(help);
    }
    prompt
}

fn choose<T: Copy>(message: &str, options: &[(&str, T)], help: &str) -> Result<T> {
    let choice = select(message, options, help).prompt().map_err(cancelled)?;
    Ok(choice.value)
}

fn cancelled(e: InquireError) -> Error {
    match e {
        InquireError::OperationCanceled | InquireError::OperationInterrupted => Error::Interrupted,
        other => Error::Prompt(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new user saw an empty `[]` line under the replica and discovery questions: inquire
    /// draws an empty help message as brackets around nothing.
    #[test]
    fn prompts_without_help_draw_no_empty_help_line() {
        assert_eq!(number("Prefill replicas:", 1, 0, "").help_message, None);
        assert_eq!(text("etcd endpoint:", "x", "").help_message, None);
        let discovery = [("kubernetes", Discovery::Kubernetes)];
        assert_eq!(
            select("Discovery backend:", &discovery, "").help_message,
            Select::<Choice<Discovery>>::DEFAULT_HELP_MESSAGE
        );
        assert_eq!(
            number("GPUs:", 1, 1, "the largest GPU node has 8 GPUs").help_message,
            Some("the largest GPU node has 8 GPUs")
        );
        assert_eq!(
            select("Engine:", &discovery, "both run on ROCm").help_message,
            Some("both run on ROCm")
        );
    }

    #[test]
    fn rdma_resources_are_the_device_plugins_names() {
        for rdma in ["rdma/hca", "rdma/rdma_shared_device_a", "amd.com/vnic"] {
            assert!(is_rdma_resource(rdma), "{rdma}");
        }
        for other in ["amd.com/gpu", "cpu", "hugepages-2Mi", "example.com/rdma"] {
            assert!(!is_rdma_resource(other), "{other}");
        }
    }

    #[test]
    fn deployment_names_are_dns_labels_of_at_most_42() {
        assert_eq!(name_validation("demo-1"), Validation::Valid);
        for bad in ["Demo", "1demo", "a_b", &"a".repeat(43)] {
            assert!(
                matches!(name_validation(bad), Validation::Invalid(_)),
                "{bad}"
            );
        }
    }
}
