//! The plan's invariants, checked at every state of a simulation: the operator's plan, a model of
//! the Deployment controller's rolling update (kubernetes `pkg/controller/deployment/rolling.go`:
//! the new ReplicaSet scales up to `desired + maxSurge` pods in all, old ReplicaSets scale down
//! their unhealthy pods and then their available ones down to `desired − maxUnavailable`; a
//! paused Deployment does neither, but scales: to `desired + maxSurge` pods from its larger
//! ReplicaSet, and its old ones to zero once its new one is complete and available — `sync.go`,
//! `scale`), a scheduler placing pods on free GPUs, and pods becoming
//! ready, in every order proptest draws. The operator re-plans after every event: it watches
//! pods, and a pod takes longer to become ready than a watch event to arrive.

use proptest::prelude::*;

use super::*;

#[derive(Clone, Copy, Debug)]
struct SimPod {
    scheduled: bool,
    ready: bool,
}

#[derive(Clone, Debug)]
struct SimPool {
    side: Side,
    desired: i32,
    bounds: PoolBounds,
    old: Vec<SimPod>,
    new: Vec<SimPod>,
    step: Option<Step>,
}

#[derive(Clone, Debug)]
struct Sim {
    strategy: RolloutStrategy,
    pools: Vec<SimPool>,
    free_gpus: i32,
}

fn count(pods: &[SimPod], f: impl Fn(&SimPod) -> bool) -> i32 {
    i32::try_from(pods.iter().filter(|p| f(p)).count()).expect("few pods")
}

impl Sim {
    /// Pools of `(side, desired, maxSurge, maxUnavailable)` running the old revision, ready,
    /// with `spare` GPUs free (one GPU per pod).
    fn new(strategy: RolloutStrategy, pools: &[(Side, i32, i32, i32)], spare: i32) -> Self {
        let ready = SimPod {
            scheduled: true,
            ready: true,
        };
        let mut sim = Self {
            strategy,
            pools: pools
                .iter()
                .map(|&(side, desired, max_surge, max_unavailable)| SimPool {
                    side,
                    desired,
                    bounds: PoolBounds {
                        max_surge,
                        max_unavailable,
                    },
                    old: vec![ready; usize::try_from(desired).expect("positive")],
                    new: Vec::new(),
                    step: None,
                })
                .collect(),
            free_gpus: spare,
        };
        sim.replan();
        sim
    }

    fn observed(&self) -> Vec<Pool> {
        self.pools
            .iter()
            .enumerate()
            .map(|(i, p)| Pool {
                name: format!("pool{i}"),
                side: p.side,
                desired: p.desired,
                bounds: p.bounds,
                updated: count(&p.new, |_| true),
                updated_ready: count(&p.new, |pod| pod.ready),
                old: count(&p.old, |_| true),
                old_ready: count(&p.old, |pod| pod.ready),
                waiting_for_gpu: p.new.iter().any(|pod| !pod.scheduled),
                multi_node: false,
            })
            .collect()
    }

    fn replan(&mut self) -> Plan {
        let plan = plan(self.strategy, &self.observed());
        for (pool, step) in self.pools.iter_mut().zip(&plan.steps) {
            pool.step = Some(*step);
        }
        plan
    }

