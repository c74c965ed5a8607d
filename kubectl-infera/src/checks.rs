//! The `doctor` check engine, free of I/O: [`Facts`] gathered from the cluster go in, a list of
//! [`Check`] results with stable IDs, severities and hints comes out.
//!
//! | ID | check |
//! |---|---|
//! | INF001 | kubeconfig loads, context resolved |
//! | INF002 | API reachable, server version supported |
//! | INF101 | InferaDeployment CRD installed and Established |
//! | INF102 | CRD and operator versions match the plugin |
//! | INF103 | operator Deployment available, no crash loop |
//! | INF201 | LeaderWorkerSet CRD installed (v1 served) |
//! | INF202 | LeaderWorkerSet controller answers (webhooks, server dry run) |
//! | INF301 | nodes with allocatable AMD GPUs (partition names and DRA recognised) |
//! | INF302 | free GPUs per node |
//! | INF303 | `--for FILE`: every pool fits the free GPUs now |
//! | INF401 | permissions `init` needs |
//! | INF402 | permissions `deploy` needs |
//! | INF501 | a default StorageClass (for NATS) |

use std::collections::BTreeMap;

use infera_core::{ValidDeployment, crd::VERSION};
use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{Node, Pod},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use serde::Serialize;

/// Oldest Kubernetes minor version supported.
pub const MIN_MINOR: u32 = 33;
pub const GPU: &str = "amd.com/gpu";
/// AMD's DRA driver and DeviceClass name.
pub const AMD_DRA: &str = "gpu.amd.com";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Pass,
    Skip,
    Warn,
    Fail,
}

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

/// One permission a command needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub verb: &'static str,
    pub group: &'static str,
    pub resource: &'static str,
    /// `None`: cluster-scoped (or all namespaces).
    pub namespace: Option<String>,
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let resource = if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        };
        match &self.namespace {
            Some(ns) => write!(f, "{} {resource} in namespace {ns}", self.verb),
            None => write!(f, "{} {resource} (cluster-wide)", self.verb),
        }
    }
}

/// What `init` needs (cluster-scoped objects and the operator namespace): it reads each object
/// to report what changed, creates it the first time and patches it on every re-run.
pub fn init_needs() -> Vec<Need> {
    let ns = || Some(crate::bundle::NAMESPACE.to_string());
    let mut needs = vec![];
    for verb in ["get", "create", "patch"] {
        for (group, resource) in [
            ("apiextensions.k8s.io", "customresourcedefinitions"),
            ("rbac.authorization.k8s.io", "clusterroles"),
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
            ("", "namespaces"),
        ] {
            needs.push(Need {
                verb,
                group,
                resource,
                namespace: None,
            });
        }
        for (group, resource) in [
            ("", "serviceaccounts"),
            ("", "services"),
            ("apps", "deployments"),
            ("rbac.authorization.k8s.io", "roles"),
            ("rbac.authorization.k8s.io", "rolebindings"),
        ] {
            needs.push(Need {
                verb,
                group,
                resource,
                namespace: ns(),
            });
        }
    }
    needs
}

/// What `deploy` (and `status`) need in a namespace.
pub fn deploy_needs(namespace: &str) -> Vec<Need> {
    let ns = || Some(namespace.to_string());
    vec![
        Need {
            verb: "create",
            group: "infera.amd.com",
            resource: "inferadeployments",
            namespace: ns(),
        },
        Need {
            verb: "patch",
            group: "infera.amd.com",
            resource: "inferadeployments",
            namespace: ns(),
        },
        Need {
            verb: "get",
            group: "infera.amd.com",
            resource: "inferadeployments",
            namespace: ns(),
        },
        Need {
            verb: "list",
            group: "",
            resource: "pods",
            namespace: ns(),
        },
        Need {
            verb: "list",
            group: "",
            resource: "events",
            namespace: ns(),
        },
    ]
}

