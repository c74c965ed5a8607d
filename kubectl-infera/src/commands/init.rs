//! `kubectl infera init`: installs or upgrades the operator from the embedded bundle with
//! server-side apply, waits for the CRD to be Established, and with `--wait` for the operator.

use std::time::Duration;

use futures::StreamExt;
use infera_core::crd::VERSION;
use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{Event, Pod},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::ListParams,
    runtime::wait::{self, await_condition, conditions},
};
use tokio::time::Instant;

mod take_over;

use take_over::{guard_others, release_children, stop};

use crate::{
    apply::{self, Outcome},
    bundle::{self, BundleObject},
    cli::{DryRun, GlobalArgs, InitArgs, ManifestOutput},
    client, diagnose,
    duration::human,
    error::{Error, Result},
    installed::{self, HelmRelease, Rollout},
    printer::Printer,
    watch,
};

/// Runs `init`. A forbidden call adds where to see every permission init needs.
pub async fn run(args: &InitArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    install(args, global, printer).await.map_err(|e| match e {
        Error::Api {
            action,
            message,
            code: 403,
        } => Error::Api {
            action,
            message: format!(
                "{message}\n`kubectl infera doctor --pre` lists every permission init needs"
            ),
            code: 403,
        },
        other => other,
    })
}

/// Applies the bundle object by object (saying what changed), waiting for the CRD to be
/// Established before the rest, then with `--wait` for the operator.
async fn install(args: &InitArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let objects = bundle::objects()?;
    if args.dry_run == DryRun::Client {
        printer.out(&manifest(&objects, args.output)?);
        return Ok(());
    }
    let kube = client::connect(global).await?;
    if kube.namespace_explicit && kube.namespace != bundle::NAMESPACE {
        printer.warn(&format!(
            "the operator always installs into {}; -n is ignored",
            bundle::NAMESPACE
        ));
    }
    let server_dry_run = args.dry_run == DryRun::Server;
    let client = kube.client.clone();
    guard_installed(&client, args.allow_downgrade).await?;
    let others = guard_others(&client, args).await?;
    let suffix = if server_dry_run {
        " (server dry run)"
    } else {
        ""
    };
    // All or nothing: the API server checks every object (strict fields, admission, ownership)
    // before one is written, so a refusal half-way leaves no half install.
    let outcomes = check_all(&client, &objects, args).await?;
    if !server_dry_run && args.take_over {
        for other in &others {
            stop(&client, other, args.timeout, printer).await?;
        }
        release_children(&client, printer).await?;
    }
    for (object, outcome) in objects.iter().zip(outcomes) {
        let display = object.display();
        if server_dry_run {
            printer.out(&format!("{display} {outcome}{suffix}"));
            continue;
        }
        let api = apply::dynamic_api(&client, &object.resource, object.namespace());
        let value = serde_json::to_value(&object.object)
            .map_err(|e| Error::serialize(&display, "JSON", e))?;
        let previous = api
            .get_opt(object.name())
            .await
            .map_err(|e| Error::kube(format!("reading {display}"), e))?;
        let (_, outcome) = apply::apply(
            &api,
            &value,
            object.name(),
            &display,
            previous.as_ref(),
            false,
            forced(args, object),
        )
        .await?;
        printer.out(&format!("{display} {outcome}"));
        if object.resource.kind == "CustomResourceDefinition" {
            wait_established(&client, object.name(), args.timeout, printer).await?;
        }
    }
    if args.wait && !server_dry_run {
        wait_operator(&client, args.timeout, printer).await?;
        printer.note(&format!(
            "operator {VERSION} is available in namespace {}",
            bundle::NAMESPACE
        ));
    } else if !server_dry_run {
        printer.note("next: `kubectl infera doctor`, then `kubectl infera deploy`");
    }
    Ok(())
}

