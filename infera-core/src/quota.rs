//! Whether a whole graph fits the namespace's ResourceQuotas.
//!
//! The API server checks a quota per object, at admission: a Deployment is admitted whatever its
//! pods will request (the pods are charged when its ReplicaSet creates them, later), and a dry run
//! of each child passes although together they exceed the quota. A graph whose pods cannot all be
//! created starts half — prefill pods holding GPUs with no decode to pair with. So before writing
//! a new or grown graph the operator adds up what the whole graph charges to each quota
//! ([`Usage::of_children`]) and refuses the change when a quota falls short ([`shortfalls`]).
//!
//! What a pod is charged follows the quota admission plugin of Kubernetes
//! (`pkg/quota/v1/evaluator/core/pods.go`: `PodUsageFunc`, `podComputeUsageHelper`): `pods` and
//! `count/pods` one each; `requests.cpu` (alias `cpu`), `requests.memory` (alias `memory`),
//! `limits.cpu`, `limits.memory`, `requests.<extended resource>` such as
//! `requests.amd.com/gpu`, summed over the containers, or the largest init container's if that
//! is larger. A container without a request is charged its limit (the API server defaults
//! requests to limits). Objects are charged `count/<resource>.<group>` (`count/<resource>` for the
//! core group), and Services and PersistentVolumeClaims also `services` and
//! `persistentvolumeclaims`. What controllers derive from the children (ReplicaSets, the NATS
//! volume claims) and the model download Job's short-lived pod are left to the API server.
//! Quotas with scopes or a scope selector, whose matching depends on pod state and priority
//! classes, are not evaluated here; the API server still enforces them per object.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Container, PodSpec, PodTemplateSpec, ResourceQuota},
    apimachinery::pkg::api::resource::Quantity,
};

use crate::render::{Child, ChildKind};

/// Amounts charged to quotas, by quota resource name (`requests.cpu`, `pods`, …), as numbers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage(pub BTreeMap<String, f64>);

impl Usage {
    fn add(&mut self, name: impl Into<String>, amount: f64) {
        *self.0.entry(name.into()).or_default() += amount;
    }

    fn add_all(&mut self, other: &Usage, times: f64) {
        for (name, amount) in &other.0 {
            self.add(name.clone(), amount * times);
        }
    }

    /// What one running pod of `spec` is charged.
    pub fn of_pod(spec: &PodSpec) -> Self {
        let mut usage = Usage::default();
        usage.add("pods", 1.0);
        usage.add("count/pods", 1.0);
        let (mut requests, mut limits) = (BTreeMap::new(), BTreeMap::new());
        for container in &spec.containers {
            for (name, amount) in charged(container, Bound::Requests) {
                *requests.entry(name).or_default() += amount;
            }
            for (name, amount) in charged(container, Bound::Limits) {
                *limits.entry(name).or_default() += amount;
            }
        }
        for init in spec.init_containers.iter().flatten() {
            for (bound, totals) in [
                (Bound::Requests, &mut requests),
                (Bound::Limits, &mut limits),
            ] {
                for (name, amount) in charged(init, bound) {
                    let total: &mut f64 = totals.entry(name).or_default();
                    *total = total.max(amount);
                }
            }
        }
        for (bound, totals) in [(Bound::Requests, &requests), (Bound::Limits, &limits)] {
            for (resource, amount) in totals {
                for name in quota_names(bound, resource) {
                    usage.add(name, *amount);
                }
            }
        }
        usage
    }

    /// Charges one object of `kind`.
    pub fn add_object(&mut self, kind: ChildKind) {
        for name in count_names(kind) {
            self.add(name, 1.0);
        }
    }

    /// Charges one running pod of `spec`.
    pub fn add_pod(&mut self, spec: &PodSpec) {
        self.add_all(&Usage::of_pod(spec), 1.0);
    }

    /// What `children`, and the pods their workloads run at their replica counts, are charged.
    pub fn of_children(children: &[Child]) -> Self {
        let mut usage = Usage::default();
        for child in children {
            usage.add_object(child.kind());
            for (template, count) in pod_templates(child) {
                if let Some(spec) = &template.spec {
                    usage.add_all(&Usage::of_pod(spec), count);
                }
            }
        }
        usage
    }
}