/// Everything the checks look at.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub pre: bool,
    pub namespace: String,
    /// Context name, or why the kubeconfig is unusable.
    pub kubeconfig: Option<Read<String>>,
    /// `gitVersion` and minor version, or why the API is unreachable.
    pub server: Option<Read<(String, u32)>>,
    pub infera_crd: Option<Read<Option<CustomResourceDefinition>>>,
    pub operator: Option<Read<Option<Deployment>>>,
    pub operator_pods: Vec<Pod>,
    pub lws_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// Whether LWS webhook configurations exist.
    pub lws_webhooks: Option<Read<bool>>,
    /// Server-side dry run of a minimal LeaderWorkerSet.
    pub lws_probe: Option<Read<()>>,
    pub nodes: Option<Read<Vec<Node>>>,
    /// Pods that hold resources (not Succeeded/Failed), all namespaces.
    pub pods: Option<Read<Vec<Pod>>>,
    /// DeviceClass names and the number of ResourceSlices of AMD's DRA driver.
    pub dra: Option<Read<(Vec<String>, usize)>>,
    /// Names of default StorageClasses.
    pub default_storage_classes: Option<Read<Vec<String>>>,
    pub init_access: Vec<(Need, Read<bool>)>,
    pub deploy_access: Vec<(Need, Read<bool>)>,
    /// `--for FILE`.
    pub spec: Option<ValidDeployment>,
}

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

fn crd_established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Established" && c.status == "True")
}

/// GPU capacity of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGpus {
    pub node: String,
    pub resource: String,
    pub allocatable: i64,
    pub requested: i64,
    pub schedulable: bool,
}

impl NodeGpus {
    pub fn free(&self) -> i64 {
        (self.allocatable - self.requested).max(0)
    }
}

fn quantity(q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity) -> i64 {
    q.0.trim().parse().unwrap_or(0)
}

/// Whether a node takes new pods: not cordoned and Ready.
fn schedulable(node: &Node) -> bool {
    let cordoned = node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false);
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    !cordoned && ready
}

/// GPUs requested on a node by pods that hold resources.
fn requested(pods: &[Pod], node: &str, resource: &str) -> i64 {
    pods.iter()
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node))
        .filter(|p| {
            !matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            )
        })
        .map(|p| {
            let spec = p.spec.clone().unwrap_or_default();
            let of = |c: &k8s_openapi::api::core::v1::Container| {
                let r = c.resources.clone().unwrap_or_default();
                r.limits
                    .as_ref()
                    .and_then(|l| l.get(resource))
                    .or_else(|| r.requests.as_ref().and_then(|l| l.get(resource)))
                    .map(quantity)
                    .unwrap_or(0)
            };
            let containers: i64 = spec.containers.iter().map(of).sum();
            let init: i64 = spec
                .init_containers
                .iter()
                .flatten()
                .map(of)
                .max()
                .unwrap_or(0);
            containers.max(init)
        })
        .sum()
}

/// Every node's capacity of every AMD GPU resource (`amd.com/gpu` and partition names).
pub fn gpu_capacity(nodes: &[Node], pods: &[Pod]) -> Vec<NodeGpus> {
    let mut out = Vec::new();
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let allocatable: BTreeMap<String, _> = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.clone())
            .unwrap_or_default();
        for (resource, q) in allocatable.iter().filter(|(k, _)| is_amd_gpu_resource(k)) {
            let allocatable = quantity(q);
            if allocatable > 0 {
                out.push(NodeGpus {
                    node: name.clone(),
                    resource: resource.clone(),
                    allocatable,
                    requested: requested(pods, &name, resource),
                    schedulable: schedulable(node),
                });
            }
        }
    }
    out
}

