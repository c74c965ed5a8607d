//! Live load from the pods' Prometheus metrics, pure: the text exposition parsed, and per pool the
//! figures `status NAME --load` shows — requests running and waiting and KV-cache usage (one
//! sample), and over a window between two samples tokens and requests per second and latency
//! percentiles from the histograms' buckets, as Prometheus's `histogram_quantile` computes them.
//!
//! The names are those the images export, from [`crate::metrics`] (cited there).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use serde::Serialize;

use crate::{
    BackendFramework, PodHealth,
    metrics::{EngineMetrics, ROUTER_DURATION, ROUTER_IN_FLIGHT},
    naming::{LABEL_COMPONENT, LABEL_SERVICE, LWS_LABEL_WORKER_INDEX},
};

/// One sample of a series: `name{labels} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The series' name.
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// The sample's value.
    pub value: f64,
}

/// The samples of a Prometheus text exposition (format 0.0.4); comments, blank lines and lines
/// that do not parse are skipped.
pub fn parse(text: &str) -> Vec<Series> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(parse_line)
        .collect()
}

fn parse_line(line: &str) -> Option<Series> {
    let name_end = line.find(['{', ' ']).unwrap_or(line.len());
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices();
        let mut key = String::new();
        let end = loop {
            let (at, c) = chars.next()?;
            match c {
                '}' => break at,
                ',' | ' ' => {}
                '=' => {
                    if chars.next()?.1 != '"' {
                        return None;
                    }
                    let mut value = String::new();
                    loop {
                        match chars.next()?.1 {
                            '"' => break,
                            '\\' => match chars.next()?.1 {
                                'n' => value.push('\n'),
                                other => value.push(other),
                            },
                            other => value.push(other),
                        }
                    }
                    labels.insert(std::mem::take(&mut key), value);
                }
                other => key.push(other),
            }
        };
        rest = &body[end + 1..];
    }
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        other => other.parse().ok()?,
    };
    (!name.is_empty()).then(|| Series {
        name: name.to_string(),
        labels,
        value,
    })
}

/// The sum of every sample of `name` (over its labels).
fn sum(sample: &[Series], name: &str) -> Option<f64> {
    let mut found = sample.iter().filter(|s| s.name == name).peekable();
    found.peek()?;
    Some(found.map(|s| s.value).sum())
}

/// A histogram's cumulative buckets (`le` → count), summed over its other labels.
fn buckets(sample: &[Series], name: &str) -> Vec<(f64, f64)> {
    let bucket = format!("{name}_bucket");
    let mut by_le: Vec<(f64, f64)> = Vec::new();
    for series in sample.iter().filter(|s| s.name == bucket) {
        let Some(le) = series.labels.get("le").and_then(|le| parse_le(le)) else {
            continue;
        };
        match by_le.iter_mut().find(|(l, _)| *l == le) {
            Some((_, count)) => *count += series.value,
            None => by_le.push((le, series.value)),
        }
    }
    by_le.sort_by(|a, b| a.0.total_cmp(&b.0));
    by_le
}

fn parse_le(le: &str) -> Option<f64> {
    match le {
        "+Inf" => Some(f64::INFINITY),
        other => other.parse().ok(),
    }
}

/// The `q` quantile of cumulative `buckets` (sorted by bound, the last one `+Inf`), interpolated
/// linearly within its bucket as Prometheus's `histogram_quantile` does; `None` without
/// observations. In the `+Inf` bucket it is the highest finite bound.
pub fn quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let &(last, total) = buckets.last()?;
    if buckets.len() < 2 || last.is_finite() || total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for (i, &(le, count)) in buckets.iter().enumerate() {
        if count >= rank {
            return Some(match le {
                _ if le.is_infinite() => lower,
                _ if i == 0 && le <= 0.0 => le,
                _ if count <= below => le,
                _ => lower + (le - lower) * (rank - below) / (count - below),
            });
        }
        (lower, below) = (le, count);
    }
    None
}

/// Whether a pod serves as the router or as an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The router (server pods, or a worker's frontend sidecar).
    Router,
    /// An engine.
    Engine,
}

/// The pods whose `/metrics` tell a graph's load, each with its pool and role: the Ready router
/// and engine pods, a multi-node group's leader alone (the others serve no requests). Where the
/// port is read differs (the pod's spec for `status --load`, the validated spec for the
/// operator, whose cache keeps no ports), so it is the caller's.
pub fn serving_pods<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<(&'a Pod, &'a str, Role)> {
    pods.into_iter()
        .filter(|pod| PodHealth::of(pod).ready)
        .filter(|pod| {
            pod.labels()
                .get(LWS_LABEL_WORKER_INDEX)
                .is_none_or(|rank| rank == "0")
        })
        .filter_map(|pod| {
            let labels = pod.labels();
            let role = match labels.get(LABEL_COMPONENT).map(String::as_str) {
                Some("server") => Role::Router,
                Some("worker") => Role::Engine,
                _ => return None,
            };
            Some((pod, labels.get(LABEL_SERVICE)?.as_str(), role))
        })
        .collect()
}

/// The samples of one pod: the first, and the second at the end of the window.
#[derive(Debug, Clone, PartialEq)]
pub struct Scraped {
    /// The pod's pool (its service in the spec).
    pub pool: String,
    /// What the pod serves as.
    pub role: Role,
    /// The samples, or why the pod did not answer.
    pub first: Result<Vec<Series>, String>,
    /// The samples at the end of the window, if there is one.
    pub second: Option<Result<Vec<Series>, String>>,
}