/// A quota that cannot take a change: which one, the resource, and the figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Shortfall {
    /// The ResourceQuota's name.
    pub quota: String,
    /// The quota resource name, e.g. `requests.amd.com/gpu`.
    pub resource: String,
    /// What the graph needs in all.
    pub needed: f64,
    /// What the quota leaves for the graph: its hard limit, less what everything else uses.
    pub available: f64,
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ResourceQuota {}: {} — the graph needs {} in all, {} is left for it; \
             raise the quota or lower replicas or resources",
            self.quota,
            self.resource,
            figure(self.needed),
            figure(self.available.max(0.0))
        )
    }
}

/// The quotas among `quotas` that cannot take the graph growing from `current` (what its live
/// children and pods are charged now) to `wanted`. A resource the graph does not grow in is never
/// a shortfall, even over a quota lowered since: refusing the change would not help.
pub fn shortfalls<'a>(
    quotas: impl IntoIterator<Item = &'a ResourceQuota>,
    current: &Usage,
    wanted: &Usage,
) -> Vec<Shortfall> {
    let mut short = Vec::new();
    for quota in quotas {
        let spec = quota.spec.as_ref();
        let scoped = spec.is_some_and(|s| {
            s.scopes.as_ref().is_some_and(|scopes| !scopes.is_empty()) || s.scope_selector.is_some()
        });
        if scoped {
            continue;
        }
        let status = quota.status.as_ref();
        let used = status.and_then(|s| s.used.as_ref());
        for (resource, hard) in status.and_then(|s| s.hard.as_ref()).into_iter().flatten() {
            let needed = wanted.0.get(resource).copied().unwrap_or_default();
            let ours = current.0.get(resource).copied().unwrap_or_default();
            let (Some(hard), used) = (
                amount(hard),
                used.and_then(|u| u.get(resource))
                    .and_then(amount)
                    .unwrap_or_default(),
            ) else {
                continue;
            };
            let available = hard - (used - ours);
            // A thousandth of a unit absorbs rounding in the sums of milli-quantities.
            if needed > ours && needed > available + 1e-3 {
                short.push(Shortfall {
                    quota: quota.metadata.name.clone().unwrap_or_default(),
                    resource: resource.clone(),
                    needed,
                    available,
                });
            }
        }
    }
    short
}

#[derive(Clone, Copy)]
enum Bound {
    Requests,
    Limits,
}

/// A container's requests (each defaulting to its limit) or limits, as numbers.
fn charged(container: &Container, bound: Bound) -> BTreeMap<String, f64> {
    let resources = container.resources.as_ref();
    let limits = resources.and_then(|r| r.limits.as_ref());
    let requests = resources.and_then(|r| r.requests.as_ref());
    let list = match bound {
        Bound::Limits => limits.cloned().unwrap_or_default(),
        Bound::Requests => {
            let mut list = limits.cloned().unwrap_or_default();
            list.extend(requests.cloned().unwrap_or_default());
            list
        }
    };
    list.iter()
        .filter_map(|(name, quantity)| Some((name.clone(), amount(quantity)?)))
        .collect()
}

/// The quota names a container resource is charged under (`podComputeUsageHelper`).
fn quota_names(bound: Bound, resource: &str) -> Vec<String> {
    match (bound, resource) {
        (Bound::Requests, "cpu" | "memory" | "ephemeral-storage") => {
            vec![resource.to_string(), format!("requests.{resource}")]
        }
        (Bound::Limits, "cpu" | "memory" | "ephemeral-storage") => {
            vec![format!("limits.{resource}")]
        }
        (Bound::Requests, extended) => vec![format!("requests.{extended}")],
        (Bound::Limits, _) => Vec::new(),
    }
}

