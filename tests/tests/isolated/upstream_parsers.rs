//! Proof against upstream's own code, parsers (issue 26; docs/upstream-proof.md): every server,
//! worker, GAIE frontend sidecar and Endpoint Picker command line we render is accepted by upstream
//! Infera's router parser, Endpoint Picker parser and engine wrapper parsers, with SGLang 0.5.15.post1's and vLLM 0.25.1's own flag tables (tests/upstream/).
//!
//! Specs: every document in `examples/`, the README's quick start, and specs
//! from the property tests' generator (infera-core/tests/common/arbitrary.rs). From each rendered
//! server or worker pod (Deployment, StatefulSet, LeaderWorkerSet leader and worker templates) every
//! container's `command` + `args` is the process's argv, `$(VAR)` expanded as the kubelet does with
//! the container's env (downward-API fields and the LeaderWorkerSet controller's variables given
//! sample values). No cluster: it needs the venvs of `tests/upstream/setup.sh` and fails, saying so,
//! without them.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::collections::BTreeMap;

use infera_core::{BackendFramework, InferaDeployment, render, validate, yaml};
use infera_e2e::upstream::{self, PodContext, Process, process, templates};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

#[path = "../../../infera-core/tests/common/arbitrary.rs"]
mod arbitrary;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const MODEL: &str = "Qwen/Qwen3-0.6B";

fn example_specs() -> Vec<(String, InferaDeployment)> {
    let mut specs = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(format!("{ROOT}/examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("example");
        let file = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        for idep in yaml::parse_deployments(&text).expect("the example parses") {
            specs.push((format!("examples/{file}"), idep));
        }
    }
    let readme = std::fs::read_to_string(format!("{ROOT}/README.md")).expect("README");
    let quick_start = readme
        .split("```yaml")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|block| block.contains("kind: InferaDeployment"))
        .expect("the README's quick-start InferaDeployment");
    for idep in yaml::parse_deployments(quick_start).expect("the quick start parses") {
        specs.push(("README quick start".into(), idep.clone()));
        // The same behind an Inference Gateway: the EPP and the frontend sidecars are checked too.
        let mut gaie = idep;
        gaie.spec.gaie = Some(infera_core::GaieSpec {
            enabled: Some(true),
            gateway_name: "inference-gateway".into(),
            tokenizer_path: Some(MODEL.into()),
            // vLLM's engine listens on 8000, the sidecar's default.
            frontend_port: (gaie.spec.backend_framework == BackendFramework::Vllm).then_some(8080),
            ..Default::default()
        });
        specs.push(("README quick start with gaie".into(), gaie));
    }
    // Not also on the other engine: the examples' own args are for their engine (SGLang's
    // --model-path is no vLLM flag); the generated specs cover both engines.
    specs
}

/// Generated specs that validate, with each pool's free-form `args` replaced by the one flag its
/// program needs (the generator's args are noise the user owns; what is checked is what we add).
fn generated_specs(count: usize) -> Vec<(String, InferaDeployment)> {
    let mut runner = TestRunner::deterministic();
    let strategy = arbitrary::deployment();
    let mut specs = Vec::new();
    for draw in 0..count * 100 {
        if specs.len() == count {
            break;
        }
        let mut idep = strategy.new_tree(&mut runner).expect("a spec").current();
        let backend = idep.spec.backend_framework;
        // What the generator gets wrong on purpose (names, etcd, health values) is validation's
        // business, tested in properties.rs; here it only keeps specs from validating.
        idep.metadata.name = Some(format!("gen-{draw}"));
        if idep.spec.discovery_backend == Some(infera_core::DiscoveryBackend::Etcd) {
            idep.spec
                .etcd_endpoint
                .get_or_insert_with(|| "http://etcd:2379".into());
        } else {
            idep.spec.etcd_endpoint = None;
        }
        for service in idep.spec.services.values_mut() {
            service.health = None;
            service.args = match (service.component_type, backend) {
                (infera_core::ComponentType::Server, _) => {
                    vec!["--router-tokenizer-path".into(), MODEL.into()]
                }
                (_, BackendFramework::Vllm) => vec!["--model".into(), MODEL.into()],
                _ => vec!["--model-path".into(), MODEL.into()],
            };
        }
        if validate(&idep).is_ok() {
            specs.push((format!("generated spec #{draw}"), idep));
        }
    }
    // Few draws validate even so: the generator aims at validation's edges (one server, pools
    // that pair, the pod template's owned fields), so the contract's combinations come from
    // `combinations` below; these add what the generator varies besides.
    specs
}

