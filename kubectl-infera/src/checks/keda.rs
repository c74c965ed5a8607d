//! INF221: the KEDA ScaledObject CRD, for a `--for FILE` spec with a pool that autoscales with
//! `provider: keda`. The CRD's name, version and install hint come from infera-core
//! ([`ChildKind::crd`]), the same facts the operator reports a missing dependency with.

use infera_core::{ChildKind, ValidDeployment, validate::Scaler};

use super::{Check, Facts, check, crd_established};

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
    let c = check("INF221", "autoscaling", "keda-crd");
    let hint = format!(
        "{}; {} scale{} with {}",
        crd.install,
        pools.join(", "),
        if pools.len() == 1 { "s" } else { "" },
        crd.needed_for
    );
    out.push(match &f.keda_crd {
        Some(Ok(Some(found))) => {
            let served = found
                .spec
                .versions
                .iter()
                .any(|v| v.name == crd.version && v.served);
            if served && crd_established(found) {
                c.pass(format!(
                    "{} serves {} (the ScaledObjects of {})",
                    crd.name,
                    crd.version,
                    pools.join(", ")
                ))
            } else {
                c.fail(
                    format!(
                        "the {} CRD does not serve an Established {}",
                        crd.project, crd.version
                    ),
                    hint,
                )
            }
        }
        Some(Ok(None)) => c.fail(format!("{crd} is not installed"), hint),
        Some(Err(e)) => c.unreadable("reading CustomResourceDefinitions", e),
        None => c.skip("not checked"),
    });
}
