//! The interactive `deploy` wizard (only ever started when stdin and stdout are terminals).
//! Flags already given are not asked again; defaults come from the cluster where it can tell.

use inquire::{Confirm, CustomType, InquireError, Select, Text, validator::Validation};

use crate::{
    cli::{Backend, Discovery, SpecFlags, Topology},
    error::{Error, Result},
    plan::{self, Plan},
};

/// What the cluster tells us for defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterHints {
    /// Largest allocatable `amd.com/gpu` on one node.
    pub gpus_per_node: Option<i32>,
    /// Nodes with at least one GPU.
    pub gpu_nodes: usize,
}

fn cancelled(e: InquireError) -> Error {
    match e {
        InquireError::OperationCanceled | InquireError::OperationInterrupted => Error::Interrupted,
        other => Error::Failed(format!("wizard: {other}")),
    }
}

fn ask_text(message: &str, default: &str, help: &str) -> Result<String> {
    Text::new(message)
        .with_default(default)
        .with_help_message(help)
        .with_validator(|s: &str| {
            Ok(if s.trim().is_empty() {
                Validation::Invalid("required".into())
            } else {
                Validation::Valid
            })
        })
        .prompt()
        .map(|s| s.trim().to_string())
        .map_err(cancelled)
}

fn ask_number(message: &str, default: i32, min: i32, help: &str) -> Result<i32> {
    CustomType::<i32>::new(message)
        .with_default(default)
        .with_help_message(help)
        .with_error_message("enter a whole number")
        .with_validator(move |v: &i32| {
            Ok(if *v >= min {
                Validation::Valid
            } else {
                Validation::Invalid(format!("at least {min}").into())
            })
        })
        .prompt()
        .map_err(cancelled)
}

