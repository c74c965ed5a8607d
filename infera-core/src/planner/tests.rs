use proptest::prelude::*;

use super::*;

fn planner(max_step: i32, cooldown_seconds: i64) -> Planner {
    Planner {
        acts: true,
        ttft_p95: 1.0,
        itl_p95: 0.05,
        interval_seconds: 30,
        cooldown_seconds,
        max_step,
        pools: Vec::new(),
        prometheus: None,
    }
}

fn pool(role: Role, min: i32, max: i32) -> PlannedPool {
    PlannedPool {
        name: role.to_string(),
        role,
        min,
        max,
    }
}

fn decode(output_tokens: f64, itl_p95: f64) -> Observed {
    Observed {
        output_tokens: Some(output_tokens),
        prompt_tokens: Some(0.0),
        itl_p95: Some(itl_p95),
        ttft_p95: Some(0.1),
        unplaced: 0,
    }
}

#[test]
fn a_missed_itl_raises_decode_to_what_the_learned_capacity_needs() {
    // 300 output tokens/s on 2 replicas misses ITL (60 ms of 50): a replica carries less than
    // 150, so 135 (BACKOFF), and 300 needs ceil(300 / (135 × 0.9)) = 3.
    let plan = plan(
        &planner(4, 300),
        &pool(Role::Decode, 1, 8),
        2,
        &decode(300.0, 0.06),
        Memory::default(),
        1_000,
    );
    assert_eq!(plan.replicas, 3);
    assert_eq!(
        plan.reason.to_string(),
        "ITL p95 misses its target (120% of it)"
    );
    assert_eq!(plan.load, Some(300.0));
    assert_eq!(
        plan.memory,
        Memory {
            capacity: Some(135.0),
            last_change: Some(1_000)
        }
    );
}

#[test]
fn a_miss_raises_by_at_least_one_and_at_most_max_step() {
    // Learned 1,000 per replica before: the model alone would hold, a miss adds one anyway.
    let learned = Memory {
        capacity: Some(1_000.0),
        last_change: None,
    };
    let held = plan(
        &planner(1, 300),
        &pool(Role::Decode, 1, 8),
        2,
        &decode(300.0, 0.06),
        learned,
        0,
    );
    assert_eq!((held.replicas, held.memory.capacity), (3, Some(135.0)));
    // On 10 replicas a miss at 300 each learns 270: 3,000 needs ceil(3000 / 243) = 13; a step
    // of 1 allows 11.
    let stepped = plan(
        &planner(1, 300),
        &pool(Role::Decode, 1, 20),
        10,
        &decode(3_000.0, 0.5),
        Memory::default(),
        0,
    );
    assert_eq!(stepped.replicas, 11);
}

#[test]
fn missing_metrics_hold_the_count_and_say_which() {
    let no_tokens = Observed {
        output_tokens: None,
        ..decode(0.0, 0.06)
    };
    let held = plan(
        &planner(1, 0),
        &pool(Role::Decode, 1, 8),
        3,
        &no_tokens,
        Memory::default(),
        0,
    );
    assert_eq!(
        (held.replicas, held.reason.to_string()),
        (
            3,
            "holding: the pool's token counters did not answer".into()
        )
    );
    let no_latency = Observed {
        itl_p95: None,
        ..decode(200.0, 0.0)
    };
    let held = plan(
        &planner(1, 0),
        &pool(Role::Decode, 1, 8),
        3,
        &no_latency,
        Memory::default(),
        0,
    );
    assert_eq!(
        (held.replicas, held.reason.to_string()),
        (3, "holding: no latency was observed under load".into())
    );
    assert_eq!(held.memory, Memory::default());
}

