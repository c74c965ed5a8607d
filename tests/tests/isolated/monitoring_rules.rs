//! The burn-rate alerts of `spec.monitoring.slo` on Prometheus's own PromQL engine: the rules
//! the operator renders for a PD graph are evaluated by `promql-eval` (Prometheus v3.5.0's engine,
//! the one the Prometheus Operator v0.85.0 deploys by default; built by `tests/cluster/build.sh`)
//! over seven hours of series shaped as the engines export them — SGLang 0.5.15.post1's histograms
//! with its default buckets, labelled as the graph's PodMonitor labels them — and each alert must
//! fire when, and only when, its share of slow requests over both of its windows is above its
//! burn rate's.

use std::fmt::Write as _;

use anyhow::Context as _;
use infera_core::{Child, InferaDeployment, render, validate};
use infera_e2e::{target_dir, test_bin_dir, unique_suffix};
use serde_json::json;

/// SGLang 0.5.15.post1's default buckets (`sglang/srt/observability/metrics_collector.py`):
/// time to first token :1540-1559, inter-token latency :1588-1612.
const TTFT_BUCKETS: &[f64] = &[
    0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0,
    400.0,
];
const ITL_BUCKETS: &[f64] = &[
    0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080,
    0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000,
];

/// Minutes of series; every alert is evaluated at the end.
const MINUTES: u32 = 420;

/// A stretch of minutes and what each minute observes: (seconds, observations per minute).
type Phase = (u32, &'static [(f64, u32)]);

/// The PrometheusRule of `team-a/demo` (the seed's PD graph) with objectives of 500 ms to the
/// first token and 50 ms between tokens: the alert names and expressions, in order.
fn rules() -> anyhow::Result<Vec<(String, String)>> {
    let deployment: InferaDeployment = serde_json::from_value(json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "demo", "namespace": "team-a"},
        "spec": {
            "backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "monitoring": {"slo": {"ttftP95Milliseconds": 500, "itlP95Milliseconds": 50}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "Qwen/Qwen3-0.6B"]},
                "prefill": {"componentType": "worker", "role": "prefill", "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"]},
                "decode": {"componentType": "worker", "role": "decode", "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"]},
            },
        },
    }))?;
    let valid = validate(&deployment).map_err(|e| anyhow::anyhow!("{e}"))?;
    let rule = render(&valid)
        .into_iter()
        .find_map(|child| match child {
            Child::PrometheusRule(rule) => Some(rule),
            _ => None,
        })
        .context("no PrometheusRule rendered")?;
    Ok(rule
        .spec
        .groups
        .iter()
        .flat_map(|group| &group.rules)
        .map(|rule| {
            (
                rule.alert.clone().unwrap_or_default(),
                rule.expr.replace('\n', " "),
            )
        })
        .collect())
}

/// A `load` line of one histogram's buckets (and count) for a pod of `role`, its cumulative
/// counts growing by `phases`, in promqltest's `start+increment x times` notation.
fn histogram(out: &mut String, name: &str, buckets: &[f64], role: &str, phases: &[Phase]) {
    let labels = format!(
        "namespace=\"team-a\", infera_deployment=\"demo\", infera_service=\"{role}\", infera_role=\"{role}\", pod=\"demo-{role}-0\""
    );
    let bounds = buckets
        .iter()
        .map(|b| (format!("{b:?}"), *b))
        .chain([("+Inf".to_string(), f64::INFINITY)]);
    for (le, bound) in bounds {
        let mut value = 0u64;
        let mut values = vec!["0".to_string()];
        for (minutes, observations) in phases {
            let per_minute: u64 = observations
                .iter()
                .filter(|(seconds, _)| *seconds <= bound)
                .map(|(_, count)| u64::from(*count))
                .sum();
            values.push(format!(
                "{}+{per_minute}x{}",
                value + per_minute,
                minutes - 1
            ));
            value += per_minute * u64::from(*minutes);
        }
        let _ = writeln!(
            out,
            "  {name}_bucket{{{labels}, le=\"{le}\"}} {}",
            values.join(" ")
        );
    }
}

/// One case: what the prefill and decode pods observe, and which alerts must fire.
struct Case {
    name: &'static str,
    prefill_ttft: &'static [Phase],
    decode_ttft: &'static [Phase],
    prefill_itl: &'static [Phase],
    decode_itl: &'static [Phase],
    /// `(alert, long window)` pairs that fire; every other rule must not.
    firing: &'static [(&'static str, &'static str)],
}

const TTFT_ALERT: &str = "InferaTimeToFirstTokenBudgetBurn";
const ITL_ALERT: &str = "InferaInterTokenLatencyBudgetBurn";
/// 97% well under the target, 3% just above it: inside a 5% budget.
const FAST_TTFT: &[Phase] = &[(MINUTES, &[(0.3, 97), (0.5, 3)])];
const FAST_ITL: &[Phase] = &[(MINUTES, &[(0.03, 970), (0.055, 30)])];

