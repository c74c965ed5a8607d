//! `spec.planner` and `status.planner`: the SLO planner's settings and what it saw and decided.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::validate::{
    cel,
    limits::{
        HTTP_URL_PATTERN, MAX_PLANNER_COOLDOWN_SECONDS, MAX_PLANNER_DECISIONS,
        MAX_PLANNER_INTERVAL_SECONDS, MAX_REFERENCE_LENGTH, MAX_REPLICAS, MAX_SERVICES,
        MAX_SLO_MILLISECONDS, MIN_PLANNER_INTERVAL_SECONDS,
    },
};

/// The SLO planner: every `intervalSeconds` it reads the engines' metrics, learns how much load
/// one replica of each planned pool carries within the latency targets, and sizes the pools to
/// the load with headroom. `Advise` only reports the counts in `status.planner`; `Act` also sets
/// the pools' `replicas`, as `kubectl infera scale` does.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannerSpec {
    /// `Off` (the default), `Advise` or `Act`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<PlannerMode>,
    /// The latency targets, at the 95th percentile over each interval.
    pub slo: LatencySlo,
    /// The pools the planner sizes, by service name, each between `min` and `max` replicas
    /// (groups, for a multi-node pool). A planned pool has no `autoscaling`.
    #[schemars(extend("minProperties" = 1, "maxProperties" = MAX_SERVICES))]
    pub pools: BTreeMap<String, PlannerPool>,
    /// Seconds between two looks at the metrics, the window the rates and percentiles are
    /// over (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = MIN_PLANNER_INTERVAL_SECONDS, max = MAX_PLANNER_INTERVAL_SECONDS))]
    pub interval_seconds: Option<i32>,
    /// Seconds after a pool's last change before the planner lowers it (default 300); raising
    /// it waits only for the next interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = MAX_PLANNER_COOLDOWN_SECONDS))]
    pub cooldown_seconds: Option<i32>,
    /// Most replicas (groups) one decision adds to or removes from a pool (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_REPLICAS))]
    pub max_step: Option<i32>,
    /// Read the metrics from this Prometheus instead of the pods: its URL as the operator reaches
    /// it, e.g. `http://prometheus-operated.monitoring:9090`, holding the series the graph's
    /// PodMonitor collects (`spec.monitoring`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REFERENCE_LENGTH), regex(pattern = HTTP_URL_PATTERN))]
    pub prometheus: Option<String>,
}

impl PlannerSpec {
    /// The mode, `Off` when unset.
    pub fn mode(&self) -> PlannerMode {
        self.mode.unwrap_or_default()
    }
}

/// What the planner does.
#[allow(
    missing_docs,
    reason = "the variants are the CRD enum values; doc comments on them would change the schema"
)]
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum PlannerMode {
    #[default]
    Off,
    Advise,
    Act,
}

/// Latency targets at the 95th percentile: the planner's (`spec.planner.slo`) and the burn
/// alerts' (`spec.monitoring.slo`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LatencySlo {
    /// Time to first token, in milliseconds: judged on the pools that prefill (`prefill` and
    /// aggregated ones).
    #[schemars(range(min = 1, max = MAX_SLO_MILLISECONDS))]
    pub ttft_p95_milliseconds: i32,
    /// Time between output tokens, in milliseconds: judged on the pools that decode (`decode`
    /// and aggregated ones).
    #[schemars(range(min = 1, max = MAX_SLO_MILLISECONDS))]
    pub itl_p95_milliseconds: i32,
}

impl LatencySlo {
    /// The TTFT target, in seconds (the unit of the engines' histograms and of the status).
    pub fn ttft_p95_seconds(&self) -> f64 {
        f64::from(self.ttft_p95_milliseconds) / 1000.0
    }

    /// The inter-token latency target, in seconds.
    pub fn itl_p95_seconds(&self) -> f64 {
        f64::from(self.itl_p95_milliseconds) / 1000.0
    }
}

/// The bounds of one planned pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = cel::planner_min_not_above_max())]
pub struct PlannerPool {
    /// Fewest replicas (groups).
    #[schemars(range(min = 1, max = MAX_REPLICAS))]
    pub min: i32,
    /// Most replicas (groups).
    #[schemars(range(min = 1, max = MAX_REPLICAS))]
    pub max: i32,
}

/// What the planner last saw and decided.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannerStatus {
    /// The mode it ran in.
    pub mode: PlannerMode,
    /// When it last looked and saw something new (a look that sees nothing new writes
    /// nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_look_time: Option<Time>,
    /// The revision the pools ran when the capacities were learned: a new one starts afresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The deployment's TTFT over the last interval, p95 in seconds, over every engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p95_seconds: Option<f64>,
    /// The deployment's inter-token latency over the last interval, p95 in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_p95_seconds: Option<f64>,
    /// Each planned pool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pools: BTreeMap<String, PlannerPoolStatus>,
    /// The last changes it recommended (`Advise`) or made (`Act`), newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_PLANNER_DECISIONS))]
    pub decisions: Vec<PlannerDecision>,
}

/// One planned pool, as the planner last saw it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannerPoolStatus {
    /// Replicas (groups) the spec asks for.
    pub replicas: i32,
    /// Replicas (groups) the planner recommends.
    pub recommended: i32,
    /// What decided `recommended`: the SLO that is missed, the load, a bound, the cool-down, or
    /// the metrics that are missing.
    pub reason: String,
    /// The pool's load over the last interval, in `unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// What the load counts: `prompt tokens/s` (prefill), `output tokens/s` (decode) or
    /// `tokens/s` (aggregated: both).
    pub unit: String,
    /// The load one replica carries within the SLO, as learned so far, in `unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f64>,
    /// When the planner last changed (`Act`) or recommended changing (`Advise`) the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change_time: Option<Time>,
}

/// One recommended or made change.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannerDecision {
    /// When.
    pub time: Time,
    /// The pool.
    pub pool: String,
    /// Replicas before.
    pub from: i32,
    /// Replicas after.
    pub to: i32,
    /// Why, with the figures behind it.
    pub reason: String,
    /// Whether the planner set the replicas (`Act`) or only recommended them (`Advise`).
    pub acted: bool,
}