/// The object-count quota names of one object of `kind`.
fn count_names(kind: ChildKind) -> Vec<String> {
    let resource = kind.api_resource();
    let mut names = vec![if resource.group.is_empty() {
        format!("count/{}", resource.plural)
    } else {
        format!("count/{}.{}", resource.plural, resource.group)
    }];
    // The core kinds' short names (`pkg/quota/v1/evaluator/core`: services,
    // persistentvolumeclaims, …).
    match kind {
        ChildKind::Service => names.push("services".into()),
        ChildKind::PersistentVolumeClaim => names.push("persistentvolumeclaims".into()),
        _ => {}
    }
    names
}

/// The pod templates of a workload child and how many pods each runs.
fn pod_templates(child: &Child) -> Vec<(PodTemplateSpec, f64)> {
    match child {
        Child::Deployment(deployment) => deployment
            .spec
            .iter()
            .map(|spec| (spec.template.clone(), f64::from(spec.replicas.unwrap_or(1))))
            .collect(),
        Child::StatefulSet(set) => set
            .spec
            .iter()
            .map(|spec| (spec.template.clone(), f64::from(spec.replicas.unwrap_or(1))))
            .collect(),
        Child::LeaderWorkerSet(lws) => {
            let groups = f64::from(lws.spec.replicas.unwrap_or(1));
            let template = &lws.spec.leader_worker_template;
            let size = f64::from(template.size.unwrap_or(1));
            let parse = |map: &BTreeMap<String, serde_json::Value>| {
                serde_json::to_value(map)
                    .and_then(serde_json::from_value::<PodTemplateSpec>)
                    .ok()
            };
            let worker = parse(&template.worker_template);
            match template.leader_template.as_ref().and_then(parse) {
                // A group is its leader and size − 1 workers.
                Some(leader) => [(Some(leader), groups), (worker, groups * (size - 1.0))]
                    .into_iter()
                    .filter_map(|(template, count)| Some((template?, count)))
                    .collect(),
                None => worker.map(|w| vec![(w, groups * size)]).unwrap_or_default(),
            }
        }
        _ => Vec::new(),
    }
}

/// The value of a quantity (`500m` = 0.5, `64Gi` = 68719476736), or `None` when it is not one.
pub fn amount(quantity: &Quantity) -> Option<f64> {
    let text = quantity.0.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(end);
    let number: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent => 10f64.powi(exponent.strip_prefix(['e', 'E'])?.parse().ok()?),
    };
    Some(number * scale)
}

