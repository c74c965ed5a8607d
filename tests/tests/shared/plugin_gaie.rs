//! `doctor --for FILE` with `spec.gaie` on the tier-2 cluster (Gateway API and Inference Extension
//! CRDs installed, no gateway controller): a Gateway whose status the test writes as a controller
//! would passes the gateway checks (INF211–INF215), a spec naming a missing Gateway fails INF213
//! with its hint, and a listener that selects route namespaces by label is evaluated against the
//! namespace's labels. `bench` sends a GAIE deployment's load to its Gateway's address and
//! listener port with the route's Host, and writes nothing while the Gateway has no address.

use anyhow::Context as _;
use infera_e2e::{
    TestNamespace, admin,
    k8s_openapi::api::core::v1::ConfigMap,
    kube::{
        Api, Client,
        api::{DynamicObject, ListParams, Patch, PatchParams, PostParams},
        core::{ApiResource, GroupVersionKind},
    },
    operator::install,
    plugin::kubectl,
    target_dir,
};

/// Creates Gateway `gw` in `namespace` with `listeners` (class `test`, which no controller runs).
async fn create_gateway(
    admin: &Client,
    namespace: &str,
    listeners: serde_json::Value,
) -> anyhow::Result<Api<DynamicObject>> {
    let gateways = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "Gateway"),
        "gateways",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), namespace, &gateways);
    let gateway: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": "gw", "namespace": namespace},
        "spec": {"gatewayClassName": "test", "listeners": listeners}
    }))?;
    api.create(&PostParams::default(), &gateway).await?;
    Ok(api)
}

/// Writes Gateway `gw`'s status as a controller that programmed it at `addresses` would.
async fn program(api: &Api<DynamicObject>, addresses: serde_json::Value) -> anyhow::Result<()> {
    let condition = |type_: &str| {
        serde_json::json!({"type": type_, "status": "True", "reason": type_, "message": "",
            "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    let status = serde_json::json!({"status": {"addresses": addresses,
        "conditions": [condition("Accepted"), condition("Programmed")]}});
    api.patch_status("gw", &PatchParams::default(), &Patch::Merge(status))
        .await?;
    Ok(())
}

/// The result of check `id` in a `doctor -o json` report.
fn check<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .unwrap_or(&serde_json::Value::Null)
}

/// Writes an aggregated spec (as JSON, which is YAML) in `namespace` behind Gateway `gateway`
/// (listener `section`, if any) and returns its path.
fn spec_file(namespace: &str, gateway: &str, section: Option<&str>) -> anyhow::Result<String> {
    spec_file_with(namespace, gateway, section, &[])
}

/// [`spec_file`] with a route matching `hostnames`.
fn spec_file_with(
    namespace: &str,
    gateway: &str,
    section: Option<&str>,
    hostnames: &[&str],
) -> anyhow::Result<String> {
    let dir = target_dir().join("e2e-logs");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("plugin-gaie-{namespace}-{gateway}.yaml"));
    let mut gaie = serde_json::json!({"enabled": true, "gatewayName": gateway, "tokenizerPath": "Qwen/Qwen3-0.6B"});
    if let Some(section) = section {
        gaie["gatewaySectionName"] = section.into();
    }
    if !hostnames.is_empty() {
        gaie["hostnames"] = hostnames.into();
    }
    let spec = serde_json::json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "demo", "namespace": namespace},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1", "gaie": gaie,
            "services": {
                "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
                "worker": {"componentType": "worker", "resources": {"gpu": 1},
                    "args": ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "1"]}
            }}
    });
    std::fs::write(&path, serde_json::to_string_pretty(&spec)?)?;
    Ok(path.display().to_string())
}

/// `kubectl infera doctor --for FILE -o json`: exactly one JSON document, whatever the exit code
/// (the Infera install checks may fail on a cluster where no other test ran `init`).
async fn doctor_for(file: &str) -> anyhow::Result<(i32, serde_json::Value)> {
    let run = kubectl(&["infera", "doctor", "--for", file, "-o", "json"]).await?;
    let report = serde_json::from_str(&run.stdout)
        .with_context(|| format!("one JSON document:\n{}\n{}", run.stdout, run.stderr))?;
    Ok((run.code, report))
}

/// Fails unless check `id` has `severity`, showing the check.
fn ensure_severity(report: &serde_json::Value, id: &str, severity: &str) -> anyhow::Result<()> {
    let c = check(report, id);
    anyhow::ensure!(c["severity"] == severity, "{id} is not {severity}: {c}");
    Ok(())
}

