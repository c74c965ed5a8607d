//! The SLO planner's model, pure: from one interval's observed load and latency of a pool, and
//! what it learned before, the replicas (groups) the pool needs.
//!
//! **The model.** Each planned pool carries one kind of load: prompt tokens per second for a
//! prefill pool, output tokens per second for a decode pool, both for an aggregated (mixed)
//! pool. Its SLO ratio is the p95 latency over the interval divided by its target: TTFT for a
//! prefill pool, inter-token latency for a decode pool, the larger of both ratios for an
//! aggregated pool (or the one observed, when only one is). A ratio above 1 misses the SLO.
//!
//! The planner learns one figure per pool, its **capacity**: the load one replica carries
//! within the SLO. When the SLO is met at a per-replica load `x`, the capacity is at least `x`;
//! when it is missed, at most `x`, so it becomes [`BACKOFF`] times the smaller of the two. The
//! pool then needs `ceil(load / (capacity × (1 − HEADROOM)))` replicas.
//!
//! **The decision**, once per interval:
//! - metrics missing (no pod answered, a series absent, no latency observed under load): hold,
//!   and say which;
//! - SLO missed: raise to what the capacity says, and by at least one;
//! - SLO met with room (ratio at most [`COMFORT`]) and fewer replicas needed: lower, once the
//!   cool-down since the pool's last change has passed; no load at all lowers to `min`;
//! - otherwise hold.
//!
//! A change is at most `maxStep` replicas, and the result is always within `min` and `max` (a
//! count outside them comes back at once). A pool is never raised while one of its pods waits for
//! capacity the cluster lacks (the scheduler's `Insufficient amd.com/gpu`): the status says so,
//! and the replica that waits is placed when GPUs free up, or removed first when the pool is
//! lowered (a ReplicaSet deletes pods without a node first, a LeaderWorkerSet its newest group). Raising waits only for the next interval; lowering
//! waits for the cool-down; the capacity only falls on a miss, so a steady load settles and does
//! not oscillate (the property tests check all three).
//!
//! **Assumptions**: one replica's capacity does not depend on how many there are (the router
//! spreads load evenly); the latency of an interval reflects that interval's load; a pool's
//! capacity changes only with its spec (a new revision, other GPUs), which resets it.

use std::{collections::BTreeMap, fmt};

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kube::ResourceExt;

use crate::{
    load::PoolLoad,
    naming::LABEL_SERVICE,
    pod_health::{PodHealth, SchedulingCause},
    types::{PlannerDecision, PlannerMode, PlannerPoolStatus, PlannerStatus, Role},
    validate::limits::MAX_PLANNER_DECISIONS,
};

/// Capacity after a miss, as a fraction of the per-replica load it missed at.
pub const BACKOFF: f64 = 0.9;
/// The SLO ratio at or below which a pool has room to be lowered.
pub const COMFORT: f64 = 0.8;
/// Spare capacity the planner sizes for, a fraction of each replica's.
pub const HEADROOM: f64 = 0.1;

/// The validated `spec.planner` of a deployment whose planner is on.
#[derive(Clone, Debug, PartialEq)]
pub struct Planner {
    /// Whether it sets the replicas (`Act`) or only recommends them (`Advise`).
    pub acts: bool,
    /// TTFT target at p95, in seconds.
    pub ttft_p95: f64,
    /// Inter-token latency target at p95, in seconds.
    pub itl_p95: f64,
    /// Seconds between two looks.
    pub interval_seconds: i64,
    /// Seconds after a pool's last change before it may be lowered.
    pub cooldown_seconds: i64,
    /// Most replicas one decision changes a pool by.
    pub max_step: i32,
    /// The planned pools, in name order.
    pub pools: Vec<PlannedPool>,
    /// The Prometheus to read the metrics from; `None`: the pods.
    pub prometheus: Option<String>,
}

/// One planned pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPool {
    /// The service's name.
    pub name: String,
    /// Its role: which load it carries and which SLO binds it.
    pub role: Role,
    /// Fewest replicas (groups).
    pub min: i32,
    /// Most replicas (groups).
    pub max: i32,
}

