//! INF201, INF202: the LeaderWorkerSet CRD that multi-node pools render into, and its controller.
//! The CRD's name, version and install hint come from infera-core ([`ChildKind::crd`]), the same
//! facts the operator reports a missing dependency with.

use infera_core::{ChildKind, Crd};

use super::{Check, Facts, check, serves};

/// INF201, INF202.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    // Always `Some`: LeaderWorkerSet is a custom resource. The tests pin both checks.
    let Some(crd) = ChildKind::LeaderWorkerSet.crd() else {
        return;
    };
    let installed = crd_check(&crd, f, out);
    out.push(controller_check(f, installed));
}

/// INF201; true when the CRD serves the version we create.
fn crd_check(crd: &Crd, f: &Facts, out: &mut Vec<Check>) -> bool {
    let lws = check("INF201", "leaderworkerset", "lws-crd");
    let hint = format!(
        "{}; multi-node pools ({}) need it",
        crd.install, crd.needed_for
    );
    match &f.lws_crd {
        Some(Ok(Some(c))) => {
            let served = serves(c, &crd.version);
            out.push(if served {
                lws.pass(format!("{} serves {}", crd.name, crd.version))
            } else {
                lws.fail(
                    format!(
                        "the {} CRD does not serve an Established {}",
                        crd.project, crd.version
                    ),
                    hint,
                )
            });
            served
        }
        Some(Ok(None)) => {
            out.push(lws.fail(format!("{crd} is not installed"), hint));
            false
        }
        Some(Err(e)) => {
            out.push(lws.unreadable("reading CustomResourceDefinitions", e));
            false
        }
        None => {
            out.push(lws.skip("not checked"));
            false
        }
    }
}

/// INF202: the CRD alone creates nothing; the controller's webhooks must answer.
fn controller_check(f: &Facts, crd_installed: bool) -> Check {
    let controller = check("INF202", "leaderworkerset", "lws-controller");
    if !crd_installed {
        return controller.skip("needs the LeaderWorkerSet CRD");
    }
    match (&f.lws_webhooks, &f.lws_probe) {
        (Some(Ok(false)), _) => controller.fail(
            "no LeaderWorkerSet webhook is registered: the controller is not installed",
            "install the LeaderWorkerSet controller (lws-controller-manager), not only its CRD",
        ),
        (_, Some(Ok(()))) => controller.pass(
            "the LeaderWorkerSet webhooks answer (server-side dry run of a LeaderWorkerSet passed)",
        ),
        (_, Some(Err(e))) if e.contains("forbidden") => {
            controller.unreadable("dry-run create of a LeaderWorkerSet", e)
        }
        (_, Some(Err(e))) => controller.fail(
            format!("a server-side dry run of a LeaderWorkerSet failed: {e}"),
            "check that lws-controller-manager is running and its webhook Service has endpoints",
        ),
        (Some(Err(e)), None) => controller.unreadable("reading webhook configurations", e),
        _ => controller.skip("not checked"),
    }
}
