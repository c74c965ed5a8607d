//! INF211–INF215: the Gateway API Inference Extension (`spec.gaie`). They run when a `--for FILE`
//! spec has `gaie` (all five), or when an InferencePool CRD is installed (the two CRD checks
//! only); otherwise GAIE is not in use and they are left out.
//!
//! What a GAIE deployment needs, in order: the Gateway API CRDs (the HTTPRoute), the
//! InferencePool CRD in the version Infera renders, the named Gateway accepted and programmed by
//! a gateway controller, a listener of it that lets an HTTPRoute from the deployment's namespace
//! attach, and an API server that accepts the HTTPRoute and InferencePool the spec renders. A
//! missing CRD fails only when a spec needs it; otherwise it is a warning.

use std::collections::{BTreeMap, BTreeSet};

use infera_core::{ChildKind, ValidDeployment, validate::Gaie};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::{Check, Facts, Read, check, serves};
use crate::gateway_api::{self, Admission, Gateway, condition};

/// The InferencePool CRD of Inference Extension releases before v1.0 (v1alpha2), which Infera
/// renders for only on clusters without the v1 one.
pub fn alpha_pool_crd() -> String {
    ChildKind::InferencePoolV1Alpha2
        .crd()
        .map(|crd| crd.name)
        .unwrap_or_default()
}
/// Annotation on the Inference Extension's CRDs naming the release they come from.
const INFERENCE_BUNDLE_VERSION: &str = "inference.networking.k8s.io/bundle-version";

/// What the GAIE checks read; each `None` when it was not read.
#[derive(Debug, Clone, Default)]
pub struct GaieFacts {
    /// `gateways.gateway.networking.k8s.io`.
    pub gateway_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// `httproutes.gateway.networking.k8s.io`.
    pub route_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// `inferencepools.inference.networking.k8s.io` (Inference Extension v1.0 and later).
    pub pool_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// [`alpha_pool_crd`] (Inference Extension before v1.0).
    pub alpha_pool_crd: Option<Read<Option<CustomResourceDefinition>>>,
    /// `--for FILE`: the Gateway its `spec.gaie` names.
    pub gateway: Option<Read<Option<Gateway>>>,
    /// `--for FILE`: the labels of the deployment's namespace; read only when a listener of the
    /// Gateway selects route namespaces by label.
    pub namespace_labels: Option<Read<BTreeMap<String, String>>>,
    /// `--for FILE`: server-side dry runs of the HTTPRoute and the InferencePool the spec renders,
    /// each with what it was (`HTTPRoute demo-route`).
    pub dry_runs: Vec<(String, Read<()>)>,
}

/// The name of the Gateway CRD.
pub fn gateway_crd_name() -> String {
    format!("gateways.{}", gateway_api::GROUP)
}

/// INF211–INF215: the CRD checks when GAIE is wanted or installed, the rest for a `--for` spec
/// with `gaie`.
pub(super) fn checks(f: &Facts, out: &mut Vec<Check>) {
    let g = &f.gaie;
    let wanted = f
        .spec
        .as_ref()
        .and_then(|spec| spec.gaie.as_ref().map(|gaie| (spec, gaie)));
    let installed = [&g.pool_crd, &g.alpha_pool_crd]
        .into_iter()
        .any(|crd| matches!(crd, Some(Ok(Some(_)))));
    if wanted.is_none() && !installed {
        return;
    }
    let (routes, routes_served) = gateway_api_crds(g, wanted.is_some());
    let (pools, pools_served) = inference_pool_crd(g, wanted.is_some());
    out.extend([routes, pools]);
    let Some((spec, gaie)) = wanted else {
        return;
    };
    let gateway_namespace = gateway_namespace(spec, gaie);
    let at = format!("{gateway_namespace}/{}", gaie.gateway_name);
    let (gateway, found) = gateway_check(
        g,
        routes_served != Some(false),
        (gateway_namespace, &gaie.gateway_name),
    );
    out.push(gateway);
    out.push(listener_check(
        found,
        gaie,
        &at,
        (&spec.namespace, gateway_namespace),
        g.namespace_labels.as_ref(),
    ));
    out.push(dry_run_check(
        g,
        routes_served != Some(false) && pools_served != Some(false),
        &spec.namespace,
    ));
}

