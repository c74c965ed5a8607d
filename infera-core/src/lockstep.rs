//! The rollout's next step, decided from what is observed: how many replicas of the update
//! revision each worker pool may have now, and how far above and below its desired count its
//! workload controller may go. Pure; the operator observes the counts from its caches, renders
//! the step into the pools' workloads (a Deployment's `paused` and `strategy.rollingUpdate`, a
//! LeaderWorkerSet's `rolloutStrategy`) and applies them.
//!
//! With `Lockstep` a plan keeps, at every moment (see the tests, which simulate the workload
//! controllers and check every state):
//! 1. each pool has at least `desired − maxUnavailable` ready replicas;
//! 2. the updated-and-ready fractions of the prefill side and of the decode side differ by at
//!    most one replica of the smaller side (`1 / min(desired prefill, desired decode)`; a pool
//!    counts as at most wholly updated);
//! 3. a ready prefill and a ready decode of one revision exist (the old pair until the new pair
//!    is ready).
//!
//! 2 holds because a side may only have as many updated replicas, ready or not, as keeps its
//! fraction within one replica of the other side's updated-and-ready fraction, which only grows.
//! 3 holds because until a new prefill and a new decode are ready no side may go below one old
//! ready replica: its pools' `maxUnavailable` is capped, and a pool that has created all its
//! updated replicas holds its old ones. A workload holds by being paused: a paused Deployment
//! neither creates nor removes replicas for a rollout (its controller only scales). The operator
//! pauses a pool as soon as it has its allowed replicas; its controller takes no further step
//! before those are ready, so this holds as long as a pod takes longer to become ready than the
//! operator to see it. One exception, which the plan steers around: a Deployment whose new
//! ReplicaSet is complete drops its old replicas, paused or not — so a pool holding the last old
//! ones of its side stays one replica short until the other side has a new one ready (with one
//! replica a side, one side must go first, and 3 may not hold for that moment).
//!
//! Capacity: while an updated replica waits for a GPU no pool surges, the waiting pool replaces
//! within its `maxUnavailable`, and a held pool gives back the GPU of its surge replica (an old
//! replica, or a new one no invariant rests on; see [`plan`]); a rollout that can do none of these
//! says what is missing.

use crate::{types::RolloutStrategy, validate::PoolBounds};

/// Which side of a disaggregated graph a pool is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Prefill pools.
    Prefill,
    /// Decode pools.
    Decode,
    /// Mixed pools, which roll out on their own.
    Mixed,
}

/// What is observed of one worker pool, in replicas (groups, for a multi-node pool).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// The service's name.
    pub name: String,
    /// Prefill, decode or mixed.
    pub side: Side,
    /// Replicas the spec (or the autoscaler) asks for.
    pub desired: i32,
    /// The pool's `maxSurge` and `maxUnavailable`.
    pub bounds: PoolBounds,
    /// Replicas of the update revision, not terminating, ready or not.
    pub updated: i32,
    /// Of those, the ready ones.
    pub updated_ready: i32,
    /// Replicas of any other revision, not terminating, ready or not.
    pub old: i32,
    /// Of those, the ready ones.
    pub old_ready: i32,
    /// A replica of the update revision cannot be scheduled (no free GPU to surge into).
    pub waiting_for_gpu: bool,
    /// Its workload is a LeaderWorkerSet, which gives no surge group back while it surges.
    pub multi_node: bool,
}

/// What a pool's workload may do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Replicas of the update revision it may have.
    pub allowed: i32,
    /// Held: its controller may neither create nor remove replicas.
    pub hold: bool,
    /// Replicas above desired its controller may create.
    pub max_surge: i32,
    /// Replicas below desired its controller may remove.
    pub max_unavailable: i32,
}

/// The next step of every pool (in the order given), and why pools that cannot move are stuck.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// One per pool.
    pub steps: Vec<Step>,
    /// `pool: what is missing`, for each pool that is blocked.
    pub blocked: Vec<String>,
}

/// The sums of one side.
#[derive(Clone, Copy, Default)]
struct Totals {
    desired: i64,
    updated: i64,
    updated_ready: i64,
}