/// `amd.com/gpu`, or a partition name of AMD's device plugin (`amd.com/cpx_nps4`, `amd.com/spx_nps1`…).
pub fn is_amd_gpu_resource(name: &str) -> bool {
    match name.strip_prefix("amd.com/") {
        Some("gpu") => true,
        Some(rest) => {
            let mut parts = rest.split('_');
            matches!(parts.next(), Some("spx" | "dpx" | "tpx" | "qpx" | "cpx"))
                && parts.next().is_some_and(|p| p.starts_with("nps"))
        }
        None => false,
    }
}

/// Places every pod of every worker pool on the free GPUs (best fit), pool by pool.
pub fn fit(spec: &ValidDeployment, capacity: &[NodeGpus]) -> (bool, Vec<String>) {
    let mut free: Vec<(String, String, i64)> = capacity
        .iter()
        .filter(|c| c.schedulable)
        .map(|c| (c.node.clone(), c.resource.clone(), c.free()))
        .collect();
    let mut ok = true;
    let mut lines = Vec::new();
    for worker in &spec.workers {
        let pods = i64::from(worker.pod.replicas) * i64::from(worker.nodes);
        let gpus = i64::from(worker.gpu);
        let mut placed = 0;
        for _ in 0..pods {
            let best = free
                .iter_mut()
                .filter(|(_, r, f)| *r == worker.gpu_type && *f >= gpus)
                .min_by_key(|(_, _, f)| *f);
            match best {
                Some(slot) => {
                    slot.2 -= gpus;
                    placed += 1;
                }
                None => break,
            }
        }
        let shape = format!("{pods} pod(s) × {gpus} {}", worker.gpu_type);
        if placed == pods {
            lines.push(format!("{}: {shape} fit", worker.pod.service));
        } else {
            ok = false;
            let largest = free
                .iter()
                .filter(|(_, r, _)| *r == worker.gpu_type)
                .map(|(_, _, f)| *f)
                .max()
                .unwrap_or(0);
            lines.push(format!(
                "{}: {shape} needed, only {placed} fit (largest free block left: {largest} on one node)",
                worker.pod.service
            ));
        }
    }
    (ok, lines)
}

fn access_check(c: Check, what: &str, access: &[(Need, Read<bool>)]) -> Check {
    if access.is_empty() {
        return c.skip("not needed: Infera is installed (use --pre to check them anyway)");
    }
    let errors: Vec<String> = access
        .iter()
        .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
        .collect();
    if errors.len() == access.len() {
        return c.unreadable("SelfSubjectAccessReview", &errors[0]);
    }
    let missing: Vec<String> = access
        .iter()
        .filter(|(_, r)| matches!(r, Ok(false)))
        .map(|(n, _)| n.to_string())
        .collect();
    if missing.is_empty() {
        c.pass(format!(
            "you may do everything {what} needs ({} permissions)",
            access.len()
        ))
    } else {
        c.fail(
            format!("{what} needs {} permission(s) you do not have", missing.len()),
            "ask a cluster admin to grant them (a Role/ClusterRole with these verbs), or run as a user who has them",
        )
        .details(missing.into_iter().map(|m| format!("missing: {m}")).collect())
    }
}

/// Runs every check on the facts: kubernetes first (nothing else runs without an API), then
/// the Infera install, LeaderWorkerSet, GPUs, permissions and storage.
pub fn evaluate(f: &Facts) -> Vec<Check> {
    let mut out = Vec::new();
    if !kubernetes(f, &mut out) {
        return out;
    }
    infera(f, &mut out);
    leaderworkerset(f, &mut out);
    gpu(f, &mut out);
    permissions(f, &mut out);
    storage(f, &mut out);
    out
}

