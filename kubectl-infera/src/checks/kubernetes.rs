//! INF001, INF002: a usable kubeconfig and a reachable, recent enough API server; then INF003 and
//! INF004 about the `kubectl` and `kubectl-infera` on PATH.

use super::{Check, Facts, check, kubectl};

/// Oldest Kubernetes minor version supported.
const MIN_MINOR: u32 = 33;

/// INF001 to INF004. False when the API cannot be used: nothing else can be checked then.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) -> bool {
    let kubeconfig = check("INF001", "kubernetes", "kubeconfig");
    match &f.kubeconfig {
        Some(Ok(context)) => {
            out.push(kubeconfig.pass(format!("context {context:?}, namespace {:?}", f.namespace)))
        }
        other => {
            let e = match other {
                Some(Err(e)) => e.clone(),
                _ => "not loaded".into(),
            };
            out.push(kubeconfig.fail(e, "set KUBECONFIG or pass --kubeconfig/--context"));
            return false;
        }
    }
    let api = check("INF002", "kubernetes", "api");
    match &f.server {
        Some(Ok((version, minor))) if *minor >= MIN_MINOR => {
            out.push(api.pass(format!("reachable, Kubernetes {version}")));
            out.push(kubectl::kubectl_skew(f.kubectl.as_ref(), (version, *minor)));
        }
        Some(Ok((version, _))) => out.push(api.fail(
            format!("Kubernetes {version} is older than the minimum v1.{MIN_MINOR}"),
            format!("upgrade the cluster to v1.{MIN_MINOR} or newer"),
        )),
        other => {
            let e = match other {
                Some(Err(e)) => e.clone(),
                _ => "not checked".into(),
            };
            out.push(api.fail(
                format!("cannot reach the API server: {e}"),
                "check the cluster address, VPN and credentials (`kubectl cluster-info`)",
            ));
            return false;
        }
    }
    let (this, found) = match &f.plugins_on_path {
        Some((this, found)) => (this.as_str(), Some(found)),
        None => ("", None),
    };
    out.push(kubectl::shadowing(found, this));
    true
}
