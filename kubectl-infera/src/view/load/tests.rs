use k8s_openapi::api::core::v1::Pod;

use super::targets;
use infera_core::load::Role;

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

/// A reading of `pods`, each `(name, tokens generated so far)` of a decode engine, or why it did
/// not answer.
fn reading(pods: &[(&str, Result<f64, &str>)]) -> super::Reading {
    super::Reading {
        targets: pods
            .iter()
            .map(|(pod, _)| super::Target {
                pool: "decode".into(),
                role: Role::Engine,
                pod: (*pod).into(),
                port: 30000,
            })
            .collect(),
        samples: pods
            .iter()
            .map(|(_, tokens)| match tokens {
                Ok(tokens) => Ok(infera_core::load::parse(&format!(
                    "sglang:num_running_reqs 1\nsglang:generation_tokens_total {tokens}\n"
                ))),
                Err(why) => Err((*why).into()),
            })
            .collect(),
    }
}

#[test]
fn rates_are_over_the_pods_both_readings_have_matched_by_name() {
    use infera_core::BackendFramework;
    let earlier = reading(&[("d-old", Ok(500.0)), ("d-1", Ok(100.0))]);
    // d-old is gone, d-new came: only d-1 has two readings; d-new counts in the gauges.
    let later = reading(&[("d-new", Ok(40.0)), ("d-1", Ok(400.0))]);
    let section = super::load_section(BackendFramework::Sglang, Some(&earlier), &later, Some(10.0));
    assert_eq!(section.window_seconds, Some(10.0));
    let decode = &section.pools[0];
    assert_eq!((decode.pods, decode.answered), (2, 2));
    assert_eq!(decode.running, Some(2.0));
    assert_eq!(decode.tokens_per_second, Some(30.0));
    // The first reading of a watch has no window and no rates.
    let first = super::load_section(BackendFramework::Sglang, None, &earlier, Some(10.0));
    assert_eq!(first.window_seconds, None);
    assert_eq!(first.pools[0].tokens_per_second, None);
    // A pod that does not answer now is named, whatever it said before.
    let later = reading(&[("d-1", Err("d-1: no answer within 3s"))]);
    let section = super::load_section(BackendFramework::Sglang, Some(&earlier), &later, Some(10.0));
    assert_eq!(section.pools[0].unanswered, ["d-1: no answer within 3s"]);
}
