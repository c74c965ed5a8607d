//! The pools' load from a Prometheus that scrapes the graph through its PodMonitor
//! (`spec.monitoring`): the figures [`super::pools`] computes from two readings of the pods, as
//! PromQL instant queries over a window, and Prometheus's answers read back into [`PoolLoad`]s.
//! The series are the ones the PodMonitor labels ([`crate::metrics::SERIES_LABELS`]); the
//! queries group them by `infera_service`, the pool.

use serde::Deserialize;

use super::{Percentiles, PoolLoad};
use crate::{
    metrics::{DEPLOYMENT_LABEL, EngineMetrics, ROUTER_DURATION, ROUTER_IN_FLIGHT, SERVICE_LABEL},
    types::BackendFramework,
};

/// The figure of a [`PoolLoad`] one query answers, per pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Targets Prometheus scrapes (`up`).
    Pods,
    /// Targets whose last scrape succeeded.
    Answered,
    /// Requests in flight at the router.
    InFlight,
    /// Requests the engines run.
    Running,
    /// Requests waiting in the engines' queues.
    Waiting,
    /// Mean KV-cache usage of the engines.
    KvUsage,
    /// Generated tokens per second.
    TokensPerSecond,
    /// Prompt tokens per second.
    PromptTokensPerSecond,
    /// Requests the engines finished per second.
    EngineRequestsPerSecond,
    /// Requests the router served per second (when no engine says).
    RouterRequestsPerSecond,
    /// End to end at the router.
    E2e(Quantile),
    /// Time to first token at the engines.
    Ttft(Quantile),
    /// Time between tokens at the engines.
    Itl(Quantile),
}

/// The two percentiles `status` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantile {
    /// The median.
    P50,
    /// The 95th percentile.
    P95,
}

impl Quantile {
    fn value(self) -> &'static str {
        match self {
            Self::P50 => "0.5",
            Self::P95 => "0.95",
        }
    }
}

/// The queries of `namespace/deployment`'s pools, rates and percentiles over the last
/// `window_seconds`.
pub fn queries(
    namespace: &str,
    deployment: &str,
    backend: BackendFramework,
    window_seconds: u64,
) -> Vec<(Figure, String)> {
    let names = EngineMetrics::of(backend);
    let selector = format!("{{namespace=\"{namespace}\", {DEPLOYMENT_LABEL}=\"{deployment}\"}}");
    let by = format!("by ({SERVICE_LABEL})");
    let gauge = |how: &str, name: &str| format!("{how} {by} ({name}{selector})");
    let rate = |name: &str| format!("sum {by} (rate({name}{selector}[{window_seconds}s]))");
    let quantile = |q: Quantile, histogram: &str| {
        format!(
            "histogram_quantile({}, sum by ({SERVICE_LABEL}, le) (rate({histogram}_bucket{selector}[{window_seconds}s])))",
            q.value()
        )
    };
    let mut queries = vec![
        (Figure::Pods, gauge("count", "up")),
        (Figure::Answered, gauge("sum", "up")),
        (Figure::InFlight, gauge("sum", ROUTER_IN_FLIGHT)),
        (Figure::Running, gauge("sum", names.running)),
        (Figure::Waiting, gauge("sum", names.waiting)),
        (Figure::KvUsage, gauge("avg", names.kv_usage)),
        (Figure::TokensPerSecond, rate(names.generation_tokens)),
        (Figure::PromptTokensPerSecond, rate(names.prompt_tokens)),
        (
            Figure::EngineRequestsPerSecond,
            rate(names.requests_finished),
        ),
        (
            Figure::RouterRequestsPerSecond,
            rate(&format!("{ROUTER_DURATION}_count")),
        ),
    ];
    for q in [Quantile::P50, Quantile::P95] {
        queries.push((Figure::E2e(q), quantile(q, ROUTER_DURATION)));
        queries.push((Figure::Ttft(q), quantile(q, names.ttft)));
        queries.push((Figure::Itl(q), quantile(q, names.itl)));
    }
    queries
}

