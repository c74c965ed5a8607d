//! Support library for Infera's end-to-end tests.
//!
//! The tests run against the local control plane that `tests/cluster/up.sh` starts (see
//! `tests/cluster/README.md`); they find it through `$KUBECONFIG`, whose contexts are `admin`
//! (system:masters), `alice` and `bob` (authenticated, no RBAC bindings). `tests/run-e2e.sh` and
//! `make e2e` bring a tier-2 cluster up and down around the tests of `tests/tests/shared` and
//! `isolated`, then a tier-3 one around `tests/tests/tier3`.
//!
//! * [`admin`], [`user`], [`impersonating`] — clients as the admin, an unprivileged user, or a
//!   ServiceAccount through impersonation;
//! * [`ServiceAccountIdentity`] — a real TokenRequest token for a ServiceAccount and a kubeconfig
//!   file carrying it, so a locally spawned operator authenticates exactly as its ServiceAccount;
//! * [`TestNamespace`] — a unique namespace per test, deleted afterwards;
//! * [`eventually`] — poll with a deadline, reporting the last error on timeout;
//! * [`binary`] / [`Process`] — the workspace's built binaries and a child process that is killed
//!   on drop;
//! * [`apply_yaml`] — server-side apply of multi-document YAML (e.g. the shipped RBAC);
//! * [`FakeNode`] — an extra kwok-managed node, e.g. for tests that need a node of their own;
//! * [`cluster::PrivateCluster`] — a control plane of a test's own, which it may break;
//! * [`proxy::Proxy`] — an HTTP (`CONNECT`) or SOCKS5 proxy on loopback, for `proxy-url`.
//! * [`release`] — the artifacts of `make release`, its tools, and a static HTTP server on loopback.

mod bins;
mod clients;
pub mod cluster;
mod eventually;
pub mod fault_proxy;
pub mod fleet;
pub mod kubelet;
mod manifests;
mod namespace;
mod nodes;
pub mod operator;
pub mod plugin;
pub mod prometheus;
pub mod proxy;
pub mod release;
pub mod rng;
pub mod upstream;

pub use bins::{Process, binary, target_dir, test_bin_dir};
pub use clients::{
    ServiceAccountIdentity, admin, cluster_tier, context, impersonating, kubeconfig_path,
    mint_token, user,
};
pub use eventually::{eventually, eventually_every, ready};
pub use manifests::{apply_yaml, apply_yaml_in};
pub use namespace::TestNamespace;
pub use nodes::FakeNode;

pub use k8s_openapi;
pub use kube;

/// The namespace's InferaDeployments as free-form objects, so a test can send specs the typed API
/// would refuse, and the parameters of a server-side dry-run create: admission answers, nothing is
/// stored.
pub fn admission_dry_run(
    client: &kube::Client,
    namespace: &str,
) -> (kube::Api<kube::api::DynamicObject>, kube::api::PostParams) {
    let resource = kube::core::ApiResource::erase::<infera_core::InferaDeployment>(&());
    let api = kube::Api::namespaced_with(client.clone(), namespace, &resource);
    let dry_run = kube::api::PostParams {
        dry_run: true,
        ..Default::default()
    };
    (api, dry_run)
}

/// Whether a 404 listing `resource` means "none": it is a kind of ours whose CRD is not installed
/// on this cluster (LeaderWorkerSet or the Gateway API's on tier 1). A built-in kind, or one whose
/// CRD is installed, answering 404 is a wrong API in the test, not an empty list.
pub async fn crd_not_installed(
    client: &kube::Client,
    resource: &kube::core::ApiResource,
) -> anyhow::Result<bool> {
    let crd = infera_core::ChildKind::ALL
        .iter()
        .filter_map(|kind| kind.crd())
        .find(|crd| crd.name == format!("{}.{}", resource.plural, resource.group));
    let Some(crd) = crd else {
        return Ok(false);
    };
    let crds: kube::Api<
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    > = kube::Api::all(client.clone());
    Ok(crds.get_opt(&crd.name).await?.is_none())
}

/// Field manager used by helpers of this crate when they apply objects.
pub const FIELD_MANAGER: &str = "infera-e2e";

/// A short suffix unique within this test run: process id, a counter and the clock.
pub fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let mixed = (u64::from(std::process::id()) << 32 | u64::from(nanos)) ^ (u64::from(n) << 20);
    let mut s = format!("{:x}", mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 28);
    s.truncate(7);
    format!("{s}{n}")
}