/// Whether the spec's Gateway has a listener that selects route namespaces by label, so that
/// `doctor` must read the namespace's labels to tell whether the route may attach.
pub fn needs_namespace_labels(gateway: &Gateway, gaie: &Gaie) -> bool {
    gateway
        .spec
        .listeners
        .iter()
        .filter(|l| {
            gaie.gateway_section_name
                .as_ref()
                .is_none_or(|s| *s == l.name)
        })
        .any(|l| l.allowed_routes.namespaces.from.as_deref() == Some("Selector"))
}

/// The namespace of the Gateway a spec names: `gatewayNamespace`, default the spec's.
pub fn gateway_namespace<'a>(spec: &'a ValidDeployment, gaie: &'a Gaie) -> &'a str {
    gaie.gateway_namespace.as_deref().unwrap_or(&spec.namespace)
}

/// Fails when a spec needs what is missing, warns when nothing does yet.
fn missing(c: Check, needed: bool, message: String, hint: String) -> Check {
    if needed {
        c.fail(message, hint)
    } else {
        c.warn(message, hint)
    }
}

/// An annotation of a CRD.
fn annotation<'a>(crd: &'a CustomResourceDefinition, key: &str) -> Option<&'a str> {
    crd.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// The versions a CRD serves, comma-separated.
fn served(crd: &CustomResourceDefinition) -> String {
    let versions: Vec<&str> = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| v.name.as_str())
        .collect();
    versions.join(", ")
}

