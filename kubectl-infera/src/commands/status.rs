//! `kubectl infera status`: the list (`-A`), one deployment in detail, and `--watch`.
//!
//! API budget: the list is one LIST of InferaDeployments; the detail is one GET of the deployment,
//! one LIST of its pods (label selector) and one LIST of the namespace's warning events. Never one
//! call per object. `--watch` opens watches on the same (no polling) and redraws on change.

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt, future, stream};
use infera_core::{ComponentType, InferaDeployment, naming};
use k8s_openapi::{
    api::core::v1::{Event, Pod},
    jiff::Timestamp,
};
use kube::{
    Api,
    api::ListParams,
    runtime::{WatchStreamExt, reflector, watcher},
};
use serde::Serialize;

use crate::{
    cli::{GlobalArgs, Output, StatusArgs},
    client::{self, Kube},
    diagnose,
    duration::age,
    error::{Error, Result},
    printer::{Cell, Printer, Style, table},
};

use infera_core::naming::LWS_LABEL_GROUP_INDEX as LWS_GROUP_INDEX;

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub namespace: String,
    pub name: String,
    pub backend: String,
    pub state: String,
    /// Services whose ready replicas reach the desired count, of all services.
    pub services_ready: String,
    pub reason: String,
    pub endpoint: String,
    pub age_seconds: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceRow {
    pub name: String,
    pub role: String,
    pub kind: String,
    pub desired_replicas: i32,
    pub ready_replicas: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes_per_group: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_groups: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRow {
    pub name: String,
    pub service: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub phase: String,
    pub ready: String,
    pub restarts: i32,
    pub node: String,
    /// Why it is not ready, when a container says (e.g. ImagePullBackOff).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    pub age_seconds: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionRow {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WarningRow {
    pub object: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
    pub age_seconds: i64,
}

/// Everything `status NAME` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    #[serde(flatten)]
    pub summary: Summary,
    pub generation: i64,
    pub observed_generation: i64,
    pub services: Vec<ServiceRow>,
    pub pods: Vec<PodRow>,
    pub conditions: Vec<ConditionRow>,
    pub warnings: Vec<WarningRow>,
    /// Why it is not Ready, from pods and events (empty when Ready).
    pub blocking: Vec<String>,
}

fn seconds_since(
    t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    now: Timestamp,
) -> i64 {
    t.map(|t| now.as_second() - t.0.as_second())
        .unwrap_or_default()
}

pub fn summarize(idep: &InferaDeployment, now: Timestamp) -> Summary {
    let status = idep.status.clone().unwrap_or_default();
    let ready = status
        .services
        .values()
        .filter(|s| s.ready_replicas >= s.desired_replicas)
        .count();
    // The operator also reports its own plumbing (e.g. nats): count what it reports.
    let total = if status.services.is_empty() {
        idep.spec.services.len()
    } else {
        status.services.len()
    };
    let reason = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.reason.clone())
        .unwrap_or_default();
    Summary {
        namespace: idep.metadata.namespace.clone().unwrap_or_default(),
        name: idep.metadata.name.clone().unwrap_or_default(),
        backend: idep.spec.backend_framework.to_string(),
        state: status
            .state
            .map(|s| s.to_string())
            .unwrap_or_else(|| "Pending".into()),
        services_ready: format!("{ready}/{total}"),
        reason,
        endpoint: status.endpoint.unwrap_or_default(),
        age_seconds: seconds_since(idep.metadata.creation_timestamp.as_ref(), now),
    }
}

fn state_style(state: &str) -> Option<Style> {
    match state {
        "Ready" => Some(Style::Good),
        "Deploying" | "Pending" => Some(Style::Warn),
        "Degraded" | "Failed" => Some(Style::Bad),
        _ => None,
    }
}