#[test]
fn no_load_lowers_to_min_a_step_at_a_time_after_the_cool_down() {
    let cooling = Memory {
        capacity: Some(100.0),
        last_change: Some(900),
    };
    let pool = pool(Role::Prefill, 1, 8);
    let idle = Observed {
        prompt_tokens: Some(0.0),
        ..Observed::default()
    };
    let held = plan(&planner(2, 300), &pool, 5, &idle, cooling, 1_000);
    assert_eq!(
        (held.replicas, held.reason.to_string()),
        (5, "would lower to 3 after the cool-down".into())
    );
    let lowered = plan(&planner(2, 300), &pool, 5, &idle, cooling, 1_200);
    assert_eq!((lowered.replicas, lowered.reason), (3, Reason::Idle));
    assert_eq!(lowered.memory.last_change, Some(1_200));
    let at_min = plan(&planner(2, 300), &pool, 1, &idle, cooling, 2_000);
    assert_eq!((at_min.replicas, at_min.reason), (1, Reason::Steady));
}

#[test]
fn a_met_slo_with_room_lowers_to_what_the_load_needs() {
    // Learned 200 per replica; 300 prompt tokens/s needs ceil(300 / 180) = 2 of 4, TTFT at half
    // its target.
    let learned = Memory {
        capacity: Some(200.0),
        last_change: None,
    };
    let observed = Observed {
        prompt_tokens: Some(300.0),
        ttft_p95: Some(0.5),
        ..Observed::default()
    };
    let lowered = plan(
        &planner(4, 300),
        &pool(Role::Prefill, 1, 8),
        4,
        &observed,
        learned,
        0,
    );
    assert_eq!((lowered.replicas, lowered.reason), (2, Reason::Fits));
    // At 90% of the target there is no room: it holds.
    let tight = Observed {
        ttft_p95: Some(0.9),
        ..observed
    };
    let held = plan(
        &planner(4, 300),
        &pool(Role::Prefill, 1, 8),
        4,
        &tight,
        learned,
        0,
    );
    assert_eq!((held.replicas, held.reason), (4, Reason::Steady));
}

#[test]
fn bounds_come_first_and_max_says_what_was_needed() {
    let pool = pool(Role::Decode, 2, 4);
    let outside = plan(
        &planner(1, 0),
        &pool,
        7,
        &decode(10.0, 0.01),
        Memory::default(),
        0,
    );
    assert_eq!((outside.replicas, outside.reason), (4, Reason::Bounds));
    let at_max = plan(
        &planner(1, 0),
        &pool,
        4,
        &decode(400.0, 0.1),
        Memory::default(),
        0,
    );
    // 100 per replica missed at 200%: 90 each, 400 needs ceil(400 / 81) = 5.
    assert_eq!(
        (at_max.replicas, at_max.reason.to_string()),
        (4, "needs 5, held at max".into())
    );
}

#[test]
fn an_aggregated_pool_is_bound_by_the_worse_of_its_two_slos() {
    let observed = Observed {
        prompt_tokens: Some(100.0),
        output_tokens: Some(100.0),
        ttft_p95: Some(1.5),
        itl_p95: Some(0.1),
        unplaced: 0,
    };
    let raised = plan(
        &planner(1, 0),
        &pool(Role::Mixed, 1, 8),
        1,
        &observed,
        Memory::default(),
        0,
    );
    assert_eq!(raised.load, Some(200.0));
    assert_eq!(raised.reason, Reason::Missed(Slo::Itl, 2.0));
    assert_eq!(raised.replicas, 2);
    // No request started in the interval: the tokens of those running still show ITL.
    let only_itl = Observed {
        ttft_p95: None,
        itl_p95: Some(0.02),
        ..observed
    };
    let held = plan(
        &planner(1, 0),
        &pool(Role::Mixed, 1, 8),
        2,
        &only_itl,
        Memory::default(),
        0,
    );
    assert_eq!((held.replicas, held.reason), (2, Reason::Steady));
}