const CASES: &[Case] = &[
    Case {
        name: "within the budget",
        prefill_ttft: FAST_TTFT,
        decode_ttft: FAST_TTFT,
        prefill_itl: FAST_ITL,
        decode_itl: FAST_ITL,
        firing: &[],
    },
    Case {
        // The last hour: 90% slow. Over 6 h that is 15% (under 6 × 5%), over 3 days (all there
        // is: 7 h) 13%, above 5%.
        name: "a fast burn of the time to first token",
        prefill_ttft: &[
            (MINUTES - 60, &[(0.3, 97), (0.5, 3)]),
            (60, &[(0.3, 10), (0.7, 90)]),
        ],
        decode_ttft: FAST_TTFT,
        prefill_itl: FAST_ITL,
        decode_itl: FAST_ITL,
        firing: &[(TTFT_ALERT, "1h"), (TTFT_ALERT, "3d")],
    },
    Case {
        // 10% slow all along: only the slowest alert.
        name: "a slow burn of the time to first token",
        prefill_ttft: &[(MINUTES, &[(0.3, 90), (0.7, 10)])],
        decode_ttft: FAST_TTFT,
        prefill_itl: FAST_ITL,
        decode_itl: FAST_ITL,
        firing: &[(TTFT_ALERT, "3d")],
    },
    Case {
        // Every request in the bucket (0.4 s, 0.6 s] that holds the 500 ms target: estimated
        // as spread evenly, half of them slow — above 6 × 5%, under 14.4 × 5%.
        name: "the target inside a bucket",
        prefill_ttft: &[(MINUTES, &[(0.5, 100)])],
        decode_ttft: FAST_TTFT,
        prefill_itl: FAST_ITL,
        decode_itl: FAST_ITL,
        firing: &[(TTFT_ALERT, "6h"), (TTFT_ALERT, "3d")],
    },
    Case {
        // Decode pods' first tokens and prefill pods' token gaps are not what the objectives
        // judge (the planner reads them the same way).
        name: "slow figures of the other role",
        prefill_ttft: FAST_TTFT,
        decode_ttft: &[(MINUTES, &[(2.0, 100)])],
        prefill_itl: &[(MINUTES, &[(0.2, 1000)])],
        decode_itl: FAST_ITL,
        firing: &[],
    },
    Case {
        name: "a fast burn between tokens",
        prefill_ttft: FAST_TTFT,
        decode_ttft: FAST_TTFT,
        prefill_itl: FAST_ITL,
        decode_itl: &[
            (MINUTES - 60, &[(0.03, 970), (0.055, 30)]),
            (60, &[(0.03, 100), (0.07, 900)]),
        ],
        firing: &[(ITL_ALERT, "1h"), (ITL_ALERT, "3d")],
    },
];

/// The promqltest script of `case`: its series, then one `eval` per rule — the alert's series
/// (the deployment) when it fires, none when it does not.
fn script(case: &Case, rules: &[(String, String)]) -> String {
    let mut out = format!("# {}\nload 1m\n", case.name);
    let ttft = "sglang:time_to_first_token_seconds";
    let itl = "sglang:inter_token_latency_seconds";
    histogram(&mut out, ttft, TTFT_BUCKETS, "prefill", case.prefill_ttft);
    histogram(&mut out, ttft, TTFT_BUCKETS, "decode", case.decode_ttft);
    histogram(&mut out, itl, ITL_BUCKETS, "prefill", case.prefill_itl);
    histogram(&mut out, itl, ITL_BUCKETS, "decode", case.decode_itl);
    let windows = ["1h", "6h", "3d"];
    for (index, (alert, expr)) in rules.iter().enumerate() {
        let window = windows[index % windows.len()];
        let _ = writeln!(
            out,
            "\n# {alert} over {window}\neval instant at {MINUTES}m count by (namespace, infera_deployment) ({expr})"
        );
        if case.firing.contains(&(alert.as_str(), window)) {
            out.push_str("  {namespace=\"team-a\", infera_deployment=\"demo\"} 1\n");
        }
    }
    out
}

#[test]
fn each_burn_alert_fires_on_prometheus_when_and_only_when_its_budget_burns() -> anyhow::Result<()> {
    let rules = rules()?;
    let names: Vec<&str> = rules.iter().map(|(alert, _)| alert.as_str()).collect();
    anyhow::ensure!(
        names
            == [
                TTFT_ALERT, TTFT_ALERT, TTFT_ALERT, ITL_ALERT, ITL_ALERT, ITL_ALERT
            ],
        "three windows per objective, time to first token first: {names:?}"
    );
    let dir = target_dir().join(format!("promql-{}", unique_suffix()));
    std::fs::create_dir_all(&dir)?;
    let mut scripts = Vec::new();
    for (index, case) in CASES.iter().enumerate() {
        let path = dir.join(format!("case-{index}.promql"));
        std::fs::write(&path, script(case, &rules))?;
        scripts.push(path);
    }
    let eval = test_bin_dir()?.join("promql-eval");
    let out = std::process::Command::new(&eval)
        .args(&scripts)
        .output()
        .with_context(|| format!("{} (tests/cluster/build.sh builds it)", eval.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "Prometheus's engine disagrees (scripts in {}):\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The fast burn's series expecting no alert must fail: the engine really judged them.
    let wrong = dir.join("wrong.promql");
    std::fs::write(
        &wrong,
        script(
            &Case {
                firing: &[],
                ..CASES[1]
            },
            &rules,
        ),
    )?;
    let out = std::process::Command::new(&eval).arg(&wrong).output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    anyhow::ensure!(
        !out.status.success()
            && stdout.contains(
                "unexpected metric {infera_deployment=\"demo\", namespace=\"team-a\"} in result"
            ),
        "the fast burn's alert went unnoticed:\n{stdout}"
    );
    Ok(())
}