/// The list as a table.
pub fn list_table(printer: &Printer, rows: &[Summary], all_namespaces: bool, wide: bool) -> String {
    let mut headers = vec![];
    if all_namespaces {
        headers.push("NAMESPACE");
    }
    headers.extend(["NAME", "BACKEND", "STATE", "SERVICES", "AGE"]);
    if wide {
        headers.extend(["REASON", "ENDPOINT"]);
    }
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![];
            if all_namespaces {
                row.push(Cell::from(r.namespace.as_str()));
            }
            row.extend([
                Cell::from(r.name.as_str()),
                Cell::from(r.backend.as_str()),
                Cell::styled(r.state.clone(), state_style(&r.state)),
                Cell::from(r.services_ready.as_str()),
                Cell::from(age(r.age_seconds)),
            ]);
            if wide {
                row.extend([
                    Cell::from(r.reason.as_str()),
                    Cell::from(r.endpoint.as_str()),
                ]);
            }
            row
        })
        .collect();
    table(printer, &headers, &cells)
}

/// Builds the detail from one deployment, its pods and the namespace's warning events.
pub fn detail(idep: &InferaDeployment, pods: &[Pod], events: &[Event], now: Timestamp) -> Detail {
    let status = idep.status.clone().unwrap_or_default();
    let services = idep
        .spec
        .services
        .iter()
        .map(|(service, spec)| {
            let observed = status.services.get(service);
            let nodes = spec.number_of_nodes.filter(|n| *n > 1);
            ServiceRow {
                name: service.clone(),
                role: match spec.component_type {
                    ComponentType::Server => "server".into(),
                    ComponentType::Worker => spec.role.unwrap_or_default().to_string(),
                },
                kind: observed.map(|s| s.kind.clone()).unwrap_or_else(|| {
                    if nodes.is_some() {
                        "LeaderWorkerSet"
                    } else {
                        "Deployment"
                    }
                    .into()
                }),
                desired_replicas: observed
                    .map(|s| s.desired_replicas)
                    .unwrap_or(spec.replicas.unwrap_or(1)),
                ready_replicas: observed.map(|s| s.ready_replicas).unwrap_or(0),
                nodes_per_group: nodes,
                ready_groups: observed.and_then(|s| s.ready_groups),
            }
        })
        .chain(
            status
                .services
                .iter()
                .filter(|(n, _)| !idep.spec.services.contains_key(*n))
                .map(|(n, s)| ServiceRow {
                    name: n.clone(),
                    role: n.clone(),
                    kind: s.kind.clone(),
                    desired_replicas: s.desired_replicas,
                    ready_replicas: s.ready_replicas,
                    nodes_per_group: None,
                    ready_groups: s.ready_groups,
                }),
        )
        .collect();
    let mut pod_rows: Vec<PodRow> = pods
        .iter()
        .map(|pod| {
            let labels = pod.metadata.labels.clone().unwrap_or_default();
            let pod_status = pod.status.clone().unwrap_or_default();
            let containers = pod_status.container_statuses.clone().unwrap_or_default();
            let total = pod
                .spec
                .as_ref()
                .map(|s| s.containers.len())
                .unwrap_or(containers.len());
            let ready = containers.iter().filter(|c| c.ready).count();
            let reason = containers
                .iter()
                .find_map(|c| {
                    c.state
                        .as_ref()
                        .and_then(|s| s.waiting.as_ref())
                        .and_then(|w| w.reason.clone())
                })
                .or_else(|| {
                    pod_status
                        .conditions
                        .iter()
                        .flatten()
                        .find(|c| c.type_ == "PodScheduled" && c.status == "False")
                        .and_then(|c| c.reason.clone())
                })
                .unwrap_or_default();
            PodRow {
                name: pod.metadata.name.clone().unwrap_or_default(),
                service: labels
                    .get(naming::LABEL_SERVICE)
                    .cloned()
                    .unwrap_or_default(),
                group: labels.get(LWS_GROUP_INDEX).cloned(),
                phase: pod_status.phase.clone().unwrap_or_else(|| "Unknown".into()),
                ready: format!("{ready}/{total}"),
                restarts: containers.iter().map(|c| c.restart_count).sum(),
                node: pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .unwrap_or_default(),
                reason,
                age_seconds: seconds_since(pod.metadata.creation_timestamp.as_ref(), now),
            }
        })
        .collect();
    pod_rows.sort_by(|a, b| (&a.service, &a.group, &a.name).cmp(&(&b.service, &b.group, &b.name)));
    let conditions = status
        .conditions
        .iter()
        .map(|c| ConditionRow {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
        })
        .collect();
    let owned = owned_names(idep, pods);
    let mut mine: Vec<&Event> = events
        .iter()
        .filter(|e| {
            e.type_.as_deref() == Some("Warning")
                && e.involved_object
                    .name
                    .as_deref()
                    .is_some_and(|object| owned.contains(object))
        })
        .collect();
    mine.sort_by_key(|e| std::cmp::Reverse(diagnose::event_time(e)));
    let warnings = mine
        .iter()
        .take(10)
        .map(|e| WarningRow {
            object: format!(
                "{}/{}",
                e.involved_object.kind.as_deref().unwrap_or("?"),
                e.involved_object.name.as_deref().unwrap_or("?")
            ),
            reason: e.reason.clone().unwrap_or_default(),
            message: e.message.clone().unwrap_or_default().trim().to_string(),
            count: e.count.unwrap_or(1),
            age_seconds: now.as_second() - diagnose::event_time(e),
        })
        .collect();
    let summary = summarize(idep, now);
    let blocking = if summary.state == "Ready" {
        Vec::new()
    } else {
        let owned: Vec<Event> = mine.into_iter().cloned().collect();
        diagnose::reasons(pods, &owned)
    };
    Detail {
        summary,
        generation: idep.metadata.generation.unwrap_or_default(),
        observed_generation: status.observed_generation.unwrap_or_default(),
        services,
        pods: pod_rows,
        conditions,
        warnings,
        blocking,
    }
}