    /// One sync of pool `i`'s Deployment controller; whether it changed anything.
    fn controller(&mut self, i: usize) -> bool {
        let pool = &mut self.pools[i];
        let Some(step) = pool.step else {
            return false;
        };
        let mut changed = false;
        if step.hold {
            // A paused Deployment whose new ReplicaSet is saturated (desired replicas, all
            // available) scales its old ones to zero.
            if count(&pool.new, |pod| pod.ready) == pool.desired && !pool.old.is_empty() {
                self.free_gpus += count(&pool.old, |pod| pod.scheduled);
                pool.old.clear();
                return true;
            }
            // A paused Deployment only scales, to `desired + maxSurge` pods in all, taking pods
            // from its largest ReplicaSet (the older one of two the same size).
            while count(&pool.old, |_| true) + count(&pool.new, |_| true)
                > pool.desired + step.max_surge
            {
                let pods = if pool.old.len() >= pool.new.len() {
                    &mut pool.old
                } else {
                    &mut pool.new
                };
                // The ReplicaSet deletes unscheduled pods first, then those not ready.
                let at = (pods.iter().position(|pod| !pod.scheduled))
                    .or_else(|| pods.iter().position(|pod| !pod.ready))
                    .unwrap_or(0);
                let pod = pods.remove(at);
                self.free_gpus += i32::from(pod.scheduled);
                changed = true;
            }
            return changed;
        }
        let total = count(&pool.old, |_| true) + count(&pool.new, |_| true);
        let up =
            (pool.desired + step.max_surge - total).min(pool.desired - count(&pool.new, |_| true));
        for _ in 0..up.max(0) {
            pool.new.push(SimPod {
                scheduled: false,
                ready: false,
            });
            changed = true;
        }
        let total = count(&pool.old, |_| true) + count(&pool.new, |_| true);
        let min_available = pool.desired - step.max_unavailable;
        let new_unavailable = count(&pool.new, |pod| !pod.ready);
        let mut max_down = total - min_available - new_unavailable;
        if max_down <= 0 {
            return changed;
        }
        while max_down > 0 {
            let Some(at) = pool.old.iter().position(|pod| !pod.ready) else {
                break;
            };
            let pod = pool.old.remove(at);
            self.free_gpus += i32::from(pod.scheduled);
            max_down -= 1;
            changed = true;
        }
        let available = count(&pool.old, |p| p.ready) + count(&pool.new, |p| p.ready);
        for _ in 0..(available - min_available).max(0) {
            if pool.old.pop().is_some() {
                self.free_gpus += 1;
                changed = true;
            }
        }
        changed
    }

    /// The scheduler places the first pending pod on a free GPU.
    fn schedule(&mut self) -> bool {
        if self.free_gpus == 0 {
            return false;
        }
        let pending = self
            .pools
            .iter_mut()
            .flat_map(|pool| pool.new.iter_mut())
            .find(|pod| !pod.scheduled);
        pending.is_some_and(|pod| {
            pod.scheduled = true;
            self.free_gpus -= 1;
            true
        })
    }

    /// The `n`th scheduled, not ready new pod becomes ready.
    fn become_ready(&mut self, n: usize) -> bool {
        let mut starting: Vec<&mut SimPod> = self
            .pools
            .iter_mut()
            .flat_map(|pool| pool.new.iter_mut())
            .filter(|pod| pod.scheduled && !pod.ready)
            .collect();
        if starting.is_empty() {
            return false;
        }
        let at = n % starting.len();
        starting[at].ready = true;
        true
    }

    /// Event `choice` (any number: a controller, the scheduler or a pod becoming ready), then the
    /// operator's plan; whether the event changed anything.
    fn event(&mut self, choice: usize) -> bool {
        let pools = self.pools.len();
        let changed = match choice % (pools + 2) {
            i if i < pools => self.controller(i),
            i if i == pools => self.schedule(),
            _ => self.become_ready(choice / (pools + 2)),
        };
        self.replan();
        changed
    }

    fn complete(&self) -> bool {
        self.pools
            .iter()
            .all(|pool| pool.old.is_empty() && count(&pool.new, |pod| pod.ready) == pool.desired)
    }

    /// The first of the three invariants that does not hold now, if any.
    fn violation(&self) -> Option<String> {
        for (i, pool) in self.pools.iter().enumerate() {
            let ready = count(&pool.old, |p| p.ready) + count(&pool.new, |p| p.ready);
            if ready < pool.desired - pool.bounds.max_unavailable {
                return Some(format!("pool{i} has {ready} ready of {}", pool.desired));
            }
        }
        let side = |side: Side, f: &dyn Fn(&SimPool) -> i32| -> i64 {
            self.pools
                .iter()
                .filter(|pool| pool.side == side)
                .map(|pool| i64::from(f(pool)))
                .sum()
        };
        let desired = |pool: &SimPool| pool.desired;
        let new_ready = |pool: &SimPool| count(&pool.new, |p| p.ready);
        let old_ready = |pool: &SimPool| count(&pool.old, |p| p.ready);
        let (dp, dd) = (side(Side::Prefill, &desired), side(Side::Decode, &desired));
        if dp == 0 || dd == 0 {
            return None;
        }
        let (rp, rd) = (
            side(Side::Prefill, &new_ready),
            side(Side::Decode, &new_ready),
        );
        // |rp/dp − rd/dd| ≤ 1/min(dp, dd)
        if (rp * dd - rd * dp).abs() * dp.min(dd) > dp * dd {
            return Some(format!("fractions {rp}/{dp} and {rd}/{dd}"));
        }
        let old_pair = side(Side::Prefill, &old_ready) >= 1 && side(Side::Decode, &old_ready) >= 1;
        let new_pair = rp >= 1 && rd >= 1;
        // With one replica a side, the first new one ready takes its old one with it (a
        // complete new ReplicaSet): the known limit of `one_short`.
        let single = dp == 1 && dd == 1;
        if !old_pair && !new_pair && !single {
            return Some("no ready prefill and decode of one revision".into());
        }
        None
    }

