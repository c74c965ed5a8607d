//! The engine flags the operator injects, per backend, in one place: their names, ports and
//! modules (the renderer's injection sets them per process). The README's table lists them; a
//! test checks it names every reserved flag. Imports nothing of the crate: the CRD's CEL rules
//! read the reserved flags from here.

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