/// Server-side dry runs of every bundle object, in order: what applying each would do, or the
/// first refusal.
async fn check_all(
    client: &Client,
    objects: &[BundleObject],
    args: &InitArgs,
) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::with_capacity(objects.len());
    let mut namespace_is_new = false;
    for object in objects {
        let api = apply::dynamic_api(client, &object.resource, object.namespace());
        let display = object.display();
        let previous = api
            .get_opt(object.name())
            .await
            .map_err(|e| Error::kube(format!("reading {display}"), e))?;
        let value = serde_json::to_value(&object.object)
            .map_err(|e| Error::serialize(&display, "JSON", e))?;
        let result = apply::apply(
            &api,
            &value,
            object.name(),
            &display,
            previous.as_ref(),
            true,
            forced(args, object),
        )
        .await;
        let outcome = match result {
            Ok((_, outcome)) => outcome,
            // A dry run cannot create objects in a namespace that is itself only dry-run created.
            Err(Error::Api { code: 404, .. }) if namespace_is_new && object.namespaced => {
                Outcome::Created
            }
            Err(e) => return Err(e),
        };
        if object.resource.kind == "Namespace" {
            namespace_is_new = outcome == Outcome::Created;
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// Whether applying `object` takes fields other managers own: with `--force-conflicts`, and the
/// CRD with `--take-over` (upstream's Helm chart installed it).
fn forced(args: &InitArgs, object: &BundleObject) -> bool {
    args.force_conflicts || (args.take_over && object.resource.kind == "CustomResourceDefinition")
}

/// The bundle as a YAML stream or a JSON `v1/List`.
pub fn manifest(objects: &[BundleObject], output: ManifestOutput) -> Result<String> {
    let values: Vec<&kube::api::DynamicObject> = objects.iter().map(|o| &o.object).collect();
    match output {
        ManifestOutput::Yaml => infera_core::yaml::to_yaml_stream(&values)
            .map_err(|e| Error::serialize("the bundle", "YAML", e)),
        ManifestOutput::Json => serde_json::to_string_pretty(
            &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": values}),
        )
        .map_err(|e| Error::serialize("the bundle", "JSON", e)),
    }
}

/// Refuses to install over an operator Helm installed (Helm upgrades it: an apply here would fight
/// Helm's field manager), and over a newer release unless allowed.
async fn guard_installed(client: &Client, allow_downgrade: bool) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = crds
        .get_opt(&bundle::crd_name())
        .await
        .map_err(|e| Error::kube("reading the InferaDeployment CRD", e))?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let operator = deployments
        .get_opt(bundle::OPERATOR)
        .await
        .map_err(|e| Error::kube("reading the operator Deployment", e))?;
    if let Some(release) = operator.as_ref().and_then(HelmRelease::of) {
        let command = format!(
            "{}, or `helm uninstall {} -n {}` (the CRD and your InferaDeployments stay) and `kubectl infera init` again",
            release.upgrade(),
            release.name,
            release.namespace
        );
        return Err(release.refuse("upgrade", command));
    }
    let versions = [
        ("CRD", crd.as_ref().and_then(installed::crd_version)),
        (
            "operator",
            operator.as_ref().and_then(installed::operator_version),
        ),
    ];
    if let Some(message) = downgrade(&versions, VERSION)
        && !allow_downgrade
    {
        return Err(Error::Refused(message));
    }
    Ok(())
}

/// A refusal message when something installed is newer than `plugin`.
pub fn downgrade(installed: &[(&str, Option<String>)], plugin: &str) -> Option<String> {
    let ours = bundle::parse_version(plugin)?;
    installed.iter().find_map(|(what, version)| {
        let version = version.as_deref()?;
        (bundle::parse_version(version)? > ours).then(|| {
            format!(
                "the installed {what} is version {version}, newer than this plugin ({plugin}); refusing to downgrade. \
                 Upgrade the plugin (kubectl krew upgrade infera) or pass --allow-downgrade"
            )
        })
    })
}

/// Waits (one watch) until the API server has Established the CRD, so the objects after it
/// can use it; on timeout, says why from its NamesAccepted condition.
async fn wait_established(
    client: &Client,
    name: &str,
    timeout: Duration,
    printer: &Printer,
) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    printer.progress(&format!("waiting for CRD {name} to be Established"));
    let established = tokio::time::timeout(
        timeout,
        await_condition(crds.clone(), name, conditions::is_crd_established()),
    )
    .await;
    printer.clear_progress();
    match established {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(wait::Error::ProbeFailed(e))) => Err(watch::failed(&format!("CRD {name}"), e)),
        Err(_elapsed) => {
            // Timed out: read it once to say why.
            let crd = crds
                .get(name)
                .await
                .map_err(|e| Error::kube(format!("reading CRD {name}"), e))?;
            let why = crd
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .find(|c| c.type_ == "NamesAccepted" && c.status == "False")
                .and_then(|c| c.message.clone())
                .unwrap_or_else(|| "the API server has not established it".into());
            Err(Error::Timeout {
                after: human(timeout),
                why: format!("CRD {name} is not Established: {why}"),
            })
        }
    }
}

