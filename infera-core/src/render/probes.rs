//! The engine contract's probes: how each image's HTTP endpoints are probed, and how long one
//! call of each may take (docs/reference.md, "The engine contract").

use k8s_openapi::{
    api::core::v1::{HTTPGetAction, Probe},
    apimachinery::pkg::util::intstr::IntOrString,
};

use crate::{
    flags::Rank,
    validate::{Health, Liveness},
};

/// Timeout of a constant-time endpoint: a flag check, with room for a busy event loop.
pub(super) const QUICK_TIMEOUT: i32 = 5;
/// Timeout of an endpoint whose cost no source documents: the image's own (the router's, the
/// frontend's) and any path a user names that the engine's table does not list.
pub(super) const IMAGE_TIMEOUT: i32 = 10;
/// Timeout of SGLang's `/health` and `/health_generate`: they generate one token
/// (`SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION` defaults to true, sglang 0.5.15.post1
/// `srt/environ.py:765`) and wait for it up to `SGLANG_HEALTH_CHECK_TIMEOUT` = 20 s, plus 1 s
/// (`srt/entrypoints/http_server.py:186, 578-640`). Upstream's readiness probe gives them 10 s
/// (`builders.go:396-408`); a busy engine then flaps NotReady.
const SGLANG_GENERATE_TIMEOUT: i32 = 25;

/// Seconds between probes (more when one probe may take longer).
const PERIOD: i32 = 10;
/// Seconds of failed readiness probes before a pod leaves the rotation.
const READINESS_WINDOW: i32 = 30;
/// Seconds of failed liveness probes before the kubelet restarts the container: generous, as a
/// busy engine answers late. The kubelet runs no liveness probe once a pod is terminating
/// (kubernetes pkg/kubelet/prober/worker.go), so a draining engine that answers 503 is not
/// restarted.
const LIVENESS_WINDOW: i32 = 120;
/// Default startup budget of a worker: a cold model download and load, then warm-up (SGLang's own
/// warm-up timeout is 600 s, 1800 s for prefill/decode).
const WORKER_STARTUP: i32 = 60 * 60;
/// Default startup budget of the server (the router loads no model).
const SERVER_STARTUP: i32 = 5 * 60;