#[tokio::test]
async fn doctor_checks_the_gateway_a_gaie_spec_names() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "plugin-gaie").await?;
    let n = ns.name();

    // A Gateway with a listener for its own namespace and one selecting namespaces by the label
    // TestNamespace puts on every test namespace; no controller, so the test writes its status.
    let api = create_gateway(
        &admin,
        n,
        serde_json::json!([
            {"name": "http", "protocol": "HTTP", "port": 80},
            {"name": "labelled", "protocol": "HTTP", "port": 8080, "allowedRoutes": {"namespaces": {
                "from": "Selector", "selector": {"matchLabels": {"infera-e2e": "plugin-gaie"}}}}}
        ]),
    )
    .await?;
    program(&api, serde_json::json!([])).await?;

    let (_, report) = doctor_for(&spec_file(n, "gw", None)?).await?;
    for id in ["INF211", "INF212", "INF213", "INF214", "INF215"] {
        ensure_severity(&report, id, "pass")?;
    }
    let gateway = check(&report, "INF213");
    anyhow::ensure!(
        gateway["message"] == format!("Gateway {n}/gw (class test) is Accepted and Programmed"),
        "{gateway}"
    );
    let dry_run = check(&report, "INF215");
    anyhow::ensure!(
        dry_run["message"]
            == format!(
                "the API server accepts InferencePool demo-pool and HTTPRoute demo-route in namespace {n} (server-side dry run)"
            ),
        "{dry_run}"
    );

    // The labelled listener admits the namespace by its labels, which doctor reads.
    let (_, report) = doctor_for(&spec_file(n, "gw", Some("labelled"))?).await?;
    ensure_severity(&report, "INF214", "pass")?;
    let listener = check(&report, "INF214");
    anyhow::ensure!(
        listener["details"][0]
            == format!("listener labelled (HTTP): its namespace selector matches namespace {n}"),
        "{listener}"
    );

    // A Gateway that does not exist: INF213 fails with its hint, exit code 1.
    let (code, report) = doctor_for(&spec_file(n, "missing", None)?).await?;
    anyhow::ensure!(code == 1 && report["success"] == false, "exit {code}");
    ensure_severity(&report, "INF213", "fail")?;
    let missing = check(&report, "INF213");
    anyhow::ensure!(
        missing["message"] == format!("Gateway {n}/missing (spec.gaie.gatewayName) does not exist")
            && missing["hint"]
                .as_str()
                .is_some_and(|h| h.contains("`kubectl get gateways -A`")),
        "{missing}"
    );
    ensure_severity(&report, "INF214", "skip")?;
    ensure_severity(&report, "INF215", "pass")?;
    ns.cleanup().await
}

#[tokio::test]
async fn bench_sends_a_gaie_deployments_load_to_its_gateway() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "bench-gateway").await?;
    let n = ns.name();
    install(&admin).await?;
    let api = create_gateway(
        &admin,
        n,
        serde_json::json!([{"name": "web", "protocol": "HTTP", "port": 8080, "hostname": "*.infer.example"}]),
    )
    .await?;
    let file = spec_file_with(n, "gw", None, &["llm.infer.example"])?;
    kubectl(&["apply", "-f", &file]).await?.expect_code(0)?;
    let runs: Api<ConfigMap> = ns.api();
    let bench = || async move {
        kubectl(&[
            "infera",
            "bench",
            "demo",
            "-n",
            n,
            "--no-wait",
            "--rate",
            "1",
        ])
        .await
    };

    // Not programmed yet: no address to send to, and nothing is written.
    let early = bench().await?;
    anyhow::ensure!(
        early.code == 4
            && early.stderr.contains(&format!(
                "Gateway {n}/gw (spec.gaie.gatewayName) has no address yet"
            ))
            && early.stderr.contains("--target server"),
        "exit {}: {}",
        early.code,
        early.stderr
    );
    let selector = ListParams::default().labels("app.kubernetes.io/name=infera-bench");
    anyhow::ensure!(runs.list(&selector).await?.items.is_empty());

    // Programmed: the first address, the listener's port, the route's hostname as Host.
    program(
        &api,
        serde_json::json!([{"type": "IPAddress", "value": "10.96.7.7"}, {"type": "IPAddress", "value": "10.96.7.8"}]),
    )
    .await?;
    let started = bench().await?.expect_code(0)?;
    anyhow::ensure!(
        started
            .stderr
            .contains("to http://10.96.7.7:8080 (Host: llm.infer.example)"),
        "{}",
        started.stderr
    );
    let made = runs.list(&selector).await?.items;
    anyhow::ensure!(made.len() == 1, "one run: {made:?}");
    let data = made[0].data.clone().unwrap_or_default();
    let config = data.get("config.yaml").cloned().unwrap_or_default();
    anyhow::ensure!(
        config.contains("base_url: http://10.96.7.7:8080")
            && config.contains("headers:\n    Host: llm.infer.example"),
        "{config}"
    );

    // `--target server` sends to the server Service instead (which no operator made here).
    let server = kubectl(&[
        "infera",
        "bench",
        "demo",
        "-n",
        n,
        "--no-wait",
        "--target",
        "server",
    ])
    .await?;
    anyhow::ensure!(
        server.code == 4
            && server
                .stderr
                .contains(&format!("Service {n}/demo-server does not exist yet")),
        "exit {}: {}",
        server.code,
        server.stderr
    );
    ns.cleanup().await
}
