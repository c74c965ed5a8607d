//! The Prometheus Operator's PrometheusRule (`monitoring.coreos.com/v1`), written by hand like
//! [`super::pod_monitor`]: only the fields the operator sets, from the CRD of
//! github.com/prometheus-operator/prometheus-operator v0.85.0
//! (`example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml`).
//! `tests/tests/shared/operator_monitoring.rs` has the real CRD accept what we render.

use std::collections::BTreeMap;

use kube::CustomResource;
use serde::{Deserialize, Serialize};

/// Alerting and recording rules for a Prometheus to load.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "monitoring.coreos.com",
    version = "v1",
    kind = "PrometheusRule",
    plural = "prometheusrules",
    namespaced,
    schema = "disabled",
    derive = "Default",
    derive = "PartialEq"
)]
pub struct PrometheusRuleSpec {
    /// The rule groups (a list keyed by `name`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<RuleGroup>,
}

/// Rules evaluated together, at the Prometheus's evaluation interval.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RuleGroup {
    /// Unique within the PrometheusRule.
    pub name: String,
    /// The group's rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
}

/// One alerting rule.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// The alert's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert: Option<String>,
    /// The PromQL expression; the alert fires for each series it returns.
    pub expr: String,
    /// Labels added to the alert.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations of the alert (`summary`, `description`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}
