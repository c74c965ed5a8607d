//! `spec.monitoring` on the tier-2 cluster with the Prometheus Operator's real PodMonitor CRD
//! (v0.85.0, from its Go module: `tests/cluster/build.sh` puts it under
//! `$K8S_TEST_BIN/share/prometheus-operator/`). No Prometheus runs here; what is tested is what the
//! operator owns: without the CRD the deployment reports MissingDependency naming it and the fix,
//! with the rest of the graph deployed; once it is installed the operator, with exactly the
//! shipped RBAC, creates a PodMonitor the real API server accepts (its schema, its interval
//! pattern) whose selector matches exactly the pods that serve `/metrics` (the router and every
//! engine, not NATS); `doctor --for` fails INF222 without the CRD and passes with it;
//! `kubectl infera dashboard` prints the dashboard of it, from the cluster and
//! offline alike. With latency objectives (`monitoring.slo`) the same holds of the
//! PrometheusRule CRD (INF223) and its burn-rate alerts (which Prometheus's own engine judges in
//! `tests/tests/isolated/monitoring_rules.rs`); without them the PrometheusRule goes, and
//! `enabled: false` removes the PodMonitor.
//!
//! In a test binary of its own: it installs and removes a cluster-wide CRD.

use std::time::Duration;

use anyhow::Context as _;
use infera_core::{ChildKind, InferaDeployment, State};
use infera_e2e::{
    TestNamespace, admin, apply_yaml, apply_yaml_in, eventually,
    kube::{
        Api,
        api::{DeleteParams, DynamicObject, ListParams},
    },
    operator::{Operator, install},
    plugin::{doctor_check, kubectl},
    target_dir, test_bin_dir,
};
use k8s_openapi::{
    api::core::v1::Pod,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use serde_json::json;

const CRD: &str = "podmonitors.monitoring.coreos.com";
const RULE_CRD: &str = "prometheusrules.monitoring.coreos.com";
const TIMEOUT: Duration = Duration::from_secs(120);

/// The seed's PD graph (server, prefill, decode) with a PodMonitor scraping every 15 s, labelled
/// for a Prometheus that selects `release: kps`.
fn spec(namespace: &str) -> serde_json::Value {
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "md", "namespace": namespace},
        "spec": {
            "backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "monitoring": {"interval": "15s", "labels": {"release": "kps"}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-policy", "round-robin", "--router-tokenizer-path", "Qwen/Qwen3-0.6B"]},
                "prefill": {"componentType": "worker", "role": "prefill", "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"]},
                "decode": {"componentType": "worker", "role": "decode", "resources": {"gpu": 1}, "args": ["--model-path", "Qwen/Qwen3-0.6B"]},
            },
        },
    })
}

/// Deletes the PodMonitor and PrometheusRule CRDs, if installed, and waits until they are gone.
async fn remove_crds(crds: &Api<CustomResourceDefinition>) -> anyhow::Result<()> {
    for name in [CRD, RULE_CRD] {
        if crds.get_opt(name).await?.is_some() {
            crds.delete(name, &DeleteParams::default()).await?;
        }
    }
    eventually(Duration::from_secs(60), || async {
        for name in [CRD, RULE_CRD] {
            anyhow::ensure!(
                crds.get_opt(name).await?.is_none(),
                "{name} still terminating"
            );
        }
        anyhow::Ok(())
    })
    .await
}

/// The Prometheus Operator CRD `plural` as tests/cluster/build.sh fetched it.
fn crd_yaml(plural: &str) -> anyhow::Result<String> {
    let file = format!("share/prometheus-operator/monitoring.coreos.com_{plural}.yaml");
    std::fs::read_to_string(test_bin_dir()?.join(&file))
        .with_context(|| format!("{file} (tests/cluster/build.sh fetches it)"))
}