/// The major version of a release name such as `v1.6.3` or `v0.8.0-rc1`.
fn major(release: &str) -> Option<u32> {
    release
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// INF211, and whether both CRDs are installed and serve what Infera creates (`None`: unknown).
fn gateway_api_crds(g: &GaieFacts, needed: bool) -> (Check, Option<bool>) {
    let c = check("INF211", "gateway", "gateway-api-crds");
    // Always `Some`: HTTPRoute is a custom resource. The tests pin this check.
    let Some(route) = ChildKind::HttpRoute.crd() else {
        return (c.skip("not checked"), None);
    };
    let gateways = gateway_crd_name();
    let mut installed = Vec::new();
    let mut absent = Vec::new();
    for (name, read) in [(&gateways, &g.gateway_crd), (&route.name, &g.route_crd)] {
        match read {
            None => return (c.skip("not checked"), None),
            Some(Err(e)) => {
                return (c.unreadable("reading CustomResourceDefinitions", e), None);
            }
            Some(Ok(None)) => absent.push(name.as_str()),
            Some(Ok(Some(crd))) => installed.push((name.as_str(), crd)),
        }
    }
    let hint = format!("{}; {} needs them", route.install, route.needed_for);
    if !absent.is_empty() {
        let message = format!(
            "the {} CRDs are not installed: {}",
            route.project,
            absent.join(", ")
        );
        return (missing(c, needed, message, hint), Some(false));
    }
    let releases: BTreeSet<&str> = installed
        .iter()
        .filter_map(|(_, crd)| annotation(crd, gateway_api::BUNDLE_VERSION))
        .collect();
    let release = match releases.iter().copied().collect::<Vec<_>>().as_slice() {
        [] => "release unknown (no bundle-version annotation)".to_string(),
        one_or_more => one_or_more.join(", "),
    };
    let channel = installed
        .iter()
        .find_map(|(_, crd)| annotation(crd, gateway_api::CHANNEL))
        .map(|c| format!(", {c} channel"))
        .unwrap_or_default();
    let upgrade = format!(
        "upgrade the {} CRDs to v1.0 or newer ({})",
        route.project, route.install
    );
    if let Some((name, crd)) = installed
        .iter()
        .find(|(_, crd)| !serves(crd, &route.version))
    {
        let message = format!(
            "{name} does not serve an Established {} (it serves {}; {} {release})",
            route.version,
            served(crd),
            route.project
        );
        return (missing(c, needed, message, upgrade), Some(false));
    }
    let old: Vec<&str> = releases
        .iter()
        .copied()
        .filter(|r| major(r).is_some_and(|m| m < 1))
        .collect();
    if !old.is_empty() {
        let message = format!(
            "{} {} is older than v1.0: {} needs v1.0 or newer",
            route.project,
            old.join(", "),
            route.needed_for
        );
        return (c.warn(message, upgrade), Some(true));
    }
    let message = format!(
        "{} {release}{channel}: gateways and httproutes serve {}",
        route.project, route.version
    );
    (c.pass(message), Some(true))
}

/// INF212, and whether the InferencePool CRD serves the version Infera creates (`None`: unknown).
fn inference_pool_crd(g: &GaieFacts, needed: bool) -> (Check, Option<bool>) {
    let c = check("INF212", "gateway", "inferencepool-crd");
    // Always `Some`: InferencePool is a custom resource. The tests pin this check.
    let Some(pool) = ChildKind::InferencePool.crd() else {
        return (c.skip("not checked"), None);
    };
    let hint = format!("{}; {} needs it", pool.install, pool.needed_for);
    let group_version = ChildKind::InferencePool.api_resource().api_version;
    let alpha = match &g.alpha_pool_crd {
        Some(Ok(Some(crd))) => Some(crd),
        _ => None,
    };
    match &g.pool_crd {
        None => (c.skip("not checked"), None),
        Some(Err(e)) => (c.unreadable("reading CustomResourceDefinitions", e), None),
        Some(Ok(Some(crd))) if serves(crd, &pool.version) => {
            let release = annotation(crd, INFERENCE_BUNDLE_VERSION)
                .map(|r| format!(" ({} {r})", pool.project))
                .unwrap_or_default();
            let mut details = vec![format!("served versions: {}", served(crd))];
            if let Some(alpha) = alpha {
                details.push(format!(
                    "also installed: {} ({}), which Infera does not use",
                    alpha_pool_crd(),
                    served(alpha)
                ));
            }
            let message = format!("{} serves {}{release}", pool.name, pool.version);
            (c.pass(message).details(details), Some(true))
        }
        Some(Ok(Some(crd))) => {
            let message = format!(
                "{} does not serve an Established {} (it serves {})",
                pool.name,
                pool.version,
                served(crd)
            );
            (missing(c, needed, message, hint), Some(false))
        }
        Some(Ok(None)) => match alpha.filter(|alpha| serves(alpha, "v1alpha2")) {
            Some(alpha) => {
                let message = format!(
                    "only {} ({}) is installed, from a {} release before v1.0; Infera creates v1alpha2 InferencePools there, not {group_version}",
                    alpha_pool_crd(),
                    served(alpha),
                    pool.project
                );
                let hint = format!("upgrade to v1.0 or newer: {}", pool.install);
                (c.warn(message, hint), Some(true))
            }
            None => (
                missing(c, needed, format!("{pool} is not installed"), hint),
                Some(false),
            ),
        },
    }
}

/// INF213: the named Gateway exists and a controller has accepted and programmed it.
fn gateway_check<'a>(
    g: &'a GaieFacts,
    crds: bool,
    (namespace, name): (&str, &str),
) -> (Check, Option<&'a Gateway>) {
    let c = check("INF213", "gateway", "gateway");
    let at = format!("{namespace}/{name}");
    if !crds {
        return (c.skip("needs the Gateway API CRDs (INF211)"), None);
    }
    let gateway = match &g.gateway {
        None => return (c.skip("not checked"), None),
        Some(Err(e)) => return (c.unreadable(&format!("reading Gateway {at}"), e), None),
        Some(Ok(None)) => {
            let message = format!("Gateway {at} (spec.gaie.gatewayName) does not exist");
            let hint = "create it with the gatewayClassName of your gateway controller, or point \
                        spec.gaie.gatewayName/gatewayNamespace at an existing Gateway \
                        (`kubectl get gateways -A`)";
            return (c.fail(message, hint), None);
        }
        Some(Ok(Some(gateway))) => gateway,
    };
    let class = &gateway.spec.gateway_class_name;
    let pending: Vec<String> = ["Accepted", "Programmed"]
        .into_iter()
        .filter_map(|type_| match condition(&gateway.status.conditions, type_) {
            Some(c) if c.is_true() => None,
            Some(c) => Some(c.to_string()),
            None => Some(format!("{type_} not reported")),
        })
        .collect();
    let check = if pending.is_empty() {
        c.pass(format!(
            "Gateway {at} (class {class}) is Accepted and Programmed"
        ))
    } else {
        c.fail(
            format!(
                "Gateway {at} (class {class}) is not ready: {}",
                pending.join(", ")
            ),
            format!(
                "check that a gateway controller for GatewayClass {class} is installed and running; \
                 see `kubectl describe gateway -n {namespace} {name}`"
            ),
        )
    };
    (check, Some(gateway))
}