/// The deployment's p95 time to first token and between tokens over all its engines (the
/// latencies the planner judges the SLO on), grouped by `infera_deployment`.
pub fn deployment_latencies(
    namespace: &str,
    deployment: &str,
    backend: BackendFramework,
    window_seconds: u64,
) -> [(Figure, String); 2] {
    let names = EngineMetrics::of(backend);
    let quantile = |histogram: &str| {
        format!(
            "histogram_quantile(0.95, sum by ({DEPLOYMENT_LABEL}, le) (rate({histogram}_bucket{{namespace=\"{namespace}\", {DEPLOYMENT_LABEL}=\"{deployment}\"}}[{window_seconds}s])))"
        )
    };
    [
        (Figure::Ttft(Quantile::P95), quantile(names.ttft)),
        (Figure::Itl(Quantile::P95), quantile(names.itl)),
    ]
}

/// Prometheus's answer to an instant query (`/api/v1/query`).
#[derive(Deserialize)]
struct Answer {
    status: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    result_type: String,
    result: Vec<Sample>,
}

#[derive(Deserialize)]
struct Sample {
    metric: std::collections::BTreeMap<String, String>,
    /// `[unix time, "value"]`.
    value: (f64, String),
}

/// Each value in Prometheus's answer `body` by its series' label `by` (`infera_service` for
/// [`queries`], `infera_deployment` for [`deployment_latencies`]); series without it and values
/// that are not numbers (`NaN`: a percentile of no requests) are left out.
pub fn answer(body: &str, by: &str) -> Result<Vec<(String, f64)>, String> {
    let answer: Answer =
        serde_json::from_str(body).map_err(|e| format!("not a Prometheus answer: {e}"))?;
    if answer.status != "success" {
        return Err(answer.error.unwrap_or(answer.status));
    }
    let data = answer.data.ok_or("an answer without data")?;
    if data.result_type != "vector" {
        return Err(format!(
            "a {} where a vector was asked for",
            data.result_type
        ));
    }
    Ok(data
        .result
        .into_iter()
        .filter_map(|sample| {
            let pool = sample.metric.get(by)?.clone();
            let value: f64 = sample.value.1.parse().ok()?;
            value.is_finite().then_some((pool, value))
        })
        .collect())
}

