//! INF221: the KEDA ScaledObject CRD, for a `--for FILE` spec with a pool that autoscales with
//! `provider: keda`. The CRD's name, version and install hint come from infera-core
//! ([`ChildKind::crd`]), the same facts the operator reports a missing dependency with.

use infera_core::{ChildKind, ValidDeployment, validate::Scaler};

use super::{Check, Facts, check, crd_serves};

/// The services of `spec` that autoscale with KEDA, in spec order.
pub fn keda_pools(spec: &ValidDeployment) -> Vec<&str> {
    spec.server
        .iter()
        .chain(spec.workers.iter().map(|worker| &worker.pod))
        .filter(|pod| {
            pod.autoscaling
                .as_ref()
                .is_some_and(|a| matches!(a.scaler, Scaler::Keda(_)))
        })
        .map(|pod| pod.service.as_str())
        .collect()
}

/// INF221, only for a `--for` spec with a KEDA pool.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let (Some(spec), Some(crd)) = (&f.spec, ChildKind::ScaledObject.crd()) else {
        return;
    };
    let pools = keda_pools(spec);
    if pools.is_empty() {
        return;
    }
    let hint = format!(
        "{}; {} scale{} with {}",
        crd.install,
        pools.join(", "),
        if pools.len() == 1 { "s" } else { "" },
        crd.needed_for
    );
    let users = format!("the ScaledObjects of {}", pools.join(", "));
    let c = check("INF221", "autoscaling", "keda-crd");
    out.push(crd_serves(c, &crd, &f.keda_crd, &users, hint));
}