/// A pool counts as at most wholly updated: replicas of the update revision above desired (a
/// LeaderWorkerSet's surge groups, kept until every group is updated) are capacity, not progress.
fn totals(pools: &[Pool], side: Side) -> Totals {
    pools
        .iter()
        .filter(|pool| pool.side == side)
        .fold(Totals::default(), |t, pool| Totals {
            desired: t.desired + i64::from(pool.desired),
            updated: t.updated + i64::from(pool.updated.min(pool.desired)),
            updated_ready: t.updated_ready + i64::from(pool.updated_ready.min(pool.desired)),
        })
}

/// Updated replicas side `this` may still add while its fraction stays within one replica of
/// the smaller side above `other`'s updated-and-ready fraction.
fn side_room(this: Totals, other: Totals) -> i64 {
    most_updated(this, other)
        .saturating_sub(this.updated)
        .max(0)
}

/// The updated replicas side `this` may have: its fraction within one replica of the smaller
/// side above `other`'s updated-and-ready fraction.
fn most_updated(this: Totals, other: Totals) -> i64 {
    let smaller = this.desired.min(other.desired);
    if smaller == 0 {
        return i64::MAX;
    }
    // updated / this.desired <= other.updated_ready / other.desired + 1 / smaller
    (other.updated_ready * smaller + other.desired) * this.desired / (other.desired * smaller)
}

/// The next step of the rollout of `pools` under `strategy`.
pub fn plan(strategy: RolloutStrategy, pools: &[Pool]) -> Plan {
    let lockstep = strategy == RolloutStrategy::Lockstep;
    let (mut plan, old_left) = steps(lockstep, pools);
    // A replica waiting for a GPU: a pool held with a surge replica gives that GPU back. Its
    // paused Deployment, its `maxSurge` one less, scales down to `desired + maxSurge` pods in
    // all, taking the pod from its larger ReplicaSet (the older one of two the same size;
    // kubernetes pkg/controller/deployment/sync.go, scale).
    if !pools.iter().any(|pool| pool.waiting_for_gpu) {
        return plan;
    }
    let give_back = |mut step: Step| {
        step.max_surge -= 1;
        step.max_unavailable = i32::from(step.max_surge == 0);
        step
    };
    if let Some(giver) = gives_old(pools, &plan.steps, old_left) {
        plan.steps[giver] = give_back(plan.steps[giver]);
    } else if let Some(giver) = gives_new(lockstep, pools, &plan.steps) {
        // The others step as if that replica were gone already: none goes ahead on it.
        let mut without = pools.to_vec();
        without[giver].updated -= 1;
        without[giver].updated_ready -= 1;
        let step = give_back(plan.steps[giver]);
        plan.steps = steps(lockstep, &without).0.steps;
        plan.steps[giver] = step;
    }
    plan
}

