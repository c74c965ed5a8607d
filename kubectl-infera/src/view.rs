//! One InferaDeployment as the plugin shows it: a [`Summary`] row for the list and the
//! [`Detail`] of `status NAME` (also what `deploy --wait` explains a timeout with). Both are built
//! by pure functions of what was read — the deployment, its pods, the namespace's warning events
//! and the time — so they are tested without a cluster; [`fetch`] does the reading. A deployment
//! with `spec.gaie` also gets a [`GatewaySection`] in `status NAME` ([`gateway_section`]).

mod fetch;
mod gateway;
pub(crate) mod listed;
mod load;
mod warnings;

use infera_core::{
    ComponentType, InferaDeployment, InferaDeploymentStatus, PodHealth, READY, State, naming,
};
use k8s_openapi::{
    api::core::v1::{Event, Pod},
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use serde::Serialize;

use crate::diagnose;

pub use fetch::{deployment, gather, gather_gateway, list_summaries, not_found, pods_and_events};
pub use gateway::{GatewaySection, Lookup, gateway_section};
pub use listed::Listed;
pub use load::{LoadSection, Reading, load, load_from_prometheus, load_section, read_pods};

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub namespace: String,
    pub name: String,
    pub backend: String,
    pub state: String,
    /// Services whose ready replicas reach the desired count, of all services.
    pub services_ready: String,
    /// The `Ready` condition's reason (empty before the operator reports).
    pub reason: String,
    pub endpoint: String,
    /// The revision of the worker pods being rolled out to (`status.updateRevision`).
    pub revision: String,
    pub age_seconds: i64,
}

/// One service (or a piece of plumbing the operator reports, such as NATS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceRow {
    pub name: String,
    pub role: String,
    pub kind: String,
    pub desired_replicas: i32,
    pub ready_replicas: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes_per_group: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_groups: Option<i32>,
}

/// One pod, with its LeaderWorkerSet group when it has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRow {
    pub name: String,
    pub service: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub phase: String,
    pub ready: String,
    pub restarts: i32,
    pub node: String,
    /// Why it is not ready, when a container or the scheduler says (e.g. ImagePullBackOff).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    pub age_seconds: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionRow {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// One warning event about the deployment or one of its objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WarningRow {
    pub object: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
    pub age_seconds: i64,
}

/// Everything `status NAME` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    #[serde(flatten)]
    pub summary: Summary,
    pub generation: i64,
    pub observed_generation: i64,
    pub services: Vec<ServiceRow>,
    pub pods: Vec<PodRow>,
    pub conditions: Vec<ConditionRow>,
    /// The `hf://` downloads (`status.models`), by Job.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelRow>,
    /// The most recent warnings, newest first; when Ready, only those since [`Self::warnings_since`].
    pub warnings: Vec<WarningRow>,
    /// When Ready: when it became Ready (the `Ready` condition's lastTransitionTime). Warnings
    /// from before are resolved and not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings_since: Option<String>,
    /// How many warnings were left out because they are older than [`Self::warnings_since`].
    #[serde(skip_serializing_if = "is_zero")]
    pub resolved_warnings: usize,
    /// Why it is not Ready, from pods and events (empty when Ready).
    pub blocking: Vec<String>,
    /// With `spec.gaie`: the Gateway, and what it reports about the HTTPRoute and InferencePool.
    /// Filled in by `status NAME` ([`gateway_section`]), not by [`detail`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewaySection>,
    /// With `--load`: the pools' live load from their pods' metrics. Filled in by `status NAME`
    /// ([`load()`]), not by [`detail`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadSection>,
    /// With `spec.planner`: its targets and what it last saw and decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planner: Option<PlannerSection>,
}

/// The SLO planner: the spec's mode and targets, and `status.planner`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannerSection {
    /// `Off`, `Advise` or `Act`, as the spec says.
    pub mode: infera_core::PlannerMode,
    /// TTFT target at p95, in seconds.
    pub ttft_p95_target_seconds: f64,
    /// Inter-token latency target at p95, in seconds.
    pub itl_p95_target_seconds: f64,
    /// What the planner last saw and decided; `None` before its first decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<infera_core::PlannerStatus>,
}

