//! The arguments of `deploy`: a file, or the flags of a spec and its topology.

use std::{path::PathBuf, time::Duration};

use clap::{Args, ValueEnum};

use super::{DryRun, ManifestOutput};
use crate::duration::parse_duration;

/// Topology of a flags-only or wizard deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Topology {
    /// One pool of mixed workers (prefill and decode on the same GPUs).
    Aggregated,
    /// Disaggregated prefill and decode pools.
    Pd,
    /// Mixed workers spanning several nodes per replica (LeaderWorkerSet).
    Multinode,
}

#[derive(Debug, Args)]
pub struct DeployArgs {
    /// An InferaDeployment YAML file (`-` reads stdin). Without it, the spec comes from flags, or
    /// from the wizard on a terminal.
    #[arg(short = 'f', long = "filename", value_name = "FILE", conflicts_with_all = ["name", "backend", "model", "topology"])]
    pub file: Option<PathBuf>,
    /// client: print the spec, contact no cluster; server: let the API server check it.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "client", default_value = "none")]
    pub dry_run: DryRun,
    /// Print the resulting InferaDeployment (yaml or json) instead of a summary.
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<ManifestOutput>,
    /// Also write the spec to FILE (as YAML).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Wait until the deployment is Ready; on timeout, explain what blocks it.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits.
    #[arg(long, value_parser = parse_duration, default_value = "10m")]
    pub timeout: Duration,
    /// Take ownership of fields another field manager owns.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Never start the wizard, even on a terminal.
    #[arg(long)]
    pub no_interactive: bool,
    /// Apply without asking for confirmation at the end of the wizard.
    #[arg(short = 'y', long)]
    pub yes: bool,
    #[command(flatten)]
    pub spec: SpecFlags,
}

/// The wizard's choices as flags (the wizard prints the equivalent command line).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Spec flags (instead of -f)")]
pub struct SpecFlags {
    /// Name of the InferaDeployment.
    #[arg(long)]
    pub name: Option<String>,
    /// Inference engine.
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Model the workers serve: an id or path the engine resolves, or a volume the operator mounts:
    /// hf://ORG/NAME[@REVISION] (downloaded first into a 100Gi volume), pvc://CLAIM[/SUBPATH], hostPath:///PATH.
    #[arg(long)]
    pub model: Option<String>,
    /// Tokenizer the router loads (`--router-tokenizer-path`): a Hugging Face id or a path in the
    /// server's image [default: the model's id; required with a pvc:// or hostPath:// model].
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Topology: aggregated, pd (prefill/decode) or multinode.
    #[arg(long, value_enum)]
    pub topology: Option<Topology>,
    /// Container image (default: rocm/infera:<backend>-v<version>).
    #[arg(long)]
    pub image: Option<String>,
    /// Worker replicas (aggregated/multinode) [default: 1].
    #[arg(long)]
    pub replicas: Option<i32>,
    /// Prefill replicas (pd) [default: 1].
    #[arg(long)]
    pub prefill_replicas: Option<i32>,
    /// Decode replicas (pd) [default: 1].
    #[arg(long)]
    pub decode_replicas: Option<i32>,
    /// Server (router) replicas [default: 1].
    #[arg(long)]
    pub server_replicas: Option<i32>,
    /// GPUs per worker pod [default: 1].
    #[arg(long)]
    pub gpus: Option<i32>,
    /// GPU resource name [default: amd.com/gpu].
    #[arg(long)]
    pub gpu_type: Option<String>,
    /// GPU product the workers must run on, e.g. MI300X (never another product; see `kubectl infera doctor`).
    #[arg(long)]
    pub gpu_product: Option<String>,
    /// Nodes per replica (multinode) [default: 2].
    #[arg(long)]
    pub nodes: Option<i32>,
    /// Tensor-parallel size [default: GPUs per pod]; with several nodes, pipeline parallelism covers the rest.
    #[arg(long)]
    pub tp: Option<i32>,
    /// KV transfer backend for pd (e.g. mori, nixl, mooncake).
    #[arg(long)]
    pub transfer_backend: Option<String>,
    /// RDMA device for the KV transfer (pd; with --rdma-resource it becomes spec.network.rdma.device).
    #[arg(long)]
    pub ib_device: Option<String>,
    /// Extended resource of the RDMA NICs the prefill, decode and multi-node pods request, e.g. rdma/hca.
    #[arg(long)]
    pub rdma_resource: Option<String>,
    /// Multus NetworkAttachmentDefinition the RDMA pods attach (repeatable; needs --rdma-resource).
    #[arg(long = "rdma-network", value_name = "NAME")]
    pub rdma_networks: Vec<String>,
    /// Router policy of the server (e.g. kv-aware, round-robin, cache-aware).
    #[arg(long)]
    pub router_policy: Option<String>,
    /// Deploy a managed NATS JetStream for KV events [default: true].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub nats: Option<bool>,
    /// Size of the NATS JetStream volume.
    #[arg(long)]
    pub nats_storage: Option<String>,
    /// Discovery backend.
    #[arg(long, value_enum)]
    pub discovery: Option<Discovery>,
    /// etcd URL (with --discovery etcd).
    #[arg(long)]
    pub etcd_endpoint: Option<String>,
    /// Memory per worker pod [default: 64Gi per GPU of the pod].
    #[arg(long)]
    pub memory: Option<String>,
    /// Size of the memory-backed /dev/shm per worker pod [default: 32Gi per GPU of the pod].
    #[arg(long)]
    pub shared_memory: Option<String>,
    /// How long a worker's cold start (model download and load) may take, e.g. 30m or 2h [default: 1h].
    #[arg(long)]
    pub startup_timeout: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Sglang,
    Vllm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Discovery {
    Kubernetes,
    Etcd,
}
