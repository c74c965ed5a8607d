//! INF101, INF102, INF103: Infera's own install — the CRD, the versions against the plugin's, and
//! the operator Deployment.

use infera_core::{PodHealth, crd::VERSION};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::{Check, Facts, check, crd_established};
use crate::{bundle, installed};

/// INF101, INF102, INF103, in that order.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let (crd, crd_version) = crd_check(f);
    let (operator, operator_version) = operator_check(f);
    out.push(crd);
    out.push(skew_check(
        crd_version.as_deref(),
        operator_version.as_deref(),
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
        operator.pass(format!(
            "{} is available ({available}/{desired})",
            bundle::OPERATOR
        ))
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

/// INF102: installed versions against the plugin's.
fn skew_check(crd: Option<&str>, operator: Option<&str>) -> Check {
    let skew = check("INF102", "infera", "version-skew");
    let skews = installed::skew(VERSION, crd, operator);
    if !skews.is_empty() {
        return skew
            .warn(
                "installed versions differ from the plugin's",
                "run `kubectl infera init` to upgrade, or upgrade the plugin",
            )
            .details(skews);
    }
    match (crd, operator) {
        (None, None) => skew.skip("nothing installed to compare"),
        _ => skew.pass(format!("CRD and operator match the plugin ({VERSION})")),
    }
}