impl PlannerSection {
    /// The planner of `idep`, when its spec has one.
    pub fn of(idep: &InferaDeployment) -> Option<Self> {
        let planner = idep.spec.planner.as_ref()?;
        Some(Self {
            mode: planner.mode(),
            ttft_p95_target_seconds: planner.slo.ttft_p95_seconds(),
            itl_p95_target_seconds: planner.slo.itl_p95_seconds(),
            status: idep.status.as_ref().and_then(|s| s.planner.clone()),
        })
    }
}

/// One `hf://` download of `status.models`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRow {
    /// The download Job (and its volume).
    pub job: String,
    /// What it downloads.
    pub source: String,
    /// The commit it got; empty until its Job has succeeded.
    pub resolved_revision: String,
}

/// For `skip_serializing_if`.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Seconds an operator may take to report on a new generation before `status` and `deploy --wait`
/// say that none has.
pub const UNREPORTED_AFTER_SECONDS: i64 = 30;

/// Seconds since the current generation's spec was written (the newest `managedFields` write of
/// `spec`, else the creation time), while the status reports an older generation or none.
pub fn unreported_seconds(idep: &InferaDeployment, now: Timestamp) -> Option<i64> {
    let status = idep.status.as_ref();
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    if observed >= idep.metadata.generation.unwrap_or(0) {
        return None;
    }
    let written = idep
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| m.subresource.as_deref().is_none_or(str::is_empty))
        .filter(|m| {
            m.fields_v1
                .as_ref()
                .is_some_and(|f| f.0.get("f:spec").is_some())
        })
        .filter_map(|m| m.time.as_ref())
        .max_by_key(|t| t.0)
        .or(idep.metadata.creation_timestamp.as_ref());
    Some(seconds_since(written, now))
}

/// What to say when no operator has reported on the current generation for a while.
pub fn unreported_reason(generation: i64, seconds: i64) -> String {
    format!(
        "no operator has reported on generation {generation} for {}: is one running and reconciling this namespace? check with `kubectl infera doctor`",
        crate::duration::age(seconds)
    )
}

/// Seconds from `t` to `now`; 0 when unknown.
fn seconds_since(t: Option<&Time>, now: Timestamp) -> i64 {
    t.map(|t| now.as_second() - t.0.as_second())
        .unwrap_or_default()
}

/// The state shown before the operator reports one.
const PENDING: &str = "Pending";

/// The ready services shown before the operator reports them.
const UNREPORTED: &str = "-";

/// The list row: state, ready services, the `Ready` reason and the endpoint.
pub fn summarize(idep: &Listed, now: Timestamp) -> Summary {
    let status = &idep.status;
    let reason = status
        .conditions
        .iter()
        .find(|c| c.type_ == READY)
        .map(|c| c.reason.clone())
        .unwrap_or_default();
    Summary {
        namespace: idep.metadata.namespace.clone().unwrap_or_default(),
        name: idep.metadata.name.clone().unwrap_or_default(),
        backend: idep
            .spec
            .backend_framework
            .map(|b| b.to_string())
            .unwrap_or_default(),
        state: status
            .state
            .map_or_else(|| PENDING.into(), |s| s.to_string()),
        services_ready: status
            .services_ready
            .clone()
            .unwrap_or_else(|| UNREPORTED.into()),
        reason,
        endpoint: status.endpoint.clone().unwrap_or_default(),
        revision: status.update_revision.clone().unwrap_or_default(),
        age_seconds: seconds_since(idep.metadata.creation_timestamp.as_ref(), now),
    }
}

