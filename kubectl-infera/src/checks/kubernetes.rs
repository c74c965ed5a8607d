//! INF001, INF002: a usable kubeconfig and a reachable, recent enough API server.

use super::{Check, Facts, check};

/// Oldest Kubernetes minor version supported.
const MIN_MINOR: u32 = 33;

/// INF001, INF002. False when the API cannot be used: nothing else can be checked then.
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
            out.push(api.pass(format!("reachable, Kubernetes {version}")))
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
    true
}
