//! `kubectl infera scale NAME POOL=N …`: sets `spec.services.POOL.replicas` of an
//! InferaDeployment, and with `--wait` follows it until Ready.
//!
//! The change is one JSON merge patch, sent as field manager
//! [`SCALE_MANAGER`](infera_core::naming::SCALE_MANAGER) with the resourceVersion that was read:
//! every pool changes at once or none does (so no dry-run pass is needed first), a concurrent
//! write to the deployment (the operator's status, someone's edit) makes it read and decide anew
//! instead of overwriting what it did not see, and, as an update, it
//! takes ownership of exactly the `replicas` fields it sets, leaving every other field with
//! whoever set it. A server-side apply could not: under `deploy`'s manager a partial apply would
//! drop the rest of the spec that manager owns, and under a manager of its own it would need
//! `--force-conflicts` to take a field `deploy` or `kubectl apply` set. A pool with `autoscaling`
//! is refused: its HorizontalPodAutoscaler (or KEDA ScaledObject) owns the count.

use infera_core::{
    AutoscalingProvider, ComponentType, InferaDeployment,
    naming::{self, Component, SCALE_MANAGER},
};
use kube::{
    Api,
    api::{Patch, PatchParams},
};

use crate::{
    cli::{DryRun, GlobalArgs, ScaleArgs},
    client,
    error::{Error, Result},
    printer::Printer,
    view, wait,
};

/// One pool's replicas, before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Change {
    pool: String,
    from: i32,
    to: i32,
}

pub async fn run(args: &ScaleArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let kube = client::connect(global).await?;
    let (line, scaled) = client::retry_on_conflict(|| scale(&kube, args)).await?;
    printer.out(&line);
    if let Some(scaled) = scaled.filter(|_| args.wait) {
        wait::ready(&kube, &scaled, args.timeout, printer).await?;
    }
    Ok(())
}

/// One read-decide-write of `scale`: the line to print and, unless it was a dry run, the
/// deployment to wait for.
async fn scale(
    kube: &client::Kube,
    args: &ScaleArgs,
) -> Result<(String, Option<InferaDeployment>)> {
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &kube.namespace);
    let object = format!("InferaDeployment {}/{}", kube.namespace, args.name);
    let idep = view::deployment(kube, &kube.namespace, &args.name).await?;
    let changes = changes(&idep, &args.pools, &object)?;
    let summary = summary(&changes);
    let name = format!("inferadeployment.infera.amd.com/{}", args.name);
    let changed = changes.iter().any(|c| c.from != c.to);
    match args.dry_run {
        DryRun::Client => {
            let verb = if changed { "scaled" } else { "unchanged" };
            Ok((format!("{name} {verb}: {summary} (dry run)"), None))
        }
        _ if !changed => Ok((format!("{name} unchanged: {summary}"), Some(idep))),
        dry_run => {
            let server_dry_run = dry_run == DryRun::Server;
            let params = PatchParams {
                field_manager: Some(SCALE_MANAGER.into()),
                dry_run: server_dry_run,
                ..PatchParams::default()
            };
            let scaled = api
                .patch(&args.name, &params, &Patch::Merge(patch(&idep, &changes)))
                .await
                .map_err(|e| Error::kube(format!("scaling {object}"), e))?;
            if server_dry_run {
                Ok((format!("{name} scaled: {summary} (server dry run)"), None))
            } else {
                Ok((format!("{name} scaled: {summary}"), Some(scaled)))
            }
        }
    }
}

/// What scaling `requested` pools of `idep` changes, in the order asked. Pools the deployment
/// does not have fail (exit 1, naming the pools it has); pools with `autoscaling` are refused
/// (exit 4, naming their HorizontalPodAutoscaler or KEDA ScaledObject).
fn changes(
    idep: &InferaDeployment,
    requested: &[(String, i32)],
    object: &str,
) -> Result<Vec<Change>> {
    let services = &idep.spec.services;
    let unknown: Vec<String> = requested
        .iter()
        .filter(|(pool, _)| !services.contains_key(pool))
        .map(|(pool, _)| pool.clone())
        .collect();
    if !unknown.is_empty() {
        return Err(Error::UnknownPools {
            object: object.to_string(),
            unknown,
            pools: services.keys().cloned().collect(),
        });
    }
    let deployment = idep.metadata.name.as_deref().unwrap_or_default();
    let mut refused = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    for (pool, to) in requested {
        if let Some(earlier) = changes.iter().find(|c| &c.pool == pool) {
            return Err(Error::Usage(format!(
                "{pool} is given twice ({pool}={} and {pool}={to}); give each pool once",
                earlier.to
            )));
        }
        let service = &services[pool];
        if let Some(autoscaling) = &service.autoscaling {
            let component = match service.component_type {
                ComponentType::Server => Component::Server(pool),
                ComponentType::Worker => Component::Worker(pool, service.role.unwrap_or_default()),
            };
            let name = component.object_name(deployment);
            let autoscaler = match autoscaling.provider.unwrap_or_default() {
                AutoscalingProvider::Hpa => format!("HorizontalPodAutoscaler {name}"),
                AutoscalingProvider::Keda => format!(
                    "KEDA ScaledObject {name} and the HorizontalPodAutoscaler {} it creates",
                    naming::keda_hpa_name(&name)
                ),
            };
            refused.push(format!(
                "{pool} is scaled by {autoscaler} (minReplicas {}, maxReplicas {}): change spec.services.{pool}.autoscaling instead, or remove it to set replicas",
                autoscaling.min_replicas.unwrap_or(1),
                autoscaling.max_replicas
            ));
        }
        changes.push(Change {
            pool: pool.clone(),
            from: service.replicas.unwrap_or(1),
            to: *to,
        });
    }
    if !refused.is_empty() {
        return Err(Error::Refused(format!("{object}: {}", refused.join("; "))));
    }
    Ok(changes)
}

