//! The SLO planner's pure model replays a trace recorded on real pods (issue 29 item 3): the
//! `status.planner` after each look of the operator at the `planner` copy of the tier-3
//! benchmark (`tests/benches/planner_pods.rs`, run 3 of 2026-12-07, kept in
//! `tests/fixtures/planner-looks-tier3.json`). Each look carries what the operator read from
//! the stand-in engines (the pool's load, TTFT and ITL p95 over the interval) and what it decided;
//! fed the same inputs and the previous look, `infera_core::planner::look` must decide the same.
//! (The operator writes no status that differs from the last only in its time, so a look that
//! changed nothing is not recorded; its memory, capacity and last change, was the previous one's.)

use std::collections::BTreeMap;

use infera_core::{
    Role,
    load::PoolLoad,
    planner::{PlannedPool, Planner, Window, look},
    types::{PlannerPoolStatus, PlannerStatus},
};

const LOOKS: &str = include_str!("../../fixtures/planner-looks-tier3.json");

/// The benchmark's `spec.planner` (planner_pods.rs `strategies`).
fn planner() -> Planner {
    Planner {
        acts: true,
        ttft_p95: 1.0,
        itl_p95: 0.035,
        interval_seconds: 10,
        cooldown_seconds: 60,
        max_step: 1,
        pools: vec![PlannedPool {
            name: "worker".into(),
            role: Role::Mixed,
            min: 1,
            max: 3,
        }],
        prometheus: None,
    }
}

#[test]
fn the_model_fed_a_trace_recorded_on_real_pods_decides_as_the_operator_did() -> anyhow::Result<()> {
    let looks: Vec<PlannerStatus> = serde_json::from_str(LOOKS)?;
    anyhow::ensure!(looks.len() >= 40, "{} looks recorded", looks.len());
    let planner = planner();
    for (i, pair) in looks.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        let recorded = &after.pools["worker"];
        let now = after
            .last_look_time
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("look {i} has no time"))?
            .0;
        // An aggregated pool's load is prompt and output tokens together; the status keeps the sum.
        let loads = [PoolLoad {
            pool: "worker".into(),
            tokens_per_second: recorded.load,
            prompt_tokens_per_second: recorded.load.map(|_| 0.0),
            ..PoolLoad::default()
        }];
        let window = Window {
            now,
            revision: after.revision.clone(),
            rolling: false,
            pools: &loads,
            ttft_p95: after.ttft_p95_seconds,
            itl_p95: after.itl_p95_seconds,
            unplaced: BTreeMap::new(),
        };
        let (replayed, _) = look(&planner, |_| recorded.replicas, Some(before), &window);
        let replayed = &replayed.pools["worker"];
        // The capacity to within a unit in the last place or so: serde_json's default float
        // parsing is not always correctly rounded (its `float_roundtrip` feature is).
        let same_capacity = match (replayed.capacity, recorded.capacity) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * b.abs(),
            (a, b) => a == b,
        };
        let decision =
            |p: &PlannerPoolStatus| (p.recommended, p.reason.clone(), p.last_change_time.clone());
        anyhow::ensure!(
            same_capacity && decision(replayed) == decision(recorded),
            "look {} at {now}: replayed {replayed:?}, recorded {recorded:?}",
            i + 1
        );
    }
    // The trace is the benchmark's: the step of load raised the pool to 3, and the fall lowered it.
    let counts: Vec<i32> = looks.iter().map(|l| l.pools["worker"].replicas).collect();
    let peak = counts.iter().position(|&c| c == 3);
    anyhow::ensure!(
        counts.first() == Some(&1) && peak.is_some_and(|p| counts[p..].iter().any(|&c| c < 3)),
        "recorded counts {counts:?}"
    );
    Ok(())
}
