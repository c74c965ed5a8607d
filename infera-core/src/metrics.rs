//! The Prometheus series the images export, by the names the pinned versions give them: what
//! `kubectl infera status --load` reads and what the monitoring pack's dashboard queries
//! ([`crate::dashboard`]). `tests/tests/isolated/upstream_parsers.rs` checks every name against
//! the sources of those versions.

use crate::types::BackendFramework;

/// Requests the router is serving now, a gauge labelled `router` (upstream
/// `infera/server/metrics.py:92`).
pub const ROUTER_IN_FLIGHT: &str = "infera_request_inflight";
/// The end-to-end duration of each request the router served, a histogram labelled `router` and
/// `outcome` (`ok`, `4xx`, `5xx`, `error`; upstream `infera/server/metrics.py:69`).
pub const ROUTER_DURATION: &str = "infera_request_duration_seconds";

/// What an engine calls each figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineMetrics {
    /// Requests running (a gauge).
    pub running: &'static str,
    /// Requests waiting in the engine's queue (a gauge).
    pub waiting: &'static str,
    /// KV-cache usage as a fraction of 1 (a gauge).
    pub kv_usage: &'static str,
    /// Output tokens generated (a counter).
    pub generation_tokens: &'static str,
    /// Prompt tokens processed (a counter).
    pub prompt_tokens: &'static str,
    /// Requests finished (a counter).
    pub requests_finished: &'static str,
    /// Time to first token (a histogram).
    pub ttft: &'static str,
    /// Inter-token latency (a histogram).
    pub itl: &'static str,
}

impl EngineMetrics {
    /// SGLang 0.5.15.post1 (`rocm/infera:sglang-v0.1.1`): `sglang/srt/observability/
    /// metrics_collector.py` — `num_running_reqs` :268, `num_queue_reqs` :274, `token_usage` :308,
    /// `prompt_tokens_total` :1430, `generation_tokens_total` :1435, `num_requests_total` :1515, `time_to_first_token_seconds`
    /// :1615, `inter_token_latency_seconds` :1622 (served with `--enable-metrics`, which upstream's
    /// worker entry point injects). vLLM 0.25.1 (`rocm/infera:vllm-v0.1.1`):
    /// `vllm/v1/metrics/loggers.py` — `num_requests_running` :457, `num_requests_waiting` :467,
    /// `kv_cache_usage_perc` :525 (its older `gpu_cache_usage_perc`, which upstream's drain also
    /// accepts, is not in this version), `prompt_tokens` :634, `generation_tokens` :668 and `request_success` :678
    /// (counters: exported with `_total`), `time_to_first_token_seconds` :760,
    /// `inter_token_latency_seconds` :793. Requests running and waiting and KV usage are also what
    /// upstream's own drain reads (`infera/common/engine_metrics.py:44-63`).
    pub fn of(backend: BackendFramework) -> Self {
        match backend {
            BackendFramework::Sglang => Self {
                running: "sglang:num_running_reqs",
                waiting: "sglang:num_queue_reqs",
                kv_usage: "sglang:token_usage",
                generation_tokens: "sglang:generation_tokens_total",
                prompt_tokens: "sglang:prompt_tokens_total",
                requests_finished: "sglang:num_requests_total",
                ttft: "sglang:time_to_first_token_seconds",
                itl: "sglang:inter_token_latency_seconds",
            },
            BackendFramework::Vllm => Self {
                running: "vllm:num_requests_running",
                waiting: "vllm:num_requests_waiting",
                kv_usage: "vllm:kv_cache_usage_perc",
                generation_tokens: "vllm:generation_tokens_total",
                prompt_tokens: "vllm:prompt_tokens_total",
                requests_finished: "vllm:request_success_total",
                ttft: "vllm:time_to_first_token_seconds",
                itl: "vllm:inter_token_latency_seconds",
            },
        }
    }

    /// Every name, for the checks against the engines' sources.
    pub fn names(&self) -> [&'static str; 8] {
        [
            self.running,
            self.waiting,
            self.kv_usage,
            self.generation_tokens,
            self.prompt_tokens,
            self.requests_finished,
            self.ttft,
            self.itl,
        ]
    }
}

/// The labels the graph's PodMonitor gives every series it scrapes, each from a pod label
/// (relabeled from `__meta_kubernetes_pod_label_<key>`, the key with every character outside
/// `[a-zA-Z0-9_]` made `_`, as Prometheus's Kubernetes discovery names it).
pub const SERIES_LABELS: [(&str, &str); 4] = [
    (DEPLOYMENT_LABEL, crate::naming::LABEL_DEPLOYMENT),
    (SERVICE_LABEL, crate::naming::LABEL_SERVICE),
    (ROLE_LABEL, crate::naming::LABEL_ROLE),
    (REVISION_LABEL, crate::naming::LABEL_REVISION),
];
/// The InferaDeployment a series comes from.
pub const DEPLOYMENT_LABEL: &str = "infera_deployment";
/// The service (pool) of the spec a series comes from: `server`, `prefill`, `decode`, ….
pub const SERVICE_LABEL: &str = "infera_service";
/// The pod's role: `server`, `mixed`, `prefill` or `decode`.
pub const ROLE_LABEL: &str = "infera_role";
/// The revision of a worker pod (none on the server's).
pub const REVISION_LABEL: &str = "infera_revision";