/// Every pool's step before any gives back a GPU, and the ready old replicas the prefill and
/// decode sides may still lose.
fn steps(lockstep: bool, pools: &[Pool]) -> (Plan, [i64; 2]) {
    let (prefill, decode) = (totals(pools, Side::Prefill), totals(pools, Side::Decode));
    let new_pair = prefill.updated_ready >= 1 && decode.updated_ready >= 1;
    let single = prefill.desired == 1 && decode.desired == 1;
    // A replica waiting for a GPU means none is spare: a surge would only take the one a
    // replacement frees.
    let gpus_short = pools.iter().any(|pool| pool.waiting_for_gpu);
    let old_ready = |side: Side| -> i64 {
        pools
            .iter()
            .filter(|pool| pool.side == side)
            .map(|pool| i64::from(pool.old_ready))
            .sum()
    };
    // Per side: updated replicas it may still add, and old ready ones it may still lose.
    let mut prefill_left = (side_room(prefill, decode), old_ready(Side::Prefill) - 1);
    let mut decode_left = (side_room(decode, prefill), old_ready(Side::Decode) - 1);
    let mut plan = Plan {
        steps: Vec::with_capacity(pools.len()),
        blocked: Vec::new(),
    };
    for pool in pools {
        let mut unlimited = (i64::MAX, i64::MAX);
        let left = match pool.side {
            Side::Prefill if lockstep => &mut prefill_left,
            Side::Decode if lockstep => &mut decode_left,
            _ => &mut unlimited,
        };
        let mut room = i64::from((pool.desired - pool.updated).max(0)).min(left.0);
        let keep_old = lockstep && pool.side != Side::Mixed && !new_pair;
        // A Deployment whose new ReplicaSet is complete (desired replicas, all available)
        // scales its old ones to zero even while paused (kubernetes
        // pkg/controller/deployment/sync.go, scale, IsSaturated). So while the other side has
        // no updated replica ready, a pool completes its updated replicas only where its side
        // may lose all its old ready ones, which are then its own to lose; else it stays one
        // short. Not where each side has a single replica: one of them must go first.
        let other_ready = match pool.side {
            Side::Prefill => decode.updated_ready,
            _ => prefill.updated_ready,
        };
        let completes =
            other_ready == 0 && i64::from(pool.updated) + room >= i64::from(pool.desired);
        let mut own = i64::from(pool.old_ready);
        let budget = if !keep_old {
            None
        } else if completes && own <= left.1 {
            left.1 -= own;
            Some(&mut own)
        } else {
            if completes && !single && pool.updated < pool.desired {
                room = i64::from(pool.desired - 1 - pool.updated);
            }
            Some(&mut left.1)
        };
        left.0 -= room;
        let room = i32::try_from(room).unwrap_or(i32::MAX);
        let (step, blocked) = pool_step(pool, room, budget, gpus_short);
        plan.steps.push(step);
        plan.blocked.extend(blocked);
    }
    // Ready old replicas each side may still lose (limited under Lockstep until a new pair).
    let old_left = if lockstep && !new_pair {
        [prefill_left.1, decode_left.1]
    } else {
        [i64::MAX; 2]
    };
    (plan, old_left)
}

/// A held Deployment pool that keeps a surge replica, and waits for no GPU itself.
fn surging(pool: &Pool, step: &Step) -> bool {
    step.hold && step.max_surge > 0 && !pool.waiting_for_gpu && !pool.multi_node
}

/// The first surging pool whose old ReplicaSet is the larger and that may lose an old replica:
/// it keeps `desired − maxUnavailable` ready, and its side a ready old replica (`old_left`: the
/// ready old replicas the prefill and decode sides may still lose).
fn gives_old(pools: &[Pool], steps: &[Step], old_left: [i64; 2]) -> Option<usize> {
    pools.iter().zip(steps).position(|(pool, step)| {
        // The ReplicaSet deletes a pod not ready first, if it has one.
        let loses_ready = pool.old_ready == pool.old;
        let left = match pool.side {
            Side::Prefill => old_left[0],
            Side::Decode => old_left[1],
            Side::Mixed => i64::MAX,
        };
        surging(pool, step)
            && pool.old >= pool.updated
            && (!loses_ready
                || (pool.old_ready + pool.updated_ready
                    > pool.desired - pool.bounds.max_unavailable
                    && left >= 1))
    })
}

/// The first surging pool whose new ReplicaSet is the larger, every new replica ready (one not
/// ready would only be created again), that may replace replicas later (else two such pools
/// pass one GPU back and forth), and that may lose a new replica: it keeps `desired −
/// maxUnavailable` ready and, under Lockstep, no invariant rests on that replica — the other
/// side's updated replicas, and those its controllers create anyway, stay within one replica of
/// the smaller side above this side's updated-and-ready fraction, and a ready new prefill and
/// decode stay if there are.
fn gives_new(lockstep: bool, pools: &[Pool], steps: &[Step]) -> Option<usize> {
    pools.iter().zip(steps).position(|(pool, step)| {
        surging(pool, step)
            && pool.old < pool.updated
            && pool.updated_ready == pool.updated
            && pool.bounds.max_unavailable >= 1
            && pool.old_ready + pool.updated_ready > pool.desired - pool.bounds.max_unavailable
            && (!lockstep || pool.side == Side::Mixed || {
                let other = match pool.side {
                    Side::Prefill => Side::Decode,
                    _ => Side::Prefill,
                };
                let (mut this, that) = (totals(pools, pool.side), totals(pools, other));
                if pool.updated_ready <= pool.desired {
                    this.updated_ready -= 1;
                }
                // Its updated replicas, and those its controllers create anyway: replicas
                // missing (old ones taken down) come back as updated ones.
                let committed: i64 = pools
                    .iter()
                    .filter(|p| p.side == other)
                    .map(|p| i64::from(p.updated.max(p.desired - p.old).min(p.desired)))
                    .sum();
                most_updated(that, this) >= committed
                    && (that.updated_ready == 0 || this.updated_ready >= 1)
            })
    })
}