/// p50 and p95, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    /// The median.
    pub p50: f64,
    /// The 95th percentile.
    pub p95: f64,
}

/// The load of one pool.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PoolLoad {
    /// The pool.
    pub pool: String,
    /// Pods scraped.
    pub pods: usize,
    /// Pods that answered.
    pub answered: usize,
    /// Requests in flight at the router (server pools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<f64>,
    /// Requests the engines run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<f64>,
    /// Requests waiting in the engines' queues.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// Mean KV-cache usage of the pool's engines, a fraction of 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_usage: Option<f64>,
    /// Over the window: generated tokens per second (engines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_second: Option<f64>,
    /// Over the window: prompt tokens per second (engines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_per_second: Option<f64>,
    /// Over the window: requests finished per second (engines, else the router).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_second: Option<f64>,
    /// Over the window: end to end at the router.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2e: Option<Percentiles>,
    /// Over the window: time to first token at the engines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft: Option<Percentiles>,
    /// Over the window: time between tokens at the engines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itl: Option<Percentiles>,
    /// Why pods did not answer, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unanswered: Vec<String>,
}

/// The figures of each pool (in the order pools first appear) from its pods' samples, with
/// rates and percentiles over `window` seconds when there is a second sample.
pub fn pools(scraped: &[Scraped], backend: BackendFramework, window: Option<f64>) -> Vec<PoolLoad> {
    let names = EngineMetrics::of(backend);
    let mut pools: Vec<PoolLoad> = Vec::new();
    for pool in scraped.iter().map(|s| &s.pool) {
        if pools.iter().any(|p| p.pool == *pool) {
            continue;
        }
        let pods: Vec<&Scraped> = scraped.iter().filter(|s| s.pool == *pool).collect();
        let mut load = PoolLoad {
            pool: pool.clone(),
            pods: pods.len(),
            ..PoolLoad::default()
        };
        let mut latest = Vec::new();
        let mut pairs = Vec::new();
        for pod in &pods {
            let answer = pod.second.as_ref().unwrap_or(&pod.first);
            match (answer, &pod.first) {
                (Ok(last), first) => {
                    latest.push((pod.role, last.as_slice()));
                    if let (Some(_), Ok(first)) = (&pod.second, first) {
                        pairs.push((pod.role, first.as_slice(), last.as_slice()));
                    }
                }
                (Err(why), _) => load.unanswered.push(why.clone()),
            }
        }
        load.answered = latest.len();
        // Each pod's value of `name`, of the pods of `role` that export it.
        let values = |role: Role, name: &str| -> Vec<f64> {
            latest
                .iter()
                .filter(|(r, _)| *r == role)
                .filter_map(|(_, sample)| sum(sample, name))
                .collect()
        };
        let total = |role: Role, name: &str| {
            let values = values(role, name);
            (!values.is_empty()).then(|| values.iter().sum::<f64>())
        };
        load.in_flight = total(Role::Router, ROUTER_IN_FLIGHT);
        load.running = total(Role::Engine, names.running);
        load.waiting = total(Role::Engine, names.waiting);
        let usages = values(Role::Engine, names.kv_usage);
        load.kv_usage =
            (!usages.is_empty()).then(|| usages.iter().sum::<f64>() / usages.len() as f64);
        if let Some(seconds) = window.filter(|s| *s > 0.0) {
            let rate = |role: Role, name: &str| -> Option<f64> {
                let deltas: Vec<f64> = pairs
                    .iter()
                    .filter(|(r, _, _)| *r == role)
                    .filter_map(|(_, a, b)| Some(sum(b, name)? - sum(a, name)?))
                    .filter(|delta| *delta >= 0.0)
                    .collect();
                (!deltas.is_empty()).then(|| deltas.iter().sum::<f64>() / seconds)
            };
            load.tokens_per_second = rate(Role::Engine, names.generation_tokens);
            load.prompt_tokens_per_second = rate(Role::Engine, names.prompt_tokens);
            load.requests_per_second = rate(Role::Engine, names.requests_finished)
                .or_else(|| rate(Role::Router, &format!("{ROUTER_DURATION}_count")));
            let percentiles = |role: Role, name: &str| -> Option<Percentiles> {
                let mut window: Vec<(f64, f64)> = Vec::new();
                for (_, a, b) in pairs.iter().filter(|(r, _, _)| *r == role) {
                    let before = buckets(a, name);
                    for (le, count) in buckets(b, name) {
                        let earlier = before
                            .iter()
                            .find(|(l, _)| *l == le)
                            .map_or(0.0, |(_, c)| *c);
                        let delta = (count - earlier).max(0.0);
                        match window.iter_mut().find(|(l, _)| *l == le) {
                            Some((_, c)) => *c += delta,
                            None => window.push((le, delta)),
                        }
                    }
                }
                window.sort_by(|a, b| a.0.total_cmp(&b.0));
                Some(Percentiles {
                    p50: quantile(0.5, &window)?,
                    p95: quantile(0.95, &window)?,
                })
            };
            load.e2e = percentiles(Role::Router, ROUTER_DURATION);
            load.ttft = percentiles(Role::Engine, names.ttft);
            load.itl = percentiles(Role::Engine, names.itl);
        }
        pools.push(load);
    }
    pools
}

pub mod prometheus;

#[cfg(test)]
mod tests;
