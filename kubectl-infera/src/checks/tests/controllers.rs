use k8s_openapi::api::{
    apps::v1::Deployment,
    rbac::v1::{ClusterRole, ClusterRoleBinding},
};
use serde_json::json;

use super::{by_id, healthy};
use crate::checks::{
    Severity,
    controllers::{OtherController, other_controllers},
    evaluate,
};

fn role(name: &str, resources: &[&str], verbs: &[&str]) -> ClusterRole {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "patch"]},
            {"apiGroups": ["infera.amd.com"], "resources": resources, "verbs": verbs},
        ],
    }))
    .unwrap_or_default()
}

fn binding(role: &str, namespace: &str, account: &str) -> ClusterRoleBinding {
    serde_json::from_value(json!({
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }))
    .unwrap_or_default()
}

/// A Deployment as upstream Infera's Helm chart renders it (release `infera-operator` in
/// `infera`, AMD-AGI/Infera `deploy/operator/helm/infera-operator/templates/deployment.yaml`).
fn upstream(replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "infera-operator", "namespace": "infera",
            "annotations": {"meta.helm.sh/release-name": "infera-operator"}},
        "spec": {"replicas": replicas, "selector": {}, "template": {"spec": {
            "serviceAccountName": "infera-operator",
            "containers": [{"name": "manager", "image": "docker.io/rocm/infera:operator-v0.1.0",
                "command": ["/manager"]}],
        }}},
    }))
    .unwrap_or_default()
}

/// Ours, and another Deployment in upstream's namespace running as another account.
fn bystanders() -> Vec<Deployment> {
    let ours = json!({
        "metadata": {"name": "infera-operator", "namespace": "infera-system"},
        "spec": {"selector": {}, "template": {"spec": {"serviceAccountName": "infera-operator",
            "containers": [{"name": "operator", "image": "ours"}]}}},
    });
    let web = json!({
        "metadata": {"name": "web", "namespace": "infera"},
        "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    });
    [ours, web]
        .into_iter()
        .map(|d| serde_json::from_value(d).unwrap_or_default())
        .collect()
}

#[test]
fn upstreams_operator_is_found_by_the_status_it_may_write_and_ours_is_not() {
    let roles = [
        role(
            "infera-operator",
            &["inferadeployments/status"],
            &["get", "patch", "update"],
        ),
        role(
            "infera-system:infera-operator",
            &["inferadeployments/status"],
            &["patch"],
        ),
        // Reads status only, or grants by wildcard: not a controller of InferaDeployments.
        role("viewer", &["inferadeployments/status"], &["get"]),
        role("admin", &["*"], &["*"]),
    ];
    let bindings = [
        binding("infera-operator", "infera", "infera-operator"),
        binding(
            "infera-system:infera-operator",
            "infera-system",
            "infera-operator",
        ),
        binding("viewer", "infera", "default"),
        binding("admin", "infera", "default"),
    ];
    let mut deployments = bystanders();
    deployments.push(upstream(1));
    assert_eq!(
        other_controllers(&roles, &bindings, &deployments),
        [OtherController {
            namespace: "infera".into(),
            name: "infera-operator".into(),
            replicas: 1,
            images: vec!["docker.io/rocm/infera:operator-v0.1.0".into()],
            cluster_role: "infera-operator".into(),
            helm_release: Some("infera-operator".into()),
        }]
    );
    assert!(other_controllers(&roles, &bindings, &bystanders()).is_empty());
}

#[test]
fn a_running_controller_fails_doctor_with_the_steps_and_one_scaled_to_zero_passes() {
    let found = |replicas| OtherController {
        namespace: "infera".into(),
        name: "infera-operator".into(),
        replicas,
        images: vec!["docker.io/rocm/infera:operator-v0.1.0".into()],
        cluster_role: "infera-operator".into(),
        helm_release: Some("infera-operator".into()),
    };
    let facts = crate::checks::Facts {
        other_controllers: Some(Ok(vec![found(1)])),
        ..healthy()
    };
    let checks = evaluate(&facts);
    let check = by_id(&checks, "INF104");
    assert_eq!(check.severity, Severity::Fail);
    assert_eq!(
        check.message,
        "another controller reconciles InferaDeployments: infera/infera-operator"
    );
    assert_eq!(
        check.hint.as_deref(),
        Some(
            "two operators would fight over every InferaDeployment's children: stop it first (helm uninstall infera-operator -n infera; the InferaDeployments, the CRD and the running pods stay), or let `kubectl infera init --take-over` scale it to 0 and take over its InferaDeployments (docs/migration.md)"
        )
    );
    assert_eq!(
        check.details,
        [
            "Deployment infera/infera-operator (1 replica(s), image docker.io/rocm/infera:operator-v0.1.0, ClusterRole infera-operator, Helm release infera-operator)"
        ]
    );
    let facts = crate::checks::Facts {
        other_controllers: Some(Ok(vec![found(0)])),
        ..healthy()
    };
    let checks = evaluate(&facts);
    let check = by_id(&checks, "INF104");
    assert_eq!(
        (check.severity, check.message.as_str()),
        (Severity::Pass, "1 other controller(s), scaled to 0")
    );
}
