//! `status` for people: the list as a kubectl-style table, the detail as sections, and the one
//! line per change that `--watch` appends when stdout is not a terminal.

use infera_core::load::Percentiles;
use k8s_openapi::jiff::{Timestamp, Unit};

use crate::{
    duration::{age, latency},
    printer::{Cell, Printer, Style, columns, lines, table},
    view::{Detail, GatewaySection, LoadSection, Lookup, PlannerSection, Summary, WarningRow},
};

/// Colour of a state: Ready is good, on the way is a warning, Degraded and Failed are bad.
fn state_style(state: &str) -> Option<Style> {
    match state {
        "Ready" => Some(Style::Good),
        "Deploying" | "Pending" => Some(Style::Warn),
        "Degraded" | "Failed" => Some(Style::Bad),
        _ => None,
    }
}

/// The list as a table; `-A` adds the namespace, `-o wide` the reason, endpoint and revision.
pub fn list_table(printer: &Printer, rows: &[Summary], all_namespaces: bool, wide: bool) -> String {
    let mut headers = vec![];
    if all_namespaces {
        headers.push("NAMESPACE");
    }
    headers.extend(["NAME", "BACKEND", "STATE", "SERVICES", "AGE"]);
    if wide {
        headers.extend(["REASON", "ENDPOINT", "REVISION"]);
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
                    Cell::from(r.revision.as_str()),
                ]);
            }
            row
        })
        .collect();
    columns(printer, &headers, &cells)
}

/// The detail as text: the header fields, then services, pods, conditions, the Gateway (with
/// `spec.gaie`), warnings and why it is not Ready.
pub fn detail_text(printer: &Printer, d: &Detail) -> String {
    [
        header(printer, d),
        format!("\nServices:\n{}", services(printer, d)),
        d.load
            .as_ref()
            .map(|l| load(printer, l))
            .unwrap_or_default(),
        d.planner
            .as_ref()
            .map(|p| planner(printer, p, None))
            .unwrap_or_default(),
        format!("\nPods:\n{}", pods(printer, d)),
        format!("\nConditions:\n{}", conditions(printer, d)),
        models(printer, d),
        d.gateway
            .as_ref()
            .map(|g| format!("\nGateway:\n{}", gateway(printer, g)))
            .unwrap_or_default(),
        warnings(printer, d),
        blocking(d),
    ]
    .concat()
}

/// `Name:`, `State:` (with a note when the status is for an older generation) and friends.
fn header(printer: &Printer, d: &Detail) -> String {
    let s = &d.summary;
    let stale = if d.observed_generation < d.generation {
        format!(
            " (status is for generation {}, spec is at {})",
            d.observed_generation, d.generation
        )
    } else {
        String::new()
    };
    let state = printer.paint(state_style(&s.state).unwrap_or(Style::Bold), &s.state);
    let serverless = d.services.iter().all(|r| r.role != "server");
    let endpoint = match &d.gateway {
        _ if !s.endpoint.is_empty() => s.endpoint.clone(),
        Some(g) if serverless => format!("through Gateway {}/{} (no server)", g.namespace, g.name),
        _ => "<none yet>".into(),
    };
    [
        ("Name", s.name.clone()),
        ("Namespace", s.namespace.clone()),
        ("Backend", s.backend.clone()),
        ("State", format!("{state}{stale}")),
        ("Endpoint", endpoint),
        ("Age", age(s.age_seconds)),
    ]
    .iter()
    .map(|(k, v)| format!("{:<11} {v}\n", format!("{k}:")))
    .collect()
}