/// The Ready reason and message of deployment `md`.
async fn ready(ideps: &Api<InferaDeployment>) -> anyhow::Result<(Option<State>, String, String)> {
    let status = ideps.get("md").await?.status.unwrap_or_default();
    let (reason, message) = status
        .conditions
        .first()
        .map(|c| (c.reason.clone(), c.message.clone()))
        .unwrap_or_default();
    Ok((status.state, reason, message))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pod_monitor_is_missing_its_dependency_until_the_crd_then_selects_the_serving_pods()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "op-monitoring").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    remove_crds(&crds).await?;

    let result = async {
        let mut operator = Operator::start_in(&identity, n).await?;
        let spec = spec(n);
        let dir = target_dir().join("e2e-logs");
        std::fs::create_dir_all(&dir)?;
        let file = dir.join(format!("operator-monitoring-{n}.json"));
        std::fs::write(&file, serde_json::to_string_pretty(&spec)?)?;
        let file = file.display().to_string();

        // Without the CRD: doctor says so before anything is deployed ...
        let check = doctor_check(&["--for", &file], "INF222").await?;
        anyhow::ensure!(
            check["severity"] == "fail"
                && check["message"] == format!("the Prometheus Operator CRD ({CRD}) is not installed"),
            "{check}"
        );
        // ... and so does the operator, once it is.
        apply_yaml_in(&admin, n, &spec.to_string()).await?;
        let ideps: Api<InferaDeployment> = ns.api();

        // Without the CRD: reported, naming the CRD and the fix; the graph itself is deployed.
        let (_, _, message) = eventually(TIMEOUT, || async {
            let (state, reason, message) = ready(&ideps).await?;
            anyhow::ensure!(
                state == Some(State::Degraded) && reason == "MissingDependency",
                "state {state:?}, {reason}: {message}"
            );
            anyhow::Ok((state, reason, message))
        })
        .await?;
        anyhow::ensure!(
            message.contains(&format!(
                "monitoring: needs the Prometheus Operator CRD ({CRD}) for spec.monitoring; install the Prometheus Operator's CRDs"
            )) && message.contains("or set monitoring.enabled: false"),
            "{message}"
        );
        let deployments =
            Api::<DynamicObject>::namespaced_with(admin.clone(), n, &ChildKind::Deployment.api_resource());
        for name in ["md-server", "md-prefill", "md-decode"] {
            anyhow::ensure!(
                deployments.get_opt(name).await?.is_some(),
                "{name} is not deployed beside the missing CRD"
            );
        }

        // The CRD installed: a PodMonitor the API server accepts, the deployment Ready.
        apply_yaml(&admin, &crd_yaml("podmonitors")?).await?;
        let monitors =
            Api::<DynamicObject>::namespaced_with(admin.clone(), n, &ChildKind::PodMonitor.api_resource());
        let monitor = eventually(TIMEOUT, || async {
            let monitor = monitors.get_opt("md").await?.context("no PodMonitor md yet")?;
            let (state, reason, message) = ready(&ideps).await?;
            anyhow::ensure!(state == Some(State::Ready), "state {state:?}, {reason}: {message}");
            anyhow::Ok(monitor)
        })
        .await?;
        let labels = &monitor.metadata.labels.clone().unwrap_or_default();
        anyhow::ensure!(
            labels.get("release").map(String::as_str) == Some("kps")
                && labels.get("infera.amd.com/deployment").map(String::as_str) == Some("md"),
            "labels {labels:?}"
        );
        let endpoints = &monitor.data["spec"]["podMetricsEndpoints"];
        let ports: Vec<&str> = endpoints
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["port"].as_str())
            .collect();
        anyhow::ensure!(ports == ["http", "frontend"], "{endpoints}");
        anyhow::ensure!(
            endpoints[0]["interval"] == "15s" && endpoints[0]["path"] == "/metrics",
            "{endpoints}"
        );
        let targets: Vec<&str> = endpoints[0]["relabelings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["targetLabel"].as_str())
            .collect();
        anyhow::ensure!(
            targets == ["infera_deployment", "infera_service", "infera_role", "infera_revision"],
            "{endpoints}"
        );

        // Its selector, as the API server evaluates it, matches the router's and the engines'
        // pods and nothing else of the graph (NATS).
        let selector = &monitor.data["spec"]["selector"];
        let mut expressions = vec!["infera.amd.com/deployment=md".to_string()];
        for requirement in selector["matchExpressions"].as_array().into_iter().flatten() {
            let values: Vec<&str> = requirement["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .collect();
            anyhow::ensure!(requirement["operator"] == "In", "{selector}");
            expressions.push(format!(
                "{} in ({})",
                requirement["key"].as_str().unwrap_or_default(),
                values.join(",")
            ));
        }
        let pods: Api<Pod> = ns.api();
        let all = ListParams::default().labels("infera.amd.com/deployment=md");
        let selected = ListParams::default().labels(&expressions.join(","));
        let services = |pods: Vec<Pod>| {
            let mut services: Vec<String> = pods
                .iter()
                .filter_map(|p| p.metadata.labels.as_ref()?.get("infera.amd.com/service").cloned())
                .collect();
            services.sort();
            services
        };
        eventually(TIMEOUT, || async {
            let (every, chosen) = (
                services(pods.list(&all).await?.items),
                services(pods.list(&selected).await?.items),
            );
            anyhow::ensure!(every.contains(&"nats".to_string()), "graph pods {every:?}");
            anyhow::ensure!(chosen == ["decode", "prefill", "server"], "selected {chosen:?} of {every:?}");
            anyhow::Ok(())
        })
        .await?;

        // The dashboard, from the cluster and from the spec offline: the same document.
        let live = kubectl(&["infera", "dashboard", "md", "-n", n]).await?.expect_code(0)?;
        let check = doctor_check(&["--for", &file], "INF222").await?;
        anyhow::ensure!(check["severity"] == "pass", "{check}");
        let offline = kubectl(&["infera", "dashboard", "-f", &file])
            .await?
            .expect_code(0)?;
        let dashboard: serde_json::Value = serde_json::from_str(&live.stdout)
            .with_context(|| format!("one JSON document:\n{}", live.stdout))?;
        anyhow::ensure!(live.stdout == offline.stdout, "{}\n---\n{}", live.stdout, offline.stdout);
        anyhow::ensure!(dashboard["title"] == format!("Infera {n}/md"), "{}", dashboard["title"]);
        anyhow::ensure!(
            dashboard["panels"].as_array().map(Vec::len) == Some(8),
            "{dashboard}"
        );
        let missing = kubectl(&["infera", "dashboard", "nope", "-n", n]).await?.expect_code(1)?;
        anyhow::ensure!(missing.stderr.contains("not found"), "{}", missing.stderr);

        // Objectives without the PrometheusRule CRD: reported, naming it; doctor says so too.
        let mut objectives = spec.clone();
        objectives["spec"]["monitoring"]["slo"] =
            json!({"ttftP95Milliseconds": 500, "itlP95Milliseconds": 50});
        std::fs::write(&file, serde_json::to_string_pretty(&objectives)?)?;
        let check = doctor_check(&["--for", &file], "INF223").await?;
        anyhow::ensure!(
            check["severity"] == "fail"
                && check["message"] == format!("the Prometheus Operator CRD ({RULE_CRD}) is not installed"),
            "{check}"
        );
        apply_yaml_in(&admin, n, &objectives.to_string()).await?;
        let message = eventually(TIMEOUT, || async {
            let (state, reason, message) = ready(&ideps).await?;
            anyhow::ensure!(
                state == Some(State::Degraded) && reason == "MissingDependency",
                "state {state:?}, {reason}: {message}"
            );
            anyhow::Ok(message)
        })
        .await?;
        anyhow::ensure!(
            message.contains(&format!(
                "needs the Prometheus Operator CRD ({RULE_CRD}) for spec.monitoring.slo; install the Prometheus Operator's CRDs"
            )) && message.contains("or remove monitoring.slo")
                && !message.contains(CRD),
            "{message}"
        );

        // The CRD installed: a PrometheusRule the API server accepts, labelled as the
        // PodMonitor, three alerts per objective; Ready again, and doctor passes.
        apply_yaml(&admin, &crd_yaml("prometheusrules")?).await?;
        let rules =
            Api::<DynamicObject>::namespaced_with(admin.clone(), n, &ChildKind::PrometheusRule.api_resource());
        let rule = eventually(TIMEOUT, || async {
            let rule = rules.get_opt("md").await?.context("no PrometheusRule md yet")?;
            let (state, reason, message) = ready(&ideps).await?;
            anyhow::ensure!(state == Some(State::Ready), "state {state:?}, {reason}: {message}");
            anyhow::Ok(rule)
        })
        .await?;
        anyhow::ensure!(rule.metadata.labels == monitor.metadata.labels, "{:?}", rule.metadata.labels);
        let alerts: Vec<&str> = rule.data["spec"]["groups"][0]["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["alert"].as_str())
            .collect();
        anyhow::ensure!(
            alerts
                == [
                    "InferaTimeToFirstTokenBudgetBurn",
                    "InferaTimeToFirstTokenBudgetBurn",
                    "InferaTimeToFirstTokenBudgetBurn",
                    "InferaInterTokenLatencyBudgetBurn",
                    "InferaInterTokenLatencyBudgetBurn",
                    "InferaInterTokenLatencyBudgetBurn",
                ],
            "{alerts:?}"
        );
        let check = doctor_check(&["--for", &file], "INF223").await?;
        anyhow::ensure!(check["severity"] == "pass", "{check}");

        // Objectives removed: the PrometheusRule goes, the PodMonitor stays.
        apply_yaml_in(&admin, n, &spec.to_string()).await?;
        eventually(TIMEOUT, || async {
            anyhow::ensure!(rules.get_opt("md").await?.is_none(), "PrometheusRule md still there");
            anyhow::ensure!(monitors.get_opt("md").await?.is_some(), "PodMonitor md gone");
            anyhow::Ok(())
        })
        .await?;

        // Turned off: the PodMonitor goes.
        let mut turned_off = spec.clone();
        turned_off["spec"]["monitoring"] = json!({"enabled": false});
        apply_yaml_in(&admin, n, &turned_off.to_string()).await?;
        eventually(TIMEOUT, || async {
            anyhow::ensure!(monitors.get_opt("md").await?.is_none(), "PodMonitor md still there");
            anyhow::Ok(())
        })
        .await?;
        operator.ensure_running()?;
        drop(operator);
        anyhow::Ok(())
    }
    .await;
    remove_crds(&crds).await?;
    result?;
    ns.cleanup().await
}