/// `decode 1 → 3, prefill 2` (a pool that does not change shows its count once).
fn summary(changes: &[Change]) -> String {
    let parts: Vec<String> = changes
        .iter()
        .map(|c| {
            if c.from == c.to {
                format!("{} {}", c.pool, c.to)
            } else {
                format!("{} {} → {}", c.pool, c.from, c.to)
            }
        })
        .collect();
    parts.join(", ")
}

/// The merge patch: the new replicas of each pool, guarded by the resourceVersion read.
fn patch(idep: &InferaDeployment, changes: &[Change]) -> serde_json::Value {
    infera_core::replicas::patch(
        idep.metadata.resource_version.as_deref(),
        changes.iter().map(|c| (c.pool.as_str(), c.to)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Exit;

    fn demo() -> InferaDeployment {
        let yaml = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: demo, namespace: team, resourceVersion: "42"}
spec:
  backendFramework: sglang
  image: rocm/infera:sglang-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    prefill: {componentType: worker, role: prefill, replicas: 2, resources: {gpu: 1}}
    decode:
      componentType: worker
      role: decode
      resources: {gpu: 1}
      autoscaling:
        minReplicas: 2
        maxReplicas: 8
        metrics: [{type: Pods, pods: {metric: {name: q}, target: {type: AverageValue, averageValue: "4"}}}]
"#;
        infera_core::yaml::parse_deployments(yaml)
            .expect("a deployment")
            .remove(0)
    }

    fn requested(pairs: &[(&str, i32)]) -> Vec<(String, i32)> {
        pairs.iter().map(|(p, n)| (p.to_string(), *n)).collect()
    }

    #[test]
    fn changes_are_the_requested_pools_with_their_current_count() {
        let changes =
            changes(&demo(), &requested(&[("prefill", 3), ("server", 1)]), "d").expect("changes");
        assert_eq!(summary(&changes), "prefill 2 → 3, server 1");
        assert_eq!(
            patch(&demo(), &changes),
            serde_json::json!({
                "metadata": {"resourceVersion": "42"},
                "spec": {"services": {"prefill": {"replicas": 3}, "server": {"replicas": 1}}},
            })
        );
    }

    #[test]
    fn unknown_pools_fail_naming_the_pools_that_exist() {
        let error = changes(
            &demo(),
            &requested(&[("decod", 3)]),
            "InferaDeployment team/demo",
        )
        .expect_err("unknown");
        assert_eq!(error.exit(), Exit::Failed);
        assert_eq!(
            error.to_string(),
            "InferaDeployment team/demo has no pool decod; its pools are decode, prefill, server"
        );
    }

    #[test]
    fn an_autoscaled_pool_is_refused_naming_its_hpa() {
        let error = changes(&demo(), &requested(&[("prefill", 1), ("decode", 3)]), "d")
            .expect_err("autoscaled");
        assert_eq!(error.exit(), Exit::Conflict);
        assert_eq!(
            error.to_string(),
            "d: decode is scaled by HorizontalPodAutoscaler demo-decode (minReplicas 2, maxReplicas 8): change spec.services.decode.autoscaling instead, or remove it to set replicas"
        );
    }

    #[test]
    fn a_keda_pool_is_refused_naming_its_scaled_object_and_the_hpa_keda_made() {
        let mut idep = demo();
        let decode = idep
            .spec
            .services
            .get_mut("decode")
            .and_then(|s| s.autoscaling.as_mut())
            .expect("decode autoscales");
        *decode = serde_json::from_value(serde_json::json!({
            "provider": "keda", "minReplicas": 1, "maxReplicas": 6,
            "triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}],
        }))
        .expect("keda autoscaling");
        let error = changes(&idep, &requested(&[("decode", 3)]), "d").expect_err("autoscaled");
        assert_eq!(error.exit(), Exit::Conflict);
        assert_eq!(
            error.to_string(),
            "d: decode is scaled by KEDA ScaledObject demo-decode and the HorizontalPodAutoscaler keda-hpa-demo-decode it creates (minReplicas 1, maxReplicas 6): change spec.services.decode.autoscaling instead, or remove it to set replicas"
        );
    }

    #[test]
    fn a_pool_given_twice_is_a_usage_error() {
        let error = changes(&demo(), &requested(&[("prefill", 1), ("prefill", 3)]), "d")
            .expect_err("twice");
        assert_eq!(error.exit(), Exit::Usage);
    }
}