/// INF214: a listener of the Gateway (the `gatewaySectionName` one when set) lets an HTTPRoute
/// from the deployment's namespace attach.
fn listener_check(
    gateway: Option<&Gateway>,
    gaie: &Gaie,
    at: &str,
    (route_namespace, gateway_namespace): (&str, &str),
    labels: Option<&Read<BTreeMap<String, String>>>,
) -> Check {
    let c = check("INF214", "gateway", "gateway-listener");
    let Some(gateway) = gateway else {
        return c.skip("needs the Gateway (INF213)");
    };
    let all = &gateway.spec.listeners;
    let section = gaie.gateway_section_name.as_deref();
    let listeners: Vec<_> = all
        .iter()
        .filter(|l| section.is_none_or(|s| s == l.name))
        .collect();
    if let (Some(section), []) = (section, listeners.as_slice()) {
        let names: Vec<&str> = all.iter().map(|l| l.name.as_str()).collect();
        return c.fail(
            format!("Gateway {at} has no listener {section} (spec.gaie.gatewaySectionName)"),
            format!(
                "set spec.gaie.gatewaySectionName to one of its listeners ({}), or remove it to attach to every listener that allows the route",
                names.join(", ")
            ),
        );
    }
    let verdicts: Vec<_> = listeners
        .iter()
        .map(|l| (l, l.admits(route_namespace, gateway_namespace, labels)))
        .collect();
    let details = verdicts
        .iter()
        .map(|(l, verdict)| format!("listener {} ({}): {}", l.name, l.protocol, verdict.reason()))
        .collect();
    let allowing: Vec<&str> = verdicts
        .iter()
        .filter(|(_, v)| matches!(v, Admission::Allowed(_)))
        .map(|(l, _)| l.name.as_str())
        .collect();
    let subject = match section {
        Some(section) => format!("listener {section} of Gateway {at}"),
        None => format!("a listener of Gateway {at}"),
    };
    if let Some(first) = allowing.first() {
        let message = match allowing.len() {
            1 => format!("listener {first} of Gateway {at} allows"),
            _ => format!("listeners {} of Gateway {at} allow", allowing.join(", ")),
        };
        let message = format!("{message} HTTPRoutes from namespace {route_namespace}");
        return c.pass(message).details(details);
    }
    if verdicts
        .iter()
        .any(|(_, v)| matches!(v, Admission::Unknown(_)))
    {
        let message = format!(
            "cannot tell whether {subject} allows HTTPRoutes from namespace {route_namespace}"
        );
        let hint = format!(
            "compare the listener's allowedRoutes.namespaces with `kubectl get namespace {route_namespace} --show-labels`, or run doctor as a user who may read namespaces"
        );
        return c.warn(message, hint).details(details);
    }
    let message = match section {
        Some(_) => format!("{subject} does not allow HTTPRoutes from namespace {route_namespace}"),
        None => format!(
            "no listener of Gateway {at} allows HTTPRoutes from namespace {route_namespace}"
        ),
    };
    let hint = format!(
        "on an HTTP or HTTPS listener, set allowedRoutes.namespaces.from: All (or a Selector that matches namespace {route_namespace}), or deploy into namespace {gateway_namespace}"
    );
    c.fail(message, hint).details(details)
}

/// INF215: the API server accepts the HTTPRoute and InferencePool the spec renders.
fn dry_run_check(g: &GaieFacts, crds: bool, namespace: &str) -> Check {
    let c = check("INF215", "gateway", "gaie-dry-run");
    if !crds {
        return c.skip("needs the Gateway API and InferencePool CRDs (INF211, INF212)");
    }
    if g.dry_runs.is_empty() {
        return c.skip("not checked");
    }
    let objects: Vec<&str> = g.dry_runs.iter().map(|(what, _)| what.as_str()).collect();
    let refused: Vec<String> = g
        .dry_runs
        .iter()
        .filter_map(|(what, r)| r.as_ref().err().map(|e| format!("{what}: {e}")))
        .collect();
    match refused.first() {
        None => c.pass(format!(
            "the API server accepts {} in namespace {namespace} (server-side dry run)",
            objects.join(" and ")
        )),
        // Only RBAC's own denial means we could not check; a quota or a webhook also answers 403.
        Some(first) if refused.iter().all(|r| r.contains(" cannot patch")) => {
            c.unreadable("server-side dry run", first)
        }
        Some(_) => c.fail(
            format!("the API server refuses {}", refused.join("; ")),
            "the operator's apply would be refused the same way (Degraded, ApplyRejected): fix what the message names",
        ),
    }
}