/// INF001, INF002. False when the API cannot be used.
fn kubernetes(f: &Facts, out: &mut Vec<Check>) -> bool {
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

/// INF101, INF102, INF103.
fn infera(f: &Facts, out: &mut Vec<Check>) {
    let crd = check("INF101", "infera", "crd");
    let skew = check("INF102", "infera", "version-skew");
    let operator = check("INF103", "infera", "operator");
    let crd_version = match &f.infera_crd {
        Some(Ok(Some(c))) => {
            let version = c
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(infera_core::crd::VERSION_ANNOTATION))
                .cloned();
            out.push(if crd_established(c) {
                crd.pass(format!("inferadeployments.infera.amd.com is Established (version {})", version.as_deref().unwrap_or("unknown")))
            } else {
                crd.fail("inferadeployments.infera.amd.com exists but is not Established", "see `kubectl get crd inferadeployments.infera.amd.com -o yaml` (NamesAccepted condition)")
            });
            version
        }
        Some(Ok(None)) if f.pre => {
            out.push(crd.pass("not installed yet (expected before `kubectl infera init`)"));
            None
        }
        Some(Ok(None)) => {
            out.push(crd.fail(
                "the InferaDeployment CRD is not installed",
                "run `kubectl infera init`",
            ));
            None
        }
        Some(Err(e)) => {
            out.push(crd.unreadable("reading CustomResourceDefinitions", e));
            None
        }
        None => {
            out.push(crd.skip("not checked"));
            None
        }
    };
    let operator_version = match &f.operator {
        Some(Ok(Some(d))) => {
            let (available, desired, done) = crate::commands::init::rollout(d);
            let crashing: Vec<String> = f
                .operator_pods
                .iter()
                .filter(|p| {
                    p.status
                        .as_ref()
                        .and_then(|s| s.container_statuses.as_ref())
                        .into_iter()
                        .flatten()
                        .any(|c| {
                            c.state
                                .as_ref()
                                .and_then(|s| s.waiting.as_ref())
                                .and_then(|w| w.reason.as_deref())
                                == Some("CrashLoopBackOff")
                        })
                })
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            out.push(if !crashing.is_empty() {
                operator.fail(
                    format!("operator pods are crash-looping: {}", crashing.join(", ")),
                    format!("see `kubectl logs -n {} {} --previous`", crate::bundle::NAMESPACE, crashing[0]),
                )
            } else if done {
                operator.pass(format!("infera-operator is available ({available}/{desired})"))
            } else {
                operator.fail(
                    format!("infera-operator has {available}/{desired} replicas available"),
                    format!("see `kubectl -n {} describe deployment infera-operator` and its pods' events", crate::bundle::NAMESPACE),
                )
            });
            d.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(crate::bundle::VERSION_LABEL))
                .cloned()
        }
        Some(Ok(None)) if f.pre => {
            out.push(operator.pass("not installed yet (expected before `kubectl infera init`)"));
            None
        }
        Some(Ok(None)) => {
            out.push(operator.fail(
                "the operator Deployment infera-system/infera-operator does not exist",
                "run `kubectl infera init`",
            ));
            None
        }
        Some(Err(e)) => {
            out.push(operator.unreadable("reading the operator Deployment", e));
            None
        }
        None => {
            out.push(operator.skip("not checked"));
            None
        }
    };
    let skews = crate::commands::version::skew(
        VERSION,
        crd_version.as_deref(),
        operator_version.as_deref(),
    );
    let skew = if skews.is_empty() {
        match (&crd_version, &operator_version) {
            (None, None) => skew.skip("nothing installed to compare"),
            _ => skew.pass(format!("CRD and operator match the plugin ({VERSION})")),
        }
    } else {
        skew.warn(
            "installed versions differ from the plugin's",
            "run `kubectl infera init` to upgrade, or upgrade the plugin",
        )
        .details(skews)
    };
    let at = out
        .iter()
        .position(|c| c.id == "INF103")
        .unwrap_or(out.len());
    out.insert(at, skew);
}