/// Builds the detail from one deployment, its pods and the namespace's warning events.
pub fn detail(idep: &InferaDeployment, pods: &[Pod], events: &[Event], now: Timestamp) -> Detail {
    let status = idep.status.clone().unwrap_or_default();
    let mut pod_rows: Vec<PodRow> = pods.iter().map(|p| pod_row(p, now)).collect();
    pod_rows.sort_by(|a, b| (&a.service, &a.group, &a.name).cmp(&(&b.service, &b.group, &b.name)));
    let conditions = status
        .conditions
        .iter()
        .map(|c| ConditionRow {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
        })
        .collect();
    let warnings = warnings::of(idep, pods, events, now);
    let mut blocking = if status.state == Some(State::Ready) {
        Vec::new()
    } else {
        diagnose::reasons(pods, warnings.events.iter().copied())
    };
    let generation = idep.metadata.generation;
    if let Some(seconds) = unreported_seconds(idep, now).filter(|s| *s >= UNREPORTED_AFTER_SECONDS)
    {
        blocking.insert(
            0,
            unreported_reason(generation.unwrap_or_default(), seconds),
        );
    }
    if let Some(c) = infera_core::condition::reconcile_failure(&status, generation) {
        let generation = generation.unwrap_or_default();
        blocking.insert(
            0,
            format!(
                "the operator cannot reconcile generation {generation}: {}",
                c.message
            ),
        );
    }
    Detail {
        summary: summarize(&Listed::from(idep), now),
        generation: idep.metadata.generation.unwrap_or_default(),
        observed_generation: status.observed_generation.unwrap_or_default(),
        services: service_rows(idep, &status),
        pods: pod_rows,
        conditions,
        models: status
            .models
            .iter()
            .map(|(job, model)| ModelRow {
                job: job.clone(),
                source: model.source.clone(),
                resolved_revision: model.resolved_revision.clone().unwrap_or_default(),
            })
            .collect(),
        warnings: warnings.rows,
        warnings_since: warnings.since.map(|t| t.to_string()),
        resolved_warnings: warnings.resolved,
        blocking,
        gateway: None,
        load: None,
        planner: PlannerSection::of(idep),
    }
}

/// The spec's services with what the operator observed, then what it reports beyond the spec.
fn service_rows(idep: &InferaDeployment, status: &InferaDeploymentStatus) -> Vec<ServiceRow> {
    let specified = idep.spec.services.iter().map(|(service, spec)| {
        let observed = status.services.get(service);
        let nodes = spec.number_of_nodes.filter(|n| *n > 1);
        let kind = if nodes.is_some() {
            "LeaderWorkerSet"
        } else {
            "Deployment"
        };
        ServiceRow {
            name: service.clone(),
            role: match spec.component_type {
                ComponentType::Server => "server".into(),
                ComponentType::Worker => spec.role.unwrap_or_default().to_string(),
            },
            kind: observed.map_or_else(|| kind.into(), |s| s.kind.clone()),
            desired_replicas: observed.map_or(spec.replicas.unwrap_or(1), |s| s.desired_replicas),
            ready_replicas: observed.map_or(0, |s| s.ready_replicas),
            nodes_per_group: nodes,
            ready_groups: observed.and_then(|s| s.ready_groups),
        }
    });
    let plumbing = status
        .services
        .iter()
        .filter(|(n, _)| !idep.spec.services.contains_key(*n))
        .map(|(n, s)| ServiceRow {
            name: n.clone(),
            role: n.clone(),
            kind: s.kind.clone(),
            desired_replicas: s.desired_replicas,
            ready_replicas: s.ready_replicas,
            nodes_per_group: None,
            ready_groups: s.ready_groups,
        });
    specified.chain(plumbing).collect()
}

/// One pod's row, its health read through [`PodHealth`] as the operator reads it.
fn pod_row(pod: &Pod, now: Timestamp) -> PodRow {
    let health = PodHealth::of(pod);
    let label = |key: &str| {
        pod.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .cloned()
    };
    PodRow {
        name: pod.metadata.name.clone().unwrap_or_default(),
        service: label(naming::LABEL_SERVICE).unwrap_or_default(),
        group: label(naming::LWS_LABEL_GROUP_INDEX),
        phase: pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "Unknown".into()),
        ready: format!("{}/{}", health.ready_containers, health.containers),
        restarts: health.restarts,
        node: pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        reason: health.reason().to_string(),
        age_seconds: seconds_since(pod.metadata.creation_timestamp.as_ref(), now),
    }
}

#[cfg(test)]
pub mod tests;