/// Every combination of what changes the injected command lines: engine × topology (aggregated,
/// prefill/decode, multi-node) × NATS (managed by default, external, none) × discovery
/// (kubernetes, etcd) × GAIE (off, on).
fn combinations() -> Vec<(String, InferaDeployment)> {
    let mut specs = Vec::new();
    for backend in ["sglang", "vllm"] {
        for topology in ["aggregated", "pd", "multinode"] {
            for nats in ["managed", "external", "none"] {
                for discovery in ["kubernetes", "etcd"] {
                    for gaie in [false, true] {
                        let label = format!(
                            "{backend} {topology} nats={nats} discovery={discovery} gaie={gaie}"
                        );
                        let spec = combination(backend, topology, nats, discovery, gaie);
                        let idep: InferaDeployment =
                            serde_json::from_value(spec).expect("a combination parses");
                        if let Err(errors) = validate(&idep) {
                            panic!("{label} does not validate: {errors}");
                        }
                        specs.push((label, idep));
                    }
                }
            }
        }
    }
    specs
}

fn combination(backend: &str, topology: &str, nats: &str, discovery: &str, gaie: bool) -> Value {
    let model = match backend {
        "vllm" => json!(["--model", MODEL]),
        _ => json!(["--model-path", MODEL]),
    };
    let worker = |role: &str, nodes: i64| {
        let mut args = model.clone();
        if let (Some(args), "vllm", Some(kv_role)) = (
            args.as_array_mut(),
            backend,
            match role {
                "prefill" => Some("kv_producer"),
                "decode" => Some("kv_consumer"),
                _ => None,
            },
        ) {
            args.push("--kv-transfer-config".into());
            args.push(
                json!({"kv_connector": "MoRIIOConnector", "kv_role": kv_role})
                    .to_string()
                    .into(),
            );
        }
        json!({"componentType": "worker", "role": role, "numberOfNodes": nodes,
            "resources": {"gpu": 1}, "args": args})
    };
    let mut services = json!({"server": {"componentType": "server",
        "args": ["--router-policy", "kv-aware", "--router-tokenizer-path", MODEL]}});
    match topology {
        "pd" => {
            services["prefill"] = worker("prefill", 1);
            services["decode"] = worker("decode", 1);
        }
        "multinode" => services["worker"] = worker("mixed", 2),
        _ => services["worker"] = worker("mixed", 1),
    }
    let mut spec = json!({"apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "combo"},
        "spec": {"backendFramework": backend, "image": format!("rocm/infera:{backend}-v0.1.1"),
            "discoveryBackend": discovery, "services": services}});
    match nats {
        "external" => spec["spec"]["nats"] = json!({"url": "nats://nats.infra:4222"}),
        "none" => spec["spec"]["nats"] = json!({"deploy": false}),
        _ => {}
    }
    if discovery == "etcd" {
        spec["spec"]["etcdEndpoint"] = json!("http://etcd.infra:2379");
    }
    if gaie {
        spec["spec"]["gaie"] =
            json!({"enabled": true, "gatewayName": "inference-gateway", "tokenizerPath": MODEL});
    }
    spec
}

