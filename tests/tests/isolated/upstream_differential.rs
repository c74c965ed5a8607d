//! Differential against the reference implementation (issue 26; docs/upstream-differential.md):
//! upstream Infera's own Go operator, built from the pinned snapshot (`tests/upstream/operator.sh`),
//! reconciles each spec on a private tier-1 control plane with upstream's CRD; ours renders the same
//! spec; the two sets of children are compared on what the images depend on.
//!
//! Compared, child by child (named by role: `<server>`, `<prefill>`, `<nats>`, …): which children
//! exist; replicas, group size and update strategy; each pod's ServiceAccount, grace period,
//! readiness gates and upstream's labels; each container's image, ports, env, probes, preStop, resources and mounts, and
//! its command line **by what upstream's own parser makes of it** (every option's value, defaults
//! and environment included — `tests/upstream/check.sh`), so spelling and order do not count but
//! every effective flag does; which pods the router's label selector and each Service select; the
//! discovery Role's rules; NATS; the InferencePool and HTTPRoute. Labels that only we add are not
//! compared (nothing in the images reads them; selectors are compared by what they select).
//!
//! Every difference must be listed, with its reason, in the table of
//! `docs/upstream-differential.md` (keys may end in or contain `*`); an unlisted difference fails the
//! test, and so does a listed one that no spec shows any more.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use infera_core::{render, validate, yaml};
use infera_e2e::cluster::PrivateCluster;
use infera_e2e::kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use infera_e2e::kube::core::GroupVersionKind;
use infera_e2e::upstream::{self, PodContext, Process, process, templates};
use infera_e2e::{Process as Spawned, apply_yaml, eventually, test_bin_dir};
use serde_json::{Value, json};

#[path = "../../../infera-core/tests/common/snapshot.rs"]
mod snapshot;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// A spec both operators are given.
struct Spec {
    label: String,
    manifest: Value,
}