/// What the engines showed over one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observed {
    /// The pool's prompt tokens per second; `None` when its metrics are missing.
    pub prompt_tokens: Option<f64>,
    /// The pool's output tokens per second; `None` when its metrics are missing.
    pub output_tokens: Option<f64>,
    /// The deployment's TTFT p95, seconds; `None` without observations.
    pub ttft_p95: Option<f64>,
    /// The deployment's inter-token latency p95, seconds; `None` without observations.
    pub itl_p95: Option<f64>,
    /// The pool's pods the scheduler cannot place for lack of capacity (GPUs, most often): while
    /// there are any, the pool is not raised.
    pub unplaced: usize,
}

/// What the planner carries from one interval to the next for a pool.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Memory {
    /// The load one replica carries within the SLO, as learned.
    pub capacity: Option<f64>,
    /// When (seconds) the pool last changed.
    pub last_change: Option<i64>,
}

/// What decided a recommendation.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// A metric is missing: the count holds.
    Missing(&'static str),
    /// The SLO is missed (TTFT or ITL, the ratio).
    Missed(Slo, f64),
    /// The load fits fewer replicas and the SLO has room.
    Fits,
    /// No load: the pool goes to `min`.
    Idle,
    /// The count is what the load needs.
    Steady,
    /// Lower is wanted (to this count), but the cool-down has not passed.
    Cooldown(i32),
    /// More is wanted (this count), but this many of the pool's pods cannot be scheduled for
    /// lack of capacity.
    NoRoom(i32, usize),
    /// More is wanted (this count) than `max`.
    AtMax(i32),
    /// The count was outside `min`..=`max`.
    Bounds,
}

/// An SLO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slo {
    /// Time to first token.
    Ttft,
    /// Inter-token latency.
    Itl,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(what) => write!(f, "holding: {what}"),
            Self::Missed(slo, ratio) => {
                let slo = match slo {
                    Slo::Ttft => "TTFT",
                    Slo::Itl => "ITL",
                };
                write!(
                    f,
                    "{slo} p95 misses its target ({:.0}% of it)",
                    ratio * 100.0
                )
            }
            Self::Fits => f.write_str("the load fits fewer replicas within the SLO"),
            Self::Idle => f.write_str("no load: down to min"),
            Self::Steady => f.write_str("the SLO is met at this count"),
            Self::Cooldown(to) => write!(f, "would lower to {to} after the cool-down"),
            Self::NoRoom(wanted, pods) => write!(
                f,
                "needs {wanted}, held: {pods} pod(s) of the pool cannot be scheduled for lack of \
                 capacity (GPUs), so the cluster has none for more"
            ),
            Self::AtMax(wanted) => write!(f, "needs {wanted}, held at max"),
            Self::Bounds => f.write_str("brought within min and max"),
        }
    }
}

/// One pool's recommendation.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Replicas (groups) recommended.
    pub replicas: i32,
    /// Why.
    pub reason: Reason,
    /// The pool's load over the interval, in its unit ([`unit`]).
    pub load: Option<f64>,
    /// What the planner remembers for the next interval.
    pub memory: Memory,
}

/// What a pool of `role` counts as its load.
pub fn unit(role: Role) -> &'static str {
    match role {
        Role::Prefill => "prompt tokens/s",
        Role::Decode => "output tokens/s",
        Role::Mixed => "tokens/s",
    }
}

/// The replicas `pool` needs at `now` (seconds), having `current`.
pub fn plan(
    planner: &Planner,
    pool: &PlannedPool,
    current: i32,
    observed: &Observed,
    memory: Memory,
    now: i64,
) -> Plan {
    let load = match pool.role {
        Role::Prefill => observed.prompt_tokens,
        Role::Decode => observed.output_tokens,
        Role::Mixed => observed
            .prompt_tokens
            .zip(observed.output_tokens)
            .map(|(p, o)| p + o),
    };
    let (wanted, reason, memory) = model(planner, pool.role, current, load, observed, memory);
    let (replicas, reason) = match limit(planner, pool, current, wanted, reason, memory, now) {
        // Never beyond what the cluster can place: a pod already waiting for capacity says so.
        (to, reason) if to > current && observed.unplaced > 0 && reason != Reason::Bounds => {
            (current, Reason::NoRoom(wanted, observed.unplaced))
        }
        limited => limited,
    };
    let memory = Memory {
        last_change: if replicas == current {
            memory.last_change
        } else {
            Some(now)
        },
        ..memory
    };
    Plan {
        replicas,
        reason,
        load,
        memory,
    }
}

