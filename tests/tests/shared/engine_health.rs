//! The engine contract on a real cluster: the CRD admits `services.X.health` within its limits
//! with infera-core's wording (the startup timeout's range is a CEL rule built on `duration()`),
//! and the live pods of a multi-node vLLM group are probed and stopped as rendered — the leader
//! has its port and probes, rank 1 has none and runs its engine `--headless` (with the wrapper's
//! wait for `/health` out of reach), and both outlive the drain.

use std::time::Duration;

use crate::common::{merge, seed};
use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in,
    kube::{
        Api,
        api::{DynamicObject, ListParams},
    },
    operator::{Operator, install},
    ready,
};
use k8s_openapi::api::core::v1::{Container, Pod, Probe};
use serde_json::{Value, json};

const READY_TIMEOUT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread")]
async fn health_fields_are_admitted_within_their_limits_with_infera_core_wording()
-> anyhow::Result<()> {
    let admin = admin().await?;
    install(&admin).await?;
    let ns = TestNamespace::new(&admin, "health-crd").await?;
    let (api, dry_run) = infera_e2e::admission_dry_run(&admin, ns.name());
    let with_health = |health: Value| {
        let mut spec = seed();
        merge(
            &mut spec,
            json!({"spec": {"services": {"decode": {"health": health}}}}),
        );
        serde_json::from_value::<DynamicObject>(spec)
    };

    for health in [
        json!({"startupTimeout": "24h", "readinessPath": "/health", "livenessPath": "none", "timeoutSeconds": 300, "drainSeconds": 0}),
        json!({"startupTimeout": "1s", "livenessPath": "/ping?x=1", "drainSeconds": 3600}),
    ] {
        api.create(&dry_run, &with_health(health.clone())?)
            .await
            .map_err(|e| anyhow::anyhow!("{health} refused: {e}"))?;
    }

    let range = "startupTimeout: must be from 1s to 24h; set how long a cold start may take";
    let cases: Vec<(Value, &str)> = vec![
        (json!({"startupTimeout": "0s"}), range),
        (json!({"startupTimeout": "1441m"}), range),
        (json!({"startupTimeout": "999999h"}), range),
        // Not a duration: the pattern refuses it and the CEL rule leaves it alone.
        (
            json!({"startupTimeout": "1h30m"}),
            "should match '^[0-9]{1,6}[smh]$'",
        ),
        (
            json!({"readinessPath": "ready"}),
            "should match '^/[!-~]*$'",
        ),
        (
            json!({"livenessPath": "off"}),
            "should match '^(none|/[!-~]*)$'",
        ),
        (
            json!({"timeoutSeconds": 0}),
            "should be greater than or equal to 1",
        ),
        (
            json!({"drainSeconds": 3601}),
            "should be less than or equal to 3600",
        ),
    ];
    for (health, expected) in cases {
        match api.create(&dry_run, &with_health(health.clone())?).await {
            Ok(_) => anyhow::bail!("{health}: accepted"),
            Err(infera_e2e::kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{health}: {}", status.message);
                assert!(
                    status.message.contains(expected),
                    "{health}: expected {expected:?} in {:?}",
                    status.message
                );
                assert!(
                    !status.message.contains("evaluation error"),
                    "{health}: the CEL rule failed to evaluate: {}",
                    status.message
                );
            }
            Err(other) => return Err(other.into()),
        }
    }
    ns.cleanup().await
}

/// A vLLM pool in groups of two that drains for 30 s.
const MULTI_NODE: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: eh}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    worker:
      componentType: worker
      numberOfNodes: 2
      resources: {gpu: 1}
      args: ["--model", "m", "--tensor-parallel-size", "2"]
      health: {drainSeconds: 30}
"#;

fn engine(pod: &Pod) -> anyhow::Result<&Container> {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == "engine"))
        .ok_or_else(|| anyhow::anyhow!("no engine container in {pod:?}"))
}

fn pre_stop_sleep(engine: &Container) -> Option<i64> {
    engine
        .lifecycle
        .as_ref()
        .and_then(|l| l.pre_stop.as_ref())
        .and_then(|h| h.sleep.as_ref())
        .map(|s| s.seconds)
}

fn has_args(engine: &Container, wanted: &[&str]) -> bool {
    engine
        .args
        .as_deref()
        .unwrap_or_default()
        .windows(wanted.len())
        .any(|w| w == wanted)
}

fn http_path(probe: &Option<Probe>) -> Option<&str> {
    probe
        .as_ref()
        .and_then(|p| p.http_get.as_ref())
        .and_then(|h| h.path.as_deref())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_node_vllm_group_probes_its_leader_and_its_follower_only_joins()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "health-lws").await?;
    let identity = install(&admin).await?;
    let log = format!("operator-{}", ns.name());
    let mut operator = Operator::start(&identity, &["--namespace", ns.name()], &log).await?;
    apply_yaml_in(&admin, ns.name(), MULTI_NODE).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    ready(&ideps, "eh", READY_TIMEOUT).await?;

    let pods: Api<Pod> = ns.api();
    let rank = |index: &str| {
        let pods = pods.clone();
        let selector = format!(
            "leaderworkerset.sigs.k8s.io/name=eh-worker,leaderworkerset.sigs.k8s.io/worker-index={index}"
        );
        async move {
            let list = pods.list(&ListParams::default().labels(&selector)).await?;
            list.items
                .into_iter()
                .next()
                .ok_or_else(|| anyhow::anyhow!("no pod with {selector}"))
        }
    };
    // Upstream's sizing: the larger of 120 and preStop 15 + drain + teardown 50.
    let grace = Some(120);

    let leader = rank("0").await?;
    let engine_0 = engine(&leader)?;
    assert_eq!(
        leader
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds),
        grace
    );
    assert!(engine_0.ports.is_some(), "the leader serves HTTP");
    for probe in [
        &engine_0.startup_probe,
        &engine_0.readiness_probe,
        &engine_0.liveness_probe,
    ] {
        assert_eq!(http_path(probe), Some("/health"), "{probe:?}");
        assert!(
            probe.as_ref().and_then(|p| p.timeout_seconds).is_some(),
            "an explicit timeout: {probe:?}"
        );
    }
    assert_eq!(pre_stop_sleep(engine_0), Some(15));
    assert!(has_args(engine_0, &["--drain-timeout", "30"]));
    assert!(!has_args(engine_0, &["--headless"]));

    let follower = rank("1").await?;
    let engine_1 = engine(&follower)?;
    assert_eq!(
        follower
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds),
        grace
    );
    assert!(engine_1.ports.is_none());
    assert!(
        engine_1.startup_probe.is_none()
            && engine_1.readiness_probe.is_none()
            && engine_1.liveness_probe.is_none(),
        "rank 1 is not probed: {engine_1:?}"
    );
    assert!(has_args(engine_1, &["--headless"]));
    assert!(has_args(engine_1, &["--node-rank", "$(LWS_WORKER_INDEX)"]));
    assert_eq!(
        pre_stop_sleep(engine_1),
        Some(15 + 30),
        "rank 1 outlives the leader's drain"
    );

    operator.ensure_running()?;
    ns.cleanup().await
}
