//! INF222 and INF223: the Prometheus Operator's PodMonitor CRD, for a `--for FILE` spec with
//! `monitoring`, and its PrometheusRule CRD, with `monitoring.slo` (see [`super::keda`] for the
//! same check of KEDA's).

use infera_core::ChildKind;

use super::{Check, Facts, check, crd_serves};

/// INF222, only for a `--for` spec with `monitoring` on; INF223 when it also has `slo`.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let Some(spec) = &f.spec else { return };
    let Some(monitoring) = &spec.monitoring else {
        return;
    };
    let mut serves = |id, name, kind: ChildKind, read| {
        if let Some(crd) = kind.crd() {
            let users = format!("the {kind:?} {}", spec.name);
            let hint = crd.install.to_string();
            out.push(crd_serves(
                check(id, "monitoring", name),
                &crd,
                read,
                &users,
                hint,
            ));
        }
    };
    serves(
        "INF222",
        "pod-monitor-crd",
        ChildKind::PodMonitor,
        &f.monitoring_crd,
    );
    if monitoring.slo.is_some() {
        serves(
            "INF223",
            "prometheus-rule-crd",
            ChildKind::PrometheusRule,
            &f.rule_crd,
        );
    }
}