/// The pools' load from the answers to [`queries`], in `order` (the spec's pools), then any
/// other pool Prometheus knows of.
pub fn pools(answers: &[(Figure, Vec<(String, f64)>)], order: &[String]) -> Vec<PoolLoad> {
    let mut names: Vec<&String> = order.iter().collect();
    for (pool, _) in answers.iter().flat_map(|(_, values)| values) {
        if !names.contains(&pool) {
            names.push(pool);
        }
    }
    let value = |pool: &str, figure: Figure| {
        answers
            .iter()
            .filter(|(f, _)| *f == figure)
            .flat_map(|(_, values)| values)
            .find(|(p, _)| p == pool)
            .map(|(_, v)| *v)
    };
    let percentiles = |pool: &str, of: fn(Quantile) -> Figure| {
        Some(Percentiles {
            p50: value(pool, of(Quantile::P50))?,
            p95: value(pool, of(Quantile::P95))?,
        })
    };
    names
        .into_iter()
        .filter_map(|pool| {
            let pods = value(pool, Figure::Pods)?;
            Some(PoolLoad {
                pool: pool.clone(),
                pods: pods as usize,
                answered: value(pool, Figure::Answered).unwrap_or(0.0) as usize,
                in_flight: value(pool, Figure::InFlight),
                running: value(pool, Figure::Running),
                waiting: value(pool, Figure::Waiting),
                kv_usage: value(pool, Figure::KvUsage),
                tokens_per_second: value(pool, Figure::TokensPerSecond),
                prompt_tokens_per_second: value(pool, Figure::PromptTokensPerSecond),
                requests_per_second: value(pool, Figure::EngineRequestsPerSecond)
                    .or_else(|| value(pool, Figure::RouterRequestsPerSecond)),
                e2e: percentiles(pool, Figure::E2e),
                ttft: percentiles(pool, Figure::Ttft),
                itl: percentiles(pool, Figure::Itl),
                unanswered: Vec::new(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queries_group_the_deployments_series_by_pool_over_the_window() {
        let queries = queries("team-a", "demo", BackendFramework::Sglang, 60);
        assert_eq!(queries.len(), 16);
        let query = |figure| {
            queries
                .iter()
                .find(|(f, _)| *f == figure)
                .map(|(_, q)| q.as_str())
                .unwrap_or_default()
        };
        assert_eq!(
            query(Figure::Pods),
            r#"count by (infera_service) (up{namespace="team-a", infera_deployment="demo"})"#
        );
        assert_eq!(
            query(Figure::KvUsage),
            r#"avg by (infera_service) (sglang:token_usage{namespace="team-a", infera_deployment="demo"})"#
        );
        assert_eq!(
            query(Figure::TokensPerSecond),
            r#"sum by (infera_service) (rate(sglang:generation_tokens_total{namespace="team-a", infera_deployment="demo"}[60s]))"#
        );
        assert_eq!(
            query(Figure::Ttft(Quantile::P95)),
            r#"histogram_quantile(0.95, sum by (infera_service, le) (rate(sglang:time_to_first_token_seconds_bucket{namespace="team-a", infera_deployment="demo"}[60s])))"#
        );
        assert_eq!(
            query(Figure::RouterRequestsPerSecond),
            r#"sum by (infera_service) (rate(infera_request_duration_seconds_count{namespace="team-a", infera_deployment="demo"}[60s]))"#
        );
    }

    #[test]
    fn an_answer_is_each_pools_number_or_prometheuss_error() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"infera_service":"decode"},"value":[1765000000.5,"2.5"]},
            {"metric":{"infera_service":"prefill"},"value":[1765000000.5,"NaN"]},
            {"metric":{},"value":[1765000000.5,"7"]}]}}"#;
        let answer = |body| answer(body, SERVICE_LABEL);
        assert_eq!(answer(body), Ok(vec![("decode".to_string(), 2.5)]));
        assert_eq!(
            answer(r#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#),
            Err("parse error at char 3".to_string())
        );
        assert!(
            answer("<html>login</html>").is_err_and(|e| e.starts_with("not a Prometheus answer: "))
        );
        assert_eq!(
            answer(r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#),
            Err("a matrix where a vector was asked for".to_string())
        );
    }

    #[test]
    fn pools_take_each_figure_in_the_specs_order_and_fall_back_to_the_routers_rate() {
        let of = |pairs: &[(&str, f64)]| -> Vec<(String, f64)> {
            pairs.iter().map(|(p, v)| (p.to_string(), *v)).collect()
        };
        let answers = vec![
            (
                Figure::Pods,
                of(&[("server", 1.0), ("decode", 2.0), ("extra", 1.0)]),
            ),
            (Figure::Answered, of(&[("server", 1.0), ("decode", 1.0)])),
            (Figure::InFlight, of(&[("server", 3.0)])),
            (Figure::Running, of(&[("decode", 4.0)])),
            (Figure::RouterRequestsPerSecond, of(&[("server", 1.5)])),
            (Figure::EngineRequestsPerSecond, of(&[("decode", 1.25)])),
            (Figure::Itl(Quantile::P50), of(&[("decode", 0.02)])),
            (Figure::Itl(Quantile::P95), of(&[("decode", 0.03)])),
            (Figure::Ttft(Quantile::P50), of(&[("decode", 0.1)])),
        ];
        let order = ["decode", "prefill", "server"].map(String::from);
        let pools = pools(&answers, &order);
        let names: Vec<&str> = pools.iter().map(|p| p.pool.as_str()).collect();
        assert_eq!(
            names,
            ["decode", "server", "extra"],
            "prefill has no targets"
        );
        assert_eq!(
            pools[0],
            PoolLoad {
                pool: "decode".into(),
                pods: 2,
                answered: 1,
                running: Some(4.0),
                requests_per_second: Some(1.25),
                itl: Some(Percentiles {
                    p50: 0.02,
                    p95: 0.03
                }),
                ..PoolLoad::default()
            },
            "a p50 without its p95 is no percentile"
        );
        assert_eq!(pools[1].requests_per_second, Some(1.5));
        assert_eq!(pools[1].in_flight, Some(3.0));
        assert_eq!(pools[2].answered, 0);
    }
}
