//! INF104: no other controller reconciles InferaDeployments. Upstream Infera's operator (its Helm
//! chart `rocm/infera-operator`, AMD-AGI/Infera `deploy/operator/helm/infera-operator`) is one:
//! two operators of the same objects would fight over every child.
//!
//! A controller of InferaDeployments is a Deployment whose ServiceAccount a ClusterRoleBinding
//! grants a ClusterRole that may `patch` or `update` `inferadeployments/status` by name — as
//! upstream's chart does (`templates/rbac.yaml`, the `inferadeployments/status` rule) and as ours
//! does. Wildcard rules (`cluster-admin`) are not counted: a controller of this API names it.
//! Our own operator (ServiceAccount `infera-system/infera-operator`) is not another controller.

use infera_core::InferaDeployment;
use k8s_openapi::api::{
    apps::v1::Deployment,
    rbac::v1::{ClusterRole, ClusterRoleBinding},
};
use kube::Resource;
use serde::Serialize;

use super::{Check, Facts, check};
use crate::{bundle, installed::HelmRelease};

/// A Deployment that reconciles InferaDeployments besides our operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherController {
    pub namespace: String,
    pub name: String,
    /// `spec.replicas` (1 when unset).
    pub replicas: i32,
    pub images: Vec<String>,
    /// The ClusterRole that lets it write InferaDeployment status.
    pub cluster_role: String,
    /// The Helm release that installed it (`meta.helm.sh/release-name`), if one did.
    pub helm_release: Option<String>,
}

impl OtherController {
    /// `Deployment ns/name (N replicas, image …, Helm release …)`.
    pub fn describe(&self) -> String {
        let helm = self
            .helm_release
            .as_ref()
            .map(|release| format!(", Helm release {release}"))
            .unwrap_or_default();
        format!(
            "Deployment {}/{} ({} replica(s), image {}, ClusterRole {}{helm})",
            self.namespace,
            self.name,
            self.replicas,
            self.images.join(", "),
            self.cluster_role
        )
    }

    /// What to run to stop it for good: uninstall its Helm release, or delete its Deployment.
    pub fn stop_command(&self) -> String {
        match &self.helm_release {
            Some(release) => format!("helm uninstall {release} -n {}", self.namespace),
            None => format!(
                "kubectl delete deployment {} -n {}",
                self.name, self.namespace
            ),
        }
    }
}

/// Whether a ClusterRole may write InferaDeployment status, naming it.
fn writes_status(role: &ClusterRole) -> bool {
    let group = InferaDeployment::group(&());
    role.rules.iter().flatten().any(|rule| {
        let named =
            |list: &Option<Vec<String>>, name: &str| list.iter().flatten().any(|item| item == name);
        named(&rule.api_groups, &group)
            && named(&rule.resources, "inferadeployments/status")
            && rule
                .verbs
                .iter()
                .any(|verb| verb == "patch" || verb == "update")
    })
}

/// The controllers of InferaDeployments among `deployments` other than ours, from the cluster's
/// ClusterRoles and ClusterRoleBindings.
pub fn other_controllers(
    roles: &[ClusterRole],
    bindings: &[ClusterRoleBinding],
    deployments: &[Deployment],
) -> Vec<OtherController> {
    let mut found = Vec::new();
    for binding in bindings {
        let role = &binding.role_ref.name;
        let grants = binding.role_ref.kind == "ClusterRole"
            && roles
                .iter()
                .any(|r| r.metadata.name.as_ref() == Some(role) && writes_status(r));
        if !grants {
            continue;
        }
        for subject in binding.subjects.iter().flatten() {
            let Some(namespace) = subject.namespace.as_deref() else {
                continue;
            };
            let ours = namespace == bundle::NAMESPACE && subject.name == bundle::OPERATOR;
            if subject.kind != "ServiceAccount" || ours {
                continue;
            }
            for deployment in deployments {
                let runs_as = deployment
                    .spec
                    .as_ref()
                    .and_then(|spec| spec.template.spec.as_ref())
                    .map(|pod| pod.service_account_name.as_deref().unwrap_or("default"));
                if deployment.metadata.namespace.as_deref() != Some(namespace)
                    || runs_as != Some(subject.name.as_str())
                {
                    continue;
                }
                let other = of(deployment, role);
                if !found.contains(&other) {
                    found.push(other);
                }
            }
        }
    }
    found
}

fn of(deployment: &Deployment, cluster_role: &str) -> OtherController {
    let pod = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.template.spec.as_ref());
    let containers = pod.map(|pod| pod.containers.as_slice()).unwrap_or_default();
    OtherController {
        namespace: deployment.metadata.namespace.clone().unwrap_or_default(),
        name: deployment.metadata.name.clone().unwrap_or_default(),
        replicas: deployment
            .spec
            .as_ref()
            .and_then(|s| s.replicas)
            .unwrap_or(1),
        images: containers.iter().filter_map(|c| c.image.clone()).collect(),
        cluster_role: cluster_role.into(),
        helm_release: HelmRelease::of(deployment).map(|release| release.name),
    }
}

/// What `init` and `doctor` say to do about running controllers.
pub fn steps(running: &[&OtherController]) -> String {
    let stops: Vec<String> = running.iter().map(|c| c.stop_command()).collect();
    format!(
        "two operators would fight over every InferaDeployment's children: stop it first ({}; the InferaDeployments, the CRD and the running pods stay), or let `kubectl infera init --take-over` scale it to 0 and take over its InferaDeployments (docs/migration.md)",
        stops.join("; ")
    )
}

/// INF104.
pub(super) fn check_others(f: &Facts) -> Check {
    let others = check("INF104", "infera", "other-controllers");
    match &f.other_controllers {
        Some(Ok(found)) => {
            let running: Vec<&OtherController> = found.iter().filter(|c| c.replicas > 0).collect();
            let details = found.iter().map(OtherController::describe).collect();
            if running.is_empty() {
                let message = if found.is_empty() {
                    "no other controller of InferaDeployments".to_string()
                } else {
                    format!("{} other controller(s), scaled to 0", found.len())
                };
                others.pass(message).details(details)
            } else {
                others
                    .fail(
                        format!(
                            "another controller reconciles InferaDeployments: {}",
                            running
                                .iter()
                                .map(|c| format!("{}/{}", c.namespace, c.name))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        steps(&running),
                    )
                    .details(details)
            }
        }
        Some(Err(e)) => others.unreadable(
            "reading ClusterRoles, ClusterRoleBindings and Deployments",
            e,
        ),
        None => others.skip("not checked"),
    }
}
