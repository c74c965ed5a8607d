//! What a run measured, pure: inference-perf's summary read out of its log, the figures a user
//! asks for first, and their tables.
//!
//! inference-perf 0.7.0 prints its summary report as JSON between `=== START_SUMMARY ===` and
//! `=== END_SUMMARY ===` (`inference_perf/main.py:434-439`); its shape is
//! `reportgen/base.py` `ResponsesSummary` (`successes`, `failures`, 760-845): latencies in seconds
//! under `successes.latency.{time_to_first_token, inter_token_latency, request_latency}`, each
//! with `median`/`pNN` (`summarize`, 185-196), `successes.throughput.{output_tokens_per_sec,
//! requests_per_sec}`, `successes.goodput_metrics.goodput_percentage` when targets were given
//! (`calculate_goodput_metrics`, 414-523) and `failures.count`.

use serde::Serialize;
use serde_json::Value;

use crate::printer::{Cell, Printer, columns};

const START: &str = "=== START_SUMMARY ===";
const END: &str = "=== END_SUMMARY ===";

/// The summary's JSON in inference-perf's log, when the run got that far.
pub fn extract(log: &str) -> Option<&str> {
    let start = log.find(START)? + START.len();
    let end = start + log[start..].find(END)?;
    Some(log[start..end].trim())
}

/// p50, p95 and p99 of one latency, in seconds.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// The figures of a run.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// Requests answered in full.
    pub succeeded: u64,
    /// Requests that failed (an error status, a broken stream, a timeout).
    pub failed: u64,
    /// Time to first token.
    pub ttft_seconds: Option<Percentiles>,
    /// Time between tokens.
    pub itl_seconds: Option<Percentiles>,
    /// End to end.
    pub e2e_seconds: Option<Percentiles>,
    pub output_tokens_per_second: f64,
    pub requests_per_second: f64,
    /// The share of requests that met every target given (`--slo-ttft`, `--slo-itl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput_percent: Option<f64>,
}

impl Figures {
    /// The figures of inference-perf's summary; an error names what is missing.
    pub fn of(summary: &Value) -> Result<Self, String> {
        let count = |path: &str| {
            summary
                .pointer(path)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("the summary has no {path}"))
        };
        let number = |path: &str| summary.pointer(path).and_then(Value::as_f64).unwrap_or(0.0);
        let latency = |name: &str| {
            let at = summary.pointer(&format!("/successes/latency/{name}"))?;
            Some(Percentiles {
                p50: at.get("median")?.as_f64()?,
                p95: at.get("p95")?.as_f64()?,
                p99: at.get("p99")?.as_f64()?,
            })
        };
        Ok(Self {
            succeeded: count("/successes/count")?,
            failed: count("/failures/count")?,
            ttft_seconds: latency("time_to_first_token"),
            itl_seconds: latency("inter_token_latency"),
            e2e_seconds: latency("request_latency"),
            output_tokens_per_second: number("/successes/throughput/output_tokens_per_sec"),
            requests_per_second: number("/successes/throughput/requests_per_sec"),
            goodput_percent: summary
                .pointer("/successes/goodput_metrics/goodput_percentage")
                .and_then(Value::as_f64),
        })
    }

    /// The rows both `show` and `compare` print: a name, and the value with its unit.
    fn rows(&self) -> Vec<(String, Option<f64>, Unit)> {
        let mut rows = Vec::new();
        for (name, latency) in [
            ("TTFT", self.ttft_seconds),
            ("ITL", self.itl_seconds),
            ("E2E", self.e2e_seconds),
        ] {
            for (p, value) in [
                ("p50", latency.map(|l| l.p50)),
                ("p95", latency.map(|l| l.p95)),
                ("p99", latency.map(|l| l.p99)),
            ] {
                rows.push((format!("{name} {p}"), value, Unit::Seconds));
            }
        }
        rows.push((
            "output tokens/s".into(),
            Some(self.output_tokens_per_second),
            Unit::Rate,
        ));
        rows.push((
            "requests/s".into(),
            Some(self.requests_per_second),
            Unit::Rate,
        ));
        rows.push(("succeeded".into(), Some(self.succeeded as f64), Unit::Count));
        rows.push(("failed".into(), Some(self.failed as f64), Unit::Count));
        rows.push(("goodput".into(), self.goodput_percent, Unit::Percent));
        rows
    }
}

#[derive(Clone, Copy)]
enum Unit {
    Seconds,
    Rate,
    Count,
    Percent,
}

/// `12ms`, `1.84s`; `-` when absent.
pub fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), crate::duration::latency)
}

fn value(value: Option<f64>, unit: Unit) -> String {
    match (value, unit) {
        (_, Unit::Seconds) => seconds(value),
        (None, _) => "-".into(),
        (Some(v), Unit::Rate) => format!("{v:.1}"),
        (Some(v), Unit::Count) => format!("{v:.0}"),
        (Some(v), Unit::Percent) => format!("{v:.1}%"),
    }
}

/// The figures as a table of METRIC and VALUE.
pub fn table(printer: &Printer, figures: &Figures) -> String {
    let rows: Vec<Vec<Cell>> = figures
        .rows()
        .into_iter()
        .map(|(name, v, unit)| vec![Cell::from(name), Cell::from(value(v, unit))])
        .collect();
    columns(printer, &["METRIC", "VALUE"], &rows)
}

/// Two runs' figures side by side with the change from `before` to `after`, in percent.
pub fn compare(
    printer: &Printer,
    names: (&str, &str),
    before: &Figures,
    after: &Figures,
) -> String {
    let rows: Vec<Vec<Cell>> = before
        .rows()
        .into_iter()
        .zip(after.rows())
        .map(|((name, b, unit), (_, a, _))| {
            let change = match (b, a) {
                (Some(b), Some(a)) if b != 0.0 => {
                    let percent = (a - b) / b * 100.0;
                    format!("{percent:+.1}%")
                }
                _ => "-".into(),
            };
            vec![
                Cell::from(name),
                Cell::from(value(b, unit)),
                Cell::from(value(a, unit)),
                Cell::from(change),
            ]
        })
        .collect();
    columns(printer, &["METRIC", names.0, names.1, "CHANGE"], &rows)
}
