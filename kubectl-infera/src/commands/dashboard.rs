//! `kubectl infera dashboard NAME` (or `-f FILE`, offline): a Grafana dashboard of a deployment,
//! over the series its PodMonitor collects (`spec.monitoring`; see docs/monitoring.md).

use infera_core::dashboard::dashboard;

use crate::{
    cli::{DashboardArgs, GlobalArgs},
    client,
    error::{Error, Result},
    printer::Printer,
    spec, view,
};

pub async fn run(args: &DashboardArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let (namespace, name, backend) = match (&args.name, &args.file) {
        (_, Some(file)) => {
            let loaded = spec::load(file, global.namespace.as_deref())?;
            let [(_, valid)] = <[_; 1]>::try_from(loaded).map_err(|all: Vec<_>| {
                Error::Usage(format!(
                    "{} holds {} InferaDeployments; give a file with one",
                    file.display(),
                    all.len()
                ))
            })?;
            (valid.namespace, valid.name, valid.backend)
        }
        (Some(name), None) => {
            let kube = client::connect(global).await?;
            let namespace = kube.namespace.clone();
            let idep = view::deployment(&kube, &namespace, name).await?;
            (namespace, name.clone(), idep.spec.backend_framework)
        }
        (None, None) => {
            return Err(Error::Usage(
                "name the InferaDeployment, or give its spec with -f FILE".into(),
            ));
        }
    };
    let json = serde_json::to_string_pretty(&dashboard(&namespace, &name, backend))
        .map_err(|e| Error::serialize("the dashboard", "JSON", e))?;
    printer.out(&json);
    Ok(())
}
