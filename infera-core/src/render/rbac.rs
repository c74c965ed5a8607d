//! The discovery identity: pods list each other through the Kubernetes API.

use k8s_openapi::api::{
    core::v1::ServiceAccount,
    rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject},
};

use super::{Child, Context, meta::object_meta};
use crate::naming::Component;

/// ServiceAccount, Role (read pods and endpointslices) and RoleBinding for `discoveryBackend: kubernetes`.
pub fn discovery(cx: &Context<'_>) -> [Child; 3] {
    let d = cx.deployment;
    let name = Component::Discovery.object_name(&d.name);
    let meta = || object_meta(d, Component::Discovery, name.clone());
    [
        Child::ServiceAccount(ServiceAccount {
            metadata: meta(),
            automount_service_account_token: Some(true),
            ..Default::default()
        }),
        Child::Role(Role {
            metadata: meta(),
            rules: Some(vec![
                read_rule("", "pods"),
                read_rule("discovery.k8s.io", "endpointslices"),
            ]),
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

/// `get`, `list` and `watch` on one resource.
pub fn read_rule(group: &str, resource: &str) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.into()]),
        resources: Some(vec![resource.into()]),
        verbs: vec!["get".into(), "list".into(), "watch".into()],
        ..Default::default()
    }
}