/// Names of objects whose events belong to this deployment, from what is already fetched: the
/// deployment, its pods (label `infera.amd.com/deployment=<name>`) and their owners, and the
/// children the operator names per service. Never a name prefix: `demo-x`'s children are not
/// `demo`'s.
fn owned_names(idep: &InferaDeployment, pods: &[Pod]) -> std::collections::BTreeSet<String> {
    let name = idep.metadata.name.clone().unwrap_or_default();
    let mut owned = std::collections::BTreeSet::from([name.clone()]);
    for pod in pods {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        if labels.get(naming::LABEL_DEPLOYMENT) != Some(&name) {
            continue;
        }
        owned.extend(pod.metadata.name.clone());
        for owner in pod.metadata.owner_references.iter().flatten() {
            owned.insert(owner.name.clone());
        }
        if let Some(service) = labels.get(naming::LABEL_SERVICE) {
            owned.insert(format!("{name}-{service}"));
        }
    }
    let status = idep.status.clone().unwrap_or_default();
    for service in idep.spec.services.keys().chain(status.services.keys()) {
        owned.insert(format!("{name}-{service}"));
    }
    for component in [
        naming::Component::Nats,
        naming::Component::Discovery,
        naming::Component::EndpointPicker,
        naming::Component::Gateway,
    ] {
        owned.insert(component.object_name(&name));
    }
    owned.insert(naming::nats_headless_name(&name));
    owned.insert(naming::inference_pool_name(&name));
    owned.insert(naming::http_route_name(&name));
    owned
}