/// An amount as a person reads it: whole numbers plain, memory in Gi, the rest with 3 decimals.
fn figure(amount: f64) -> String {
    const GI: f64 = 1024.0 * 1024.0 * 1024.0;
    if amount >= GI {
        format!("{}Gi", (amount / GI * 100.0).round() / 100.0)
    } else if amount.fract().abs() < 1e-9 {
        format!("{amount:.0}")
    } else {
        format!("{}", (amount * 1000.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quantity(text: &str) -> Quantity {
        Quantity(text.into())
    }

    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        let read = |text: &str| amount(&quantity(text));
        assert_eq!(read("500m"), Some(0.5));
        assert_eq!(read("8"), Some(8.0));
        assert_eq!(read("64Gi"), Some(64.0 * 1024f64.powi(3)));
        assert_eq!(read("1.5G"), Some(1.5e9));
        assert_eq!(read("2e3"), Some(2000.0));
        assert_eq!(read("lots"), None);
        assert_eq!(read("1Qi"), None);
    }

    fn container(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        let list = |pairs: &[(&str, &str)]| {
            (!pairs.is_empty()).then(|| {
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), quantity(v)))
                    .collect()
            })
        };
        Container {
            resources: Some(k8s_openapi::api::core::v1::ResourceRequirements {
                requests: list(requests),
                limits: list(limits),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_pod_is_charged_its_containers_sum_or_its_largest_init_container() {
        let spec = PodSpec {
            containers: vec![
                container(&[("cpu", "2"), ("memory", "1Gi")], &[("amd.com/gpu", "8")]),
                container(&[("cpu", "500m")], &[("cpu", "1")]),
            ],
            init_containers: Some(vec![container(&[("cpu", "4")], &[])]),
            ..Default::default()
        };
        let usage = Usage::of_pod(&spec).0;
        assert_eq!(usage["pods"], 1.0);
        assert_eq!(
            usage["requests.cpu"], 4.0,
            "the init container's 4 beats 2.5"
        );
        assert_eq!(usage["cpu"], 4.0);
        assert_eq!(usage["limits.cpu"], 1.0);
        assert_eq!(usage["requests.memory"], 1024f64.powi(3));
        assert_eq!(
            usage["requests.amd.com/gpu"], 8.0,
            "a GPU limit is its request"
        );
        assert!(!usage.contains_key("limits.amd.com/gpu"));
    }

    fn quota(name: &str, hard: &[(&str, &str)], used: &[(&str, &str)]) -> ResourceQuota {
        let list = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), quantity(v)))
                    .collect(),
            )
        };
        ResourceQuota {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(Default::default()),
            status: Some(k8s_openapi::api::core::v1::ResourceQuotaStatus {
                hard: list(hard),
                used: list(used),
            }),
        }
    }

    fn usage(pairs: &[(&str, f64)]) -> Usage {
        Usage(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    #[test]
    fn a_graph_that_outgrows_what_others_leave_is_short_and_says_by_how_much() {
        let gpus = quota(
            "gpus",
            &[("requests.amd.com/gpu", "16")],
            &[("requests.amd.com/gpu", "12")],
        );
        // 4 of the 12 used are ours; the others use 8, leaving 8 for us.
        let current = usage(&[("requests.amd.com/gpu", 4.0)]);
        assert_eq!(
            shortfalls([&gpus], &current, &usage(&[("requests.amd.com/gpu", 8.0)])),
            []
        );
        let short = shortfalls([&gpus], &current, &usage(&[("requests.amd.com/gpu", 10.0)]));
        assert_eq!(
            short.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "ResourceQuota gpus: requests.amd.com/gpu — the graph needs 10 in all, 8 is left for it; \
              raise the quota or lower replicas or resources"
            ]
        );
    }

    #[test]
    fn a_graph_that_does_not_grow_is_never_short_and_scoped_quotas_are_left_to_the_api_server() {
        let over = quota("pods", &[("pods", "2")], &[("pods", "5")]);
        let five = usage(&[("pods", 5.0)]);
        assert_eq!(shortfalls([&over], &five, &five), []);
        assert_eq!(shortfalls([&over], &five, &usage(&[("pods", 3.0)])), []);
        let mut scoped = over;
        scoped.spec = Some(k8s_openapi::api::core::v1::ResourceQuotaSpec {
            scopes: Some(vec!["BestEffort".into()]),
            ..Default::default()
        });
        assert_eq!(
            shortfalls([&scoped], &Usage::default(), &usage(&[("pods", 9.0)])),
            []
        );
    }

    #[test]
    fn figures_read_plainly() {
        assert_eq!(figure(8.0), "8");
        assert_eq!(figure(2.5), "2.5");
        assert_eq!(figure(64.0 * 1024f64.powi(3)), "64Gi");
    }

    #[test]
    fn a_graph_is_charged_every_pod_of_every_pool_and_every_object() {
        let yaml = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: demo, namespace: ns, uid: u}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server: {componentType: server, replicas: 1, args: [--router-tokenizer-path, m]}
    prefill: {componentType: worker, role: prefill, replicas: 2, resources: {gpu: 1}}
    decode: {componentType: worker, role: decode, replicas: 1, numberOfNodes: 2, resources: {gpu: 4}}
"#;
        let deployment = crate::yaml::parse_deployments(yaml)
            .unwrap_or_default()
            .remove(0);
        let valid = crate::validate(&deployment).unwrap_or_else(|e| panic!("{e}"));
        let children = crate::render::render_for(&valid, crate::render::Apis::default());
        let usage = Usage::of_children(&children).0;
        // 2 prefill pods of 1 GPU, one decode group of 2 pods of 4.
        assert_eq!(usage["requests.amd.com/gpu"], 10.0);
        let deployments = children
            .iter()
            .filter(|c| c.kind() == ChildKind::Deployment)
            .count();
        assert_eq!(usage["count/deployments.apps"], deployments as f64);
        assert_eq!(
            usage["count/leaderworkersets.leaderworkerset.x-k8s.io"],
            1.0
        );
    }
}
