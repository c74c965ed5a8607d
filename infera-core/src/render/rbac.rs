//! Identities the children run as: a ServiceAccount with a namespaced Role. Discovery lets pods
//! list each other through the Kubernetes API.

use k8s_openapi::api::{
    core::v1::ServiceAccount,
    rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject},
};

use super::{Child, Context, meta::object_meta};
use crate::naming::Component;

/// ServiceAccount, Role (read pods and endpointslices) and RoleBinding for `discoveryBackend: kubernetes`.
pub fn discovery(cx: &Context<'_>) -> [Child; 3] {
    let rules = vec![
        read_rule("", &["pods"]),
        read_rule("discovery.k8s.io", &["endpointslices"]),
    ];
    identity(cx, Component::Discovery, rules, Some(true))
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
    PolicyRule {
        api_groups: Some(vec![group.into()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: vec!["get".into(), "list".into(), "watch".into()],
        ..Default::default()
    }
}
