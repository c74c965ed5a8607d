use k8s_openapi::api::core::v1::Pod;

use super::targets;
use crate::load::Role;

fn pod(name: &str, labels: &str, ready: bool, containers: &str) -> Pod {
    let ready = if ready { "True" } else { "False" };
    serde_saphyr::from_str(&format!(
        "metadata: {{name: {name}, labels: {labels}}}\n\
         spec: {{containers: {containers}}}\n\
         status: {{phase: Running, conditions: [{{type: Ready, status: \"{ready}\"}}]}}\n"
    ))
    .expect("a pod")
}

#[test]
fn the_ready_routers_and_engines_are_read_on_their_engine_port_leaders_only() {
    let pods = [
        pod(
            "demo-server-1",
            "{app.kubernetes.io/component: server, infera.amd.com/service: server}",
            true,
            "[{name: frontend, ports: [{name: frontend, containerPort: 9002}]}, {name: engine, ports: [{containerPort: 9000}, {name: http, containerPort: 8000}]}]",
        ),
        pod(
            "demo-decode-1",
            "{app.kubernetes.io/component: worker, infera.amd.com/service: decode}",
            true,
            "[{name: sidecar, ports: [{containerPort: 1}]}, {name: main, ports: [{containerPort: 30000}]}]",
        ),
        pod(
            "demo-decode-2",
            "{app.kubernetes.io/component: worker, infera.amd.com/service: decode}",
            false,
            "[{name: main, ports: [{containerPort: 30000}]}]",
        ),
        pod(
            "group-worker-0-1",
            "{app.kubernetes.io/component: worker, infera.amd.com/service: worker, leaderworkerset.sigs.k8s.io/worker-index: \"1\"}",
            true,
            "[{name: main, ports: [{containerPort: 30000}]}]",
        ),
        pod(
            "demo-nats-0",
            "{app.kubernetes.io/component: nats, infera.amd.com/service: nats}",
            true,
            "[{name: nats, ports: [{containerPort: 4222}]}]",
        ),
    ];
    let found: Vec<(String, Role, String, i32)> = targets(&pods)
        .into_iter()
        .map(|t| (t.pool, t.role, t.pod, t.port))
        .collect();
    assert_eq!(
        found,
        [
            ("server".into(), Role::Router, "demo-server-1".into(), 8000),
            ("decode".into(), Role::Engine, "demo-decode-1".into(), 30000),
        ]
    );
}
