//! `kubectl infera uninstall`: deletes exactly the objects of the embedded bundle that carry the
//! bundle's label, in reverse order; refuses while InferaDeployments exist unless `--force`, and
//! leaves an operator Helm installed to `helm uninstall`.

use std::time::Duration;

use infera_core::InferaDeployment;
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Pod};
use kube::{
    Api,
    api::{DeleteParams, ListParams},
};
use tokio::time::Instant;

use crate::{
    apply,
    bundle::{self, PART_OF},
    cli::{DryRun, GlobalArgs, UninstallArgs},
    client,
    duration::human,
    error::{Error, Result},
    installed::HelmRelease,
    printer::Printer,
};

/// Runs `uninstall`: refuses while InferaDeployments exist (unless `--force`), then deletes the
/// bundle's objects in reverse apply order.
pub async fn run(args: &UninstallArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let mut objects = bundle::objects()?;
    objects.reverse();
    if args.dry_run == DryRun::Client {
        for object in &objects {
            printer.out(&format!("{} deleted (dry run)", object.display()));
        }
        return Ok(());
    }
    let kube = client::connect(global).await?;
    let operator = Api::<Deployment>::namespaced(kube.client.clone(), bundle::NAMESPACE)
        .get_opt(bundle::OPERATOR)
        .await
        .map_err(|e| Error::kube("reading the operator Deployment", e))?;
    if let Some(release) = operator.as_ref().and_then(HelmRelease::of) {
        let command = format!(
            "`helm uninstall {} -n {}` (Helm keeps the CRD and your InferaDeployments)",
            release.name, release.namespace
        );
        return Err(release.refuse("remove", command));
    }
    if !args.force {
        refuse_while_deployed(&kube.client).await?;
    }
    let dry_run = args.dry_run == DryRun::Server;
    // All or nothing: the API server checks every deletion before one is made.
    if !dry_run {
        for object in &objects {
            delete(&kube.client, object, true).await?;
        }
    }
    let suffix = if dry_run { " (server dry run)" } else { "" };
    for object in &objects {
        let display = object.display();
        match delete(&kube.client, object, dry_run).await? {
            Deletion::Deleted => printer.out(&format!("{display} deleted{suffix}")),
            Deletion::Missing => printer.note(&format!("{display} not found (skipped)")),
            Deletion::NotOurs => printer.warn(&format!(
                "{display} exists but was not created by init (no {}={} label): left alone",
                PART_OF.0, PART_OF.1
            )),
            Deletion::SharedNamespace(others) => printer.warn(&format!(
                "{display} also runs pods that are not Infera's ({}): left alone; delete it yourself if you mean to",
                others.join(", ")
            )),
        }
    }
    if args.wait && !dry_run {
        wait_gone(&kube, &objects, args.timeout, printer).await?;
    }
    Ok(())
}

/// Deleting the CRD would delete every InferaDeployment and what it runs: refuses, naming them,
/// while any exists. A missing CRD means there are none.
async fn refuse_while_deployed(client: &kube::Client) -> Result<()> {
    let deployments: Api<InferaDeployment> = Api::all(client.clone());
    let list = match deployments
        .list_metadata(&ListParams::default().limit(50))
        .await
    {
        Ok(list) if !list.items.is_empty() => list,
        Ok(_) => return Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
        Err(e) => return Err(Error::kube("listing InferaDeployments", e)),
    };
    let names: Vec<String> = list
        .items
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d.metadata.namespace.as_deref().unwrap_or("?"),
                d.metadata.name.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let more = if list
        .metadata
        .continue_
        .as_deref()
        .is_some_and(|c| !c.is_empty())
    {
        " and more"
    } else {
        ""
    };
    Err(Error::Refused(format!(
        "{} InferaDeployment(s) still exist ({}{more}); deleting the CRD would delete them and everything they run. \
         Delete them first, or pass --force",
        names.len(),
        names.join(", ")
    )))
}

/// Deletes one object of the bundle if it is ours (it carries the bundle's label) and, for the
/// namespace, holds nothing but ours; says what it left alone and why.
/// What deleting a bundle object did.
enum Deletion {
    Deleted,
    Missing,
    /// It exists without init's label: someone else's.
    NotOurs,
    /// The namespace also runs these pods of someone else's.
    SharedNamespace(Vec<String>),
}

/// Deletes `object` if it is init's (with `dry_run`, asks the server whether it would).
async fn delete(
    client: &kube::Client,
    object: &bundle::BundleObject,
    dry_run: bool,
) -> Result<Deletion> {
    let api = apply::dynamic_api(client, &object.resource, object.namespace());
    let display = object.display();
    let current = match api.get_opt(object.name()).await {
        Ok(current) => current,
        Err(kube::Error::Api(s)) if s.code == 404 => None, // e.g. the CRD is gone already
        Err(e) => return Err(Error::kube(format!("reading {display}"), e)),
    };
    let Some(current) = current else {
        return Ok(Deletion::Missing);
    };
    let ours = current
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(PART_OF.0))
        .is_some_and(|v| v == PART_OF.1);
    if !ours {
        return Ok(Deletion::NotOurs);
    }
    if object.resource.kind == "Namespace" {
        let others = foreign_pods(client, object.name()).await?;
        if !others.is_empty() {
            return Ok(Deletion::SharedNamespace(others));
        }
    }
    let params = DeleteParams {
        dry_run,
        ..DeleteParams::background()
    };
    match api.delete(object.name(), &params).await {
        Ok(_) => Ok(Deletion::Deleted),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Deletion::Missing),
        Err(e) => Err(Error::kube(format!("deleting {display}"), e)),
    }
}

/// Pods in `namespace` that the bundle did not create: a namespace that existed before `init`
/// (init labels it too) must not be deleted with someone else's workloads in it.
async fn foreign_pods(client: &kube::Client, namespace: &str) -> Result<Vec<String>> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list = pods
        .list_metadata(&ListParams::default())
        .await
        .map_err(|e| Error::kube(format!("listing pods in namespace {namespace}"), e))?;
    Ok(list
        .items
        .into_iter()
        .filter(|pod| {
            pod.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(PART_OF.0))
                .is_none_or(|v| v != PART_OF.1)
        })
        .filter_map(|pod| pod.metadata.name)
        .collect())
}

/// `--wait`: polls every 500 ms until none of the objects exists (deletion is in the background).
async fn wait_gone(
    kube: &client::Kube,
    objects: &[bundle::BundleObject],
    timeout: Duration,
    printer: &Printer,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut left = Vec::new();
        for object in objects {
            let api = apply::dynamic_api(&kube.client, &object.resource, object.namespace());
            if let Ok(Some(_)) = api.get_opt(object.name()).await {
                left.push(object.display());
            }
        }
        if left.is_empty() {
            printer.clear_progress();
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::Timeout {
                after: human(timeout),
                why: format!("still present: {}", left.join(", ")),
            });
        }
        printer.progress(&format!("waiting for {} to be gone", left.join(", ")));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