/// The detail as text.
pub fn detail_text(printer: &Printer, d: &Detail) -> String {
    let s = &d.summary;
    let mut out = String::new();
    let field = |out: &mut String, k: &str, v: &str| {
        out.push_str(&format!("{:<11} {v}\n", format!("{k}:")))
    };
    field(&mut out, "Name", &s.name);
    field(&mut out, "Namespace", &s.namespace);
    field(&mut out, "Backend", &s.backend);
    let stale = if d.observed_generation < d.generation {
        format!(
            " (status is for generation {}, spec is at {})",
            d.observed_generation, d.generation
        )
    } else {
        String::new()
    };
    field(
        &mut out,
        "State",
        &format!(
            "{}{stale}",
            printer.paint(state_style(&s.state).unwrap_or(Style::Bold), &s.state)
        ),
    );
    field(
        &mut out,
        "Endpoint",
        if s.endpoint.is_empty() {
            "<none yet>"
        } else {
            &s.endpoint
        },
    );
    field(&mut out, "Age", &age(s.age_seconds));
    out.push_str("\nServices:\n");
    let rows: Vec<Vec<Cell>> = d
        .services
        .iter()
        .map(|r| {
            let ok = r.ready_replicas >= r.desired_replicas;
            let groups = match (r.nodes_per_group, r.ready_groups) {
                (Some(n), g) => format!(
                    "{}/{} ready ({n} pods each)",
                    g.unwrap_or(0),
                    r.desired_replicas
                ),
                _ => String::new(),
            };
            vec![
                Cell::from(r.name.as_str()),
                Cell::from(r.role.as_str()),
                Cell::from(r.kind.as_str()),
                Cell::styled(
                    format!("{}/{}", r.ready_replicas, r.desired_replicas),
                    Some(if ok { Style::Good } else { Style::Warn }),
                ),
                Cell::from(groups),
            ]
        })
        .collect();
    out.push_str(&indent(&table(
        printer,
        &["SERVICE", "ROLE", "KIND", "READY", "GROUPS"],
        &rows,
    )));
    out.push_str("\nPods:\n");
    if d.pods.is_empty() {
        out.push_str("  <none>\n");
    } else {
        let rows: Vec<Vec<Cell>> = d
            .pods
            .iter()
            .map(|p| {
                vec![
                    Cell::from(p.name.as_str()),
                    Cell::from(p.service.as_str()),
                    Cell::from(p.group.clone().unwrap_or_else(|| "-".into())),
                    Cell::styled(
                        p.phase.clone(),
                        (p.phase != "Running").then_some(Style::Warn),
                    ),
                    Cell::from(p.ready.as_str()),
                    Cell::from(p.restarts.to_string()),
                    Cell::from(p.node.as_str()),
                    Cell::from(age(p.age_seconds)),
                    Cell::styled(p.reason.clone(), Some(Style::Bad)),
                ]
            })
            .collect();
        let headers = [
            "POD", "SERVICE", "GROUP", "PHASE", "READY", "RESTARTS", "NODE", "AGE", "REASON",
        ];
        out.push_str(&indent(&table(printer, &headers, &rows)));
    }
    out.push_str("\nConditions:\n");
    if d.conditions.is_empty() {
        out.push_str("  <none: the operator has not reported yet>\n");
    } else {
        let rows: Vec<Vec<Cell>> = d
            .conditions
            .iter()
            .map(|c| {
                vec![
                    Cell::from(c.type_.as_str()),
                    Cell::from(c.status.as_str()),
                    Cell::from(c.reason.as_str()),
                    Cell::from(c.message.as_str()),
                ]
            })
            .collect();
        out.push_str(&indent(&table(
            printer,
            &["TYPE", "STATUS", "REASON", "MESSAGE"],
            &rows,
        )));
    }
    out.push_str("\nRecent warnings:\n");
    if d.warnings.is_empty() {
        out.push_str("  <none>\n");
    } else {
        for w in &d.warnings {
            let count = if w.count > 1 {
                format!(" (x{})", w.count)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "  {:>4}  {}  {}: {}{count}\n",
                age(w.age_seconds),
                w.object,
                printer.paint(Style::Warn, &w.reason),
                w.message
            ));
        }
    }
    if !d.blocking.is_empty() {
        out.push_str("\nWhy it is not Ready:\n");
        for b in &d.blocking {
            out.push_str(&format!("  - {b}\n"));
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// One deployment, its pods and the namespace's warning events: three requests.
pub async fn gather(
    kube: &Kube,
    namespace: &str,
    name: &str,
) -> Result<(InferaDeployment, Vec<Pod>, Vec<Event>)> {
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), namespace);
    let idep = api.get(name).await.map_err(|e| match e {
        kube::Error::Api(s) if s.code == 404 => Error::Api {
            action: format!("InferaDeployment {namespace}/{name}"),
            message: "not found; `kubectl infera status -A` lists them all".into(),
            code: 404,
        },
        e => Error::kube(format!("reading InferaDeployment {namespace}/{name}"), e),
    })?;
    let (pods, events) = pods_and_events(kube, namespace, name).await?;
    Ok((idep, pods, events))
}

