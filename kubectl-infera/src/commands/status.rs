//! `kubectl infera status`: the list (`-A`), one deployment in detail, and `--watch`.
//!
//! API budget: the list is one LIST of InferaDeployments; the detail is one GET of the deployment,
//! one LIST of its pods (label selector) and one LIST of the namespace's warning events, and with
//! `spec.gaie` one GET each of its HTTPRoute and InferencePool. Never one call per pod or event.
//! `--watch` opens watches on the deployment, its pods and the events (no polling; without the
//! Gateway section) and redraws on change.
//! What is shown is built by [`crate::view`]; [`text`] renders it for people and [`watch`]
//! follows it.

pub(crate) mod text;
mod watch;

pub use text::detail_text;

use k8s_openapi::jiff::Timestamp;
use kube::Api;

use crate::{
    cli::{GlobalArgs, Output, StatusArgs},
    client::{self, Kube},
    error::{Error, Result},
    printer::Printer,
    view::{self, Detail, Listed, Summary},
};

/// The window of `--prometheus` when `--load` gives none: four scrapes at Prometheus's default
/// interval of 15 s, so that every rate has samples.
pub(super) const PROMETHEUS_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `status`: the list or one deployment, once or `--watch`ed.
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
            let (idep, pods, events) = view::gather(&kube, &kube.namespace, name).await?;
            let mut detail = view::detail(&idep, &pods, &events, Timestamp::now());
            detail.gateway = view::gather_gateway(&kube, &idep).await;
            if let Some(url) = &args.prometheus {
                let window = args
                    .load
                    .filter(|w| !w.is_zero())
                    .unwrap_or(PROMETHEUS_WINDOW);
                printer.progress("querying Prometheus");
                let load = view::load_from_prometheus(url, &idep, window).await;
                printer.clear_progress();
                detail.load = Some(load?);
            } else if let Some(window) = args.load {
                printer.progress("reading the pods' metrics");
                detail.load = Some(view::load(&kube, &idep, &pods, window).await);
                printer.clear_progress();
            }
            print_detail(printer, args.output, &detail)
        }
        (None, false) => print_list(printer, args, &list(&kube, args).await?, &kube.namespace),
        (None, true) => watch::list(&kube, args, printer).await,
        (Some(name), true) => watch::detail(&kube, name, args, printer).await,
    }
}

/// The InferaDeployments of the namespace (or of all, with `-A`): one LIST in pages of 500, as
/// the API server's Table of them (see [`view::list_summaries`]), sorted.
async fn list(kube: &Kube, args: &StatusArgs) -> Result<Vec<Summary>> {
    let namespace = (!args.all_namespaces).then_some(kube.namespace.as_str());
    let mut rows = view::list_summaries(kube, namespace, Timestamp::now()).await?;
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(rows)
}

/// The InferaDeployments of the namespace, or of every namespace, as the list reads them.
fn ideps(kube: &Kube, all_namespaces: bool) -> Api<Listed> {
    if all_namespaces {
        Api::all(kube.client.clone())
    } else {
        Api::namespaced(kube.client.clone(), &kube.namespace)
    }
}

/// The detail as one JSON or YAML document, or as text.
fn print_detail(printer: &Printer, output: Output, detail: &Detail) -> Result<()> {
    match output {
        Output::Json => printer.json(detail),
        Output::Yaml => printer.yaml(detail),
        Output::Table | Output::Wide => {
            printer.out(&text::detail_text(printer, detail));
            Ok(())
        }
    }
}

/// The list as `{"items": [...]}` or a table; an empty table is a note on stderr saying how to
/// create one.
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
            printer.out(&text::list_table(
                printer,
                rows,
                args.all_namespaces,
                args.output == Output::Wide,
            ));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests;