/// INF201, INF202.
fn leaderworkerset(f: &Facts, out: &mut Vec<Check>) {
    let lws = check("INF201", "leaderworkerset", "lws-crd");
    let lws_hint = "install LeaderWorkerSet (https://lws.sigs.k8s.io/docs/installation/); multi-node pools (numberOfNodes > 1) need it";
    let lws_installed = match &f.lws_crd {
        Some(Ok(Some(c))) => {
            let v1 = c.spec.versions.iter().any(|v| v.name == "v1" && v.served);
            out.push(if v1 && crd_established(c) {
                lws.pass("leaderworkersets.leaderworkerset.x-k8s.io serves v1")
            } else {
                lws.fail(
                    "the LeaderWorkerSet CRD does not serve an Established v1",
                    lws_hint,
                )
            });
            v1
        }
        Some(Ok(None)) => {
            out.push(lws.fail("the LeaderWorkerSet CRD (leaderworkersets.leaderworkerset.x-k8s.io) is not installed", lws_hint));
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
    };
    let controller = check("INF202", "leaderworkerset", "lws-controller");
    out.push(if !lws_installed {
        controller.skip("needs the LeaderWorkerSet CRD")
    } else {
        match (&f.lws_webhooks, &f.lws_probe) {
            (Some(Ok(false)), _) => controller.fail(
                "no LeaderWorkerSet webhook is registered: the controller is not installed",
                "install the LeaderWorkerSet controller (lws-controller-manager), not only its CRD",
            ),
            (_, Some(Ok(()))) => controller.pass("the LeaderWorkerSet webhooks answer (server-side dry run of a LeaderWorkerSet passed)"),
            (_, Some(Err(e))) if e.contains("forbidden") => controller.unreadable("dry-run create of a LeaderWorkerSet", e),
            (_, Some(Err(e))) => controller.fail(
                format!("a server-side dry run of a LeaderWorkerSet failed: {e}"),
                "check that lws-controller-manager is running and its webhook Service has endpoints",
            ),
            (Some(Err(e)), None) => controller.unreadable("reading webhook configurations", e),
            _ => controller.skip("not checked"),
        }
    });
}

/// INF301, INF302, INF303.
fn gpu(f: &Facts, out: &mut Vec<Check>) {
    let nodes_check = check("INF301", "gpu", "gpu-nodes");
    let free_check = check("INF302", "gpu", "gpu-free");
    let fit_check = check("INF303", "gpu", "gpu-fit");
    match (&f.nodes, &f.pods) {
        (Some(Ok(nodes)), pods) => {
            let pods_ok: Vec<Pod> = match pods {
                Some(Ok(p)) => p.clone(),
                _ => vec![],
            };
            let capacity = gpu_capacity(nodes, &pods_ok);
            let whole: Vec<&NodeGpus> = capacity.iter().filter(|c| c.resource == GPU).collect();
            let partitions: Vec<&NodeGpus> =
                capacity.iter().filter(|c| c.resource != GPU).collect();
            let dra = match &f.dra {
                Some(Ok((classes, slices))) => classes.iter().any(|c| c == AMD_DRA) || *slices > 0,
                _ => false,
            };
            if !whole.is_empty() {
                let total: i64 = whole.iter().map(|c| c.allocatable).sum();
                out.push(nodes_check.pass(format!(
                    "{} node(s) with {total} allocatable {GPU}",
                    whole.len()
                )));
            } else if !partitions.is_empty() {
                let names: std::collections::BTreeSet<&str> =
                    partitions.iter().map(|c| c.resource.as_str()).collect();
                let names: Vec<&str> = names.into_iter().collect();
                out.push(nodes_check.warn(
                    format!("no node has {GPU}, but {} node(s) have partitioned AMD GPUs: {}", partitions.len(), names.join(", ")),
                    format!("the device plugin uses the `mixed` naming strategy: set `resources.gpuType: {}` on your worker pools", names[0]),
                ));
            } else if dra {
                out.push(nodes_check.warn(
                    format!("no node has {GPU}: AMD GPUs are exposed through DRA (DeviceClass {AMD_DRA})"),
                    format!("Infera requests GPUs as an extended resource; use a pool with AMD's device plugin (amd.com/gpu), or map DeviceClass {AMD_DRA} to an extended resource name (DRA extended-resource mapping) and set resources.gpuType"),
                ));
            } else {
                out.push(nodes_check.fail(
                    format!("no node has allocatable {GPU} (of {} node(s))", nodes.len()),
                    "install the AMD GPU Operator or device plugin (ROCm/k8s-device-plugin) on your GPU nodes, and check `kubectl describe node` shows amd.com/gpu",
                ));
            }
            match pods {
                Some(Err(e)) => {
                    out.push(free_check.unreadable("listing pods to count GPUs in use", e))
                }
                _ if capacity.is_empty() => out.push(free_check.skip("no GPU nodes")),
                _ => {
                    let details: Vec<String> = capacity
                        .iter()
                        .map(|c| {
                            let note = if c.schedulable {
                                ""
                            } else {
                                " (cordoned or NotReady)"
                            };
                            format!(
                                "{}: {}/{} {} free{note}",
                                c.node,
                                c.free(),
                                c.allocatable,
                                c.resource
                            )
                        })
                        .collect();
                    let free: i64 = capacity
                        .iter()
                        .filter(|c| c.schedulable)
                        .map(NodeGpus::free)
                        .sum();
                    out.push(if free > 0 {
                        free_check
                            .pass(format!("{free} GPU(s) free on schedulable nodes"))
                            .details(details)
                    } else {
                        free_check
                            .warn(
                                "every GPU is in use (or on an unschedulable node)",
                                "new worker pods will stay Pending until GPUs free up",
                            )
                            .details(details)
                    });
                }
            }
            match &f.spec {
                Some(spec) => {
                    let (ok, lines) = fit(spec, &capacity);
                    out.push(if ok {
                        fit_check.pass(format!("{} fits the free GPUs now", spec.name)).details(lines)
                    } else {
                        fit_check
                            .fail(format!("{} does not fit the free GPUs now", spec.name), "reduce replicas, GPUs per pod or nodes per group, or free/add GPU nodes")
                            .details(lines)
                    });
                }
                None => out.push(fit_check.skip("pass --for FILE to check a spec")),
            }
        }
        (Some(Err(e)), _) => {
            out.push(nodes_check.unreadable("listing nodes", e));
            out.push(free_check.skip("needs the node list"));
            out.push(fit_check.skip("needs the node list"));
        }
        (None, _) => {
            out.push(nodes_check.skip("not checked"));
            out.push(free_check.skip("not checked"));
            out.push(fit_check.skip("not checked"));
        }
    }
}

/// INF401, INF402.
fn permissions(f: &Facts, out: &mut Vec<Check>) {
    out.push(access_check(
        check("INF401", "permissions", "init-permissions"),
        "`kubectl infera init`",
        &f.init_access,
    ));
    out.push(access_check(
        check("INF402", "permissions", "deploy-permissions"),
        &format!("`kubectl infera deploy -n {}`", f.namespace),
        &f.deploy_access,
    ));
}

/// INF501.
fn storage(f: &Facts, out: &mut Vec<Check>) {
    let storage = check("INF501", "storage", "default-storageclass");
    out.push(match &f.default_storage_classes {
        Some(Ok(names)) if names.len() == 1 => storage.pass(format!("default StorageClass {}", names[0])),
        Some(Ok(names)) if names.len() > 1 => storage.warn(
            format!("{} default StorageClasses: {}", names.len(), names.join(", ")),
            "mark exactly one as default (storageclass.kubernetes.io/is-default-class)",
        ),
        Some(Ok(_)) => storage.warn(
            "no default StorageClass: the managed NATS (nats.deploy: true) cannot get its volume",
            "mark a StorageClass as default, or set nats.deploy: false and point nats.url at your NATS",
        ),
        Some(Err(e)) => storage.unreadable("listing StorageClasses", e),
        None => storage.skip("not checked"),
    });
}

/// Overall result: no failing check.
pub fn success(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.severity != Severity::Fail)
}

#[cfg(test)]
mod tests;
