//! The engine flags the operator injects, per backend, in one place. The README's table lists
//! them; a test checks it names every reserved flag.

use crate::{
    naming::LABEL_DEPLOYMENT,
    types::{BackendFramework, Role},
    validate::Worker,
};

/// Port the server (router) listens on.
pub const SERVER_PORT: i32 = 8000;
/// Port of a worker's engine HTTP API, either engine, as upstream's operator renders it
/// (`deploy/operator/internal/controller/builders.go:27-29`): so the GAIE frontend sidecar's
/// default port (8000) never meets it.
pub const WORKER_PORT: i32 = 30000;
/// Default port of the GAIE frontend sidecar in worker pods, which the InferencePool targets
/// (`spec.gaie.frontendPort`; upstream `deploy/operator/internal/controller/gaie.go:30, 51-56`).
pub const FRONTEND_PORT: i32 = 8000;
/// The Endpoint Picker's ext_proc gRPC port (`--grpc-port`, `infera/gaie/args.py:20-25`; upstream
/// `gaie.go:28`).
pub const EPP_GRPC_PORT: i32 = 9002;
/// The Endpoint Picker's gRPC health port (`--grpc-health-port`, `infera/gaie/args.py:26-32`;
/// upstream `gaie.go:29`).
pub const EPP_HEALTH_PORT: i32 = 9003;
/// Port multi-node groups rendezvous on at the leader.
pub const DIST_INIT_PORT: i32 = 5000;
/// SGLang's prefill bootstrap port.
pub const BOOTSTRAP_PORT: i32 = 8998;
/// NATS client port.
pub const NATS_PORT: i32 = 4222;

/// The interpreter of the `rocm/infera` images. The engine images' ENTRYPOINT is
/// `infera-inject-host-ionic`, which `exec`s its arguments (upstream
/// `deploy/docker/Dockerfile.sglang`), so the container's `command` must name the program; upstream
/// runs `python3 -m <module>` (`deploy/operator/internal/controller/builders.go:265-299`).
pub const PYTHON: &str = "python3";
/// The router's module (`infera/server/__main__.py`); also the GAIE frontend sidecar's, in
/// direct mode (upstream `gaie.go:116-122`).
pub const SERVER_MODULE: &str = "infera.server";
/// Infera's own GAIE Endpoint Picker (`infera/gaie/__main__.py`; upstream `gaie.go:164-169`).
pub const EPP_MODULE: &str = "infera.gaie";
/// The tokenizer the router and the Endpoint Picker score prompts with (`infera/server/args.py:140`,
/// `infera/gaie/args.py:77-81`, required by the latter).
pub const ROUTER_TOKENIZER_PATH: &str = "--router-tokenizer-path";

/// The engine wrapper's module (`infera/engine/{sglang,vllm}/__main__.py`): it consumes its own
/// flags and starts the engine with the rest.
pub const fn worker_module(backend: BackendFramework) -> &'static str {
    match backend {
        BackendFramework::Sglang => "infera.engine.sglang",
        BackendFramework::Vllm => "infera.engine.vllm",
    }
}

/// `python3 -m <module>`: the default `command` of a server or worker container.
pub fn command(module: &str) -> Vec<String> {
    vec![PYTHON.into(), "-m".into(), module.into()]
}

