//! The `doctor` check engine, free of I/O: [`Facts`] gathered from the cluster go in, a list of
//! [`Check`] results with stable IDs, severities and hints comes out. One module per category.
//!
//! | ID | check |
//! |---|---|
//! | INF001 | kubeconfig loads, context resolved |
//! | INF002 | API reachable, server version supported |
//! | INF003 | the `kubectl` on PATH is within ±1 minor version of the server |
//! | INF004 | `kubectl infera` runs this binary; no other `kubectl-infera` on PATH shadows it |
//! | INF101 | InferaDeployment CRD installed and Established |
//! | INF102 | CRD and operator versions match the plugin |
//! | INF103 | operator Deployment available, no crash loop, its leader Lease renewed |
//! | INF104 | no other controller (upstream Infera's operator) reconciles InferaDeployments |
//! | INF201 | LeaderWorkerSet CRD installed (v1 served) |
//! | INF202 | LeaderWorkerSet controller answers (webhooks, server dry run) |
//! | INF211 | Gateway API CRDs installed, v1 served, release ≥ v1.0 (GAIE in use or `--for`) |
//! | INF212 | InferencePool CRD serves `inference.networking.k8s.io/v1` (GAIE in use or `--for`) |
//! | INF213 | `--for FILE` with `gaie`: the Gateway exists, Accepted and Programmed |
//! | INF214 | `--for FILE` with `gaie`: a listener allows HTTPRoutes from the namespace |
//! | INF215 | `--for FILE` with `gaie`: server dry run of the HTTPRoute and InferencePool |
//! | INF221 | `--for FILE` with a `provider: keda` pool: KEDA's ScaledObject CRD serves v1alpha1 |
//! | INF222 | `--for FILE` with `monitoring`: the Prometheus Operator's PodMonitor CRD serves v1 |
//! | INF223 | `--for FILE` with `monitoring.slo`: the Prometheus Operator's PrometheusRule CRD serves v1 |
//! | INF301 | nodes with allocatable AMD GPUs (partition names and DRA recognised) |
//! | INF302 | free GPUs per node |
//! | INF303 | `--for FILE`: every pool fits the free GPUs now |
//! | INF304 | `--for FILE`: every image the spec names is pinned by digest |
//! | INF305 | `--for FILE`: the Multus networks its RDMA pools attach exist |
//! | INF401 | permissions `init` needs |
//! | INF402 | permissions `deploy` needs |
//! | INF501 | a default StorageClass (for NATS) |
//! | INF601 | `--for FILE`: the namespace's Pod Security admits every pod (server dry runs) |
//! | INF602 | `--for FILE` with NetworkPolicies: a known policy engine runs (its DaemonSet) |
//! | INF603 | `--for FILE` with restricted egress: the API server publishes its endpoints |

pub(crate) mod controllers;
mod gaie;
pub(crate) mod gpu;
mod images;
pub mod infera;
pub(crate) mod keda;
mod kubectl;
mod kubernetes;
mod lws;
mod monitoring;
pub(crate) mod network;
pub(crate) mod network_policy;
mod permissions;
pub(crate) mod pod_security;
mod storage;

use infera_core::{ValidDeployment, validate::MutableImage};
use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{Node, Pod},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use serde::Serialize;

pub use gaie::{GaieFacts, gateway_crd_name, gateway_namespace, needs_namespace_labels};
pub use gpu::AMD_DRA;
pub use kubectl::{Kubectl, PluginOnPath, parse_kubectl_version};
pub use permissions::{Need, day2_needs, deploy_needs, init_needs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Pass,
    Skip,
    Warn,
    Fail,
}

/// One check's result, as `doctor` prints it (and serializes it for `-o json|yaml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub category: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

/// A fact we could not read: the error text (e.g. `forbidden: ...`).
pub type Read<T> = Result<T, String>;