/// The seed (`examples/pd.yaml`), the seed behind an Inference Gateway, and every upstream example.
fn specs() -> Vec<Spec> {
    let mut specs = Vec::new();
    let seed = std::fs::read_to_string(format!("{ROOT}/examples/pd.yaml")).expect("the seed");
    let seed: Value = serde_saphyr::from_str(&seed).expect("the seed parses");
    let mut gaie = seed.clone();
    gaie["spec"]["gaie"] = json!({"enabled": true, "tokenizerPath": "Qwen/Qwen3-0.6B",
        "gatewayName": "inference-gateway"});
    specs.push(Spec {
        label: "seed (examples/pd.yaml)".into(),
        manifest: seed,
    });
    specs.push(Spec {
        label: "seed with gaie".into(),
        manifest: gaie,
    });
    let dir = snapshot::upstream().join("examples/k8s-deployments");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("upstream's examples")
        .map(|entry| entry.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    for file in files {
        let text = snapshot::fill_placeholders(&std::fs::read_to_string(&file).expect("example"));
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML");
        let name = file.file_name().expect("a name").to_string_lossy();
        for manifest in documents {
            if manifest["kind"] == "InferaDeployment" {
                specs.push(Spec {
                    label: format!("upstream examples/k8s-deployments/{name}"),
                    manifest,
                });
            }
        }
    }
    specs
}

/// What one child is in the graph, named so that both operators' children line up: a service's
/// workload by the service's role, the rest by what they are.
struct Roles {
    name: String,
    services: BTreeMap<String, String>,
    /// The wrapper a worker without a command would be parsed as.
    engine: &'static str,
}

impl Roles {
    fn of(manifest: &Value) -> Self {
        let name = manifest["metadata"]["name"]
            .as_str()
            .expect("a name")
            .to_string();
        let services = manifest["spec"]["services"]
            .as_object()
            .expect("services")
            .iter()
            .map(|(service, s)| {
                let role = match s["componentType"].as_str() {
                    Some("server") => "server".to_string(),
                    _ => s["role"].as_str().unwrap_or("mixed").to_string(),
                };
                (service.clone(), role)
            })
            .collect::<BTreeMap<_, _>>();
        // Two pools of one role keep their service name.
        let mut seen = BTreeMap::<String, usize>::new();
        for role in services.values() {
            *seen.entry(role.clone()).or_default() += 1;
        }
        let services = services
            .into_iter()
            .map(|(service, role)| {
                let role = if seen[&role] > 1 {
                    format!("<{role}:{service}>")
                } else {
                    format!("<{role}>")
                };
                (service, role)
            })
            .collect();
        let engine = match manifest["spec"]["backendFramework"].as_str() {
            Some("vllm") => "vllm",
            _ => "sglang",
        };
        Self {
            name,
            services,
            engine,
        }
    }

    /// `demo-decode` → `<decode>`, `demo-nats` → `<nats>`; anything else keeps its name with the
    /// deployment's name as `<name>`. Names are not what the images depend on: upstream's
    /// discovery identity `<name>-disc` is ours `<name>-discovery`, both `<discovery>`.
    fn of_object(&self, object: &str) -> String {
        if let Some(suffix) = object.strip_prefix(&format!("{}-", self.name)) {
            if let Some(role) = self.services.get(suffix) {
                return role.clone();
            }
            let suffix = if suffix == "disc" {
                "discovery"
            } else {
                suffix
            };
            return format!("<{suffix}>");
        }
        object.replace(&self.name, "<name>")
    }
}

/// The main container of a pod: upstream's `infera`/`main`, ours `engine`, else the first.
fn main_index(containers: &[Value]) -> usize {
    containers
        .iter()
        .position(|c| matches!(c["name"].as_str(), Some("infera" | "main" | "engine")))
        .unwrap_or(0)
}

/// Equality-only label selector (`k=v,k2=v2`, as the router's `--k8s-label-selector`) → map.
fn selector_of(text: &str) -> BTreeMap<String, String> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn matches(selector: &BTreeMap<String, String>, labels: &Value) -> bool {
    !selector.is_empty()
        && selector
            .iter()
            .all(|(k, v)| labels[k].as_str() == Some(v.as_str()))
}

/// A free-form list of argv words (`sglang_argv`, `vllm_argv`) as sorted `--flag value…` groups:
/// order between flags is not what a parser reads.
fn flag_groups(argv: &[Value]) -> Value {
    let mut groups: Vec<Vec<Value>> = Vec::new();
    for word in argv {
        let is_flag = word.as_str().is_some_and(|w| w.starts_with("--"));
        match groups.last_mut() {
            Some(group) if !is_flag => group.push(word.clone()),
            _ => groups.push(vec![word.clone()]),
        }
    }
    groups.sort_by_key(|g| serde_json::to_string(g).unwrap_or_default());
    json!(groups)
}

/// One side's children reduced to the facts compared, keyed `<role> <what>`.
struct Facts {
    facts: BTreeMap<String, Value>,
    processes: Vec<(String, Process)>,
    /// (key prefix, selector) of each process, resolved once the processes are parsed.
    pods: Vec<(String, Value)>,
}

/// The sorted `field` of each item of the list `list` (container ports, mount paths).
fn sorted_field(list: &Value, field: &str) -> Value {
    let mut values: Vec<Value> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| item[field].clone())
        .filter(|value| !value.is_null())
        .collect();
    values.sort_by_key(Value::to_string);
    json!(values)
}

/// What one container is besides its command line, under `at`.
fn container_facts(facts: &mut BTreeMap<String, Value>, at: &str, c: &Value) {
    facts.insert(format!("{at} image"), c["image"].clone());
    facts.insert(
        format!("{at} ports"),
        sorted_field(&c["ports"], "containerPort"),
    );
    for var in c["env"].as_array().into_iter().flatten() {
        let value = match var["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            Some(path) => json!(format!("fieldRef {path}")),
            None => var["value"].clone(),
        };
        let name = var["name"].as_str().unwrap_or_default();
        facts.insert(format!("{at} env {name}"), value);
    }
    for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
        facts.insert(format!("{at} {probe}"), c[probe].clone());
    }
    facts.insert(format!("{at} preStop"), c["lifecycle"]["preStop"].clone());
    facts.insert(format!("{at} resources"), c["resources"].clone());
    facts.insert(
        format!("{at} mounts"),
        sorted_field(&c["volumeMounts"], "mountPath"),
    );
}