/// Bind address (router: `infera/server/args.py:16`; engines: SGLang `ServerArgs.host`, vLLM's).
pub const HOST: &str = "--host";
/// Listen port (router: `infera/server/args.py:17`; engines: their own).
pub const PORT: &str = "--port";
/// `kubernetes` or `etcd` (`infera/server/args.py:18-28`, `infera/engine/sglang/args.py:72-80`,
/// `infera/engine/vllm/args.py:217-225`).
pub const DISCOVERY_BACKEND: &str = "--discovery-backend";
/// The etcd endpoint of `--discovery-backend etcd` (`infera/server/args.py:29-35`).
pub const ETCD_ENDPOINT: &str = "--etcd-endpoint";
/// The router's worker pod selector, required with Kubernetes discovery
/// (`infera/server/args.py:41-48`; `infera/server/__main__.py:193-194` exits without it).
pub const K8S_LABEL_SELECTOR: &str = "--k8s-label-selector";
/// Env var the router reads as the selector's default (`infera/server/args.py:43`).
pub const K8S_LABEL_SELECTOR_ENV: &str = "INFERA_K8S_LABEL_SELECTOR";
/// `http` or `nats` (default `nats`): how the router reaches workers (`infera/server/args.py:55-64`,
/// `infera/engine/sglang/args.py:99-108`).
pub const REQUEST_TRANSPORT: &str = "--request-transport";
/// `zmq` or `nats` (default `nats`): how KV events reach the router
/// (`infera/engine/sglang/args.py:225-232`).
pub const KV_EVENT_TRANSPORT: &str = "--kv-event-transport";
/// The NATS URL (`infera/engine/sglang/args.py:233-238`; default `$NATS_SERVER`, then
/// `nats://127.0.0.1:4222`).
pub const NATS_SERVER: &str = "--nats-server";
/// Env var the router and wrappers read as the NATS URL's default (upstream `builders.go:316`).
pub const NATS_SERVER_ENV: &str = "NATS_SERVER";
/// Seconds the vLLM wrapper waits for its engine's `/health` before it gives up and exits
/// (`infera/engine/vllm/worker.py:27-32, 178-208`; default 1800).
pub const ENGINE_READY_TIMEOUT_ENV: &str = "INFERA_ENGINE_READY_TIMEOUT";
/// Its value on a vLLM rank > 0, whose headless engine serves no `/health`: ten years, so that
/// the wrapper never times out and still exits when the engine does (`worker.py:188-192`).
pub const FOLLOWER_READY_TIMEOUT: &str = "315360000";
/// The wrapper's drain on SIGTERM, in seconds (`infera/engine/sglang/args.py:132-142`,
/// `infera/engine/vllm/args.py:272-282`; default `$INFERA_DRAIN_TIMEOUT`, then 30).
pub const DRAIN_TIMEOUT: &str = "--drain-timeout";
/// The router's mode (`infera/server/args.py:76-86`); `direct` behind an Inference Gateway.
pub const ROUTER_MODE: &str = "--router-mode";
/// SGLang's prefill/decode role (`ServerArgs.disaggregation_mode`, sglang 0.5.15.post1
/// `srt/server_args.py:2273`); the SGLang wrapper reads it too (`infera/engine/sglang/args.py:71`).
pub const DISAGGREGATION_MODE: &str = "--disaggregation-mode";
/// SGLang's prefill bootstrap port (`srt/server_args.py:2284`).
pub const DISAGGREGATION_BOOTSTRAP_PORT: &str = "--disaggregation-bootstrap-port";
/// vLLM's KV connector config, whose `kv_role` is a vLLM worker's prefill/decode role
/// (`infera/engine/vllm/args.py:21-25, 87-97`).
pub const KV_TRANSFER_CONFIG: &str = "--kv-transfer-config";
/// Nodes of a multi-node group (SGLang `srt/server_args.py:814`, vLLM 0.25.1
/// `vllm/engine/arg_utils.py:975`).
pub const NNODES: &str = "--nnodes";
/// This pod's rank in its group (SGLang `srt/server_args.py:815`, vLLM `arg_utils.py:976`).
pub const NODE_RANK: &str = "--node-rank";
/// SGLang's rendezvous address (`srt/server_args.py:807`).
pub const DIST_INIT_ADDR: &str = "--dist-init-addr";
/// vLLM's rendezvous host (`vllm/engine/arg_utils.py:973`).
pub const MASTER_ADDR: &str = "--master-addr";
/// vLLM's rendezvous port (`vllm/engine/arg_utils.py:974`).
pub const MASTER_PORT: &str = "--master-port";
/// A vLLM rank > 0: no API server, only the node's workers of the leader's executor
/// (`vllm/entrypoints/openai/cli_args.py:353`; `vllm/entrypoints/cli/serve.py:61-69, 140-141,
/// 193-206`).
pub const HEADLESS: &str = "--headless";