/// What one look saw of a deployment, over the window between two readings.
#[derive(Clone, Debug)]
pub struct Window<'a> {
    /// When the look is.
    pub now: Timestamp,
    /// The deployment's update revision: what was learned of another one no longer holds.
    pub revision: Option<String>,
    /// Whether a Lockstep rollout is under way: `Act` holds the counts, whose change would
    /// break its steps.
    pub rolling: bool,
    /// Each pool's load over the window.
    pub pools: &'a [PoolLoad],
    /// The deployment's TTFT p95 over the window, seconds, over every engine.
    pub ttft_p95: Option<f64>,
    /// The deployment's inter-token latency p95 over the window, seconds.
    pub itl_p95: Option<f64>,
    /// Per pool, its pods the scheduler cannot place for lack of capacity ([`unplaced`]).
    pub unplaced: BTreeMap<String, usize>,
}

/// Per pool (the pods' `infera.amd.com/service` label), the pods the scheduler found no node
/// for because no node has the resources they request.
pub fn unplaced<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> BTreeMap<String, usize> {
    let mut unplaced = BTreeMap::new();
    for pod in pods {
        let short = matches!(
            PodHealth::of(pod).unschedulable(),
            Some((SchedulingCause::Capacity, _))
        );
        if let Some(pool) = pod.labels().get(LABEL_SERVICE).filter(|_| short) {
            *unplaced.entry(pool.clone()).or_default() += 1;
        }
    }
    unplaced
}

/// A change of one pool's count, recommended (`Advise`) or to be made (`Act`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The pool.
    pub pool: String,
    /// Its count now.
    pub from: i32,
    /// The count recommended.
    pub to: i32,
    /// Why.
    pub reason: String,
}

/// One look at a deployment: [`plan`] for each planned pool, whose count in the spec is
/// `replicas(pool)`, from what `previous` (the status the last look wrote) learned. Returns the
/// status to write (the changes added to its decisions, newest first) and the changes to make
/// (`Act`) or announce (`Advise`). While `window.rolling`, `Act` changes nothing and says so.
pub fn look(
    planner: &Planner,
    replicas: impl Fn(&str) -> i32,
    previous: Option<&PlannerStatus>,
    window: &Window<'_>,
) -> (PlannerStatus, Vec<Change>) {
    let now = window.now.as_second();
    let same_revision = previous.is_some_and(|p| p.revision == window.revision);
    let holding = planner.acts && window.rolling;
    let observed = |pool: &str| {
        let load = window.pools.iter().find(|l| l.pool == pool);
        Observed {
            prompt_tokens: load.and_then(|l| l.prompt_tokens_per_second),
            output_tokens: load.and_then(|l| l.tokens_per_second),
            ttft_p95: window.ttft_p95,
            itl_p95: window.itl_p95,
            unplaced: window.unplaced.get(pool).copied().unwrap_or_default(),
        }
    };
    let mut next = PlannerStatus {
        mode: if planner.acts {
            PlannerMode::Act
        } else {
            PlannerMode::Advise
        },
        last_look_time: Some(Time(window.now)),
        revision: window.revision.clone(),
        ttft_p95_seconds: window.ttft_p95,
        itl_p95_seconds: window.itl_p95,
        pools: Default::default(),
        decisions: Vec::new(),
    };
    let mut changes = Vec::new();
    for pool in &planner.pools {
        let current = replicas(&pool.name);
        let before = previous.and_then(|p| p.pools.get(&pool.name));
        let memory = Memory {
            capacity: before.and_then(|b| b.capacity).filter(|_| same_revision),
            last_change: before
                .and_then(|b| b.last_change_time.as_ref())
                .map(|t| t.0.as_second()),
        };
        let plan = plan(planner, pool, current, &observed(&pool.name), memory, now);
        let mut reason = plan.reason.to_string();
        // Advise changes nothing: its "last change" is when the recommendation last changed.
        let changed = if planner.acts {
            plan.replicas != current
        } else {
            plan.replicas != before.map_or(current, |b| b.recommended)
        };
        let mut last_change_time = before.and_then(|b| b.last_change_time.clone());
        if changed && holding {
            reason = format!(
                "holding at {current} while a Lockstep rollout is under way (would set {}: {reason})",
                plan.replicas
            );
        } else if changed {
            last_change_time = Some(Time(window.now));
            changes.push(Change {
                pool: pool.name.clone(),
                from: current,
                to: plan.replicas,
                reason: reason.clone(),
            });
        }
        next.pools.insert(
            pool.name.clone(),
            PlannerPoolStatus {
                replicas: current,
                recommended: plan.replicas,
                reason,
                load: plan.load,
                unit: unit(pool.role).into(),
                capacity: plan.memory.capacity,
                last_change_time,
            },
        );
    }
    next.decisions = changes
        .iter()
        .map(|change| PlannerDecision {
            time: Time(window.now),
            pool: change.pool.clone(),
            from: change.from,
            to: change.to,
            reason: change.reason.clone(),
            acted: planner.acts,
        })
        .chain(
            previous
                .into_iter()
                .flat_map(|p| p.decisions.iter().cloned()),
        )
        .take(MAX_PLANNER_DECISIONS)
        .collect();
    (next, changes)
}