fn entries(label: &str, idep: &InferaDeployment) -> Vec<Process> {
    let valid = validate(idep).unwrap_or_else(|e| panic!("{label}: does not validate: {e}"));
    let namespace = idep
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let mut out = Vec::new();
    for child in render(&valid) {
        let child = serde_json::to_value(&child).expect("json");
        let workload = child["metadata"]["name"].as_str().unwrap_or_default();
        let kind = child["kind"].as_str().unwrap_or_default();
        for (which, template, lws) in templates(&child) {
            let pod = PodContext {
                workload,
                namespace: &namespace,
                lws,
            };
            let component = template["metadata"]["labels"]["app.kubernetes.io/component"].as_str();
            // The server's, the workers' and the Endpoint Picker's pods run Infera.
            if !matches!(component, Some("server" | "worker" | "epp")) {
                continue;
            }
            let what = match which {
                "pod" => format!("{kind}/{workload}"),
                _ => format!("{kind}/{workload} {which}"),
            };
            let guess = match (component, idep.spec.backend_framework) {
                (Some("server"), _) => "server",
                (_, BackendFramework::Vllm) => "vllm",
                _ => "sglang",
            };
            for container in template["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let cname = container["name"].as_str().unwrap_or_default();
                let name = format!("{label}: {what} container {cname}");
                out.push(process(name, container, &pod, guess));
            }
        }
    }
    out
}

/// Runs the checker; returns each process's error, if any, by name.
fn check(processes: &[Process]) -> BTreeMap<String, Option<String>> {
    upstream::parse(processes)
        .expect("upstream's parsers run")
        .into_iter()
        .map(|(name, parsed)| (name, parsed.error))
        .collect()
}

fn report(results: &BTreeMap<String, Option<String>>) -> Vec<String> {
    results
        .iter()
        .filter_map(|(name, error)| error.as_ref().map(|e| format!("{name}:\n    {e}")))
        .collect()
}

