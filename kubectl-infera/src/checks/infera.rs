//! INF101, INF102, INF103: Infera's own install — the CRD, the versions against the plugin's, and
//! the operator Deployment.

use infera_core::{PodHealth, crd::VERSION, naming::LEADER_LEASE};
use k8s_openapi::{
    api::{apps::v1::Deployment, coordination::v1::Lease},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    jiff::Timestamp,
};

use super::{Check, Facts, check, crd_established};
use crate::{
    bundle,
    installed::{self, HelmRelease},
};

/// INF101, INF102, INF103, in that order.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let (crd, crd_version) = crd_check(f);
    let (operator, operator_version) = operator_check(f);
    let helm = match &f.operator {
        Some(Ok(Some(d))) => HelmRelease::of(d),
        _ => None,
    };
    out.push(crd);
    out.push(skew_check(
        crd_version.as_deref(),
        operator_version.as_deref(),
        helm.as_ref(),
    ));
    out.push(operator);
}

/// INF101, and the version the CRD was installed with.
fn crd_check(f: &Facts) -> (Check, Option<String>) {
    let crd = check("INF101", "infera", "crd");
    match &f.infera_crd {
        Some(Ok(Some(c))) => established(crd, c),
        Some(Ok(None)) if f.pre => (
            crd.pass("not installed yet (expected before `kubectl infera init`)"),
            None,
        ),
        Some(Ok(None)) => (
            crd.fail(
                "the InferaDeployment CRD is not installed",
                "run `kubectl infera init`",
            ),
            None,
        ),
        Some(Err(e)) => (crd.unreadable("reading CustomResourceDefinitions", e), None),
        None => (crd.skip("not checked"), None),
    }
}

/// INF101 for an installed CRD: it must be Established.
fn established(check: Check, crd: &CustomResourceDefinition) -> (Check, Option<String>) {
    let version = installed::crd_version(crd);
    let name = bundle::crd_name();
    let check = if crd_established(crd) {
        check.pass(format!(
            "{name} is Established (version {})",
            version.as_deref().unwrap_or("unknown")
        ))
    } else {
        check.fail(
            format!("{name} exists but is not Established"),
            format!("see `kubectl get crd {name} -o yaml` (NamesAccepted condition)"),
        )
    };
    (check, version)
}

/// The operator's leader Lease, as read at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRenewal {
    pub holder: Option<String>,
    /// Seconds since its last renewal; `None`: never renewed.
    pub seconds_ago: Option<i64>,
    pub duration_seconds: i64,
}

impl LeaseRenewal {
    /// What `lease` says at `now`.
    pub fn of(lease: &Lease, now: Timestamp) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        Self {
            holder: spec.holder_identity,
            seconds_ago: spec.renew_time.map(|t| now.as_second() - t.0.as_second()),
            duration_seconds: i64::from(spec.lease_duration_seconds.unwrap_or(15)),
        }
    }
}

/// Whether the operator's container elects a leader (then only a replica holding the Lease
/// reconciles, and a Lease nobody renews means nothing reconciles).
fn elects_leader(d: &Deployment) -> bool {
    d.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .into_iter()
        .flat_map(|s| &s.containers)
        .flat_map(|c| c.args.iter().flatten())
        .any(|a| a == "--leader-elect")
}

/// An available operator reconciles only while a replica renews the leader Lease: a Deployment
/// whose pods are Ready but whose Lease is missing or stale (pods that run no process, a replica
/// stuck before it leads) reconciles nothing.
fn leader_check(operator: Check, available: String, f: &Facts) -> Check {
    let lease = format!("{}/{LEADER_LEASE}", bundle::NAMESPACE);
    let logs = format!(
        "see `kubectl logs -n {} deploy/{}`",
        bundle::NAMESPACE,
        bundle::OPERATOR
    );
    match &f.operator_lease {
        Some(Ok(Some(l))) => match l.seconds_ago {
            Some(ago) if ago <= (2 * l.duration_seconds).max(30) => operator.pass(format!(
                "{available} and reconciling (leader {}, Lease renewed {ago}s ago)",
                l.holder.as_deref().unwrap_or("?")
            )),
            Some(ago) => operator.warn(
                format!("{available}, but its leader Lease {lease} was last renewed {} ago: no replica is reconciling", crate::duration::age(ago)),
                logs,
            ),
            None => operator.warn(format!("{available}, but its leader Lease {lease} was never renewed: no replica is reconciling"), logs),
        },
        Some(Ok(None)) => operator.warn(
            format!("{available}, but no replica has acquired its leader Lease {lease}: it has not started reconciling"),
            logs,
        ),
        Some(Err(e)) => operator.pass(format!("{available} (its leader Lease {lease} is unreadable: {e})")),
        None => operator.pass(available),
    }
}

