//! Benchmark of the SLO planner's model (`infera_core::planner`) over a load trace, against fixed
//! provisioning and against a HorizontalPodAutoscaler on queue length, in one run — a
//! simulation: the pools' latency follows a stated law, not real engines (tests/tests/tier3/
//! planner.rs is the proof on real pods).
//!
//! The law: a decode replica of capacity `CAPACITY` output tokens/s at utilisation
//! `ρ = load / (replicas × CAPACITY)` has inter-token latency `BASE_ITL / (1 − ρ)` (one server
//! queue, M/M/1), at most `MAX_ITL`; it holds `ρ / (1 − ρ)` requests on average (what an HPA on the
//! engines' queue reads). The trace, one value per 30 s interval: a quiet hour's start, a step to
//! four times the load for 20 minutes, a fall to a middle level for 20, quiet again.
//!
//! Figures per strategy: SLO attainment (intervals whose ITL meets the target) and GPU-minutes
//! (one GPU per replica). The run fails when the planner misses a goal of docs/planner.md
//! ("Benchmark").
//!
//!   cargo bench -p infera-e2e --bench planner_trace

use infera_core::{
    Role,
    planner::{Memory, Observed, PlannedPool, Planner, plan},
};

/// Output tokens/s one replica serves at full utilisation.
const CAPACITY: f64 = 1_000.0;
/// Inter-token latency of an idle replica, seconds.
const BASE_ITL: f64 = 0.02;
/// The latency a saturated replica shows (the queue grows without bound), seconds.
const MAX_ITL: f64 = 1.0;
/// The ITL target, seconds.
const TARGET: f64 = 0.05;
/// Seconds per interval.
const INTERVAL: i64 = 30;

/// The load trace, output tokens/s per interval.
fn trace() -> Vec<f64> {
    let mut loads = vec![600.0; 20];
    loads.extend([2_400.0; 40]);
    loads.extend([1_200.0; 40]);
    loads.extend([600.0; 20]);
    loads
}

fn itl(load: f64, replicas: i32) -> f64 {
    let rho = load / (f64::from(replicas.max(1)) * CAPACITY);
    if rho >= 1.0 - BASE_ITL / MAX_ITL {
        MAX_ITL
    } else {
        BASE_ITL / (1.0 - rho)
    }
}

/// Requests queued or running per replica.
fn queue(load: f64, replicas: i32) -> f64 {
    let rho = (load / (f64::from(replicas.max(1)) * CAPACITY)).min(0.99);
    rho / (1.0 - rho)
}

struct Figures {
    attainment: f64,
    gpu_minutes: f64,
    counts: Vec<i32>,
}

/// Runs `decide` (replicas now, the interval's load and ITL, the time → replicas next) over the
/// trace from `start` replicas. The latency of an interval is that of the count during it.
fn run(start: i32, mut decide: impl FnMut(i32, f64, f64, i64) -> i32) -> Figures {
    let (mut replicas, mut met, mut gpu_seconds, mut counts) = (start, 0, 0, Vec::new());
    let loads = trace();
    for (i, &load) in loads.iter().enumerate() {
        let latency = itl(load, replicas);
        if latency <= TARGET {
            met += 1;
        }
        gpu_seconds += i64::from(replicas) * INTERVAL;
        counts.push(replicas);
        replicas = decide(replicas, load, latency, INTERVAL * (i as i64 + 1));
    }
    Figures {
        attainment: f64::from(met) / loads.len() as f64,
        gpu_minutes: gpu_seconds as f64 / 60.0,
        counts,
    }
}

/// The HPA algorithm (`desired = ceil(current × metric / target)`, a 10 % tolerance, scale-down
/// on the highest recommendation of the last 5 minutes: the defaults of `autoscaling/v2`).
fn hpa(target_queue: f64, min: i32, max: i32) -> impl FnMut(i32, f64, f64, i64) -> i32 {
    let mut recommendations: Vec<(i64, i32)> = Vec::new();
    move |current, load, _, now| {
        let ratio = queue(load, current) / target_queue;
        let desired = if (ratio - 1.0).abs() <= 0.1 {
            current
        } else {
            (f64::from(current) * ratio).ceil() as i32
        }
        .clamp(min, max);
        recommendations.push((now, desired));
        recommendations.retain(|(at, _)| now - at <= 300);
        let stabilized = recommendations
            .iter()
            .map(|(_, r)| *r)
            .max()
            .unwrap_or(desired);
        if desired > current {
            desired
        } else {
            stabilized.min(current)
        }
    }
}

fn main() {
    let planner = Planner {
        acts: true,
        ttft_p95: 1.0,
        itl_p95: TARGET,
        interval_seconds: INTERVAL,
        cooldown_seconds: 300,
        max_step: 2,
        pools: Vec::new(),
        prometheus: None,
    };
    let pool = PlannedPool {
        name: "decode".into(),
        role: Role::Decode,
        min: 1,
        max: 8,
    };
    let mut memory = Memory::default();
    let planned = run(1, |current, load, latency, now| {
        let observed = Observed {
            output_tokens: Some(load),
            itl_p95: Some(latency),
            ..Observed::default()
        };
        let decided = plan(&planner, &pool, current, &observed, memory, now);
        memory = decided.memory;
        decided.replicas
    });
    let peak = trace().iter().copied().fold(0.0, f64::max);
    // Enough for the peak within the target: ρ ≤ 1 − BASE_ITL / TARGET.
    let for_peak = (peak / (CAPACITY * (1.0 - BASE_ITL / TARGET))).ceil() as i32;
    let fixed_peak = run(for_peak, |current, _, _, _| current);
    let fixed_one = run(1, |current, _, _, _| current);
    let hpa_tight = run(1, hpa(1.0, 1, 8));
    let hpa_loose = run(1, hpa(2.0, 1, 8));

    println!("strategy                    SLO attainment  GPU-minutes");
    for (name, figures) in [
        ("planner (Act)", &planned),
        (&*format!("fixed at peak ({for_peak})"), &fixed_peak),
        ("fixed at 1", &fixed_one),
        ("HPA on queue length (1)", &hpa_tight),
        ("HPA on queue length (2)", &hpa_loose),
    ] {
        println!(
            "{name:<28}{:>13.1} %{:>13.1}",
            figures.attainment * 100.0,
            figures.gpu_minutes
        );
    }
    println!("planner counts: {:?}", planned.counts);
    println!("HPA (1) counts: {:?}", hpa_tight.counts);

    // The goals of docs/planner.md ("Benchmark").
    let mut missed = Vec::new();
    if planned.attainment < 0.95 {
        missed.push(format!(
            "planner SLO attainment {:.1} % < 95 %",
            planned.attainment * 100.0
        ));
    }
    for (name, other) in [("fixed at peak", &fixed_peak), ("the HPA (1)", &hpa_tight)] {
        if planned.gpu_minutes > 0.85 * other.gpu_minutes {
            missed.push(format!(
                "planner GPU-minutes {:.1} > 85 % of {name}'s {:.1}",
                planned.gpu_minutes, other.gpu_minutes
            ));
        }
    }
    if planned.attainment <= hpa_loose.attainment {
        missed.push(format!(
            "planner SLO attainment {:.1} % not above the HPA (2)'s {:.1} %",
            planned.attainment * 100.0,
            hpa_loose.attainment * 100.0
        ));
    }
    if !missed.is_empty() {
        eprintln!("goals missed:\n  {}", missed.join("\n  "));
        std::process::exit(1);
    }
}