fn ask_select<T: Copy>(message: &str, options: &[(&'static str, T)], help: &str) -> Result<T> {
    let labels: Vec<&str> = options.iter().map(|(l, _)| *l).collect();
    let choice = Select::new(message, labels.clone())
        .with_help_message(help)
        .prompt()
        .map_err(cancelled)?;
    let index = labels.iter().position(|l| *l == choice).unwrap_or(0);
    Ok(options[index].1)
}

/// Asks for everything `flags` does not already say, and returns the completed flags.
pub fn run(given: &SpecFlags, hints: ClusterHints) -> Result<SpecFlags> {
    let mut f = given.clone();
    if f.name.is_none() {
        let name = Text::new("Name of the deployment:")
            .with_default("demo")
            .with_validator(|s: &str| {
                Ok(
                    if infera_core::naming::is_dns_label(s)
                        && s.len() <= infera_core::naming::MAX_DEPLOYMENT_NAME
                    {
                        Validation::Valid
                    } else {
                        Validation::Invalid(
                            "lowercase letters, digits and '-', starting with a letter, at most 42"
                                .into(),
                        )
                    },
                )
            })
            .prompt()
            .map_err(cancelled)?;
        f.name = Some(name);
    }
    if f.backend.is_none() {
        f.backend = Some(ask_select(
            "Inference engine:",
            &[("sglang", Backend::Sglang), ("vllm", Backend::Vllm)],
            "both run on ROCm",
        )?);
    }
    let backend = f.backend.unwrap_or(Backend::Sglang);
    if f.model.is_none() {
        f.model = Some(ask_text(
            "Model (Hugging Face id or path):",
            "Qwen/Qwen3-0.6B",
            "passed to every worker",
        )?);
    }
    if f.topology.is_none() {
        let multinode_help = if hints.gpu_nodes >= 2 {
            ""
        } else {
            " (the cluster has fewer than 2 GPU nodes)"
        };
        let options: Vec<(&'static str, Topology)> = vec![
            ("aggregated — one pool of workers", Topology::Aggregated),
            ("pd — disaggregated prefill and decode pools", Topology::Pd),
            (
                "multinode — each replica spans several nodes (LeaderWorkerSet)",
                Topology::Multinode,
            ),
        ];
        f.topology = Some(ask_select(
            "Topology:",
            &options,
            &format!("↑↓ to move, enter to select{multinode_help}"),
        )?);
    }
    let topology = f.topology.unwrap_or(Topology::Aggregated);
    if f.image.is_none() {
        f.image = Some(ask_text(
            "Image:",
            &plan::default_image(backend),
            "used by every service",
        )?);
    }
    let per_node = hints.gpus_per_node.unwrap_or(8).max(1);
    if f.gpus.is_none() {
        let default = if topology == Topology::Multinode {
            per_node
        } else {
            1
        };
        let help = match hints.gpus_per_node {
            Some(n) => format!("the largest GPU node has {n} GPUs"),
            None => "could not read the nodes; check with `kubectl infera doctor`".into(),
        };
        f.gpus = Some(ask_number("GPUs per worker pod:", default, 1, &help)?);
    }
    let gpus = f.gpus.unwrap_or(1);
    if topology == Topology::Multinode && f.nodes.is_none() {
        let help = format!("the cluster has {} GPU node(s)", hints.gpu_nodes);
        f.nodes = Some(ask_number("Nodes per replica:", 2, 2, &help)?);
    }
    if f.tp.is_none() {
        let help = "tensor parallelism; with several nodes, pipeline parallelism covers the rest";
        f.tp = Some(ask_number("Tensor-parallel size:", gpus, 1, help)?);
    }
    if topology == Topology::Pd {
        if f.prefill_replicas.is_none() {
            f.prefill_replicas = Some(ask_number("Prefill replicas:", 1, 0, "")?);
        }
        if f.decode_replicas.is_none() {
            f.decode_replicas = Some(ask_number("Decode replicas:", 1, 0, "")?);
        }
        if backend == Backend::Sglang && f.transfer_backend.is_none() {
            let backend = ask_select(
                "KV transfer backend:",
                &[("mori", "mori"), ("nixl", "nixl"), ("mooncake", "mooncake")],
                "moves the KV cache from prefill to decode",
            )?;
            f.transfer_backend = Some(backend.into());
        }
        if backend == Backend::Sglang && f.ib_device.is_none() {
            let device = Text::new("RDMA device (empty: let the engine choose):")
                .with_help_message("e.g. rdma0 or mlx5_0")
                .prompt()
                .map_err(cancelled)?;
            f.ib_device = (!device.trim().is_empty()).then(|| device.trim().to_string());
        }
    } else if f.replicas.is_none() {
        f.replicas = Some(ask_number("Worker replicas:", 1, 0, "")?);
    }
    if f.router_policy.is_none() {
        let options: &[(&'static str, &'static str)] = if topology == Topology::Pd {
            &[
                ("kv-aware", "kv-aware"),
                ("cache-aware", "cache-aware"),
                ("round-robin", "round-robin"),
                ("random", "random"),
            ]
        } else {
            &[
                ("round-robin", "round-robin"),
                ("kv-aware", "kv-aware"),
                ("cache-aware", "cache-aware"),
                ("random", "random"),
            ]
        };
        f.router_policy =
            Some(ask_select("Router policy:", options, "how the server picks a worker")?.into());
    }
    if f.nats.is_none() {
        f.nats = Some(
            Confirm::new("Deploy a managed NATS JetStream for KV events?")
                .with_default(true)
                .with_help_message("needs a default StorageClass")
                .prompt()
                .map_err(cancelled)?,
        );
    }
    if f.discovery.is_none() {
        f.discovery = Some(ask_select(
            "Discovery backend:",
            &[
                ("kubernetes — no extra service", Discovery::Kubernetes),
                ("etcd — an external etcd", Discovery::Etcd),
            ],
            "",
        )?);
    }
    if f.discovery == Some(Discovery::Etcd) && f.etcd_endpoint.is_none() {
        f.etcd_endpoint = Some(ask_text("etcd endpoint:", "http://etcd:2379", "")?);
    }
    Ok(f)
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

/// Default flags so [`Plan::from_flags`] succeeds on the wizard's answers.
pub fn plan(flags: &SpecFlags) -> Result<Plan> {
    Plan::from_flags(flags)
        .map_err(|missing| Error::Usage(format!("missing {}", missing.join(", "))))
}
