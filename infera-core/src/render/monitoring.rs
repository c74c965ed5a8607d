//! The graph's PodMonitor: the Prometheus Operator scrapes `/metrics` of the router (port
//! `http`), of every engine that serves (`http`: single-node pods and multi-node leaders; ranks
//! above 0 declare no port) and of the GAIE frontend sidecars (`frontend`), and labels each
//! series with the deployment, service, role and revision ([`crate::metrics::SERIES_LABELS`]);
//! and, with latency objectives, the PrometheusRule of their error-budget burn alerts.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};

use super::{Child, Context, meta};
use crate::{
    external::{
        pod_monitor::{PodMetricsEndpoint, PodMonitor, PodMonitorSpec, RelabelConfig},
        prometheus_rule::{PrometheusRule, PrometheusRuleSpec, Rule, RuleGroup},
    },
    metrics::{DEPLOYMENT_LABEL, EngineMetrics, ROLE_LABEL, SERIES_LABELS},
    naming::{self, Component},
    types::LatencySlo,
    validate::Monitoring,
};

/// The PodMonitor `<deployment>` of the graph's router and engine pods.
pub fn pod_monitor(cx: &Context<'_>, settings: &Monitoring) -> Child {
    let d = cx.deployment;
    let metadata = monitoring_meta(cx, settings);
    let relabelings: Vec<RelabelConfig> = SERIES_LABELS
        .iter()
        .map(|(target, pod_label)| RelabelConfig {
            source_labels: vec![format!(
                "__meta_kubernetes_pod_label_{}",
                sanitized(pod_label)
            )],
            target_label: Some((*target).into()),
        })
        .collect();
    let endpoint = |port: &str| PodMetricsEndpoint {
        port: Some(port.into()),
        path: Some("/metrics".into()),
        interval: settings.interval.clone(),
        relabelings: relabelings.clone(),
    };
    Child::PodMonitor(PodMonitor {
        metadata,
        spec: PodMonitorSpec {
            selector: LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    naming::LABEL_DEPLOYMENT.into(),
                    d.name.clone(),
                )])),
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: naming::LABEL_COMPONENT.into(),
                    operator: "In".into(),
                    values: Some(vec!["server".into(), "worker".into()]),
                }]),
            },
            pod_metrics_endpoints: vec![
                endpoint(naming::HTTP_PORT),
                endpoint(naming::FRONTEND_PORT),
            ],
        },
    })
}