/// A decode pool whose replicas each carry `capacity` output tokens/s within the ITL target:
/// ITL grows with the square of the per-replica load.
#[test]
fn a_pod_waiting_for_gpus_holds_a_raise_and_says_so_but_not_a_lowering_or_min() {
    let short = Observed {
        unplaced: 1,
        ..decode(300.0, 0.06)
    };
    let held = plan(
        &planner(4, 300),
        &pool(Role::Decode, 1, 8),
        2,
        &short,
        Memory::default(),
        0,
    );
    assert_eq!(held.replicas, 2);
    assert_eq!(
        held.reason.to_string(),
        "needs 3, held: 1 pod(s) of the pool cannot be scheduled for lack of capacity (GPUs), so the cluster has none for more"
    );
    // The capacity is still learned from the miss.
    assert_eq!(held.memory.capacity, Some(135.0));
    // Room to lower: lowered (the waiting pod goes first).
    let idle = Observed {
        unplaced: 1,
        ..decode(0.0, 0.01)
    };
    let lowered = plan(
        &planner(1, 0),
        &pool(Role::Decode, 1, 8),
        3,
        &idle,
        Memory::default(),
        0,
    );
    assert_eq!(lowered.replicas, 2);
    // Below min: min is a promise, raised anyway.
    let raised = plan(
        &planner(1, 0),
        &pool(Role::Decode, 2, 8),
        1,
        &short,
        Memory::default(),
        0,
    );
    assert_eq!((raised.replicas, raised.reason), (2, Reason::Bounds));
}

#[test]
fn unplaced_counts_a_pools_pods_short_of_capacity_only() {
    let pod = |pool: &str, message: &str| -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("{pool}-x"), "labels": {"infera.amd.com/service": pool}},
            "status": {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
            }]},
        }))
        .expect("a pod")
    };
    let pods = [
        pod(
            "decode",
            "0/2 nodes are available: 2 Insufficient amd.com/gpu.",
        ),
        pod(
            "decode",
            "0/2 nodes are available: 2 Insufficient amd.com/gpu.",
        ),
        pod(
            "prefill",
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
        ),
        pod(
            "prefill",
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
        ),
    ];
    assert_eq!(unplaced(&pods), BTreeMap::from([("decode".to_string(), 2)]));
}

/// A decode pool at 300 output tokens/s, its ITL p95 at 60 ms (of 50: missed), at `second`.
fn missed_window(pools: &[PoolLoad], second: i64, rolling: bool) -> Window<'_> {
    Window {
        now: Timestamp::from_second(second).expect("a time"),
        revision: Some("r1".into()),
        rolling,
        pools,
        ttft_p95: Some(0.1),
        itl_p95: Some(0.06),
        unplaced: BTreeMap::new(),
    }
}

fn decode_load(output_tokens: f64) -> Vec<PoolLoad> {
    vec![PoolLoad {
        pool: "decode".into(),
        tokens_per_second: Some(output_tokens),
        prompt_tokens_per_second: Some(0.0),
        ..PoolLoad::default()
    }]
}

fn planned(acts: bool) -> Planner {
    Planner {
        acts,
        pools: vec![pool(Role::Decode, 1, 8)],
        ..planner(1, 300)
    }
}

#[test]
fn a_look_acts_on_a_miss_and_records_the_change_newest_first() {
    let load = decode_load(300.0);
    let (first, changes) = look(
        &planned(true),
        |_| 2,
        None,
        &missed_window(&load, 1_000, false),
    );
    let change = Change {
        pool: "decode".into(),
        from: 2,
        to: 3,
        reason: "ITL p95 misses its target (120% of it)".into(),
    };
    assert_eq!(changes, [change]);
    let status = &first.pools["decode"];
    assert_eq!(
        (status.replicas, status.recommended, status.capacity),
        (2, 3, Some(135.0))
    );
    assert_eq!(
        status.last_change_time,
        Some(Time(Timestamp::from_second(1_000).expect("a time")))
    );
    assert_eq!(
        (first.mode, first.itl_p95_seconds),
        (PlannerMode::Act, Some(0.06))
    );
    // The next look, the spec at 3 and still missing: one more, the newer decision first, and
    // what was learned carried (135 per replica at most, now 100 × 0.9).
    let (second, changes) = look(
        &planned(true),
        |_| 3,
        Some(&first),
        &missed_window(&load, 1_030, false),
    );
    assert_eq!(changes.len(), 1);
    assert_eq!(
        second
            .decisions
            .iter()
            .map(|d| (d.from, d.to, d.acted))
            .collect::<Vec<_>>(),
        [(3, 4, true), (2, 3, true)]
    );
    assert_eq!(second.pools["decode"].capacity, Some(90.0));
}