/// Flags the operator owns. A user who sets one in `args` gets a validation error, so the
/// operator never has to decide which of two values wins.
pub const RESERVED: [&str; 17] = [
    DISAGGREGATION_MODE,
    DISCOVERY_BACKEND,
    ETCD_ENDPOINT,
    K8S_LABEL_SELECTOR,
    REQUEST_TRANSPORT,
    KV_EVENT_TRANSPORT,
    NATS_SERVER,
    DRAIN_TIMEOUT,
    HOST,
    PORT,
    NNODES,
    NODE_RANK,
    DIST_INIT_ADDR,
    MASTER_ADDR,
    MASTER_PORT,
    ROUTER_MODE,
    DISAGGREGATION_BOOTSTRAP_PORT,
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
    /// The InferaDeployment's name, which the router's pod selector names.
    pub deployment: &'a str,
    /// The NATS URL, when there is a NATS; without one requests go over HTTP and KV events over
    /// ZMQ.
    pub nats_url: Option<&'a str>,
}

impl Injection<'_> {
    /// The router's worker pod selector, `infera.amd.com/deployment=<name>`: every pod of the
    /// deployment (upstream `builders.go:229-233`); the router routes only to pods that carry a
    /// worker's registration annotation.
    pub fn label_selector(&self) -> String {
        format!("{LABEL_DEPLOYMENT}={}", self.deployment)
    }

    /// Flags appended to the server's args (upstream `builders.go:269-279, 294-297`).
    pub fn server(&self, port: i32) -> Vec<String> {
        let mut flags = listen(port);
        self.discovery(&mut flags);
        if *self.discovery == DiscoveryFlags::Kubernetes {
            flags.extend([K8S_LABEL_SELECTOR.into(), self.label_selector()]);
        }
        self.transports(&mut flags);
        flags
    }

    /// The GAIE frontend sidecar's flags: the router in direct mode, which sends each request to
    /// the worker the Endpoint Picker named (`infera/server/args.py:76-85`), listening on `port`,
    /// with the server's discovery and transports (upstream `gaie.go:107-135`, whose sidecar
    /// without NATS gets only `--request-transport http` and so KV events over NATS at
    /// 127.0.0.1; ours gets ZMQ there, as the server and workers do).
    pub fn frontend(&self, port: i32, tokenizer: &str) -> Vec<String> {
        let mut flags = vec![ROUTER_MODE.into(), "direct".into()];
        flags.extend(self.server(port));
        flags.extend([ROUTER_TOKENIZER_PATH.into(), tokenizer.into()]);
        flags
    }

    /// The Endpoint Picker's flags (`infera/gaie/args.py:14-85`; upstream `gaie.go:159-173`): its
    /// ports, the tokenizer, the server's discovery, and KV events over NATS or, without one,
    /// ZMQ (it has no request transport). `--destination-port` is the sidecars' port, which the
    /// picker puts in the endpoint it returns (`infera/gaie/args.py:33-41`, default 8000):
    /// upstream does not pass it, so its EPP names port 8000 whatever `frontendPort` says.
    pub fn endpoint_picker(&self, frontend_port: i32, tokenizer: &str) -> Vec<String> {
        let mut flags = vec![
            "--grpc-port".into(),
            EPP_GRPC_PORT.to_string(),
            "--grpc-health-port".into(),
            EPP_HEALTH_PORT.to_string(),
            "--destination-port".into(),
            frontend_port.to_string(),
            ROUTER_TOKENIZER_PATH.into(),
            tokenizer.into(),
        ];
        self.discovery(&mut flags);
        if *self.discovery == DiscoveryFlags::Kubernetes {
            flags.extend([K8S_LABEL_SELECTOR.into(), self.label_selector()]);
        }
        match self.nats_url {
            Some(url) => flags.extend([
                KV_EVENT_TRANSPORT.into(),
                "nats".into(),
                NATS_SERVER.into(),
                url.into(),
            ]),
            None => flags.extend([KV_EVENT_TRANSPORT.into(), "zmq".into()]),
        }
        flags
    }

    /// Flags appended to the args of a worker's pods of `rank` (upstream `builders.go:280-297`).
    /// SGLang pools of a role get `--disaggregation-mode`; vLLM has no such flag, its role is the
    /// `kv_role` of the user's `--kv-transfer-config`, which validation requires. The wrapper
    /// drains for the service's `drainSeconds` on SIGTERM (`--drain-timeout`). Pods of a
    /// multi-node group get the rank flags, read at container start from the environment the
    /// LeaderWorkerSet webhook injects (SGLang as upstream's
    /// `examples/k8s-deployments/multinode-tp-aggregated.yaml:84-85`). vLLM's rank > 0 pods also
    /// get `--headless`: without it a follower starts an API server whose engine core fails on a
    /// follower node (`vllm/v1/executor/multiproc_executor.py:352-354`); the wrapper's wait for a
    /// `/health` a headless engine never serves is lifted by the pod's environment
    /// (`render::pod`, [`FOLLOWER_READY_TIMEOUT`]).
    pub fn worker(&self, worker: &Worker, rank: Rank) -> Vec<String> {
        let role = worker.role;
        let mut flags = listen(worker.pod.port);
        self.discovery(&mut flags);
        if role != Role::Mixed && self.backend == BackendFramework::Sglang {
            flags.extend([DISAGGREGATION_MODE.into(), role.to_string()]);
        }
        if role == Role::Prefill && self.backend == BackendFramework::Sglang {
            flags.extend([
                DISAGGREGATION_BOOTSTRAP_PORT.into(),
                BOOTSTRAP_PORT.to_string(),
            ]);
        }
        self.transports(&mut flags);
        flags.extend([
            DRAIN_TIMEOUT.into(),
            worker.pod.health.drain_seconds.to_string(),
        ]);
        if rank != Rank::Single {
            let nnodes = "$(LWS_GROUP_SIZE)".to_string();
            let rank = "$(LWS_WORKER_INDEX)".to_string();
            match self.backend {
                BackendFramework::Sglang => flags.extend([
                    NNODES.into(),
                    nnodes,
                    NODE_RANK.into(),
                    rank,
                    DIST_INIT_ADDR.into(),
                    format!("$(LWS_LEADER_ADDRESS):{DIST_INIT_PORT}"),
                ]),
                BackendFramework::Vllm => flags.extend([
                    NNODES.into(),
                    nnodes,
                    NODE_RANK.into(),
                    rank,
                    MASTER_ADDR.into(),
                    "$(LWS_LEADER_ADDRESS)".into(),
                    MASTER_PORT.into(),
                    DIST_INIT_PORT.to_string(),
                ]),
            }
        }
        if rank == Rank::Follower && self.backend == BackendFramework::Vllm {
            flags.push(HEADLESS.into());
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

    /// `--discovery-backend kubernetes`, or etcd's backend and endpoint.
    fn discovery(&self, flags: &mut Vec<String>) {
        match self.discovery {
            DiscoveryFlags::Kubernetes => {
                flags.extend([DISCOVERY_BACKEND.into(), "kubernetes".into()])
            }
            DiscoveryFlags::Etcd(endpoint) => flags.extend([
                DISCOVERY_BACKEND.into(),
                "etcd".into(),
                ETCD_ENDPOINT.into(),
                endpoint.clone(),
            ]),
        }
    }

    /// With NATS, KV events over it (requests default to it too); without, requests over HTTP
    /// and KV events over ZMQ, as upstream's examples without NATS pass
    /// (`examples/k8s-deployments/single-node-qwen-sglang.yaml:39, 76`): both transports default
    /// to NATS at 127.0.0.1 otherwise.
    fn transports(&self, flags: &mut Vec<String>) {
        match self.nats_url {
            Some(url) => flags.extend([
                KV_EVENT_TRANSPORT.into(),
                "nats".into(),
                NATS_SERVER.into(),
                url.into(),
            ]),
            None => flags.extend([
                REQUEST_TRANSPORT.into(),
                "http".into(),
                KV_EVENT_TRANSPORT.into(),
                "zmq".into(),
            ]),
        }
    }
}

/// `--host 0.0.0.0 --port <port>`.
fn listen(port: i32) -> Vec<String> {
    vec![HOST.into(), "0.0.0.0".into(), PORT.into(), port.to_string()]
}
