//! Identities the children run as: a ServiceAccount with a namespaced Role. Discovery lets pods
//! list each other through the Kubernetes API.

use k8s_openapi::api::{
    core::v1::ServiceAccount,
    rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject},
};

use super::{Child, Context, meta::object_meta};
use crate::{naming::Component, types::InferaDeployment};

/// ServiceAccount, Role and RoleBinding for `discoveryBackend: kubernetes`, as upstream's
/// (`builders.go:652-684`): the router lists and watches the deployment's pods
/// (`infera/common/discovery_k8s.py:95, 173`), each worker patches its own pod's annotation
/// `infera.amd.com/worker-info` (`infera/common/registration_k8s.py:68-79`), and the router's
/// scaling API reads and patches its own InferaDeployment (`infera/server/scaling.py:46`), only
/// this one (`resourceNames`). Nothing in the images reads EndpointSlices.
pub fn discovery(cx: &Context<'_>) -> [Child; 3] {
    let rules = vec![
        rule("", &["pods"], &["get", "list", "watch", "patch"], None),
        rule(
            &<InferaDeployment as kube::Resource>::group(&()),
            &["inferadeployments"],
            &["get", "patch"],
            Some(&cx.deployment.name),
        ),
    ];
    identity(cx, Component::Discovery, rules, Some(true))
}

/// `verbs` on `resources` of one API group, on the object `name` only if given.
fn rule(group: &str, resources: &[&str], verbs: &[&str], name: Option<&str>) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.into()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        resource_names: name.map(|n| vec![n.to_string()]),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    }
}

/// A ServiceAccount, a Role with `rules` and the RoleBinding between them, all named after
/// `component`; `automount` sets the ServiceAccount's `automountServiceAccountToken`.
pub fn identity(
    cx: &Context<'_>,
    component: Component<'_>,
    rules: Vec<PolicyRule>,
    automount: Option<bool>,
) -> [Child; 3] {
    let d = cx.deployment;
    let name = component.object_name(&d.name);
    let meta = || object_meta(d, component, name.clone());
    [
        Child::ServiceAccount(ServiceAccount {
            metadata: meta(),
            automount_service_account_token: automount,
            ..Default::default()
        }),
        Child::Role(Role {
            metadata: meta(),
            rules: Some(rules),
        }),
        Child::RoleBinding(RoleBinding {
            metadata: meta(),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "Role".into(),
                name: name.clone(),
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".into(),
                name: name.clone(),
                namespace: Some(d.namespace.clone()),
                ..Default::default()
            }]),
        }),
    ]
}

/// `get`, `list` and `watch` on `resources` of one API group.
pub fn read_rule(group: &str, resources: &[&str]) -> PolicyRule {
    rule(group, resources, &["get", "list", "watch"], None)
}