/// The services: ready replicas, and groups of multi-node pools.
fn services(printer: &Printer, d: &Detail) -> String {
    let rows = d.services.iter().map(|r| {
        let ok = r.ready_replicas >= r.desired_replicas;
        let groups = match r.nodes_per_group {
            Some(n) => format!(
                "{}/{} ready ({n} pods each)",
                r.ready_groups.unwrap_or(0),
                r.desired_replicas
            ),
            None => String::new(),
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
    });
    let headers = ["SERVICE", "ROLE", "KIND", "READY", "GROUPS"];
    section(printer, &headers, rows.collect(), "<none>")
}

/// The pods, sorted by service and group, with why each is not running.
fn pods(printer: &Printer, d: &Detail) -> String {
    let rows = d.pods.iter().map(|p| {
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
    });
    let headers = [
        "POD", "SERVICE", "GROUP", "PHASE", "READY", "RESTARTS", "NODE", "AGE", "REASON",
    ];
    section(printer, &headers, rows.collect(), "<none>")
}

/// The operator's conditions, or that it has not reported yet.
fn conditions(printer: &Printer, d: &Detail) -> String {
    let rows = d.conditions.iter().map(|c| {
        [&c.type_, &c.status, &c.reason, &c.message]
            .map(|text| Cell::from(text.as_str()))
            .to_vec()
    });
    let headers = ["TYPE", "STATUS", "REASON", "MESSAGE"];
    let empty = "<none: the operator has not reported yet>";
    section(printer, &headers, rows.collect(), empty)
}

/// The `hf://` downloads with the commit each got, when the deployment has any.
fn models(printer: &Printer, d: &Detail) -> String {
    if d.models.is_empty() {
        return String::new();
    }
    let rows = d.models.iter().map(|m| {
        let revision = if m.resolved_revision.is_empty() {
            "<not downloaded yet>"
        } else {
            &m.resolved_revision
        };
        [m.job.as_str(), m.source.as_str(), revision]
            .map(Cell::from)
            .to_vec()
    });
    let headers = ["JOB", "SOURCE", "RESOLVED REVISION"];
    format!(
        "\nModels:\n{}",
        section(printer, &headers, rows.collect(), "")
    )
}

/// The Gateway the route attaches to, then the HTTPRoute and the InferencePool, each with what
/// every parent Gateway reports: a True condition by its name, any other with status, reason and
/// message.
fn gateway(printer: &Printer, g: &GatewaySection) -> String {
    let listener = g
        .section_name
        .as_ref()
        .map(|s| format!(" (listener {s})"))
        .unwrap_or_default();
    let mut out = format!("  {:<15}{}/{}{listener}\n", "Gateway:", g.namespace, g.name);
    for (kind, object) in [
        ("HTTPRoute:", &g.http_route),
        ("InferencePool:", &g.inference_pool),
    ] {
        let state = match object.state {
            Lookup::Found => String::new(),
            Lookup::NotFound => format!(": {}", printer.paint(Style::Warn, "not found")),
            Lookup::Unreadable => format!(": cannot read: {}", object.error),
        };
        out.push_str(&format!("  {kind:<15}{}{state}\n", object.name));
        if object.state == Lookup::Found && object.parents.is_empty() {
            out.push_str(&format!(
                "  {:<15}{}\n",
                "",
                printer.paint(Style::Warn, "no Gateway has reported on it yet")
            ));
        }
        for parent in &object.parents {
            let conditions: Vec<String> = parent
                .conditions
                .iter()
                .map(|c| match c.status.as_str() {
                    "True" => printer.paint(Style::Good, &c.type_),
                    "False" => printer.paint(Style::Bad, &c.to_string()),
                    _ => printer.paint(Style::Warn, &c.to_string()),
                })
                .collect();
            out.push_str(&format!(
                "  {:<15}{}: {}\n",
                "",
                parent.parent,
                conditions.join(", ")
            ));
        }
    }
    out
}

/// The pools' live load (`--load`): one row per pool, `-` for what its pods do not export; the
/// pods that did not answer, and why, below.
fn load(printer: &Printer, l: &LoadSection) -> String {
    let heading = match (l.window_seconds, &l.prometheus) {
        (Some(seconds), Some(url)) => {
            format!("\nLoad (over {seconds:.0} s, from Prometheus {url}):\n")
        }
        (Some(seconds), None) => format!("\nLoad (over {seconds:.0} s):\n"),
        (None, _) => "\nLoad (one sample; --load=10s adds rates and latencies over 10 s):\n".into(),
    };
    let count = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
    let rate = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let percentiles = |p: Option<Percentiles>| {
        p.map_or("-".into(), |p| {
            format!("{}/{}", latency(p.p50), latency(p.p95))
        })
    };
    let rows = l.pools.iter().map(|p| {
        let answered = Cell::styled(
            format!("{}/{}", p.answered, p.pods),
            Some(if p.answered == p.pods {
                Style::Good
            } else {
                Style::Warn
            }),
        );
        vec![
            Cell::from(p.pool.as_str()),
            answered,
            Cell::from(count(p.in_flight)),
            Cell::from(count(p.running)),
            Cell::from(count(p.waiting)),
            Cell::from(
                p.kv_usage
                    .map_or("-".into(), |u| format!("{:.0}%", u * 100.0)),
            ),
            Cell::from(rate(p.tokens_per_second)),
            Cell::from(rate(p.requests_per_second)),
            Cell::from(percentiles(p.e2e)),
            Cell::from(percentiles(p.ttft)),
            Cell::from(percentiles(p.itl)),
        ]
    });
    let headers = [
        "POOL",
        "PODS",
        "IN FLIGHT",
        "RUNNING",
        "WAITING",
        "KV",
        "TOKENS/S",
        "REQ/S",
        "E2E P50/P95",
        "TTFT P50/P95",
        "ITL P50/P95",
    ];
    let mut out = heading
        + &section(
            printer,
            &headers,
            rows.collect(),
            "<no router or engine pod is Ready>",
        );
    for pool in &l.pools {
        for why in &pool.unanswered {
            out.push_str(&format!("  {}: {why}\n", pool.pool));
        }
    }
    out
}

/// The SLO planner: its mode, the latencies it last saw against their targets, and per pool the
/// replicas it recommends with why; with `decisions` (at `now`), its last changes, newest first.
pub fn planner(printer: &Printer, p: &PlannerSection, decisions: Option<Timestamp>) -> String {
    let observed = |value: Option<f64>, target: f64| {
        let text = value.map_or("-".into(), latency);
        let style = match value {
            Some(v) if v > target => Some(Style::Bad),
            Some(_) => Some(Style::Good),
            None => None,
        };
        format!(
            "{} of {}",
            match style {
                Some(style) => printer.paint(style, &text),
                None => text,
            },
            latency(target)
        )
    };
    let status = p.status.as_ref();
    let mut out = format!(
        "\nPlanner ({:?}; TTFT p95 {}, ITL p95 {}):\n",
        p.mode,
        observed(
            status.and_then(|s| s.ttft_p95_seconds),
            p.ttft_p95_target_seconds
        ),
        observed(
            status.and_then(|s| s.itl_p95_seconds),
            p.itl_p95_target_seconds
        ),
    );
    let figure = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let rows = status
        .into_iter()
        .flat_map(|s| &s.pools)
        .map(|(pool, s)| {
            let recommended = Cell::styled(
                s.recommended.to_string(),
                (s.recommended != s.replicas).then_some(Style::Warn),
            );
            vec![
                Cell::from(pool.as_str()),
                Cell::from(s.replicas.to_string()),
                recommended,
                Cell::from(format!("{} {}", figure(s.load), s.unit)),
                Cell::from(figure(s.capacity)),
                Cell::from(s.reason.as_str()),
            ]
        })
        .collect();
    let headers = [
        "POOL",
        "REPLICAS",
        "RECOMMENDED",
        "LOAD",
        "PER REPLICA",
        "REASON",
    ];
    out.push_str(&section(
        printer,
        &headers,
        rows,
        "<no decision yet: the planner decides one interval after its first reading>",
    ));
    if let Some(now) = decisions {
        let rows: Vec<Vec<Cell>> = status
            .into_iter()
            .flat_map(|s| &s.decisions)
            .map(|d| {
                vec![
                    Cell::from(age(now.as_second() - d.time.0.as_second())),
                    Cell::from(d.pool.as_str()),
                    Cell::from(format!("{} → {}", d.from, d.to)),
                    Cell::from(if d.acted { "scaled" } else { "recommended" }),
                    Cell::from(d.reason.as_str()),
                ]
            })
            .collect();
        out.push_str("\nDecisions (newest first):\n");
        out.push_str(&section(
            printer,
            &["AGE", "POOL", "REPLICAS", "ACTION", "REASON"],
            rows,
            "<none yet>",
        ));
    }
    out
}

/// A section's table, indented under its heading; `empty` said instead when there are no rows.
fn section(printer: &Printer, headers: &[&str], rows: Vec<Vec<Cell>>, empty: &str) -> String {
    if rows.is_empty() {
        return format!("  {empty}\n");
    }
    table(printer, 2, headers, &rows)
}

/// The warnings, newest first. A Ready deployment's are those since it became Ready, and the
/// heading says so; the older ones are counted as resolved.
fn warnings(printer: &Printer, d: &Detail) -> String {
    let mut out = match &d.warnings_since {
        Some(since) => format!("\nWarnings since it became Ready ({since}):\n"),
        None => "\nRecent warnings:\n".to_string(),
    };
    if d.warnings.is_empty() {
        out.push_str("  <none>\n");
    } else {
        out.push_str(&warnings_table(printer, &d.warnings));
    }
    if d.resolved_warnings > 0 {
        out.push_str(&format!(
            "  ({} older warning(s), from before it became Ready, are resolved and not shown)\n",
            d.resolved_warnings
        ));
    }
    out
}

/// One line per warning: age (right-aligned), object, reason, message and repeat count, in
/// columns (messages wrap in theirs on a terminal).
fn warnings_table(printer: &Printer, warnings: &[WarningRow]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    for w in warnings {
        let count = if w.count > 1 {
            format!(" (x{})", w.count)
        } else {
            String::new()
        };
        table.add_row(vec![
            printer.cell(&Cell::from(age(w.age_seconds))),
            printer.cell(&Cell::from(w.object.as_str())),
            printer.cell(&Cell::styled(format!("{}:", w.reason), Some(Style::Warn))),
            printer.cell(&Cell::from(format!("{}{count}", w.message))),
        ]);
    }
    printer.lay_out(&mut table, 2, &[2, 2, 1]);
    if let Some(age) = table.column_mut(0) {
        // The indent, four characters of age (e.g. `100s`), and the gap.
        age.set_cell_alignment(comfy_table::CellAlignment::Right);
        age.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
            comfy_table::Width::Fixed(8),
        ));
    }
    lines(&table)
}

/// Why it is not Ready (nothing when it is).
fn blocking(d: &Detail) -> String {
    if d.blocking.is_empty() {
        return String::new();
    }
    let reasons: String = d.blocking.iter().map(|b| format!("  - {b}\n")).collect();
    format!("\nWhy it is not Ready:\n{reasons}")
}

/// A change line for non-terminal `--watch`: time, event, name and what matters of the state.
pub fn change_line(event: &str, s: &Summary) -> String {
    format!(
        "{} {event} {}/{} state={} services={} reason={}",
        now_to_the_second(),
        s.namespace,
        s.name,
        s.state,
        s.services_ready,
        if s.reason.is_empty() { "-" } else { &s.reason }
    )
}

/// The current time, without fractions of a second.
pub fn now_to_the_second() -> Timestamp {
    let now = Timestamp::now();
    now.round(Unit::Second).unwrap_or(now)
}
