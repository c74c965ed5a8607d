//! The graph's PodMonitor: the Prometheus Operator scrapes `/metrics` of the router (port
//! `http`), of every engine that serves (`http`: single-node pods and multi-node leaders; ranks
//! above 0 declare no port) and of the GAIE frontend sidecars (`frontend`), and labels each
//! series with the deployment, service, role and revision ([`crate::metrics::SERIES_LABELS`]).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::{Child, Context, meta};
use crate::{
    external::pod_monitor::{PodMetricsEndpoint, PodMonitor, PodMonitorSpec, RelabelConfig},
    metrics::SERIES_LABELS,
    naming::{self, Component},
    validate::Monitoring,
};

/// The PodMonitor `<deployment>` of the graph's router and engine pods.
pub fn pod_monitor(cx: &Context<'_>, settings: &Monitoring) -> Child {
    let d = cx.deployment;
    let mut metadata = meta::object_meta(d, Component::Monitoring, d.name.clone());
    if let Some(labels) = metadata.labels.as_mut() {
        for (key, value) in &settings.labels {
            labels.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
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