/// INF103, and the operator's version.
fn operator_check(f: &Facts) -> (Check, Option<String>) {
    let operator = check("INF103", "infera", "operator");
    let ns = bundle::NAMESPACE;
    let Some(Ok(Some(d))) = &f.operator else {
        let check = match &f.operator {
            Some(Ok(None)) if f.pre => {
                operator.pass("not installed yet (expected before `kubectl infera init`)")
            }
            Some(Ok(None)) => operator.fail(
                format!(
                    "the operator Deployment {ns}/{} does not exist",
                    bundle::OPERATOR
                ),
                "run `kubectl infera init`",
            ),
            Some(Err(e)) => operator.unreadable("reading the operator Deployment", e),
            _ => operator.skip("not checked"),
        };
        return (check, None);
    };
    let rollout = installed::rollout(d);
    let (available, desired) = (rollout.available, rollout.desired);
    let crashing: Vec<&str> = f
        .operator_pods
        .iter()
        .filter(|p| PodHealth::of(p).crash_looping())
        .filter_map(|p| p.metadata.name.as_deref())
        .collect();
    let check = if let Some(first) = crashing.first() {
        operator.fail(
            format!("operator pods are crash-looping: {}", crashing.join(", ")),
            format!("see `kubectl logs -n {ns} {first} --previous`"),
        )
    } else if rollout.done {
        let by = HelmRelease::of(d)
            .map(|r| {
                format!(
                    ", installed by the Helm release {} (namespace {})",
                    r.name, r.namespace
                )
            })
            .unwrap_or_default();
        let available = format!(
            "{} is available ({available}/{desired}){by}",
            bundle::OPERATOR
        );
        if elects_leader(d) {
            leader_check(operator, available, f)
        } else {
            operator.pass(available)
        }
    } else {
        operator.fail(
            format!(
                "{} has {available}/{desired} replicas available",
                bundle::OPERATOR
            ),
            format!(
                "see `kubectl -n {ns} describe deployment {}` and its pods' events",
                bundle::OPERATOR
            ),
        )
    };
    (check, installed::operator_version(d))
}

/// INF102: installed versions against the plugin's; an install Helm made is upgraded with Helm.
/// A CRD older than the operator is a warning of its own: its fix is the CRD's.
fn skew_check(crd: Option<&str>, operator: Option<&str>, helm: Option<&HelmRelease>) -> Check {
    let skew = check("INF102", "infera", "version-skew");
    if let (Some(behind), Some(version)) = (installed::crd_behind(crd, operator), operator) {
        let fix = match helm {
            Some(_) => format!(
                "apply release {version}'s CRD (Helm does not upgrade CRDs): `{}`",
                infera_core::crd::helm_crd_upgrade(version)
            ),
            None => format!(
                "upgrade the CRD to release {version}: `kubectl infera init` with that release's plugin, or apply its infera-operator-{version}.yaml"
            ),
        };
        return skew.warn(behind, fix);
    }
    let skews = installed::skew(VERSION, crd, operator);
    if !skews.is_empty() {
        let fix = match helm {
            Some(release) => format!("run {}, or upgrade the plugin", release.upgrade()),
            None => "run `kubectl infera init` to upgrade, or upgrade the plugin".into(),
        };
        return skew
            .warn("installed versions differ from the plugin's", fix)
            .details(skews);
    }
    match (crd, operator) {
        (None, None) => skew.skip("nothing installed to compare"),
        _ => skew.pass(format!("CRD and operator match the plugin ({VERSION})")),
    }
}
