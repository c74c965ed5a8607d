//! A Grafana dashboard of one deployment (`kubectl infera dashboard NAME`), over the series its
//! PodMonitor collects (`spec.monitoring`): the router's requests and end-to-end latency, and per
//! service the engines' time to first token, inter-token latency, output tokens, KV-cache usage,
//! requests running and waiting, and the pods scraped by revision. Every query names a series the
//! images export ([`crate::metrics`]) or Prometheus's own `up`.

use serde_json::{Value, json};

use crate::{
    hash::fnv1a,
    metrics::{
        DEPLOYMENT_LABEL, EngineMetrics, REVISION_LABEL, ROUTER_DURATION, ROUTER_IN_FLIGHT,
        SERVICE_LABEL,
    },
    types::BackendFramework,
};

/// Grafana's dashboard schema version the JSON is written in (Grafana 10.4 and later read it).
const SCHEMA_VERSION: u32 = 39;

/// One time-series panel: its title, unit and queries (PromQL, legend).
struct Panel {
    title: &'static str,
    unit: &'static str,
    queries: Vec<(String, String)>,
}

/// The dashboard of deployment `name` in `namespace`, whose workers run `backend`.
pub fn dashboard(namespace: &str, name: &str, backend: BackendFramework) -> Value {
    let datasource = json!({"type": "prometheus", "uid": "${datasource}"});
    let panels: Vec<Value> = panels(&selector(namespace, name), EngineMetrics::of(backend))
        .into_iter()
        .enumerate()
        .map(|(i, panel)| {
            let targets: Vec<Value> = panel
                .queries
                .iter()
                .zip('A'..)
                .map(|((expr, legend), ref_id)| {
                    json!({"refId": ref_id.to_string(), "expr": expr, "legendFormat": legend,
                        "datasource": datasource})
                })
                .collect();
            json!({
                "id": i + 1,
                "type": "timeseries",
                "title": panel.title,
                "datasource": datasource,
                "gridPos": {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
                "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
                "options": {"legend": {"displayMode": "list", "placement": "bottom"},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
                "targets": targets,
            })
        })
        .collect();
    json!({
        "title": format!("Infera {namespace}/{name}"),
        "uid": format!("infera-{:016x}", fnv1a(format!("{namespace}/{name}").as_bytes())),
        "tags": ["infera"],
        "editable": true,
        "schemaVersion": SCHEMA_VERSION,
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "30s",
        "templating": {"list": [{"name": "datasource", "label": "Data source",
            "type": "datasource", "query": "prometheus"}]},
        "panels": panels,
    })
}

/// The label matchers of the deployment's series.
fn selector(namespace: &str, name: &str) -> String {
    format!(r#"namespace="{namespace}", {DEPLOYMENT_LABEL}="{name}""#)
}

/// The panels, two to a row.
fn panels(sel: &str, engine: EngineMetrics) -> Vec<Panel> {
    let rate = |series: &str| format!("rate({series}{{{sel}}}[$__rate_interval])");
    let quantiles = |histogram: &str, by: &str, legend: &str| -> Vec<(String, String)> {
        [("0.5", "p50"), ("0.95", "p95")]
            .into_iter()
            .map(|(q, name)| {
                (
                    format!(
                        "histogram_quantile({q}, sum by (le{by}) ({}))",
                        rate(&format!("{histogram}_bucket"))
                    ),
                    format!("{legend}{name}"),
                )
            })
            .collect()
    };
    let per_service = |kind: &str, series: &str, legend: &str| {
        (
            format!("{kind} by ({SERVICE_LABEL}) ({series})"),
            format!("{{{{{SERVICE_LABEL}}}}}{legend}"),
        )
    };
    let by_service = format!(", {SERVICE_LABEL}");
    let service_legend = format!("{{{{{SERVICE_LABEL}}}}} ");
    vec![
        Panel {
            title: "Requests per second (router, by outcome)",
            unit: "reqps",
            queries: vec![(
                format!(
                    "sum by (outcome) ({})",
                    rate(&format!("{ROUTER_DURATION}_count"))
                ),
                "{{outcome}}".into(),
            )],
        },
        Panel {
            title: "End-to-end latency (router)",
            unit: "s",
            queries: quantiles(ROUTER_DURATION, "", ""),
        },
        Panel {
            title: "Time to first token",
            unit: "s",
            queries: quantiles(engine.ttft, &by_service, &service_legend),
        },
        Panel {
            title: "Inter-token latency",
            unit: "s",
            queries: quantiles(engine.itl, &by_service, &service_legend),
        },
        Panel {
            title: "Output tokens per second",
            unit: "short",
            queries: vec![per_service("sum", &rate(engine.generation_tokens), "")],
        },
        Panel {
            title: "KV-cache usage",
            unit: "percentunit",
            queries: vec![per_service(
                "avg",
                &format!("{}{{{sel}}}", engine.kv_usage),
                "",
            )],
        },
        Panel {
            title: "Requests in flight, running and waiting",
            unit: "short",
            queries: vec![
                (
                    format!("sum({ROUTER_IN_FLIGHT}{{{sel}}})"),
                    "router in flight".into(),
                ),
                per_service("sum", &format!("{}{{{sel}}}", engine.running), " running"),
                per_service("sum", &format!("{}{{{sel}}}", engine.waiting), " waiting"),
            ],
        },
        Panel {
            title: "Pods scraped, by service and revision",
            unit: "short",
            queries: vec![(
                format!("count by ({SERVICE_LABEL}, {REVISION_LABEL}) (up{{{sel}}} == 1)"),
                format!("{{{{{SERVICE_LABEL}}}}} {{{{{REVISION_LABEL}}}}}"),
            )],
        },
    ]
}

#[cfg(test)]
mod tests;