#[test]
fn every_rendered_server_and_worker_command_line_is_accepted_by_upstreams_parsers() {
    let mut all = Vec::new();
    let specs = example_specs()
        .into_iter()
        .chain(combinations())
        .chain(generated_specs(40));
    for (label, idep) in specs {
        let found = entries(&label, &idep);
        assert!(
            !found.is_empty(),
            "{label}: no server or worker container rendered"
        );
        all.extend(found);
    }
    let results = check(&all);
    let failures = report(&results);
    assert!(
        failures.is_empty(),
        "{} of {} server/worker containers would not start on the real images:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

/// The proof can fail: the checker refuses what upstream refuses, and accepts a correct line.
#[test]
fn upstreams_parsers_refuse_wrong_flags() {
    let entry = |name: &str, program: &'static str, argv: &[&str], env: &[(&str, &str)]| Process {
        name: name.into(),
        program: Ok(program),
        no_command: false,
        argv: argv.iter().map(|s| s.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let pod = [
        ("POD_NAME", "w-0"),
        ("POD_NAMESPACE", "ns"),
        ("POD_IP", "10.0.0.7"),
    ];
    let server = [
        "--router-tokenizer-path",
        MODEL,
        "--request-transport",
        "http",
        "--kv-event-transport",
        "zmq",
    ];
    let mut good_server = server.to_vec();
    good_server.extend(["--k8s-label-selector", "infera.amd.com/deployment=demo"]);
    let mut nats_url = good_server.clone();
    nats_url.extend(["--nats-url", "nats://demo-nats:4222"]);
    let cases = [
        entry("good server", "server", &good_server, &[]),
        entry(
            "good server, selector from env",
            "server",
            &server,
            &[("INFERA_K8S_LABEL_SELECTOR", "a=b")],
        ),
        entry("server with --nats-url", "server", &nats_url, &[]),
        entry("server without a selector", "server", &server, &[]),
        entry(
            "good sglang",
            "sglang",
            &["--model-path", MODEL, "--disaggregation-mode", "prefill"],
            &pod,
        ),
        entry(
            "sglang, misspelt flag",
            "sglang",
            &["--model-path", MODEL, "--tp-sise", "2"],
            &pod,
        ),
        entry(
            "sglang, no POD_NAME",
            "sglang",
            &["--model-path", MODEL],
            &[],
        ),
        entry(
            "good vllm",
            "vllm",
            &["--model", MODEL, "--tensor-parallel-size", "2"],
            &pod,
        ),
        entry(
            "vllm with --disaggregation-mode",
            "vllm",
            &["--model", MODEL, "--disaggregation-mode", "prefill"],
            &pod,
        ),
        entry(
            "vllm, misspelt flag",
            "vllm",
            &["--model", MODEL, "--tensor-paralel-size", "2"],
            &pod,
        ),
    ];
    let results = check(&cases);
    for (name, error) in &results {
        let accepted = error.is_none();
        assert_eq!(accepted, name.starts_with("good"), "{name}: {error:?}");
    }
    assert!(
        results["server with --nats-url"]
            .as_deref()
            .is_some_and(|e| e.contains("unrecognized arguments: --nats-url")),
        "{results:?}"
    );
}

/// The directories of upstream's snapshot and of the pinned engines' sources, as
/// `tests/upstream/env.sh` resolves them.
fn upstream_dirs() -> (std::path::PathBuf, std::path::PathBuf) {
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {ROOT}/tests/upstream/env.sh && echo \"$INFERA_UPSTREAM_DIR\" && echo \"$UPSTREAM_ENGINES\""
        ))
        .output()
        .expect("bash runs env.sh");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines().map(std::path::PathBuf::from);
    let upstream = lines.next().expect("the upstream directory");
    let engines = lines.next().expect("the engines' directory");
    assert!(
        engines.join("sglang").is_dir() && engines.join("vllm").is_dir(),
        "the pinned engines' sources are missing at {}: run tests/upstream/setup.sh",
        engines.display()
    );
    (upstream, engines)
}

/// Every `.py` file under `dir`, as text.
fn python_sources(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                found.push(std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    found
}

/// The metric names `status --load` reads and every series a query of the dashboard names
/// (`infera_core::metrics`, `infera_core::dashboard`) are defined by the versions the images run:
/// each `sglang:` name in SGLang 0.5.15.post1's sources, each `vllm:` name in vLLM 0.25.1's, each
/// `infera_` name in upstream's router — as a metric's name in quotes, a counter also without the
/// `_total` that prometheus_client appends, a histogram's series without `_bucket` or `_count`.
/// Prometheus's own `up` is the one exception.
#[test]
fn every_metric_name_load_and_the_dashboard_read_is_defined_by_the_pinned_versions() {
    use infera_core::{BackendFramework, metrics};
    let mut names: Vec<String> = vec![
        metrics::ROUTER_IN_FLIGHT.into(),
        metrics::ROUTER_DURATION.into(),
    ];
    for backend in [BackendFramework::Sglang, BackendFramework::Vllm] {
        names.extend(
            metrics::EngineMetrics::of(backend)
                .names()
                .map(String::from),
        );
        let dashboard = infera_core::dashboard::dashboard("ns", "d", backend);
        let exprs: Vec<&str> = dashboard["panels"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|p| p["targets"].as_array().into_iter().flatten())
            .filter_map(|t| t["expr"].as_str())
            .collect();
        assert_eq!(exprs.len(), 13, "{exprs:?}");
        for expr in exprs {
            // A series is the identifier right before a `{`.
            let mut found = 0;
            for (at, _) in expr.match_indices('{') {
                let start = expr[..at]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                    .map_or(0, |i| i + 1);
                let series = &expr[start..at];
                found += 1;
                if series != "up" {
                    let name = ["_bucket", "_count"]
                        .iter()
                        .find_map(|suffix| series.strip_suffix(suffix))
                        .unwrap_or(series);
                    names.push(name.to_string());
                }
            }
            assert!(found > 0, "no series in {expr}");
        }
    }
    names.sort();
    names.dedup();
    assert!(names.len() >= 16, "{names:?}");
    let (upstream, engines) = upstream_dirs();
    let sources = |prefix: &str| match prefix {
        "sglang" => python_sources(&engines.join("sglang")),
        "vllm" => python_sources(&engines.join("vllm")),
        _ => python_sources(&upstream.join("infera")),
    };
    let trees: BTreeMap<&str, Vec<String>> = ["sglang", "vllm", "infera"]
        .into_iter()
        .map(|prefix| (prefix, sources(prefix)))
        .collect();
    let missing: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| {
            let prefix = name.split([':', '_']).next().unwrap_or_default();
            let spelled = [
                format!("\"{name}\""),
                format!("\"{}\"", name.trim_end_matches("_total")),
            ];
            !trees[prefix]
                .iter()
                .any(|text| spelled.iter().any(|s| text.contains(s.as_str())))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not defined by the pinned versions: {missing:?}"
    );
}