/// The replicas above desired each pool (in the order given) may keep through a whole rollout,
/// for a workload controller that creates its surge replicas first, all of the update revision,
/// and takes them back only when every replica is updated: a LeaderWorkerSet (its
/// `rollingUpdateParameters` in LeaderWorkerSet v0.9 pkg/controllers/leaderworkerset_controller.go
/// deletes surge groups as soon as `maxSurge` shrinks, so it cannot be narrowed step by step as a
/// Deployment's is). Under Lockstep a side keeps at most what it may add before the other side has
/// an updated replica ready, shared among its pools in order; a pool left with none keeps one
/// where its `maxUnavailable` is 0, as a controller refuses both 0.
pub fn steady_surge(strategy: RolloutStrategy, pools: &[Pool]) -> Vec<i32> {
    let lockstep = strategy == RolloutStrategy::Lockstep;
    let start = |side| Totals {
        updated: 0,
        updated_ready: 0,
        ..totals(pools, side)
    };
    let (prefill, decode) = (start(Side::Prefill), start(Side::Decode));
    let mut left = [side_room(prefill, decode), side_room(decode, prefill)];
    pools
        .iter()
        .map(|pool| {
            let room = match pool.side {
                Side::Prefill if lockstep => &mut left[0],
                Side::Decode if lockstep => &mut left[1],
                _ => return pool.bounds.max_surge,
            };
            let surge = i64::from(pool.bounds.max_surge).min(*room);
            *room -= surge;
            let surge = i32::try_from(surge).unwrap_or(i32::MAX);
            if surge == 0 && pool.bounds.max_unavailable == 0 {
                1
            } else {
                surge
            }
        })
        .collect()
}

/// The step of one pool that may add `room` updated replicas and, until a new prefill and decode
/// are ready under Lockstep, lose at most `old_budget` ready replicas of the old revision; with
/// `gpus_short` it does not surge.
fn pool_step(
    pool: &Pool,
    room: i32,
    old_budget: Option<&mut i64>,
    gpus_short: bool,
) -> (Step, Option<String>) {
    let allowed = (pool.updated + room).min(pool.desired).max(pool.updated);
    if pool.old == 0 {
        return steady_step(pool);
    }
    let held = Step {
        allowed,
        ..hold(pool)
    };
    let surge = if gpus_short { 0 } else { pool.bounds.max_surge };
    let created_all = pool.updated >= pool.desired;
    let mut old_budget = old_budget;
    if created_all
        && !pool.waiting_for_gpu
        && let Some(budget) = old_budget.as_deref_mut()
    {
        // What is left is removing its old replicas: held while they are the last of the side.
        let old_ready = i64::from(pool.old_ready);
        if old_ready > *budget {
            return (held, None);
        }
        *budget -= old_ready;
        old_budget = None;
    }
    // Its controller creates replicas up to `desired + maxSurge` in all, and takes old ready
    // ones down to `desired − maxUnavailable` ready, then creates what it took down again (the
    // operator sees both and holds the pool, but the controller may be quicker): a step may
    // create `maxSurge + maxUnavailable` replicas, besides those missing now.
    let missing = (pool.desired - pool.old - pool.updated).max(0);
    let surplus = (pool.old + pool.updated - pool.desired).max(0);
    let (surge, unavailable) = if room == 0 && pool.waiting_for_gpu && surplus > 0 {
        // Its surge replica waits for a GPU: free one by taking one old replica down. With no
        // surge, its controller creates nothing while the replica waiting makes up the count.
        let unavailable = pool.bounds.max_unavailable.min(1);
        if unavailable == 0 {
            return (held, Some(blocked(pool, gpus_short)));
        }
        (0, unavailable)
    } else {
        let creatable = room - missing;
        if creatable < 0 || (creatable == 0 && missing == 0 && !created_all) {
            let blocked = pool.waiting_for_gpu.then(|| blocked(pool, gpus_short));
            return (held, blocked);
        }
        let surge = surge.min(creatable);
        // Its controller creates missing replicas anyway; the API server refuses maxSurge and
        // maxUnavailable both 0, so it may also take one old replica down.
        let floor = i32::from(missing > 0 && surge == 0);
        let unavailable = pool
            .bounds
            .max_unavailable
            .min((creatable - surge).max(floor));
        (surge, unavailable)
    };
    let mut unavailable = unavailable;
    if let Some(budget) = old_budget {
        // Its controller takes old ready replicas down to `desired − maxUnavailable` ready.
        let above = i64::from(pool.old_ready + pool.updated_ready - pool.desired);
        let most = *budget - above;
        if most < 0 {
            return (held, None);
        }
        unavailable = unavailable.min(i32::try_from(most).unwrap_or(i32::MAX));
        *budget -= (above + i64::from(unavailable)).max(0);
    }
    if surge + unavailable == 0 {
        if created_all && !pool.waiting_for_gpu {
            // Nothing to create; the API server refuses both 0, and a surge creates nothing.
            let step = Step {
                allowed,
                hold: false,
                max_surge: 1,
                max_unavailable: 0,
            };
            return (step, None);
        }
        return (held, Some(blocked(pool, gpus_short)));
    }
    let step = Step {
        allowed,
        hold: false,
        max_surge: surge,
        max_unavailable: unavailable,
    };
    // Its controller removes no more old replicas once `maxUnavailable` are down: the replica
    // waiting for a GPU waits for someone else to free one.
    let down = pool.desired - pool.old_ready - pool.updated_ready;
    let stuck = pool.waiting_for_gpu && down >= unavailable;
    (step, stuck.then(|| blocked(pool, gpus_short)))
}