pub async fn pods_and_events(
    kube: &Kube,
    namespace: &str,
    name: &str,
) -> Result<(Vec<Pod>, Vec<Event>)> {
    let pods: Api<Pod> = Api::namespaced(kube.client.clone(), namespace);
    let selector = format!("{}={name}", naming::LABEL_DEPLOYMENT);
    let pods = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::kube(format!("listing pods of {namespace}/{name}"), e))?
        .items;
    let events: Api<Event> = Api::namespaced(kube.client.clone(), namespace);
    let events = match events
        .list(&ListParams::default().fields("type=Warning"))
        .await
    {
        Ok(list) => list.items,
        Err(kube::Error::Api(s)) if s.code == 403 => Vec::new(),
        Err(e) => return Err(Error::kube(format!("listing events in {namespace}"), e)),
    };
    Ok((pods, events))
}

pub async fn run(args: &StatusArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    if args.watch && args.output == Output::Yaml {
        return Err(Error::Usage(
            "--watch cannot stream YAML: use -o json (one JSON document per change) or a table"
                .into(),
        ));
    }
    let kube = client::connect(global).await?;
    match (&args.name, args.watch) {
        (Some(name), false) => {
            let (idep, pods, events) = gather(&kube, &kube.namespace, name).await?;
            print_detail(
                printer,
                args.output,
                &detail(&idep, &pods, &events, Timestamp::now()),
            )
        }
        (None, false) => {
            let api: Api<InferaDeployment> = if args.all_namespaces {
                Api::all(kube.client.clone())
            } else {
                Api::namespaced(kube.client.clone(), &kube.namespace)
            };
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(|e| Error::kube("listing InferaDeployments", e))?;
            let now = Timestamp::now();
            let mut rows: Vec<Summary> = list.items.iter().map(|i| summarize(i, now)).collect();
            rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
            print_list(printer, args, &rows, &kube.namespace)
        }
        (None, true) => watch_list(&kube, args, printer).await,
        (Some(name), true) => watch_detail(&kube, name, args, printer).await,
    }
}

fn print_detail(printer: &Printer, output: Output, detail: &Detail) -> Result<()> {
    match output {
        Output::Json => printer.json(detail),
        Output::Yaml => printer.yaml(detail),
        Output::Table | Output::Wide => {
            printer.out(&detail_text(printer, detail));
            Ok(())
        }
    }
}

fn print_list(
    printer: &Printer,
    args: &StatusArgs,
    rows: &[Summary],
    namespace: &str,
) -> Result<()> {
    match args.output {
        Output::Json => printer.json(&serde_json::json!({"items": rows})),
        Output::Yaml => printer.yaml(&serde_json::json!({"items": rows})),
        Output::Table | Output::Wide if rows.is_empty() => {
            let scope = if args.all_namespaces {
                "any namespace".to_string()
            } else {
                format!("namespace {namespace}")
            };
            printer.note(&format!(
                "No InferaDeployments in {scope}. Create one with `kubectl infera deploy`."
            ));
            Ok(())
        }
        Output::Table | Output::Wide => {
            printer.out(&list_table(
                printer,
                rows,
                args.all_namespaces,
                args.output == Output::Wide,
            ));
            Ok(())
        }
    }
}

/// A change line for non-terminal `--watch`.
pub fn change_line(event: &str, s: &Summary) -> String {
    format!(
        "{} {event} {}/{} state={} services={} reason={}",
        Timestamp::now()
            .round(jiff_second())
            .unwrap_or(Timestamp::now()),
        s.namespace,
        s.name,
        s.state,
        s.services_ready,
        if s.reason.is_empty() { "-" } else { &s.reason }
    )
}

fn jiff_second() -> k8s_openapi::jiff::Unit {
    k8s_openapi::jiff::Unit::Second
}

