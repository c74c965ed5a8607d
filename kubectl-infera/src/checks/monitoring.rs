//! INF222: the Prometheus Operator's PodMonitor CRD, for a `--for FILE` spec with `monitoring`
//! (see [`super::keda`] for the same check of KEDA's).

use infera_core::ChildKind;

use super::{Check, Facts, check, crd_serves};

/// INF222, only for a `--for` spec with `monitoring` on.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let (Some(spec), Some(crd)) = (&f.spec, ChildKind::PodMonitor.crd()) else {
        return;
    };
    if spec.monitoring.is_none() {
        return;
    }
    let c = check("INF222", "monitoring", "pod-monitor-crd");
    let hint = crd.install.to_string();
    let users = format!("the PodMonitor {}", spec.name);
    out.push(crd_serves(c, &crd, &f.monitoring_crd, &users, hint));
}
