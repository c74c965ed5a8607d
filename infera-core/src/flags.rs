//! The engine flags the operator injects, per backend, in one place. The README's table lists
//! them; a test checks it names every reserved flag.

use crate::{
    types::{BackendFramework, Role},
    validate::Worker,
};

/// Port the server (router) listens on.
pub const SERVER_PORT: i32 = 8000;
/// Port of a worker's engine HTTP API.
pub const fn worker_port(backend: BackendFramework) -> i32 {
    match backend {
        BackendFramework::Sglang => 30000,
        BackendFramework::Vllm => 8000,
    }
}
/// Port of the GAIE frontend sidecar in worker pods (what the InferencePool targets).
pub const FRONTEND_PORT: i32 = 8080;
/// Port multi-node groups rendezvous on at the leader.
pub const DIST_INIT_PORT: i32 = 5000;
/// SGLang's prefill bootstrap port.
pub const BOOTSTRAP_PORT: i32 = 8998;
/// NATS client port.
pub const NATS_PORT: i32 = 4222;

/// Flags the operator owns. A user who sets one in `args` gets a validation error, so the
/// operator never has to decide which of two values wins.
pub const RESERVED: [&str; 16] = [
    "--disaggregation-mode",
    "--discovery-backend",
    "--etcd-endpoint",
    "--kv-event-transport",
    "--nats-url",
    "--host",
    "--port",
    "--nnodes",
    "--node-rank",
    "--dist-init-addr",
    "--master-addr",
    "--master-port",
    "--router-mode",
    "--disaggregation-bootstrap-port",
    "--headless",
    "--shutdown-timeout",
];

/// SGLang's IB-device flag for the KV-cache transfer (`ServerArgs.disaggregation_ib_device`,
/// python/sglang/srt/server_args.py), injected from `network.rdma.device`.
pub const IB_DEVICE_FLAG: &str = "--disaggregation-ib-device";

/// SGLang's model flag (`ServerArgs.model_path`, python/sglang/srt/server_args.py), injected
/// from `spec.model`.
pub const SGLANG_MODEL_FLAG: &str = "--model-path";
/// vLLM's model flag (vllm/engine/arg_utils.py `--model`), injected from `spec.model`.
pub const VLLM_MODEL_FLAG: &str = "--model";

/// Tensor-parallel flags, all backends (long and short spellings).
pub const TENSOR_PARALLEL: [&str; 4] = ["--tp-size", "--tp", "--tensor-parallel-size", "-tp"];
/// Pipeline-parallel flags, all backends.
pub const PIPELINE_PARALLEL: [&str; 4] = ["--pp-size", "--pp", "--pipeline-parallel-size", "-pp"];

/// The flag name of an argument (`--port=8000` → `--port`), or `None` for a value.
pub fn flag_name(arg: &str) -> Option<&str> {
    arg.starts_with('-')
        .then(|| arg.split_once('=').map_or(arg, |(name, _)| name))
}

/// Where the server and workers discover each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiscoveryFlags {
    /// Through the Kubernetes API, as the discovery ServiceAccount.
    Kubernetes,
    /// Through etcd at this endpoint.
    Etcd(String),
}

/// Which pods of a worker pool a pod template (and its flags) is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// Every pod of a single-node pool (a Deployment).
    Single,
    /// Rank 0 of a multi-node group: it serves HTTP.
    Leader,
    /// Rank > 0 of a multi-node group: it joins the leader's group and serves nothing itself.
    Follower,
}

/// Everything the injected flags depend on.
#[derive(Clone, Debug)]
pub struct Injection<'a> {
    /// The engine, whose flag spellings differ.
    pub backend: BackendFramework,
    /// How pods find each other.
    pub discovery: &'a DiscoveryFlags,
    /// The KV-event plane's URL, when there is one.
    pub nats_url: Option<&'a str>,
    /// Whether an Inference Gateway fronts the graph (the server then routes directly).
    pub gaie: bool,
}