async fn watch_list(kube: &Kube, args: &StatusArgs, printer: &Printer) -> Result<()> {
    let api: Api<InferaDeployment> = if args.all_namespaces {
        Api::all(kube.client.clone())
    } else {
        Api::namespaced(kube.client.clone(), &kube.namespace)
    };
    let mut current: BTreeMap<(String, String), Summary> = BTreeMap::new();
    let mut initial: BTreeMap<(String, String), Summary> = BTreeMap::new();
    let mut ready = false;
    let redraw = printer.stdout_is_tty() && matches!(args.output, Output::Table | Output::Wide);
    let mut stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = stream
        .try_next()
        .await
        .map_err(|e| Error::Failed(format!("watching InferaDeployments: {e}")))?
    {
        let now = Timestamp::now();
        let mut changes: Vec<(&str, Summary)> = Vec::new();
        match event {
            watcher::Event::Init => initial.clear(),
            watcher::Event::InitApply(idep) => {
                let s = summarize(&idep, now);
                initial.insert((s.namespace.clone(), s.name.clone()), s);
            }
            watcher::Event::InitDone => {
                for (key, s) in &initial {
                    if current.get(key) != Some(s) {
                        changes.push((if ready { "MODIFIED" } else { "ADDED" }, s.clone()));
                    }
                }
                current = std::mem::take(&mut initial);
                ready = true;
            }
            watcher::Event::Apply(idep) => {
                let s = summarize(&idep, now);
                let key = (s.namespace.clone(), s.name.clone());
                let kind = if current.contains_key(&key) {
                    "MODIFIED"
                } else {
                    "ADDED"
                };
                // Age alone changes nothing worth a line.
                let same = current.get(&key).is_some_and(|old| {
                    Summary {
                        age_seconds: 0,
                        ..old.clone()
                    } == Summary {
                        age_seconds: 0,
                        ..s.clone()
                    }
                });
                current.insert(key, s.clone());
                if !same {
                    changes.push((kind, s));
                }
            }
            watcher::Event::Delete(idep) => {
                let s = summarize(&idep, now);
                current.remove(&(s.namespace.clone(), s.name.clone()));
                changes.push(("DELETED", s));
            }
        }
        if !ready || (changes.is_empty() && !redraw) {
            continue;
        }
        if redraw {
            printer.clear_screen();
            let rows: Vec<Summary> = current.values().cloned().collect();
            printer.out(&format!(
                "{}\n",
                printer.paint(
                    Style::Dim,
                    &format!(
                        "watching InferaDeployments ({}); Ctrl-C to stop",
                        Timestamp::now().round(jiff_second()).unwrap_or(now)
                    )
                )
            ));
            printer.out(&list_table(
                printer,
                &rows,
                args.all_namespaces,
                args.output == Output::Wide,
            ));
            continue;
        }
        for (kind, s) in changes {
            match args.output {
                Output::Json => {
                    printer.json_line(&serde_json::json!({"type": kind, "object": s}))?;
                }
                _ => printer.out(&change_line(kind, &s)),
            }
        }
    }
    Ok(())
}

/// What changed in `status NAME --watch`.
enum Update {
    Deployment(Option<Box<InferaDeployment>>),
    /// A pod event; `true` once the initial list is complete.
    Pods(bool),
    /// A warning event; `true` once the initial list is complete (or events cannot be read).
    Events(bool),
}

/// Events are optional: a user who may not list them still gets the rest.
fn forbidden<T>(item: &std::result::Result<T, watcher::Error>) -> bool {
    matches!(
        item,
        Err(watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s))) if s.code == 403
    )
}