/// `side` names its processes for the parser (`<spec>: upstream …`).
fn facts_of(children: &[Value], roles: &Roles, namespace: &str, side: &str) -> Facts {
    let mut facts = BTreeMap::new();
    let mut processes = Vec::new();
    let mut pods = Vec::new();
    let name_of = |v: &Value| roles.of_object(v["metadata"]["name"].as_str().unwrap_or_default());
    for child in children {
        let kind = child["kind"].as_str().unwrap_or_default();
        let role = name_of(child);
        let at = format!("{kind} {role}");
        let spec = &child["spec"];
        facts.insert(format!("{at} exists"), json!(true));
        match kind {
            "Deployment" | "StatefulSet" | "LeaderWorkerSet" => {
                facts.insert(format!("{at} replicas"), spec["replicas"].clone());
                if kind == "Deployment" {
                    facts.insert(format!("{at} strategy"), spec["strategy"].clone());
                }
                if kind == "LeaderWorkerSet" {
                    facts.insert(
                        format!("{at} size"),
                        spec["leaderWorkerTemplate"]["size"].clone(),
                    );
                }
                if kind == "StatefulSet" {
                    let claims: Vec<Value> = spec["volumeClaimTemplates"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| json!([c["spec"]["resources"], c["spec"]["storageClassName"]]))
                        .collect();
                    facts.insert(format!("{at} volumeClaims"), json!(claims));
                }
                let workload = child["metadata"]["name"].as_str().unwrap_or_default();
                for (which, template, lws) in templates(child) {
                    let at = format!("{at} {which}");
                    let pod = &template["spec"];
                    facts.insert(
                        format!("{at} serviceAccount"),
                        pod["serviceAccountName"]
                            .as_str()
                            .map_or(Value::Null, |sa| json!(roles.of_object(sa))),
                    );
                    facts.insert(
                        format!("{at} terminationGracePeriodSeconds"),
                        pod["terminationGracePeriodSeconds"].clone(),
                    );
                    facts.insert(
                        format!("{at} readinessGates"),
                        pod["readinessGates"].clone(),
                    );
                    pods.push((at.clone(), template["metadata"]["labels"].clone()));
                    let containers = pod["containers"].as_array().cloned().unwrap_or_default();
                    let main = main_index(&containers);
                    let names: Vec<Value> = containers.iter().map(|c| c["name"].clone()).collect();
                    facts.insert(format!("{at} containers"), json!(names.len()));
                    for (i, c) in containers.iter().enumerate() {
                        let cname = if i == main {
                            "main"
                        } else {
                            c["name"].as_str().unwrap_or_default()
                        };
                        let at = format!("{at} {cname}");
                        container_facts(&mut facts, &at, c);
                        let python = c["command"][0]
                            .as_str()
                            .is_some_and(|p| p.starts_with("python"));
                        if kind == "StatefulSet" && !python {
                            facts.insert(format!("{at} args"), c["args"].clone());
                            continue;
                        }
                        let context = PodContext {
                            workload,
                            namespace,
                            lws,
                        };
                        let guess = match role.as_str() {
                            "<server>" => "server",
                            _ => roles.engine,
                        };
                        let id = format!("{side} {at}");
                        processes.push((at, process(id, c, &context, guess)));
                    }
                }
            }
            "Service" => {
                let mut ports: Vec<Value> = spec["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| json!([p["port"], p["targetPort"]]))
                    .collect();
                ports.sort_by_key(Value::to_string);
                facts.insert(format!("{at} ports"), json!(ports));
                facts.insert(format!("{at} headless"), json!(spec["clusterIP"] == "None"));
                let selector: BTreeMap<String, String> =
                    serde_json::from_value(spec["selector"].clone()).unwrap_or_default();
                facts.insert(format!("{at} selects"), selects(children, roles, &selector));
            }
            "Role" => {
                let mut rules: Vec<Value> = child["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let resource_names = r["resourceNames"]
                            .as_array()
                            .map(|names| {
                                names
                                    .iter()
                                    .map(|n| json!(roles.of_object(n.as_str().unwrap_or_default())))
                                    .collect::<Vec<_>>()
                            })
                            .unwrap_or_default();
                        json!({"apiGroups": sorted(&r["apiGroups"]), "resources": sorted(&r["resources"]),
                            "resourceNames": resource_names, "verbs": sorted(&r["verbs"])})
                    })
                    .collect();
                rules.sort_by_key(Value::to_string);
                facts.insert(format!("{at} rules"), json!(rules));
            }
            "RoleBinding" => {
                facts.insert(
                    format!("{at} role"),
                    json!(roles.of_object(child["roleRef"]["name"].as_str().unwrap_or_default())),
                );
                let subjects: Vec<Value> = child["subjects"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| {
                        json!([
                            s["kind"],
                            roles.of_object(s["name"].as_str().unwrap_or_default())
                        ])
                    })
                    .collect();
                facts.insert(format!("{at} subjects"), json!(subjects));
            }
            "InferencePool" => {
                facts.insert(format!("{at} targetPorts"), spec["targetPorts"].clone());
                let selector: BTreeMap<String, String> =
                    serde_json::from_value(spec["selector"]["matchLabels"].clone())
                        .unwrap_or_default();
                facts.insert(format!("{at} selects"), selects(children, roles, &selector));
                let epp = &spec["endpointPickerRef"];
                facts.insert(
                    format!("{at} endpointPicker"),
                    json!([
                        roles.of_object(epp["name"].as_str().unwrap_or_default()),
                        epp["port"]
                    ]),
                );
            }
            "HTTPRoute" => {
                let parents: Vec<Value> = spec["parentRefs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| json!([p["kind"], p["name"], p["namespace"]]))
                    .collect();
                facts.insert(format!("{at} parents"), json!(parents));
                let backends: Vec<Value> = spec["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|r| r["backendRefs"].as_array().cloned().unwrap_or_default())
                    .map(|b| {
                        json!([
                            b["group"],
                            b["kind"],
                            roles.of_object(b["name"].as_str().unwrap_or_default())
                        ])
                    })
                    .collect();
                facts.insert(format!("{at} backends"), json!(backends));
                facts.insert(format!("{at} hostnames"), spec["hostnames"].clone());
            }
            _ => {}
        }
    }
    Facts {
        facts,
        processes,
        pods,
    }
}

fn sorted(list: &Value) -> Value {
    let mut items: Vec<String> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    items.sort();
    json!(items)
}

/// The workload pods (by role and template) a selector selects.
fn selects(children: &[Value], roles: &Roles, selector: &BTreeMap<String, String>) -> Value {
    let mut found = BTreeSet::new();
    for child in children {
        let role = roles.of_object(child["metadata"]["name"].as_str().unwrap_or_default());
        for (which, template, _) in templates(child) {
            if matches(selector, &template["metadata"]["labels"]) {
                found.insert(format!("{role} {which}"));
            }
        }
    }
    json!(found)
}

/// Adds what upstream's parser made of each process, and which pods its label selector finds.
fn add_parsed(facts: &mut Facts, parsed: &BTreeMap<String, upstream::Parsed>) {
    for (at, p) in &facts.processes {
        let Some(result) = parsed.get(&p.name) else {
            continue;
        };
        facts.facts.insert(
            format!("{at} starts"),
            json!(result.error.as_deref().unwrap_or("yes")),
        );
        facts
            .facts
            .insert(format!("{at} program"), json!(p.program.as_ref().ok()));
        let Some(options) = result.options.as_object() else {
            continue;
        };
        for (option, value) in options {
            let nested = option == "server_args" && value.is_object();
            let entries: Vec<(String, &Value)> = if nested {
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (format!("{option}.{k}"), v))
                    .collect()
            } else {
                vec![(option.clone(), value)]
            };
            for (key, value) in entries {
                let value = match value.as_array() {
                    Some(words) if key.ends_with("_argv") => flag_groups(words),
                    _ => value.clone(),
                };
                facts.facts.insert(format!("{at} option {key}"), value);
            }
        }
        if let Some(selector) = options.get("k8s_label_selector").and_then(Value::as_str) {
            let selector = selector_of(selector);
            let found: BTreeSet<&String> = facts
                .pods
                .iter()
                .filter(|(_, labels)| matches(&selector, labels))
                .map(|(pod, _)| pod)
                .collect();
            facts.facts.insert(format!("{at} discovers"), json!(found));
        }
    }
}

/// Our children for `manifest` in `namespace`, as the API server stores them: created with a
/// server-side dry run, so that both sides carry the server's defaults (probe fields, a Service's
/// `targetPort`, a Deployment's strategy) and only what the operators wrote differs. Rendered for
/// `namespace`, dry-run in `dry_run_in` (where upstream's children do not hold the names).
async fn ours(
    client: &infera_e2e::kube::Client,
    manifest: &Value,
    namespace: &str,
    dry_run_in: &str,
) -> Vec<Value> {
    let mut idep = yaml::parse_deployments(&manifest.to_string())
        .expect("ours parses the spec")
        .remove(0);
    idep.metadata.namespace = Some(namespace.into());
    let valid = validate(&idep).unwrap_or_else(|e| panic!("ours refuses the spec: {e}"));
    let dry_run = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let mut children = Vec::new();
    for child in render(&valid) {
        let mut object: DynamicObject =
            serde_json::from_value(serde_json::to_value(&child).expect("json")).expect("an object");
        object.metadata.namespace = Some(dry_run_in.into());
        let types = object.types.clone().expect("apiVersion and kind");
        let gvk = GroupVersionKind::try_from(&types).expect("a group, version and kind");
        let api: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), dry_run_in, &ApiResource::from_gvk(&gvk));
        let stored = api
            .create(&dry_run, &object)
            .await
            .unwrap_or_else(|e| panic!("the API server refuses our {}: {e}", types.kind));
        let mut value = serde_json::to_value(&stored).expect("json");
        value["kind"] = json!(types.kind);
        value["metadata"]["namespace"] = json!(namespace);
        children.push(value);
    }
    children
}