/// Follows the operator Deployment with one watch (field selector `metadata.name`) until it has
/// rolled out; on timeout, says why from its pods and the namespace's events.
async fn wait_operator(client: &Client, timeout: Duration, printer: &Printer) -> Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let deadline = Instant::now() + timeout;
    let what = "the operator Deployment";
    let mut changes = watch::object(deployments, bundle::OPERATOR, what.into()).boxed();
    let mut last = Rollout {
        available: 0,
        desired: 1,
        done: false,
    };
    while let Ok(next) = tokio::time::timeout_at(deadline, changes.next()).await {
        match next {
            Some(Ok(Some(deployment))) => {
                last = installed::rollout(&deployment);
                if last.done {
                    printer.clear_progress();
                    return Ok(());
                }
                printer.progress(&format!(
                    "waiting for the operator: {}/{} replicas available",
                    last.available, last.desired
                ));
            }
            Some(Ok(None)) => printer.progress(&format!(
                "waiting for the operator Deployment {}/{} to exist",
                bundle::NAMESPACE,
                bundle::OPERATOR
            )),
            Some(Err(e)) => {
                printer.clear_progress();
                return Err(e);
            }
            None => {
                printer.clear_progress();
                return Err(Error::WatchEnded { what: what.into() });
            }
        }
    }
    printer.clear_progress();
    Err(operator_timeout(client, last, timeout).await)
}

/// The timeout error for `--wait`: the last rollout seen and what the operator's pods and the
/// namespace's events say (best effort: a read that fails only leaves its part out).
async fn operator_timeout(client: &Client, last: Rollout, timeout: Duration) -> Error {
    let pods: Api<Pod> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let events: Api<Event> = Api::namespaced(client.clone(), bundle::NAMESPACE);
    let selector = ListParams::default().labels(bundle::OPERATOR_PODS);
    let pods = pods
        .list(&selector)
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    let events = events
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    let reasons = diagnose::reasons(&pods, &events);
    Error::Timeout {
        after: human(timeout),
        why: format!(
            "the operator has {}/{} replicas available:{}",
            last.available,
            last.desired,
            diagnose::summary(&reasons, " no pod reports a problem yet")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_only_a_downgrade() {
        assert_eq!(
            downgrade(
                &[("CRD", Some("0.1.0".into())), ("operator", None)],
                "0.1.0"
            ),
            None
        );
        assert_eq!(downgrade(&[("CRD", Some("0.0.9".into()))], "0.1.0"), None);
        assert_eq!(
            downgrade(
                &[
                    ("CRD", Some("0.1.0".into())),
                    ("operator", Some("0.2.0".into()))
                ],
                "0.1.0"
            )
            .as_deref(),
            Some(
                "the installed operator is version 0.2.0, newer than this plugin (0.1.0); refusing to downgrade. \
                 Upgrade the plugin (kubectl krew upgrade infera) or pass --allow-downgrade"
            )
        );
    }

    #[test]
    fn offline_bundle_is_the_crd_and_deploy_files() {
        let objects = bundle::objects().unwrap_or_default();
        let yaml = manifest(&objects, ManifestOutput::Yaml).unwrap_or_default();
        assert_eq!(yaml.matches("---\n").count(), 11);
        assert!(yaml.contains("kind: CustomResourceDefinition"));
        assert!(!yaml.contains("resourceVersion"));
    }
}
