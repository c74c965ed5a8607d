//! The shape of the graph: at most [`MAX_SERVICES`] services, exactly one server (or none behind an
//! Inference Gateway), at least one worker pool, and prefill pools exactly when there are decode
//! pools.

use std::collections::BTreeMap;

use super::rules::NO_WORKER;
use super::{Errors, limits::MAX_SERVICES};
use crate::types::{ComponentType, Role, ServiceSpec};

/// No server and no Inference Gateway in front of the workers.
pub(super) const NO_SERVER: &str = "exactly one service must have componentType: server, or none when spec.gaie.enabled is true (the gateway then routes to the workers' frontend sidecars); add one server";

/// Every rule about the graph as a whole; all are reported at `spec.services`. `gaie`: an
/// Inference Gateway routes to the workers, so the graph may have no server (upstream's
/// `examples/k8s-deployments/kgateway-gaie-aggregated.yaml`).
pub(super) fn graph(
    errors: &mut Errors,
    services: &BTreeMap<String, Box<ServiceSpec>>,
    gaie: bool,
) {
    if services.len() > MAX_SERVICES {
        errors.push(
            "spec.services",
            format!(
                "at most {MAX_SERVICES} services are allowed (now {}); remove some or split the graph into several deployments",
                services.len()
            ),
        );
    }
    one_server(errors, services, gaie);
    if !services
        .values()
        .any(|s| s.component_type == ComponentType::Worker)
    {
        errors.push("spec.services", NO_WORKER);
    }
    prefill_with_decode(errors, services);
}

fn one_server(errors: &mut Errors, services: &BTreeMap<String, Box<ServiceSpec>>, gaie: bool) {
    let servers: Vec<&str> = services
        .iter()
        .filter(|(_, s)| s.component_type == ComponentType::Server)
        .map(|(name, _)| name.as_str())
        .collect();
    match servers.len() {
        1 => {}
        0 if gaie => {}
        0 => errors.push("spec.services", NO_SERVER),
        _ => errors.push(
            "spec.services",
            format!(
                "exactly one service must have componentType: server, found {}; remove the extras",
                servers.join(", ")
            ),
        ),
    }
}

fn prefill_with_decode(errors: &mut Errors, services: &BTreeMap<String, Box<ServiceSpec>>) {
    let has_role = |role| services.values().any(|s| s.role == Some(role));
    let (present, missing) = match (has_role(Role::Prefill), has_role(Role::Decode)) {
        (true, false) => ("prefill", "decode"),
        (false, true) => ("decode", "prefill"),
        _ => return,
    };
    errors.push(
        "spec.services",
        format!("{present} pools need {missing} pools; add a service with role: {missing}, or use role: mixed"),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn graph_of<N: Into<String>>(
        services: impl IntoIterator<Item = (N, serde_json::Value)>,
    ) -> Vec<String> {
        behind_gateway(services, false)
    }

    fn behind_gateway<N: Into<String>>(
        services: impl IntoIterator<Item = (N, serde_json::Value)>,
        gaie: bool,
    ) -> Vec<String> {
        let services = services
            .into_iter()
            .map(|(name, json)| (name.into(), Box::new(super::super::service(json))))
            .collect();
        found(|e| graph(e, &services, gaie))
    }

    fn server() -> serde_json::Value {
        json!({"componentType": "server", "args": ["--router-tokenizer-path", "m"]})
    }

    fn worker(role: &str) -> serde_json::Value {
        json!({"componentType": "worker", "role": role})
    }

    #[test]
    fn a_server_and_a_worker_pass() {
        assert!(graph_of([("server", server()), ("w", worker("mixed"))]).is_empty());
        assert!(
            graph_of([
                ("server", server()),
                ("p", worker("prefill")),
                ("d", worker("decode"))
            ])
            .is_empty()
        );
    }

    #[test]
    fn no_server_only_behind_an_inference_gateway() {
        assert_eq!(
            graph_of([("w", worker("mixed"))]),
            [
                "spec.services: exactly one service must have componentType: server, or none when spec.gaie.enabled is true (the gateway then routes to the workers' frontend sidecars); add one server"
            ]
        );
        assert!(behind_gateway([("w", worker("mixed"))], true).is_empty());
        assert_eq!(
            behind_gateway(
                [("a", server()), ("b", server()), ("w", worker("mixed"))],
                true
            ),
            [
                "spec.services: exactly one service must have componentType: server, found a, b; remove the extras"
            ]
        );
    }

    #[test]
    fn two_servers_are_named() {
        assert_eq!(
            graph_of([("a", server()), ("b", server()), ("w", worker("mixed"))]),
            [
                "spec.services: exactly one service must have componentType: server, found a, b; remove the extras"
            ]
        );
    }

    #[test]
    fn no_worker() {
        assert_eq!(
            graph_of([("server", server())]),
            [
                "spec.services: at least one service must have componentType: worker; add a worker pool"
            ]
        );
    }

    #[test]
    fn prefill_and_decode_come_together() {
        assert_eq!(
            graph_of([("server", server()), ("p", worker("prefill"))]),
            [
                "spec.services: prefill pools need decode pools; add a service with role: decode, or use role: mixed"
            ]
        );
        assert_eq!(
            graph_of([("server", server()), ("d", worker("decode"))]),
            [
                "spec.services: decode pools need prefill pools; add a service with role: prefill, or use role: mixed"
            ]
        );
    }

    #[test]
    fn at_most_32_services() {
        let mut services = vec![("server".to_string(), server())];
        services.extend((1..MAX_SERVICES).map(|i| (format!("w{i}"), worker("mixed"))));
        assert!(graph_of(services.clone()).is_empty());
        services.push(("w32".into(), worker("mixed")));
        assert_eq!(
            graph_of(services),
            [
                "spec.services: at most 32 services are allowed (now 33); remove some or split the graph into several deployments"
            ]
        );
    }
}