#[test]
fn a_look_in_act_holds_during_a_lockstep_rollout_and_says_what_it_would_set() {
    let load = decode_load(300.0);
    let (status, changes) = look(
        &planned(true),
        |_| 2,
        None,
        &missed_window(&load, 1_000, true),
    );
    assert_eq!(changes, []);
    let pool = &status.pools["decode"];
    assert_eq!(
        (
            pool.replicas,
            pool.recommended,
            pool.last_change_time.as_ref()
        ),
        (2, 3, None)
    );
    assert_eq!(
        pool.reason,
        "holding at 2 while a Lockstep rollout is under way (would set 3: ITL p95 misses its target (120% of it))"
    );
    assert!(status.decisions.is_empty());
    // Advise recommends whatever runs: a rollout holds nothing.
    let (_, changes) = look(
        &planned(false),
        |_| 2,
        None,
        &missed_window(&load, 1_000, true),
    );
    assert_eq!(changes.len(), 1);
}

#[test]
fn advise_announces_a_recommendation_once_and_a_new_revision_forgets_the_capacity() {
    let load = decode_load(300.0);
    let (first, changes) = look(
        &planned(false),
        |_| 2,
        None,
        &missed_window(&load, 1_000, false),
    );
    assert_eq!((changes.len(), first.decisions[0].acted), (1, false));
    // The spec stays at 2 and the recommendation at 3: nothing new to announce.
    let (second, changes) = look(
        &planned(false),
        |_| 2,
        Some(&first),
        &missed_window(&load, 1_030, false),
    );
    assert_eq!(changes, []);
    assert_eq!(second.decisions, first.decisions);
    assert_eq!(
        second.pools["decode"].last_change_time,
        first.pools["decode"].last_change_time
    );
    // Another revision: what was learned (121.5 after two misses) is not carried; 150 per
    // replica misses afresh: 135.
    assert_eq!(second.pools["decode"].capacity, Some(121.5));
    let mut window = missed_window(&load, 1_060, false);
    window.revision = Some("r2".into());
    let (third, _) = look(&planned(false), |_| 2, Some(&second), &window);
    assert_eq!(third.pools["decode"].capacity, Some(135.0));
    assert_eq!(third.revision.as_deref(), Some("r2"));
}

#[test]
fn a_look_keeps_the_newest_decisions_only() {
    let load = decode_load(300.0);
    let mut status = None;
    for i in 0..12 {
        let (next, changes) = look(
            &planned(true),
            |_| 1 + i % 7,
            status.as_ref(),
            &missed_window(&load, 1_000 + i64::from(i) * 30, false),
        );
        assert_eq!(changes.len(), 1, "look {i}");
        status = Some(next);
    }
    let decisions = status.expect("a status").decisions;
    assert_eq!(decisions.len(), MAX_PLANNER_DECISIONS);
    assert_eq!(
        decisions[0].time,
        Time(Timestamp::from_second(1_330).expect("a time"))
    );
}

fn itl_at(load: f64, replicas: i32, capacity: f64) -> f64 {
    0.05 * (load / f64::from(replicas.max(1)) / capacity).powi(2)
}