/// The metadata of the PodMonitor and the PrometheusRule: `<deployment>`, the operator's labels
/// and then the user's.
fn monitoring_meta(cx: &Context<'_>, settings: &Monitoring) -> ObjectMeta {
    let d = cx.deployment;
    let mut metadata = meta::object_meta(d, Component::Monitoring, d.name.clone());
    if let Some(labels) = metadata.labels.as_mut() {
        for (key, value) in &settings.labels {
            labels.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    metadata
}

/// The error budget of a p95 objective: the 5% of requests allowed above the target.
const BUDGET_PERCENT: f64 = 5.0;

/// The period the budget is spent over, in days (the SRE workbook's).
const PERIOD_DAYS: f64 = 30.0;

/// One burn-rate alert: the budget burns `burn` times faster than the period allows over both
/// windows (the long one says it matters, the short one that it is still going on). The three
/// are the multiwindow, multi-burn-rate alerts of Google's SRE workbook, "Alerting on SLOs",
/// table 5-8: 2% of a 30-day budget in an hour, 5% in six hours (both page), 10% in three days
/// (a ticket).
struct Burn {
    burn: f64,
    long: &'static str,
    short: &'static str,
    severity: &'static str,
}

const BURNS: [Burn; 3] = [
    Burn {
        burn: 14.4,
        long: "1h",
        short: "5m",
        severity: "critical",
    },
    Burn {
        burn: 6.0,
        long: "6h",
        short: "30m",
        severity: "critical",
    },
    Burn {
        burn: 1.0,
        long: "3d",
        short: "6h",
        severity: "warning",
    },
];

/// The PrometheusRule `<deployment>`: for each objective, the burn-rate alerts of [`BURNS`].
///
/// More than `burn × 5%` of the requests above the target over a window is the same as that
/// window's `1 − burn × 5%` quantile being above it, so each window is one `histogram_quantile`
/// over the engines' histogram — the estimate `status --load` and the planner read, linear
/// within the bucket that holds the target, so the target need not be a bucket bound. Time to
/// first token comes from the pools that prefill (`mixed`, `prefill`), the time between tokens
/// from those that decode (`mixed`, `decode`), as the planner reads them.
pub fn prometheus_rule(cx: &Context<'_>, settings: &Monitoring, slo: &LatencySlo) -> Child {
    let d = cx.deployment;
    let names = EngineMetrics::of(d.backend);
    let objectives = [
        Objective {
            alert: "InferaTimeToFirstTokenBudgetBurn",
            what: "time to first token",
            late: format!(
                "of the requests waited longer than {} ms for their first token",
                slo.ttft_p95_milliseconds
            ),
            histogram: names.ttft,
            roles: "mixed|prefill",
            target_ms: slo.ttft_p95_milliseconds,
        },
        Objective {
            alert: "InferaInterTokenLatencyBudgetBurn",
            what: "time between output tokens",
            late: format!(
                "of the output tokens came more than {} ms after the one before",
                slo.itl_p95_milliseconds
            ),
            histogram: names.itl,
            roles: "mixed|decode",
            target_ms: slo.itl_p95_milliseconds,
        },
    ];
    let rules = objectives
        .iter()
        .flat_map(|objective| BURNS.iter().map(|burn| objective.rule(cx, burn)))
        .collect();
    Child::PrometheusRule(PrometheusRule {
        metadata: monitoring_meta(cx, settings),
        spec: PrometheusRuleSpec {
            groups: vec![RuleGroup {
                name: format!("infera-slo-{}", d.name),
                rules,
            }],
        },
    })
}

/// One latency objective: which histogram, of which pools, and its target.
struct Objective {
    alert: &'static str,
    what: &'static str,
    /// What exceeds the target: "of the requests waited longer than 500 ms …".
    late: String,
    histogram: &'static str,
    roles: &'static str,
    target_ms: i32,
}

impl Objective {
    fn rule(&self, cx: &Context<'_>, burn: &Burn) -> Rule {
        let d = cx.deployment;
        let target = f64::from(self.target_ms) / 1000.0;
        let share = burn.burn * BUDGET_PERCENT;
        let quantile = (100.0 - share) / 100.0;
        let window = |range: &str| {
            format!(
                "histogram_quantile({quantile}, sum by (namespace, {DEPLOYMENT_LABEL}, le) (rate({histogram}_bucket{{namespace=\"{namespace}\", {DEPLOYMENT_LABEL}=\"{name}\", {ROLE_LABEL}=~\"{roles}\"}}[{range}]))) > {target}",
                histogram = self.histogram,
                namespace = d.namespace,
                name = d.name,
                roles = self.roles,
            )
        };
        Rule {
            alert: Some(self.alert.into()),
            expr: format!("{}\nand\n{}", window(burn.long), window(burn.short)),
            labels: BTreeMap::from([
                ("severity".into(), burn.severity.into()),
                ("infera_slo_window".into(), burn.long.into()),
            ]),
            annotations: BTreeMap::from([
                (
                    "summary".into(),
                    format!(
                        "{}: the {} objective ({} ms at p95) is spending its error budget {}× as fast as {PERIOD_DAYS} days allow",
                        d.name, self.what, self.target_ms, burn.burn
                    ),
                ),
                (
                    "description".into(),
                    format!(
                        "{}/{}: over the last {} and {}, more than {share}% {} (the objective allows {BUDGET_PERCENT}%); at this rate a {PERIOD_DAYS}-day error budget is spent in {:.1} days.",
                        d.namespace,
                        d.name,
                        burn.long,
                        burn.short,
                        self.late,
                        PERIOD_DAYS / burn.burn
                    ),
                ),
            ]),
        }
    }
}

/// A pod label's key as Prometheus's Kubernetes discovery spells it in a meta label.
fn sanitized(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sanitized;

    #[test]
    fn pod_label_keys_become_meta_label_names() {
        assert_eq!(
            sanitized("infera.amd.com/service"),
            "infera_amd_com_service"
        );
        assert_eq!(
            sanitized("app.kubernetes.io/part-of"),
            "app_kubernetes_io_part_of"
        );
    }
}