/// Three watches, no polling: the deployment (field selector metadata.name), its pods (label
/// selector) and the namespace's warning events; redraws from the cached state on each change.
async fn watch_detail(kube: &Kube, name: &str, args: &StatusArgs, printer: &Printer) -> Result<()> {
    let namespace = kube.namespace.clone();
    let ideps: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &namespace);
    let pods_api: Api<Pod> = Api::namespaced(kube.client.clone(), &namespace);
    let events_api: Api<Event> = Api::namespaced(kube.client.clone(), &namespace);
    let selector = format!("{}={name}", naming::LABEL_DEPLOYMENT);
    let (pod_store, pod_writer) = reflector::store::<Pod>();
    let (event_store, event_writer) = reflector::store::<Event>();
    let deployment =
        crate::watch::object(ideps, name, format!("InferaDeployment {namespace}/{name}"))
            .map(|r| r.map(|d| Update::Deployment(d.map(Box::new))))
            .boxed();
    let what_pods = format!("pods of {namespace}/{name}");
    let pod_updates = watcher(pods_api, watcher::Config::default().labels(&selector))
        .default_backoff()
        .reflect(pod_writer)
        .filter_map(move |r| {
            future::ready(match r {
                Ok(e) => Some(Ok(Update::Pods(matches!(e, watcher::Event::InitDone)))),
                Err(e) => crate::watch::fatal(&what_pods, e).map(Err),
            })
        })
        .boxed();
    let what_events = format!("events in {namespace}");
    let event_updates = watcher(
        events_api,
        watcher::Config::default().fields("type=Warning"),
    )
    .default_backoff()
    .reflect(event_writer)
    .take_while(|r| future::ready(!forbidden(r)))
    .filter_map(move |r| {
        future::ready(match r {
            Ok(e) => Some(Ok(Update::Events(matches!(e, watcher::Event::InitDone)))),
            Err(e) => crate::watch::fatal(&what_events, e).map(Err),
        })
    })
    .chain(stream::once(future::ready(Ok(Update::Events(true)))))
    .boxed();
    let mut updates = stream::select_all([deployment, pod_updates, event_updates]);
    let (mut idep, mut pods_ready, mut events_ready) = (None, false, false);
    let mut last: Option<Detail> = None;
    let redraw = printer.stdout_is_tty() && matches!(args.output, Output::Table | Output::Wide);
    while let Some(update) = updates.next().await {
        match update? {
            Update::Deployment(Some(d)) => idep = Some(d),
            Update::Deployment(None) if idep.is_some() => {
                printer.note(&format!("InferaDeployment {namespace}/{name} was deleted"));
                return Ok(());
            }
            Update::Deployment(None) => {
                return Err(Error::Api {
                    action: format!("InferaDeployment {namespace}/{name}"),
                    message: "not found; `kubectl infera status -A` lists them all".into(),
                    code: 404,
                });
            }
            Update::Pods(done) => pods_ready |= done,
            Update::Events(done) => events_ready |= done,
        }
        let Some(current) = &idep else { continue };
        if !(pods_ready && events_ready) {
            continue;
        }
        let pods: Vec<Pod> = pod_store.state().iter().map(|p| (**p).clone()).collect();
        let events: Vec<Event> = event_store.state().iter().map(|e| (**e).clone()).collect();
        let mut d = detail(current, &pods, &events, Timestamp::now());
        // Ages tick every second; compare without them.
        let key = |d: &Detail| {
            let mut d = d.clone();
            d.summary.age_seconds = 0;
            d.pods.iter_mut().for_each(|p| p.age_seconds = 0);
            d.warnings.iter_mut().for_each(|w| w.age_seconds = 0);
            d
        };
        let changed = last.as_ref().is_none_or(|l| key(l) != key(&d));
        if redraw {
            printer.clear_screen();
            printer.out(&detail_text(printer, &d));
        } else if changed {
            match args.output {
                Output::Json => printer.json_line(&d)?,
                _ => printer.out(&change_line("MODIFIED", &d.summary)),
            }
        }
        d.summary.age_seconds = 0;
        last = Some(d);
    }
    Err(Error::Failed(format!(
        "watching {namespace}/{name}: the watch ended"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idep(state: &str) -> InferaDeployment {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/multinode.yaml"
        ))
        .unwrap_or_default();
        let mut idep = infera_core::yaml::parse_deployments(&text)
            .unwrap_or_default()
            .remove(0);
        idep.metadata.namespace = Some("team-a".into());
        idep.metadata.generation = Some(2);
        idep.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                Timestamp::from_second(1_000).unwrap_or_default(),
            ));
        idep.status = serde_json::from_value(serde_json::json!({
            "state": state, "observedGeneration": 2, "endpoint": "http://big-server.team-a.svc.cluster.local:8000",
            "conditions": [{"type": "Ready", "status": "False", "reason": "PodsNotReady", "message": "worker: 1/2 groups ready", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "services": {
                "server": {"kind": "Deployment", "desiredReplicas": 1, "readyReplicas": 1},
                "worker": {"kind": "LeaderWorkerSet", "desiredReplicas": 2, "readyReplicas": 1, "readyGroups": 1}
            }
        }))
        .ok();
        idep
    }

    fn pod(name: &str, group: &str, ready: bool, waiting: Option<&str>) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "creationTimestamp": "1970-01-01T00:20:00Z", "labels": {
                "infera.amd.com/deployment": "big", "infera.amd.com/service": "worker", LWS_GROUP_INDEX: group}},
            "spec": {"nodeName": "gpu-node-0", "containers": [{"name": "engine"}]},
            "status": {"phase": if ready { "Running" } else { "Pending" }, "containerStatuses": [{
                "name": "engine", "image": "img", "imageID": "", "ready": ready, "restartCount": 0,
                "state": match waiting { Some(r) => serde_json::json!({"waiting": {"reason": r}}), None => serde_json::json!({"running": {}}) }}]}
        }))
        .unwrap_or_default()
    }

    #[test]
    fn list_table_shows_state_and_ready_services() {
        let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
        let rows = [summarize(&idep("Deploying"), now)];
        assert_eq!(
            list_table(&Printer::plain(), &rows, true, false),
            "NAMESPACE   NAME   BACKEND   STATE       SERVICES   AGE\nteam-a      big    vllm      Deploying   1/2        5m\n"
        );
        assert_eq!(
            list_table(&Printer::plain(), &rows, false, true),
            "NAME   BACKEND   STATE       SERVICES   AGE   REASON         ENDPOINT\nbig    vllm      Deploying   1/2        5m    PodsNotReady   http://big-server.team-a.svc.cluster.local:8000\n"
        );
    }

    #[test]
    fn detail_shows_services_groups_pods_conditions_and_why() {
        let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
        let pods = [
            pod("big-worker-0", "0", true, None),
            pod("big-worker-0-1", "0", true, None),
            pod("big-worker-1", "1", false, Some("ImagePullBackOff")),
        ];
        let events: Vec<Event> = vec![serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e"}, "type": "Warning", "reason": "BackOff", "message": "Back-off pulling image \"img\"",
            "count": 3, "lastTimestamp": "1970-01-01T00:21:00Z",
            "involvedObject": {"kind": "Pod", "name": "big-worker-1"}}))
        .unwrap_or_default()];
        let d = detail(&idep("Deploying"), &pods, &events, now);
        insta::assert_snapshot!("detail_text", detail_text(&Printer::plain(), &d));
        insta::assert_json_snapshot!("detail_json", d);
    }

    #[test]
    fn warnings_of_a_deployment_with_a_longer_name_are_not_ours() {
        let now = Timestamp::from_second(1_000 + 300).unwrap_or_default();
        let pods = [pod("big-worker-0", "0", true, None)];
        let event = |object: &str| -> Event {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("e-{object}")}, "type": "Warning", "reason": "BackOff",
                "message": "m", "lastTimestamp": "1970-01-01T00:21:00Z",
                "involvedObject": {"kind": "Pod", "name": object}}))
            .unwrap_or_default()
        };
        let events = vec![
            event("big-x-worker-0"),
            event("big-x"),
            event("big-worker-0"),
            event("big-worker"),
        ];
        let d = detail(&idep("Deploying"), &pods, &events, now);
        let objects: Vec<&str> = d.warnings.iter().map(|w| w.object.as_str()).collect();
        assert_eq!(objects.len(), 2, "{objects:?}");
        assert!(objects.contains(&"Pod/big-worker-0"), "{objects:?}");
        assert!(objects.contains(&"Pod/big-worker"), "{objects:?}");
    }
}
