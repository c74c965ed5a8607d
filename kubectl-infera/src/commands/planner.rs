//! `kubectl infera planner explain NAME`: what the SLO planner (`spec.planner`) last saw, what it
//! recommends for each pool and why, and its last decisions with the figures behind them, from
//! `status.planner`.

use k8s_openapi::jiff::Timestamp;

use crate::{
    cli::{GlobalArgs, Output, PlannerAction, PlannerArgs},
    client,
    commands::status::text,
    error::{Error, Result},
    printer::Printer,
    view::{self, PlannerSection},
};

pub async fn run(args: &PlannerArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let PlannerAction::Explain { name, output } = &args.action;
    let kube = client::connect(global).await?;
    let idep = view::deployment(&kube, &kube.namespace, name).await?;
    let section = PlannerSection::of(&idep).ok_or_else(|| {
        Error::Usage(format!(
            "InferaDeployment {}/{name} has no spec.planner; add one (see docs/planner.md)",
            kube.namespace
        ))
    })?;
    match output {
        Output::Json => printer.json(&section),
        Output::Yaml => printer.yaml(&section),
        Output::Table | Output::Wide => {
            let text = text::planner(printer, &section, Some(Timestamp::now()));
            printer.out(text.trim_start_matches('\n').trim_end());
            Ok(())
        }
    }
}