/// Everything the checks look at. `None`: not read (an earlier fatal check stopped doctor).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub pre: bool,
    pub namespace: String,
    /// Context name, or why the kubeconfig is unusable.
    pub kubeconfig: Option<Read<String>>,
    /// `gitVersion` and minor version, or why the API is unreachable.
    pub server: Option<Read<(String, u32)>>,
    /// The `kubectl` on PATH (`None` inside: there is none).
    pub kubectl: Option<Read<Option<Kubectl>>>,
    /// This binary's path, and every `kubectl-infera` on PATH in PATH order.
    pub plugins_on_path: Option<(String, Vec<PluginOnPath>)>,
    pub infera_crd: Option<Read<Option<CustomResourceDefinition>>>,
    pub operator: Option<Read<Option<Deployment>>>,
    pub operator_pods: Vec<Pod>,
    /// The operator's leader Lease (`None`: not read; `Ok(None)`: it does not exist).
    pub operator_lease: Option<Read<Option<infera::LeaseRenewal>>>,
    /// Controllers of InferaDeployments besides ours (see [`controllers`]).
    pub other_controllers: Option<Read<Vec<controllers::OtherController>>>,
    pub lws_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// Whether LWS webhook configurations exist.
    pub lws_webhooks: Option<Read<bool>>,
    /// Server-side dry run of a minimal LeaderWorkerSet.
    pub lws_probe: Option<Read<()>>,
    /// `--for FILE` with a `provider: keda` pool: KEDA's ScaledObject CRD.
    pub keda_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// `--for FILE` with `monitoring`: the Prometheus Operator's PodMonitor CRD.
    pub monitoring_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// `--for FILE` with `monitoring.slo`: the Prometheus Operator's PrometheusRule CRD.
    pub rule_crd: Option<Read<Option<CustomResourceDefinition>>>,
    pub nodes: Option<Read<Vec<Node>>>,
    /// Pods that hold resources (not Succeeded/Failed), all namespaces.
    pub pods: Option<Read<Vec<Pod>>>,
    /// DeviceClass names and the number of ResourceSlices of AMD's DRA driver.
    pub dra: Option<Read<(Vec<String>, usize)>>,
    /// Names of default StorageClasses.
    pub default_storage_classes: Option<Read<Vec<String>>>,
    pub init_access: Vec<(Need, Read<bool>)>,
    pub deploy_access: Vec<(Need, Read<bool>)>,
    /// What `logs`, `report` and `status --load` need (INF403).
    pub day2_access: Vec<(Need, Read<bool>)>,
    /// `--for FILE`.
    pub spec: Option<ValidDeployment>,
    /// `--for FILE`: the images it names by a mutable tag.
    pub mutable_images: Option<Vec<MutableImage>>,
    /// `--for FILE` whose pools attach RDMA networks: those networks (see [`network::networks`]).
    pub rdma_networks: Option<Read<network::NetworkFacts>>,
    /// The Gateway API Inference Extension: its CRDs, and for a `--for` spec with `gaie` its
    /// Gateway and dry runs.
    pub gaie: GaieFacts,
    /// `--for FILE`: its namespace's Pod Security and the dry runs of its pods.
    pub pod_security: Option<Read<pod_security::PodSecurityFacts>>,
    /// `--for FILE` with NetworkPolicies: the DaemonSets of known policy engines, as
    /// `namespace/name` (see [`network_policy::enforcement`]).
    pub network_policy_engines: Option<Read<Vec<String>>>,
    /// `--for FILE` with restricted egress: the API server's endpoints, from its EndpointSlice
    /// (see [`network_policy::api_server`]); `None` inside when it lists none.
    pub api_server: Option<Read<Option<infera_core::render::ApiServer>>>,
}

/// A check that has not run yet (it passes until a builder says otherwise).
fn check(id: &'static str, category: &'static str, name: &'static str) -> Check {
    Check {
        id,
        category,
        name,
        severity: Severity::Pass,
        message: String::new(),
        hint: None,
        details: vec![],
    }
}

impl Check {
    fn pass(mut self, message: impl Into<String>) -> Self {
        self.severity = Severity::Pass;
        self.message = message.into();
        self
    }
    fn warn(mut self, message: impl Into<String>, hint: impl Into<String>) -> Self {
        self.severity = Severity::Warn;
        self.message = message.into();
        self.hint = Some(hint.into());
        self
    }
    fn fail(mut self, message: impl Into<String>, hint: impl Into<String>) -> Self {
        self.severity = Severity::Fail;
        self.message = message.into();
        self.hint = Some(hint.into());
        self
    }
    fn skip(mut self, message: impl Into<String>) -> Self {
        self.severity = Severity::Skip;
        self.message = message.into();
        self
    }
    fn details(mut self, details: Vec<String>) -> Self {
        self.details = details;
        self
    }
    /// A fact we could not read: a warning that says which permission or call failed.
    fn unreadable(self, what: &str, error: &str) -> Self {
        self.warn(
            format!("cannot check: {what}: {error}"),
            "run doctor with more permissions (e.g. as a cluster admin) to check this",
        )
    }
}

/// Check `c` of an optional CRD a `--for` spec needs (`crd`, as infera-core names it, which
/// the operator reports a missing dependency with), used for `users`: passes when `found` serves
/// its version and is Established, fails with `hint` when it is missing or does not.
fn crd_serves(
    c: Check,
    crd: &infera_core::Crd,
    found: &Option<Read<Option<CustomResourceDefinition>>>,
    users: &str,
    hint: String,
) -> Check {
    match found {
        Some(Ok(Some(found))) => {
            if serves(found, &crd.version) {
                c.pass(format!("{} serves {} ({users})", crd.name, crd.version))
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
    }
}

/// Whether a CRD is Established and serves `version`.
fn serves(crd: &CustomResourceDefinition, version: &str) -> bool {
    crd_established(crd)
        && crd
            .spec
            .versions
            .iter()
            .any(|v| v.name == version && v.served)
}

/// Whether the API server has accepted a CRD's names and serves it.
fn crd_established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Established" && c.status == "True")
}

/// Runs every check on the facts: kubernetes first (nothing else runs without an API), then
/// the Infera install, LeaderWorkerSet, the Inference Extension (when in use), KEDA (for a
/// `--for` spec that scales with it), GPUs, a `--for`
/// spec's images, permissions, storage and Pod Security.
pub fn evaluate(f: &Facts) -> Vec<Check> {
    let mut out = Vec::new();
    if !kubernetes::checks(f, &mut out) {
        return out;
    }
    infera::checks(f, &mut out);
    out.push(controllers::check_others(f));
    lws::checks(f, &mut out);
    gaie::checks(f, &mut out);
    keda::checks(f, &mut out);
    monitoring::checks(f, &mut out);
    gpu::checks(f, &mut out);
    out.extend(images::pinned(f));
    out.extend(network::networks(f));
    permissions::checks(f, &mut out);
    out.push(storage::default_storage_class(f));
    out.extend(pod_security::check_admission(f));
    out.extend(network_policy::enforcement(f));
    out.extend(network_policy::api_server(f));
    out
}

/// Overall result: no failing check.
pub fn success(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.severity != Severity::Fail)
}

#[cfg(test)]
mod tests;
