//! `kubectl infera rollout pause|resume NAME`: sets `spec.rollout.paused`, with a JSON merge
//! patch as field manager [`ROLLOUT_MANAGER`] that owns exactly that field (as `scale` does for
//! `replicas`). While paused, the operator holds every existing worker pool at the revision its
//! pods run; `status` shows `Progressing=False, RolloutPaused` and the pools it holds.

use infera_core::{InferaDeployment, naming::ROLLOUT_MANAGER};
use kube::{
    Api,
    api::{Patch, PatchParams},
};

use crate::{
    cli::{GlobalArgs, RolloutAction, RolloutArgs},
    client,
    error::{Error, Result},
    printer::Printer,
};

pub async fn run(args: &RolloutArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let (name, paused) = match &args.action {
        RolloutAction::Pause { name } => (name, true),
        RolloutAction::Resume { name } => (name, false),
    };
    let kube = client::connect(global).await?;
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &kube.namespace);
    let object = format!("InferaDeployment {}/{name}", kube.namespace);
    let idep = api
        .get(name)
        .await
        .map_err(|e| Error::kube(format!("reading {object}"), e))?;
    let line = |verb: &str| format!("inferadeployment.infera.amd.com/{name} {verb}");
    let was = idep.spec.rollout.as_ref().is_some_and(|r| r.paused);
    if was == paused {
        printer.out(&line(if paused {
            "already paused"
        } else {
            "not paused"
        }));
        return Ok(());
    }
    let params = PatchParams {
        field_manager: Some(ROLLOUT_MANAGER.into()),
        ..PatchParams::default()
    };
    let patch = serde_json::json!({"spec": {"rollout": {"paused": paused}}});
    api.patch(name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("updating {object}"), e))?;
    printer.out(&line(if paused { "paused" } else { "resumed" }));
    Ok(())
}