/// Kinds upstream's operator creates, and which API serves them.
const KINDS: [(&str, &str, &str); 9] = [
    ("", "v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io", "v1", "Role"),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
    ("", "v1", "Service"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "StatefulSet"),
    ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    ("inference.networking.k8s.io", "v1", "InferencePool"),
    ("gateway.networking.k8s.io", "v1", "HTTPRoute"),
];

fn api_resource(group: &str, version: &str, kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind))
}

/// Upstream's children of the InferaDeployment `name` in `namespace`: what it owns.
async fn theirs(client: &infera_e2e::kube::Client, namespace: &str, uid: &str) -> Vec<Value> {
    let mut children = Vec::new();
    for (group, version, kind) in KINDS {
        let resource = api_resource(group, version, kind);
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
        for object in api.list(&ListParams::default()).await.expect("list") {
            let owned = object
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid);
            if owned {
                let mut value = serde_json::to_value(&object).expect("json");
                value["kind"] = json!(kind);
                children.push(value);
            }
        }
    }
    children
}

/// The documented differences: the backticked key in the first column of each table row of
/// docs/upstream-differential.md.
fn documented() -> Vec<String> {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/upstream-differential.md"))
        .expect("docs/upstream-differential.md");
    doc.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(key, _)| key.to_string()))
        .collect()
}