/// Runs the planner over `loads` (one per interval of 30 s) on a pool whose true capacity is
/// `capacity`, from `start` replicas; the count after each interval.
fn run(
    loads: &[f64],
    capacity: f64,
    start: i32,
    planner: &Planner,
    pool: &PlannedPool,
) -> Vec<i32> {
    let (mut replicas, mut memory) = (start, Memory::default());
    let mut counts = Vec::new();
    for (i, &load) in loads.iter().enumerate() {
        let observed = decode(load, itl_at(load, replicas, capacity));
        let plan = plan(planner, pool, replicas, &observed, memory, 30 * i as i64);
        (replicas, memory) = (plan.replicas, plan.memory);
        counts.push(replicas);
    }
    counts
}

#[test]
fn a_step_of_load_adds_decode_replicas_and_the_fall_removes_them_after_the_cool_down() {
    // 100 output tokens/s per replica within the SLO; 150, then 450 for ten intervals, then 150.
    let mut loads = vec![150.0; 4];
    loads.extend([450.0; 10]);
    loads.extend([150.0; 16]);
    let counts = run(
        &loads,
        100.0,
        2,
        &planner(2, 120),
        &pool(Role::Decode, 1, 8),
    );
    assert_eq!(
        counts,
        [
            // 75 each: met, a replica carries at least 75.
            2, 2, 2, 2,
            // 225 each misses: 67.5 learned, 450 needs 8, 2 at a time; at 112.5 each it misses
            // again (60.75); at 75 each on 6 it is met: 75 again, and 6 hold.
            4, 6, 6, 6, 6, 6, 6, 6, 6, 6,
            // 25 each: 150 needs ceil(150 / 67.5) = 3, lowered by 2, then by 1 once the
            // cool-down of 120 s (4 intervals) after that change has passed.
            4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_count_is_always_within_min_and_max_and_moves_at_most_max_step(
        (min, max) in (1..=20i32).prop_flat_map(|min| (Just(min), min..=40)),
        current in 0..=60i32,
        max_step in 1..=5i32,
        role in prop_oneof![Just(Role::Prefill), Just(Role::Decode), Just(Role::Mixed)],
        tokens in proptest::option::of(0.0..5_000.0f64),
        ttft in proptest::option::of(0.0..5.0f64),
        itl in proptest::option::of(0.0..0.5f64),
        capacity in proptest::option::of(0.001..1_000.0f64),
        last_change in proptest::option::of(0..1_000i64),
        unplaced in 0..3usize,
    ) {
        let observed = Observed { prompt_tokens: tokens, output_tokens: tokens, ttft_p95: ttft, itl_p95: itl, unplaced };
        let memory = Memory { capacity, last_change };
        let plan = plan(&planner(max_step, 300), &pool(role, min, max), current, &observed, memory, 1_000);
        prop_assert!((min..=max).contains(&plan.replicas), "{plan:?}");
        if (min..=max).contains(&current) {
            prop_assert!((plan.replicas - current).abs() <= max_step, "{plan:?}");
            // Never raised while a pod of the pool waits for capacity.
            prop_assert!(unplaced == 0 || plan.replicas <= current, "{plan:?}");
        }
    }

    #[test]
    fn a_steady_load_settles_without_oscillating(
        load in 1.0..2_000.0f64,
        capacity in 10.0..500.0f64,
        start in 1..=20i32,
        max_step in 1..=3i32,
        cooldown_intervals in 0..=4i64,
    ) {
        let pool = pool(Role::Decode, 1, 20);
        let counts = run(&[load; 60], capacity, start, &planner(max_step, 30 * cooldown_intervals), &pool);
        let directions: Vec<i32> = counts
            .windows(2)
            .map(|w| (w[1] - w[0]).signum())
            .filter(|d| *d != 0)
            .collect();
        let reversals = directions.windows(2).filter(|d| d[0] != d[1]).count();
        prop_assert_eq!(reversals, 0, "{:?}", counts);
        prop_assert!(counts[40..].iter().all(|c| *c == counts[59]), "{:?}", counts);
    }
}