/// The step of a pool that is not rolling out (a first deployment, or scaling): its
/// controller's own pace.
fn steady_step(pool: &Pool) -> (Step, Option<String>) {
    let step = Step {
        allowed: pool.desired,
        hold: false,
        max_surge: pool.bounds.max_surge,
        max_unavailable: pool.bounds.max_unavailable,
    };
    let blocked = pool.waiting_for_gpu.then(|| {
        format!(
            "{} pool {}: a new replica waits for a free GPU; free one",
            side_name(pool.side),
            pool.name
        )
    });
    (step, blocked)
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Prefill => "prefill",
        Side::Decode => "decode",
        Side::Mixed => "worker",
    }
}

/// `pool` held where it is: its controller neither creates nor removes replicas.
pub fn hold(pool: &Pool) -> Step {
    // A paused Deployment still scales: proportionally, up or down to `desired + maxSurge` pods
    // in all (kubernetes pkg/controller/deployment/sync.go, scale). A held pool's maxSurge is
    // what it has above desired, so that is nothing; maxUnavailable does nothing while paused,
    // and is 1 only where the API server refuses both 0.
    let surplus = (pool.old + pool.updated - pool.desired).max(0);
    Step {
        allowed: pool.updated,
        hold: true,
        max_surge: surplus,
        max_unavailable: i32::from(surplus == 0),
    }
}

/// Why `pool` can neither surge nor replace a replica; `gpus_short`: no GPU is free.
fn blocked(pool: &Pool, gpus_short: bool) -> String {
    let side = side_name(pool.side);
    let no_surge = if pool.waiting_for_gpu {
        "a new replica waits for a free GPU to surge into"
    } else if gpus_short {
        "no GPU is free to surge into"
    } else {
        "maxSurge is 0"
    };
    let down = pool.desired - pool.old_ready - pool.updated_ready;
    let no_replacement = if pool.bounds.max_unavailable == 0 {
        "maxUnavailable is 0; free a GPU or allow maxUnavailable: 1"
    } else if down > 0 {
        "maxUnavailable replicas are down already; free a GPU"
    } else {
        "taking an old replica down would leave no ready prefill and decode of one revision; free a GPU for a surge or add a replica"
    };
    format!("{side} pool {}: {no_surge} and {no_replacement}", pool.name)
}

#[cfg(test)]
mod tests;
