//! INF003, INF004: the `kubectl` on PATH and the `kubectl-infera` it runs.

use super::{Check, Read, check};

/// kubectl is supported within one minor version (older or newer) of kube-apiserver: the
/// Kubernetes version skew policy (kubernetes.io/releases/version-skew-policy, "kubectl"), which
/// `kubectl version` enforces with a warning (kubectl 0.36 `pkg/cmd/version/skew_warning.go`,
/// `supportedMinorVersionSkew = 1`).
const KUBECTL_SKEW: u32 = 1;

/// The `kubectl` found on PATH and its client version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubectl {
    pub path: String,
    /// `gitVersion`, e.g. `v1.36.3`.
    pub version: String,
    pub major: u32,
    pub minor: u32,
}

/// A `kubectl-infera` on PATH, in PATH order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginOnPath {
    pub path: String,
    /// Whether it is the binary running now (same file once symlinks are resolved).
    pub is_this: bool,
}

/// INF003: the `kubectl` on PATH is within ±1 minor of the server (`server_minor`, Kubernetes 1.x).
pub(super) fn kubectl_skew(kubectl: Option<&Read<Option<Kubectl>>>, server: (&str, u32)) -> Check {
    let c = check("INF003", "kubernetes", "kubectl");
    let (server_version, server_minor) = server;
    let supported = format!(
        "v1.{}–v1.{}",
        server_minor.saturating_sub(KUBECTL_SKEW),
        server_minor + KUBECTL_SKEW
    );
    let hint = format!(
        "use a kubectl {supported} for this cluster: kubectl is supported within one minor version of the API server (Kubernetes version skew policy)"
    );
    match kubectl {
        None => c.skip("not checked"),
        Some(Err(e)) => c.warn(format!("cannot read the kubectl version: {e}"), hint),
        Some(Ok(None)) => c.warn("no kubectl on PATH", hint),
        Some(Ok(Some(k))) => {
            let skew = k.minor.abs_diff(server_minor);
            if k.major == 1 && skew <= KUBECTL_SKEW {
                c.pass(format!(
                    "{} ({}), within ±{KUBECTL_SKEW} minor of the server's {server_version}",
                    k.version, k.path
                ))
            } else {
                c.warn(
                    format!(
                        "{} ({}) is outside the supported skew of the server's {server_version} (±{KUBECTL_SKEW} minor)",
                        k.version, k.path
                    ),
                    hint,
                )
            }
        }
    }
}

/// INF004: `kubectl infera` runs this binary, and no other `kubectl-infera` on PATH hides it or is
/// hidden by it (`kubectl plugin list` warns "is overshadowed by a similarly named plugin":
/// kubectl 0.36 `pkg/cmd/plugin/plugin.go`, `CommandOverrideVerifier.Verify`).
pub(super) fn shadowing(found: Option<&Vec<PluginOnPath>>, this: &str) -> Check {
    let c = check("INF004", "kubernetes", "plugin-path");
    let Some(found) = found else {
        return c.skip("not checked");
    };
    let others: Vec<String> = found
        .iter()
        .filter(|p| !p.is_this)
        .map(|p| p.path.clone())
        .collect();
    match found.first() {
        None => c.warn(
            format!("kubectl-infera is not on PATH, so `kubectl infera` cannot run {this}"),
            "install it with `kubectl krew install infera`, or put its directory on PATH",
        ),
        Some(first) if !first.is_this => c
            .warn(
                format!("`kubectl infera` runs {}, not this binary ({this})", first.path),
                format!(
                    "remove {} or put the directory of {this} before it on PATH (`kubectl plugin list` shows both)",
                    first.path
                ),
            )
            .details(others),
        Some(first) if !others.is_empty() => c
            .warn(
                format!(
                    "{} other kubectl-infera on PATH, overshadowed by {}",
                    others.len(),
                    first.path
                ),
                "remove the other copies: an upgrade of one of them would not be the one `kubectl infera` runs",
            )
            .details(others),
        Some(first) => c.pass(format!("`kubectl infera` runs this binary ({})", first.path)),
    }
}

/// The client version in the output of `kubectl version --client -o json`.
pub fn parse_kubectl_version(path: String, json: &[u8]) -> Read<Kubectl> {
    let value: serde_json::Value = serde_json::from_slice(json)
        .map_err(|e| format!("{path} version --client -o json: not JSON: {e}"))?;
    let client = &value["clientVersion"];
    let number = |field: &str| {
        client[field]
            .as_str()
            .and_then(|s| s.trim_end_matches('+').parse().ok())
            .ok_or_else(|| format!("{path} version --client -o json: no clientVersion.{field}"))
    };
    Ok(Kubectl {
        major: number("major")?,
        minor: number("minor")?,
        version: client["gitVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        path,
    })
}