/// What the load and latency alone ask for, and the capacity learned from them.
fn model(
    planner: &Planner,
    role: Role,
    current: i32,
    load: Option<f64>,
    observed: &Observed,
    memory: Memory,
) -> (i32, Reason, Memory) {
    let Some(load) = load.filter(|l| l.is_finite() && *l >= 0.0) else {
        return (
            current,
            Reason::Missing("the pool's token counters did not answer"),
            memory,
        );
    };
    if load == 0.0 {
        return (0, Reason::Idle, memory);
    }
    let ttft = observed.ttft_p95.map(|s| (Slo::Ttft, s / planner.ttft_p95));
    let itl = observed.itl_p95.map(|s| (Slo::Itl, s / planner.itl_p95));
    let binding = match role {
        Role::Prefill => ttft,
        Role::Decode => itl,
        // The worse of the two; one alone when the interval observed only one (the last
        // tokens of requests that started before it, say).
        Role::Mixed => match (ttft, itl) {
            (Some(t), Some(i)) => Some(if i.1 > t.1 { i } else { t }),
            (t, i) => t.or(i),
        },
    };
    let Some((slo, ratio)) = binding.filter(|(_, r)| r.is_finite()) else {
        return (
            current,
            Reason::Missing("no latency was observed under load"),
            memory,
        );
    };
    if current < 1 {
        return (1, Reason::Missed(slo, ratio), memory);
    }
    let per_replica = load / f64::from(current);
    let capacity = if ratio > 1.0 {
        memory.capacity.unwrap_or(per_replica).min(per_replica) * BACKOFF
    } else {
        memory.capacity.unwrap_or(per_replica).max(per_replica)
    };
    let memory = Memory {
        capacity: Some(capacity),
        ..memory
    };
    let needed = replicas_for(load, capacity);
    if ratio > 1.0 {
        (needed.max(current + 1), Reason::Missed(slo, ratio), memory)
    } else if ratio <= COMFORT && needed < current {
        (needed, Reason::Fits, memory)
    } else {
        (current, Reason::Steady, memory)
    }
}

/// Replicas that carry `load` at `capacity` each with [`HEADROOM`] spare, at least 1.
fn replicas_for(load: f64, capacity: f64) -> i32 {
    let needed = (load / (capacity * (1.0 - HEADROOM))).ceil();
    // Saturating: a capacity near zero asks for "as many as allowed".
    if needed.is_finite() && needed < f64::from(i32::MAX) {
        (needed as i32).max(1)
    } else {
        i32::MAX
    }
}

/// `wanted` within the step, the cool-down and the bounds.
fn limit(
    planner: &Planner,
    pool: &PlannedPool,
    current: i32,
    wanted: i32,
    reason: Reason,
    memory: Memory,
    now: i64,
) -> (i32, Reason) {
    if current < pool.min || current > pool.max {
        return (current.clamp(pool.min, pool.max), Reason::Bounds);
    }
    let step = planner.max_step.max(1);
    if wanted > current {
        let to = wanted.min(current.saturating_add(step));
        if to > pool.max {
            return (pool.max, Reason::AtMax(wanted));
        }
        return (to, reason);
    }
    if wanted < current {
        let to = wanted.max(current - step).max(pool.min);
        let cooling = memory
            .last_change
            .is_some_and(|at| now - at < planner.cooldown_seconds);
        if to == current {
            return (current, Reason::Steady);
        }
        if cooling {
            return (current, Reason::Cooldown(to));
        }
        return (to, reason);
    }
    (current, reason)
}

#[cfg(test)]
mod tests;