    /// Runs the events of `choices`, then every event until none changes anything; the first
    /// violation met, or whether the rollout completed and the final plan.
    fn run(&mut self, choices: &[usize]) -> Result<(bool, Plan), String> {
        let check = |sim: &Self, at: &str| match sim.violation() {
            Some(violation) => Err(format!("{violation} after {at}: {sim:?}")),
            None => Ok(()),
        };
        check(self, "the start")?;
        for (n, &choice) in choices.iter().enumerate() {
            self.event(choice);
            check(self, &format!("event {n} ({choice})"))?;
        }
        for round in 0..10_000 {
            let events = self.pools.len() + 2;
            let changed = (0..events).any(|choice| self.event(choice));
            check(self, &format!("settling round {round}"))?;
            if !changed {
                break;
            }
        }
        let plan = self.replan();
        Ok((self.complete(), plan))
    }
}

/// A graph of prefill and decode pools (and maybe a mixed one) with their bounds, and spare GPUs.
fn graph() -> impl Strategy<Value = (Vec<(Side, i32, i32, i32)>, i32)> {
    let pool = |side: Side| {
        (1..=5i32, 0..=2i32, 0..=2i32).prop_map(move |(desired, surge, unavailable)| {
            // Validation refuses both bounds 0.
            (side, desired, surge, unavailable.max(i32::from(surge == 0)))
        })
    };
    (
        proptest::collection::vec(pool(Side::Prefill), 1..=2),
        proptest::collection::vec(pool(Side::Decode), 1..=2),
        proptest::option::of(pool(Side::Mixed)),
        0..=5i32,
    )
        .prop_map(|(prefill, decode, mixed, spare)| {
            let mut pools = prefill;
            pools.extend(decode);
            pools.extend(mixed);
            (pools, spare)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn lockstep_keeps_the_invariants_in_every_order_and_finishes_or_says_why_not(
        (pools, spare) in graph(),
        choices in proptest::collection::vec(any::<usize>(), 0..200),
    ) {
        let mut sim = Sim::new(RolloutStrategy::Lockstep, &pools, spare);
        let (complete, plan) = sim.run(&choices).map_err(TestCaseError::fail)?;
        prop_assert!(complete || !plan.blocked.is_empty(), "stuck without a reason: {sim:?}");
        let surges = pools.iter().all(|&(_, _, surge, _)| surge >= 1);
        if surges && spare >= pools.iter().map(|&(_, _, surge, _)| surge).sum() {
            // A free GPU for every pool to surge into: every rollout finishes.
            prop_assert!(complete, "{plan:?} {sim:?}");
        }
    }
}

#[test]
fn independent_pools_break_the_invariants_lockstep_keeps() {
    // The prefill pool (1 replica) finishes before the decode pool (4) has started.
    let pools = [(Side::Prefill, 1, 1, 0), (Side::Decode, 4, 1, 0)];
    let prefill_first = [0, 3, 4, 0, 0];
    let mut independent = Sim::new(RolloutStrategy::Independent, &pools, 2);
    let violation = independent.run(&prefill_first).expect_err("a violation");
    assert!(
        violation.starts_with("no ready prefill and decode of one revision")
            || violation.starts_with("fractions 1/1 and 0/4"),
        "{violation}"
    );
    let mut lockstep = Sim::new(RolloutStrategy::Lockstep, &pools, 2);
    assert_eq!(lockstep.run(&prefill_first).map(|(done, _)| done), Ok(true));
}

fn pool(name: &str, side: Side, desired: i32, updated: (i32, i32), old_ready: i32) -> Pool {
    Pool {
        name: name.into(),
        side,
        desired,
        bounds: PoolBounds {
            max_surge: 1,
            max_unavailable: 0,
        },
        updated: updated.0,
        updated_ready: updated.1,
        old: old_ready,
        old_ready,
        waiting_for_gpu: false,
        multi_node: false,
    }
}

fn step(allowed: i32, hold: bool, max_surge: i32, max_unavailable: i32) -> Step {
    Step {
        allowed,
        hold,
        max_surge,
        max_unavailable,
    }
}

#[test]
fn two_prefill_and_four_decode_step_by_half_of_the_prefill_side() {
    let start = [
        pool("prefill", Side::Prefill, 2, (0, 0), 2),
        pool("decode", Side::Decode, 4, (0, 0), 4),
    ];
    assert_eq!(
        plan(RolloutStrategy::Lockstep, &start).steps,
        [step(1, false, 1, 0), step(2, false, 1, 0)]
    );
    // Decode has its two new replicas, not ready yet; a prefill is ready: decode may go on to
    // all four (1/2 + 1/2), prefill holds until a decode is ready (taking its surplus old
    // replica down would let its controller create another new one).
    let waiting = [
        pool("prefill", Side::Prefill, 2, (1, 1), 2),
        pool("decode", Side::Decode, 4, (2, 0), 4),
    ];
    assert_eq!(
        plan(RolloutStrategy::Lockstep, &waiting).steps,
        [step(1, true, 1, 0), step(4, false, 1, 0)]
    );
    // Independent pools take every replica at once, each at its own pace.
    assert_eq!(
        plan(RolloutStrategy::Independent, &start).steps,
        [step(2, false, 1, 0), step(4, false, 1, 0)]
    );
}

#[test]
fn a_pool_with_every_new_replica_keeps_its_old_ones_until_a_new_pair_is_ready() {
    let prefill_done = [
        pool("prefill", Side::Prefill, 1, (1, 1), 1),
        pool("decode", Side::Decode, 1, (1, 0), 1),
    ];
    let steps = plan(RolloutStrategy::Lockstep, &prefill_done).steps;
    assert_eq!(steps, [step(1, true, 1, 0), step(1, true, 1, 0)]);
    let paired = [
        pool("prefill", Side::Prefill, 1, (1, 1), 1),
        pool("decode", Side::Decode, 1, (1, 1), 1),
    ];
    let steps = plan(RolloutStrategy::Lockstep, &paired).steps;
    assert_eq!(steps, [step(1, false, 1, 0), step(1, false, 1, 0)]);
}

#[test]
fn without_a_free_gpu_a_pool_replaces_within_max_unavailable_or_is_blocked() {
    // Its surge replica waits for a GPU: an old one goes, the others do not surge.
    let mut decode = pool("decode", Side::Decode, 4, (1, 0), 4);
    decode.waiting_for_gpu = true;
    decode.bounds.max_unavailable = 1;
    let mut prefill = pool("prefill", Side::Prefill, 2, (0, 0), 2);
    prefill.bounds.max_unavailable = 1;
    let replace = plan(
        RolloutStrategy::Lockstep,
        &[prefill.clone(), decode.clone()],
    );
    assert_eq!(replace.steps, [step(1, false, 0, 1), step(2, false, 0, 1)]);
    assert_eq!(replace.blocked, Vec::<String>::new());

    decode.bounds.max_unavailable = 0;
    let blocked = plan(RolloutStrategy::Lockstep, &[prefill, decode]);
    assert_eq!(blocked.steps[1], step(2, true, 1, 0));
    assert_eq!(
        blocked.blocked,
        [
            "decode pool decode: a new replica waits for a free GPU to surge into and maxUnavailable is 0; free a GPU or allow maxUnavailable: 1"
        ]
    );

    // One replica per side: replacing it would leave no prefill and decode of one revision.
    let mut prefill = pool("prefill", Side::Prefill, 1, (1, 0), 1);
    prefill.waiting_for_gpu = true;
    prefill.bounds.max_unavailable = 1;
    let decode = pool("decode", Side::Decode, 1, (0, 0), 1);
    let blocked = plan(RolloutStrategy::Lockstep, &[prefill, decode]);
    assert_eq!(
        blocked.blocked,
        [
            "prefill pool prefill: a new replica waits for a free GPU to surge into and taking an old replica down would leave no ready prefill and decode of one revision; free a GPU for a surge or add a replica",
            "decode pool decode: no GPU is free to surge into and maxUnavailable is 0; free a GPU or allow maxUnavailable: 1",
        ]
    );
}

#[test]
fn a_held_pool_gives_back_its_surge_gpu_to_a_replica_waiting_for_one() {
    // Prefill holds 3 old and 1 new replica, all ready (decode is behind); the decode replica
    // waiting for a GPU cannot replace an old one (maxUnavailable already down).
    let mut prefill = pool("prefill", Side::Prefill, 3, (1, 1), 3);
    prefill.bounds.max_unavailable = 1;
    let done = pool("decode-a", Side::Decode, 1, (1, 1), 0);
    let mut waiting = pool("decode-b", Side::Decode, 3, (1, 0), 2);
    waiting.bounds = PoolBounds {
        max_surge: 0,
        max_unavailable: 1,
    };
    waiting.waiting_for_gpu = true;
    let pools = [prefill, done, waiting];
    let plan = plan(RolloutStrategy::Lockstep, &pools);
    // Still paused, at 3 + 0 pods: its Deployment takes one old replica away.
    assert_eq!(plan.steps[0], step(1, true, 0, 1));
    // Without a replica waiting, it keeps its surge.
    let mut pools = pools;
    pools[2].waiting_for_gpu = false;
    assert_eq!(
        super::plan(RolloutStrategy::Lockstep, &pools).steps[0],
        step(1, true, 1, 0)
    );
}

#[test]
fn a_held_pool_whose_new_replicas_are_more_gives_back_a_ready_one_no_invariant_rests_on() {
    // Decode holds 2 old and 3 new replicas, all ready; prefill, at 2 of 4 new ready, waits for
    // a GPU for its third and has its one replica down already.
    let bounds = PoolBounds {
        max_surge: 1,
        max_unavailable: 1,
    };
    let mut prefill = pool("prefill", Side::Prefill, 4, (3, 2), 1);
    prefill.bounds = bounds;
    prefill.waiting_for_gpu = true;
    let mut decode = pool("decode", Side::Decode, 4, (3, 3), 2);
    decode.bounds = bounds;
    let pools = [prefill, decode];
    let plan = plan(RolloutStrategy::Lockstep, &pools);
    // Decode's paused Deployment scales to 4 pods, taking one from its new ReplicaSet; prefill
    // holds at 3 new replicas, as many as 2 new decode replicas ready allow.
    assert_eq!(plan.steps, [step(3, true, 0, 1), step(3, true, 0, 1)]);

    // Had prefill a fourth new replica, ready or not, decode's third would be what lets it be.
    let mut pools = pools;
    pools[0].updated = 4;
    pools[0].old = 0;
    pools[0].old_ready = 0;
    assert_eq!(
        super::plan(RolloutStrategy::Lockstep, &pools).steps[1],
        step(3, true, 1, 0)
    );
}

#[test]
fn a_pool_holding_its_sides_last_old_replicas_stays_one_short_until_the_other_side_has_a_new_one() {
    // One prefill replica and two decode replicas: a Deployment whose new ReplicaSet is complete
    // and available scales its old ones to zero, paused or not. So the prefill pool waits, and
    // decode updates one replica, not both.
    let prefill = pool("prefill", Side::Prefill, 1, (0, 0), 1);
    let decode = pool("decode", Side::Decode, 2, (0, 0), 2);
    let start = plan(RolloutStrategy::Lockstep, &[prefill.clone(), decode]);
    assert_eq!(start.steps, [step(0, true, 0, 1), step(1, false, 1, 0)]);
    assert_eq!(start.blocked, Vec::<String>::new());
    // A new decode replica is ready: the prefill pool may complete, its new replica and that
    // one a new pair.
    let decode = Pool {
        old: 1,
        old_ready: 1,
        ..pool("decode", Side::Decode, 2, (1, 1), 1)
    };
    let next = plan(RolloutStrategy::Lockstep, &[prefill, decode]);
    assert_eq!(next.steps[0], step(1, false, 1, 0));
}

#[test]
fn a_controller_that_keeps_its_surge_keeps_what_its_side_may_add_first() {
    let bounds = |max_surge, max_unavailable| PoolBounds {
        max_surge,
        max_unavailable,
    };
    let with = |mut pool: Pool, bounds: PoolBounds| {
        pool.bounds = bounds;
        pool
    };
    // 2 prefill, 4 decode: one replica of the smaller side is half of prefill, a quarter of
    // decode: prefill may add 1 first, decode 2.
    let pools = [
        with(pool("prefill", Side::Prefill, 2, (0, 0), 2), bounds(4, 0)),
        with(pool("decode", Side::Decode, 4, (0, 0), 4), bounds(4, 0)),
    ];
    assert_eq!(steady_surge(RolloutStrategy::Lockstep, &pools), [1, 2]);
    assert_eq!(steady_surge(RolloutStrategy::Independent, &pools), [4, 4]);
    // Decode pools share their side's 2: the third keeps one all the same (maxUnavailable 0),
    // the fourth none.
    let pools = [
        with(pool("prefill", Side::Prefill, 2, (0, 0), 2), bounds(1, 0)),
        with(pool("decode-a", Side::Decode, 1, (0, 0), 1), bounds(1, 0)),
        with(pool("decode-b", Side::Decode, 1, (0, 0), 1), bounds(1, 0)),
        with(pool("decode-c", Side::Decode, 1, (0, 0), 1), bounds(1, 0)),
        with(pool("decode-d", Side::Decode, 1, (0, 0), 1), bounds(1, 1)),
    ];
    assert_eq!(
        steady_surge(RolloutStrategy::Lockstep, &pools),
        [1, 1, 1, 1, 0]
    );
}

#[test]
fn nearly_every_rollout_that_may_replace_finishes_without_a_spare_gpu() {
    // Graphs whose every pool may take one replica down and whose sides have two replicas or more
    // (so that one is ready while the other is replaced), 0–2 spare GPUs, random event orders.
    // A pool that lockstep holds gives back the GPU of its surge replica when another pool's
    // replica waits for one. Left stuck (and saying so): a pool with two new replicas waiting,
    // its `maxUnavailable` step down already, while the held pool's new replica is one the
    // other side's replicas rest on. Without any give-back 1,087 of these 16,155 rollouts were
    // stuck; giving back only old replicas, 121.
    let mut seed: u64 = 12345;
    let mut next = move |below: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from((seed >> 33) % below).expect("small")
    };
    let (mut runs, mut stuck) = (0, 0);
    for _ in 0..20_000 {
        let mut pools = Vec::new();
        for side in [Side::Prefill, Side::Decode] {
            for _ in 0..=next(2) {
                let [desired, surge, unavailable] =
                    [1 + next(5), next(3), 1 + next(2)].map(|n| i32::try_from(n).expect("small"));
                pools.push((side, desired, surge, unavailable));
            }
        }
        let side = |side: Side| -> i32 { pools.iter().filter(|p| p.0 == side).map(|p| p.1).sum() };
        if side(Side::Prefill) < 2 || side(Side::Decode) < 2 {
            continue;
        }
        let spare = i32::try_from(next(3)).expect("small");
        let choices: Vec<usize> = (0..next(200)).map(|_| next(u64::MAX >> 33)).collect();
        let mut sim = Sim::new(RolloutStrategy::Lockstep, &pools, spare);
        let (complete, plan) = sim.run(&choices).expect("the invariants hold");
        assert!(
            complete || !plan.blocked.is_empty(),
            "stuck without a reason: {sim:?}"
        );
        runs += 1;
        if !complete && stuck < 6 {
            eprintln!(
                "STUCK {pools:?} spare {spare}\n  {:?}\n  blocked {:?}",
                sim.pools
                    .iter()
                    .map(|p| (
                        p.side,
                        p.desired,
                        p.bounds.max_surge,
                        p.bounds.max_unavailable,
                        p.old
                            .iter()
                            .map(|x| (x.scheduled as u8, x.ready as u8))
                            .collect::<Vec<_>>(),
                        p.new
                            .iter()
                            .map(|x| (x.scheduled as u8, x.ready as u8))
                            .collect::<Vec<_>>(),
                        p.step
                    ))
                    .collect::<Vec<_>>(),
                plan.blocked
            );
        }
        stuck += i32::from(!complete);
    }
    // The sweep is the same graphs every time; the stuck ones a ceiling, so a better planner
    // passes (and its figure goes in the comment above).
    assert_eq!(runs, 16_155);
    assert!(stuck <= 15, "{stuck} of {runs} rollouts stuck (at most 15)");
}