/// An HTTP endpoint of an engine and the longest one call may take (seconds), from the engine's
/// source.
type Endpoint = (&'static str, i32);

/// SGLang 0.5.15.post1's endpoints (`srt/entrypoints/http_server.py` of its wheel, the engine of
/// `rocm/infera:sglang-v0.1.1`). It serves no `/ready`.
const SGLANG_ENDPOINTS: [Endpoint; 4] = [
    // 503 while starting and once shutting down, else a one-token generation (:578-640).
    ("/health", SGLANG_GENERATE_TIMEOUT),
    ("/health_generate", SGLANG_GENERATE_TIMEOUT),
    // A constant 200 (SageMaker's health check, :1915-1918).
    ("/ping", QUICK_TIMEOUT),
    ("/v1/models", QUICK_TIMEOUT),
];

/// vLLM 0.25.1's endpoints: `/health` is 200 unless the engine is dead, without generating
/// (`vllm/entrypoints/serve/instrumentator/health.py:22`).
const VLLM_ENDPOINTS: [Endpoint; 2] = [("/health", QUICK_TIMEOUT), ("/v1/models", QUICK_TIMEOUT)];

/// How an engine container that serves HTTP is probed: a row of the engine contract
/// (docs/reference.md).
#[derive(Clone, Copy, Debug)]
pub(super) struct Contract {
    /// Answers 200 while the engine takes requests; the startup probe waits for it too.
    ready: &'static str,
    /// Answers 200 while the engine works, without generating; `None`: no liveness probe.
    live: Option<&'static str>,
    /// Default startup budget, in seconds.
    startup: i32,
    /// The endpoints whose worst case is known.
    endpoints: &'static [Endpoint],
}

impl Contract {
    /// Its readiness probe on `port`, without overrides.
    pub(super) fn readiness(&self, port: i32) -> Probe {
        readiness_probe(self.ready, port, self.timeout(self.ready))
    }

    /// How long one call of `path` may take.
    fn timeout(&self, path: &str) -> i32 {
        self.endpoints
            .iter()
            .find(|(known, _)| *known == path)
            .map_or(IMAGE_TIMEOUT, |(_, timeout)| *timeout)
    }
}

/// The server: the router's `GET /health`, always 200 (`infera/server/app.py:586`); no liveness
/// probe. Upstream probes the server not at all (`builders.go:562-567`).
pub(super) const SERVER: Contract = Contract {
    ready: "/health",
    live: None,
    startup: SERVER_STARTUP,
    endpoints: &[],
};

/// SGLang workers of every role; prefill and decode answer as mixed ones do.
pub(super) fn sglang(rank: Rank) -> Option<Contract> {
    match rank {
        // `/health` is 503 until the engine is up (http_server.py:592-593), so it serves the
        // startup probe too; `/ping` answers while the HTTP server runs.
        Rank::Single | Rank::Leader => Some(Contract {
            ready: "/health",
            live: Some("/ping"),
            startup: WORKER_STARTUP,
            endpoints: &SGLANG_ENDPOINTS,
        }),
        // A dummy server answers a constant 200 once the node's model is loaded
        // (srt/entrypoints/engine.py:835-852): it says nothing about the engine. The leader's
        // probes speak for the group, which LeaderWorkerSet recreates as a whole.
        Rank::Follower => None,
    }
}

/// vLLM workers of every role.
pub(super) fn vllm(rank: Rank) -> Option<Contract> {
    match rank {
        Rank::Single | Rank::Leader => Some(Contract {
            ready: "/health",
            live: Some("/health"),
            startup: WORKER_STARTUP,
            endpoints: &VLLM_ENDPOINTS,
        }),
        // Rank > 0 is headless: it serves no HTTP (vllm/entrypoints/cli/serve.py:140-141).
        Rank::Follower => None,
    }
}

/// The probes of an engine container that serves HTTP.
pub(super) struct Probes {
    pub(super) startup: Probe,
    pub(super) readiness: Probe,
    pub(super) liveness: Option<Probe>,
}

impl Probes {
    /// The `contract`'s probes with the service's `health` overrides: the startup probe polls the
    /// readiness endpoint for the whole startup budget, and every call has the endpoint's timeout.
    pub(super) fn of(contract: &Contract, health: &Health, port: i32) -> Self {
        let timeout = |path: &str| {
            health
                .timeout_seconds
                .unwrap_or_else(|| contract.timeout(path))
        };
        let ready = health.readiness_path.as_deref().unwrap_or(contract.ready);
        let live = match &health.liveness {
            None => contract.live,
            Some(Liveness::Path(path)) => Some(path.as_str()),
            Some(Liveness::Off) => None,
        };
        let startup = health.startup_timeout.unwrap_or(contract.startup);
        Self {
            startup: http_probe(ready, port, timeout(ready), startup),
            readiness: http_probe(ready, port, timeout(ready), READINESS_WINDOW),
            liveness: live.map(|path| http_probe(path, port, timeout(path), LIVENESS_WINDOW)),
        }
    }
}

/// A readiness probe of `path` whose calls may take `timeout` seconds.
pub(super) fn readiness_probe(path: &str, port: i32, timeout: i32) -> Probe {
    http_probe(path, port, timeout, READINESS_WINDOW)
}

/// An HTTP probe of `path` that fails after `window` seconds of failures (at least), each call
/// given `timeout` seconds, every [`PERIOD`] seconds or, for a longer timeout, every `timeout`.
pub(super) fn http_probe(path: &str, port: i32, timeout: i32, window: i32) -> Probe {
    let period = PERIOD.max(timeout);
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::Int(port),
            ..Default::default()
        }),
        timeout_seconds: Some(timeout),
        period_seconds: Some(period),
        failure_threshold: Some((window + period - 1) / period),
        ..Default::default()
    }
}
