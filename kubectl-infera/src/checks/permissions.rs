//! INF401, INF402, INF403: what `init`, `deploy` and the day-2 reads need, and SelfSubjectAccessReview
//! answers for each.

use super::{Check, Facts, Read, check};

/// One permission a command needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub verb: &'static str,
    pub group: &'static str,
    /// The resource, with its subresource after a slash (`pods/log`).
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
    let cluster = [
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("", "namespaces"),
    ];
    let namespaced = [
        ("", "serviceaccounts"),
        ("", "services"),
        ("apps", "deployments"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
    ];
    let mut needs = vec![];
    for verb in ["get", "create", "patch"] {
        let need = |(group, resource), namespace: Option<&str>| Need {
            verb,
            group,
            resource,
            namespace: namespace.map(str::to_string),
        };
        needs.extend(cluster.into_iter().map(|r| need(r, None)));
        needs.extend(
            namespaced
                .into_iter()
                .map(|r| need(r, Some(crate::bundle::NAMESPACE))),
        );
    }
    // Looking for another controller of InferaDeployments (INF104) before installing.
    let others = [
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("apps", "deployments"),
    ];
    needs.extend(others.into_iter().map(|(group, resource)| Need {
        verb: "list",
        group,
        resource,
        namespace: None,
    }));
    needs
}

/// What `deploy` (and `status`) need in a namespace.
pub fn deploy_needs(namespace: &str) -> Vec<Need> {
    [
        ("create", "infera.amd.com", "inferadeployments"),
        ("patch", "infera.amd.com", "inferadeployments"),
        ("get", "infera.amd.com", "inferadeployments"),
        ("list", "", "pods"),
        ("list", "", "events"),
    ]
    .into_iter()
    .map(|(verb, group, resource)| Need {
        verb,
        group,
        resource,
        namespace: Some(namespace.to_string()),
    })
    .collect()
}

/// What `logs`, `report` and `status --load` need in a namespace beyond `status`: the pods'
/// logs, their `/metrics` through the API server, and a watch of the pods (`logs -f`).
pub fn day2_needs(namespace: &str) -> Vec<Need> {
    [
        ("get", "pods/log"),
        ("get", "pods/proxy"),
        ("watch", "pods"),
    ]
    .into_iter()
    .map(|(verb, resource)| Need {
        verb,
        group: "",
        resource,
        namespace: Some(namespace.to_string()),
    })
    .collect()
}

/// INF401, INF402, INF403.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    out.push(access_check(
        check("INF401", "permissions", "init-permissions"),
        "`kubectl infera init`",
        &f.init_access,
        true,
    ));
    out.push(access_check(
        check("INF402", "permissions", "deploy-permissions"),
        &format!("`kubectl infera deploy -n {}`", f.namespace),
        &f.deploy_access,
        true,
    ));
    // Deploying works without them: missing ones are a warning.
    if !f.day2_access.is_empty() {
        out.push(access_check(
            check("INF403", "permissions", "day2-permissions"),
            "`kubectl infera logs`, `report` and `status --load`",
            &f.day2_access,
            false,
        ));
    }
}

/// Passes when every need is allowed; fails (warns, when not `required`) listing each one that is
/// not. Skipped when nothing was asked (init's needs after Infera is installed).
fn access_check(c: Check, what: &str, access: &[(Need, Read<bool>)], required: bool) -> Check {
    if access.is_empty() {
        return c.skip("not needed: Infera is installed (use --pre to check them anyway)");
    }
    let errors: Vec<String> = access
        .iter()
        .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
        .collect();
    if let Some(first) = errors.first()
        && errors.len() == access.len()
    {
        return c.unreadable("SelfSubjectAccessReview", first);
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
        let message = format!(
            "{what} needs {} permission(s) you do not have",
            missing.len()
        );
        let hint = "ask a cluster admin to grant them (a Role/ClusterRole with these verbs), or run as a user who has them";
        let c = if required {
            c.fail(message, hint)
        } else {
            c.warn(message, hint)
        };
        c.details(
            missing
                .into_iter()
                .map(|m| format!("missing: {m}"))
                .collect(),
        )
    }
}