/// `pattern` with `*` matching any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().expect("split yields one part");
    let Some(mut text) = text.strip_prefix(first) else {
        return false;
    };
    for (i, part) in rest.iter().enumerate() {
        if i == rest.len() - 1 {
            return text.ends_with(part);
        }
        match text.find(part) {
            Some(at) => text = &text[at + part.len()..],
            None => return false,
        }
    }
    text.is_empty()
}

#[test]
fn globs_match_as_documented() {
    assert!(glob(
        "Deployment <*> pod main readinessProbe",
        "Deployment <decode> pod main readinessProbe"
    ));
    assert!(glob("a*", "abc"));
    assert!(glob("*c", "abc"));
    assert!(!glob("a*d", "abc"));
    assert!(glob("abc", "abc"));
    assert!(!glob("abc", "abcd"));
}

#[tokio::test]
async fn our_children_match_upstreams_operator_or_differ_as_documented() -> anyhow::Result<()> {
    let built =
        std::process::Command::new(format!("{ROOT}/tests/upstream/operator.sh")).output()?;
    anyhow::ensure!(
        built.status.success(),
        "tests/upstream/operator.sh: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let manager = PathBuf::from(
        String::from_utf8_lossy(&built.stdout)
            .trim()
            .lines()
            .last()
            .unwrap_or_default(),
    );
    let cluster = PrivateCluster::up(1)?;
    let admin = cluster.admin().await?;
    let bin = test_bin_dir()?;
    let mut crds = vec![
        snapshot::upstream()
            .join("deploy/operator/config/crd/bases/infera.amd.com_inferadeployments.yaml"),
    ];
    for dir in ["share/lws/crds", "share/gateway"] {
        for entry in std::fs::read_dir(bin.join(dir))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "yaml") {
                crds.push(path);
            }
        }
    }
    for crd in &crds {
        apply_yaml(&admin, &std::fs::read_to_string(crd)?).await?;
    }
    // Discovery sees every CRD before upstream's manager starts: it looks LeaderWorkerSet up once.
    let idep_resource = api_resource("infera.amd.com", "v1alpha1", "InferaDeployment");
    eventually(Duration::from_secs(30), || async {
        for (group, version, kind) in
            KINDS
                .iter()
                .chain([&("infera.amd.com", "v1alpha1", "InferaDeployment")])
        {
            infera_e2e::kube::discovery::pinned_kind(
                &admin,
                &GroupVersionKind::gvk(group, version, kind),
            )
            .await?;
        }
        anyhow::Ok(())
    })
    .await?;
    let mut operator = Spawned::spawn(
        Path::new(&manager),
        ["--metrics-bind-address=0", "--health-probe-bind-address=0"],
        &cluster.kubeconfig,
        &[],
        "upstream-operator",
    )?;

    let specs = specs();
    let mut sides = Vec::new();
    for (n, spec) in specs.iter().enumerate() {
        let namespace = format!("diff-{n}");
        let dry_run_in = format!("diff-{n}-ours");
        let namespaces: Api<DynamicObject> =
            Api::all_with(admin.clone(), &api_resource("", "v1", "Namespace"));
        for name in [&namespace, &dry_run_in] {
            let object =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            namespaces
                .create(&PostParams::default(), &serde_json::from_value(object)?)
                .await?;
        }
        let mut manifest = spec.manifest.clone();
        manifest["metadata"]["namespace"] = json!(namespace);
        let api: Api<DynamicObject> =
            Api::namespaced_with(admin.clone(), &namespace, &idep_resource);
        let created = api
            .create(
                &PostParams::default(),
                &serde_json::from_value(manifest.clone())?,
            )
            .await?;
        let name = created.metadata.name.clone().unwrap_or_default();
        let uid = created.metadata.uid.clone().unwrap_or_default();
        // Upstream writes status once every child is applied (inferadeployment_controller.go).
        eventually(Duration::from_secs(60), async || {
            operator.ensure_running()?;
            let now = api.get(&name).await?;
            let observed = now.data["status"]["observedGeneration"].as_i64();
            anyhow::ensure!(
                observed == now.metadata.generation,
                "{}: not reconciled yet: {:?}",
                spec.label,
                now.data["status"]
            );
            anyhow::Ok(())
        })
        .await?;
        let roles = Roles::of(&manifest);
        let upstream_side = facts_of(
            &theirs(&admin, &namespace, &uid).await,
            &roles,
            &namespace,
            &format!("{}: upstream", spec.label),
        );
        let our_side = facts_of(
            &ours(&admin, &manifest, &namespace, &dry_run_in).await,
            &roles,
            &namespace,
            &format!("{}: ours", spec.label),
        );
        sides.push((spec.label.clone(), upstream_side, our_side));
    }
    drop(operator);

    let parsed = upstream::parse(
        sides
            .iter()
            .flat_map(|(_, a, b)| a.processes.iter().chain(&b.processes))
            .map(|(_, p)| p),
    )?;

    let documented = documented();
    let mut seen = BTreeSet::new();
    let mut unexplained = Vec::new();
    let mut compared = 0;
    assert_eq!(sides.len(), 14, "the seed twice and upstream's 12 examples");
    for (label, mut theirs, mut ours) in sides {
        add_parsed(&mut theirs, &parsed);
        add_parsed(&mut ours, &parsed);
        // Every process we start does (a command the user wrote in `extraPodSpec`, e.g. behind
        // an exec wrapper, names no parser and is the user's).
        for (key, value) in &ours.facts {
            if let Some(at) = key.strip_suffix(" starts")
                && ours
                    .facts
                    .get(&format!("{at} program"))
                    .is_some_and(|p| !p.is_null())
            {
                assert_eq!(value, "yes", "{label}: our `{key}`");
            }
        }
        compared += theirs.facts.len();
        let keys: BTreeSet<&String> = theirs.facts.keys().chain(ours.facts.keys()).collect();
        for key in keys {
            let (a, b) = (theirs.facts.get(key), ours.facts.get(key));
            if a == b {
                continue;
            }
            match documented.iter().find(|pattern| glob(pattern, key)) {
                Some(pattern) => {
                    seen.insert(pattern.clone());
                }
                None => unexplained.push(format!(
                    "{label}: `{key}`\n    upstream: {}\n    ours:     {}",
                    a.map_or("(absent)".into(), Value::to_string),
                    b.map_or("(absent)".into(), Value::to_string)
                )),
            }
        }
    }
    eprintln!("compared {compared} facts of upstream's children with ours");
    assert!(compared > 1_000, "only {compared} facts compared");
    let stale: Vec<&String> = documented.iter().filter(|d| !seen.contains(*d)).collect();
    assert!(
        unexplained.is_empty(),
        "{} differences from upstream's operator are neither fixed nor listed in docs/upstream-differential.md:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        stale.is_empty(),
        "docs/upstream-differential.md lists differences no spec shows any more: {stale:?}"
    );
    Ok(())
}
