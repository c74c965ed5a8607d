//! The flags the operator injects into each process: the router's, the engine wrappers' by
//! backend, role and rank, and the GAIE frontend's, from the names in [`crate::flags`].

use crate::{
    flags::*,
    naming::LABEL_DEPLOYMENT,
    types::{BackendFramework, Role},
    validate::Worker,
};

/// The engine wrapper's module (`infera/engine/{sglang,vllm}/__main__.py`): it consumes its own
/// flags and starts the engine with the rest.
pub const fn worker_module(backend: BackendFramework) -> &'static str {
    match backend {
        BackendFramework::Sglang => "infera.engine.sglang",
        BackendFramework::Vllm => "infera.engine.vllm",
    }
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