impl Injection<'_> {
    /// Flags appended to the server's args.
    pub fn server(&self) -> Vec<String> {
        let mut flags = vec![
            "--host".into(),
            "0.0.0.0".into(),
            "--port".into(),
            SERVER_PORT.to_string(),
        ];
        self.shared(&mut flags);
        if self.gaie {
            flags.extend(["--router-mode".into(), "direct".into()]);
        }
        flags
    }

    /// Flags appended to the args of a worker's pods of `rank`. Pods of a multi-node group get
    /// the rank flags, read at container start from the environment the LeaderWorkerSet webhook
    /// injects. vLLM workers drain for the service's `drainSeconds` on SIGTERM
    /// (`--shutdown-timeout`, vllm/engine/arg_utils.py:1971-1976; its default 0 aborts in-flight
    /// requests), and vLLM's rank > 0 pods, which the multi-process backend requires to be
    /// headless, run without an API server (`--headless`, vllm/entrypoints/common/cli_args.py:446,
    /// entrypoints/cli/serve.py:69-77).
    pub fn worker(&self, worker: &Worker, rank: Rank) -> Vec<String> {
        let role = worker.role;
        let port = worker_port(self.backend);
        let mut flags = vec![
            "--host".into(),
            "0.0.0.0".into(),
            "--port".into(),
            port.to_string(),
        ];
        if role != Role::Mixed {
            flags.extend(["--disaggregation-mode".into(), role.to_string()]);
        }
        if role == Role::Prefill && self.backend == BackendFramework::Sglang {
            flags.extend([
                "--disaggregation-bootstrap-port".into(),
                BOOTSTRAP_PORT.to_string(),
            ]);
        }
        self.shared(&mut flags);
        if self.backend == BackendFramework::Vllm {
            flags.extend([
                "--shutdown-timeout".into(),
                worker.pod.health.drain_seconds.to_string(),
            ]);
        }
        if rank != Rank::Single {
            let nnodes = "$(LWS_GROUP_SIZE)".to_string();
            let rank = "$(LWS_WORKER_INDEX)".to_string();
            match self.backend {
                BackendFramework::Sglang => flags.extend([
                    "--nnodes".into(),
                    nnodes,
                    "--node-rank".into(),
                    rank,
                    "--dist-init-addr".into(),
                    format!("$(LWS_LEADER_ADDRESS):{DIST_INIT_PORT}"),
                ]),
                BackendFramework::Vllm => flags.extend([
                    "--nnodes".into(),
                    nnodes,
                    "--node-rank".into(),
                    rank,
                    "--master-addr".into(),
                    "$(LWS_LEADER_ADDRESS)".into(),
                    "--master-port".into(),
                    DIST_INIT_PORT.to_string(),
                ]),
            }
        }
        if rank == Rank::Follower && self.backend == BackendFramework::Vllm {
            flags.push("--headless".into());
        }
        if let Some(path) = worker.model.as_ref().map(|m| &m.mount_path) {
            let flag = match self.backend {
                BackendFramework::Sglang => SGLANG_MODEL_FLAG,
                BackendFramework::Vllm => VLLM_MODEL_FLAG,
            };
            flags.extend([flag.into(), path.clone()]);
        }
        if let Some(device) = worker.rdma.as_ref().and_then(|rdma| rdma.device.as_ref()) {
            flags.extend([IB_DEVICE_FLAG.into(), device.clone()]);
        }
        flags
    }

    fn shared(&self, flags: &mut Vec<String>) {
        match self.discovery {
            DiscoveryFlags::Kubernetes => {
                flags.extend(["--discovery-backend".into(), "kubernetes".into()])
            }
            DiscoveryFlags::Etcd(endpoint) => flags.extend([
                "--discovery-backend".into(),
                "etcd".into(),
                "--etcd-endpoint".into(),
                endpoint.clone(),
            ]),
        }
        if let Some(url) = self.nats_url {
            flags.extend([
                "--kv-event-transport".into(),
                "nats".into(),
                "--nats-url".into(),
                url.into(),
            ]);
        }
    }
}
