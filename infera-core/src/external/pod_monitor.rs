//! The Prometheus Operator's PodMonitor (`monitoring.coreos.com/v1`), written by hand: only the
//! fields the operator sets, from the CRD of github.com/prometheus-operator/prometheus-operator
//! v0.85.0 (`example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml`). The whole
//! generated API (authorization, TLS, OAuth2, …) would add its serializers to both binaries for
//! fields we never write. `tests/tests/shared/operator_monitoring.rs` has the real CRD accept
//! what we render.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use serde::{Deserialize, Serialize};

/// Which pods a Prometheus scrapes, and how.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "monitoring.coreos.com",
    version = "v1",
    kind = "PodMonitor",
    plural = "podmonitors",
    namespaced,
    schema = "disabled",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct PodMonitorSpec {
    /// The pods, in the PodMonitor's namespace.
    pub selector: LabelSelector,
    /// What to scrape on each pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_metrics_endpoints: Vec<PodMetricsEndpoint>,
}

/// One endpoint of each selected pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodMetricsEndpoint {
    /// The name of the pod's port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// The HTTP path (the Prometheus default is `/metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// How often to scrape; the Prometheus's own interval when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Relabelings applied to the target before scraping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relabelings: Vec<RelabelConfig>,
}

/// A `replace` relabeling (the default action): the value of `sourceLabels` into `targetLabel`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RelabelConfig {
    /// The labels whose values are read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_labels: Vec<String>,
    /// The label written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_label: Option<String>,
}
