//! Gateway API Inference Extension with Infera's own Endpoint Picker (EPP): the EPP, the
//! InferencePool it picks from and the HTTPRoute from the Gateway to the pool, as upstream's
//! operator builds them (`deploy/operator/internal/controller/gaie.go`). The frontend sidecar the
//! pool targets is rendered with the worker pods ([`super::pod`]).
//!
//! What points at what: `HTTPRoute.parentRefs` → the user's Gateway (listener `sectionName` when
//! given); `HTTPRoute.backendRefs` → the InferencePool; `InferencePool.endpointPickerRef` → the EPP
//! Service's gRPC port; `InferencePool.selector` → the deployment's pods labelled
//! `infera.amd.com/gaie-frontend=true` (those with the sidecar) on the sidecar's port
//! (`gaie.go:223-252`). The EPP finds the workers as the router does, by discovery, not through the
//! pool (`infera/gaie/__main__.py:83-106`).

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec},
        core::v1::{
            Container, ContainerPort, EnvVar, PodSpec, PodTemplateSpec, Probe, Service,
            ServicePort, ServiceSpec, TCPSocketAction, VolumeMount,
        },
    },
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{
    Child, Context, LOGS_ON_ERROR, PoolApi, meta, pod,
    probes::QUICK_TIMEOUT,
    pull_policy,
    rbac::{identity, read_rule},
    security,
};
use crate::{
    external::{
        http_route::{
            HttpRoute, HttpRouteParentRefs, HttpRouteRules, HttpRouteRulesBackendRefs,
            HttpRouteRulesMatches, HttpRouteRulesMatchesPath, HttpRouteRulesMatchesPathType,
            HttpRouteRulesTimeouts, HttpRouteSpec,
        },
        inference_pool::{
            InferencePool, InferencePoolEndpointPickerRef,
            InferencePoolEndpointPickerRefFailureMode, InferencePoolEndpointPickerRefPort,
            InferencePoolSelector, InferencePoolSpec, InferencePoolTargetPorts,
        },
        inference_pool_v1alpha2 as v1alpha2,
    },
    flags::{self, EPP_GRPC_PORT, EPP_HEALTH_PORT, EPP_MODULE},
    naming::{self, Component},
    validate::Gaie,
};

/// How long one request through the route may take (the GAIE reference chart's
/// `timeouts.request`; upstream sets none, so the Gateway's default applies).
const ROUTE_REQUEST_TIMEOUT: &str = "300s";

/// The Endpoint Picker (identity, Deployment, Service), the InferencePool over the pods with the
/// frontend sidecar, and the HTTPRoute from the Gateway to the pool.
///
/// The EPP's identity is its own, reading pods: it lists and watches the deployment's pods for
/// their registrations (`infera/common/discovery_k8s.py`), as the router does. Upstream runs it
/// as the discovery ServiceAccount (`gaie.go:193-195`), which may also patch pods and the
/// InferaDeployment (`builders.go:652-684`); the EPP writes neither.
pub fn objects(cx: &Context<'_>, gaie: &Gaie) -> Vec<Child> {
    let rules = vec![read_rule("", &["pods"])];
    let mut children = identity(cx, Component::EndpointPicker, rules, None).to_vec();
    children.extend([
        endpoint_picker(cx, gaie),
        endpoint_picker_service(cx),
        inference_pool(cx, gaie),
        http_route(cx, gaie),
    ]);
    children
}

/// The Endpoint Picker Deployment: one replica, as upstream (`gaie.go:159-207`).
fn endpoint_picker(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    let epp = Component::EndpointPicker.object_name(&d.name);
    let security::Scratch { volume, mount, env } = security::scratch();
    Child::Deployment(Deployment {
        metadata: meta::object_meta(d, Component::EndpointPicker, epp.clone()),
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(naming::selector(&d.name, Component::EndpointPicker)),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(meta::pod_meta(d, Component::EndpointPicker)),
                spec: Some(PodSpec {
                    service_account_name: Some(epp),
                    security_context: Some(security::restricted_pod()),
                    containers: vec![endpoint_picker_container(cx, gaie, mount, env)],
                    volumes: Some(vec![volume]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The EPP container: `python3 -m infera.gaie` from the GAIE image with the router's environment
/// (`gaie.go:84-100`), its two ports, and upstream's readiness, a TCP check of the ext_proc port
/// (`gaie.go:184-190`): the gRPC health port is best-effort, served only when
/// `grpcio-health-checking` is installed (`infera/gaie/__main__.py:111-137`), so a gRPC probe could
/// never pass on an image without it. `restricted`, on a read-only root with `scratch` for the
/// tokenizer's cache (the TLS certificate is made in memory, `infera/gaie/__main__.py:47-79`);
/// the deployment's own `env` comes after the scratch variables, so it can move them.
fn endpoint_picker_container(
    cx: &Context<'_>,
    gaie: &Gaie,
    scratch: VolumeMount,
    scratch_env: [EnvVar; 2],
) -> Container {
    let port = |name: &str, number: i32| ContainerPort {
        name: Some(name.into()),
        container_port: number,
        protocol: Some("TCP".into()),
        ..Default::default()
    };
    Container {
        name: "epp".into(),
        image_pull_policy: pull_policy(&gaie.image),
        termination_message_policy: Some(LOGS_ON_ERROR.into()),
        image: Some(gaie.image.clone()),
        command: Some(flags::command(EPP_MODULE)),
        args: Some(
            cx.injection
                .endpoint_picker(gaie.frontend_port, &gaie.tokenizer_path),
        ),
        env: Some(
            scratch_env
                .into_iter()
                .chain(pod::injected_env(cx, true))
                .collect(),
        ),
        volume_mounts: Some(vec![scratch]),
        security_context: Some(security::restricted_container()),
        ports: Some(vec![
            port("grpc", EPP_GRPC_PORT),
            port("grpc-health", EPP_HEALTH_PORT),
        ]),
        readiness_probe: Some(Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::Int(EPP_GRPC_PORT),
                ..Default::default()
            }),
            initial_delay_seconds: Some(5),
            period_seconds: Some(10),
            timeout_seconds: Some(QUICK_TIMEOUT),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The Service the InferencePool's endpoint picker reference names (`gaie.go:209-221`). No
/// `appProtocol`: the EPP serves TLS by default (`infera/gaie/args.py:42-50`).
fn endpoint_picker_service(cx: &Context<'_>) -> Child {
    let d = cx.deployment;
    Child::Service(Service {
        metadata: meta::object_meta(
            d,
            Component::EndpointPicker,
            Component::EndpointPicker.object_name(&d.name),
        ),
        spec: Some(ServiceSpec {
            selector: Some(naming::selector(&d.name, Component::EndpointPicker)),
            ports: Some(vec![ServicePort {
                name: Some("grpc-ext-proc".into()),
                port: EPP_GRPC_PORT,
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The InferencePool over the pods with the frontend sidecar (`gaie.go:223-252`): the pods that
/// serve requests, never a rank > 0 pod. In the API the cluster serves: v1, or the pre-1.0
/// v1alpha2 (a flat selector, one target port, an `extensionRef`).
fn inference_pool(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    let metadata = meta::object_meta(d, Component::Gateway, naming::inference_pool_name(&d.name));
    let selector = [
        (naming::LABEL_DEPLOYMENT.to_string(), d.name.clone()),
        (naming::LABEL_GAIE_FRONTEND.into(), "true".into()),
    ]
    .into();
    let epp = Component::EndpointPicker.object_name(&d.name);
    match cx.apis.inference_pool {
        PoolApi::V1 => Child::InferencePool(InferencePool {
            metadata,
            spec: InferencePoolSpec {
                selector: InferencePoolSelector {
                    match_labels: selector,
                },
                target_ports: vec![InferencePoolTargetPorts {
                    number: gaie.frontend_port,
                }],
                endpoint_picker_ref: InferencePoolEndpointPickerRef {
                    name: epp,
                    port: Some(InferencePoolEndpointPickerRefPort {
                        number: EPP_GRPC_PORT,
                    }),
                    failure_mode: Some(InferencePoolEndpointPickerRefFailureMode::FailClose),
                    ..Default::default()
                },
            },
            status: None,
        }),
        PoolApi::V1Alpha2 => Child::InferencePoolV1Alpha2(v1alpha2::InferencePool {
            metadata,
            spec: v1alpha2::InferencePoolSpec {
                selector,
                target_port_number: gaie.frontend_port,
                extension_ref: v1alpha2::InferencePoolExtensionRef {
                    name: epp,
                    port_number: Some(EPP_GRPC_PORT),
                    failure_mode: Some(v1alpha2::InferencePoolExtensionRefFailureMode::FailClose),
                    ..Default::default()
                },
            },
            status: None,
        }),
    }
}

/// The HTTPRoute from the named Gateway (and listener) to the InferencePool, for every path and
/// `hostnames` (`gaie.go:355-396`). The backend reference carries no port: the pool's target port
/// is what the Gateway uses.
fn http_route(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    Child::HttpRoute(HttpRoute {
        metadata: meta::object_meta(d, Component::Gateway, naming::http_route_name(&d.name)),
        spec: HttpRouteSpec {
            hostnames: (!gaie.hostnames.is_empty()).then(|| gaie.hostnames.clone()),
            parent_refs: Some(vec![HttpRouteParentRefs {
                group: Some("gateway.networking.k8s.io".into()),
                kind: Some("Gateway".into()),
                name: gaie.gateway_name.clone(),
                namespace: gaie.gateway_namespace.clone(),
                section_name: gaie.gateway_section_name.clone(),
                ..Default::default()
            }]),
            rules: Some(vec![HttpRouteRules {
                backend_refs: Some(vec![HttpRouteRulesBackendRefs {
                    group: Some(cx.apis.inference_pool.group().into()),
                    kind: Some("InferencePool".into()),
                    name: naming::inference_pool_name(&d.name),
                    ..Default::default()
                }]),
                matches: Some(vec![HttpRouteRulesMatches {
                    path: Some(HttpRouteRulesMatchesPath {
                        r#type: Some(HttpRouteRulesMatchesPathType::PathPrefix),
                        value: Some("/".into()),
                    }),
                    ..Default::default()
                }]),
                timeouts: Some(HttpRouteRulesTimeouts {
                    request: Some(ROUTE_REQUEST_TIMEOUT.into()),
                    ..Default::default()
                }),
                ..Default::default()
            }]),
        },
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{
        ChildKind, InferaDeployment,
        naming::FRONTEND_CONTAINER,
        render,
        render::{Apis, render_for},
        validate,
        validate::ValidDeployment,
    };

    fn deployment(roles: &[(&str, &str, i32)]) -> ValidDeployment {
        let mut services = serde_json::json!({"server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]}});
        for (name, role, nodes) in roles {
            services[name] = serde_json::json!({
                "componentType": "worker", "role": role, "numberOfNodes": nodes, "resources": {"gpu": 1}
            });
        }
        let idep: InferaDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "demo", "namespace": "ns"},
            "spec": {"backendFramework": "sglang", "image": "img", "services": services,
                     "gaie": {"enabled": true, "gatewayName": "gw", "gatewayNamespace": "infra",
                              "tokenizerPath": "Qwen/Qwen3-0.6B", "hostnames": ["chat.example.com"]}}
        }))
        .expect("an InferaDeployment");
        validate(&idep).expect("valid")
    }

    fn child(children: &[Child], kind: ChildKind, name: &str) -> serde_json::Value {
        let found = children
            .iter()
            .find(|c| c.kind() == kind && c.name() == name);
        serde_json::to_value(found.expect("rendered")).expect("json")
    }

    fn strings(value: &serde_json::Value) -> Vec<&str> {
        value
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|a| a.as_str())
            .collect()
    }

    #[test]
    fn the_pool_selects_the_sidecars_and_points_at_the_epp_service() {
        let children = render(&deployment(&[
            ("prefill", "prefill", 1),
            ("decode", "decode", 1),
        ]));
        let pool = child(&children, ChildKind::InferencePool, "demo-pool");
        assert_eq!(
            pool["spec"]["selector"]["matchLabels"],
            serde_json::json!({
                "infera.amd.com/deployment": "demo",
                "infera.amd.com/gaie-frontend": "true",
            })
        );
        assert_eq!(
            pool["spec"]["targetPorts"],
            serde_json::json!([{"number": 8000}])
        );
        assert_eq!(
            pool["spec"]["endpointPickerRef"],
            serde_json::json!({"name": "demo-epp", "port": {"number": 9002}, "failureMode": "FailClose"})
        );
        let service = child(&children, ChildKind::Service, "demo-epp");
        assert_eq!(
            service["spec"]["ports"],
            serde_json::json!([{"name": "grpc-ext-proc", "port": 9002, "protocol": "TCP"}])
        );
    }

    #[test]
    fn only_pods_that_serve_carry_the_frontend_label_and_the_sidecar() {
        let children = render(&deployment(&[("big", "mixed", 2), ("small", "mixed", 1)]));
        let template_of = |name: &str, path: &[&str]| {
            let object = children.iter().find(|c| c.name() == name).expect("pool");
            let mut value = serde_json::to_value(object).expect("json");
            for key in path {
                value = value[*key].take();
            }
            let labels: BTreeMap<String, String> =
                serde_json::from_value(value["metadata"]["labels"].take()).expect("labels");
            let containers: Vec<String> = value["spec"]["containers"]
                .as_array()
                .expect("containers")
                .iter()
                .map(|c| c["name"].as_str().unwrap_or_default().to_string())
                .collect();
            (labels.contains_key(naming::LABEL_GAIE_FRONTEND), containers)
        };
        let lws = ["spec", "leaderWorkerTemplate"];
        assert_eq!(
            template_of("demo-big", &[lws[0], lws[1], "leaderTemplate"]),
            (true, vec!["engine".into(), FRONTEND_CONTAINER.into()])
        );
        assert_eq!(
            template_of("demo-big", &[lws[0], lws[1], "workerTemplate"]),
            (false, vec!["engine".into()])
        );
        assert_eq!(
            template_of("demo-small", &["spec", "template"]),
            (true, vec!["engine".into(), FRONTEND_CONTAINER.into()])
        );
    }

    #[test]
    fn the_sidecar_is_the_router_in_direct_mode() {
        let children = render(&deployment(&[("worker", "mixed", 1)]));
        let worker = child(&children, ChildKind::Deployment, "demo-worker");
        let sidecar = &worker["spec"]["template"]["spec"]["containers"][1];
        assert_eq!(sidecar["image"], "img");
        assert_eq!(
            strings(&sidecar["command"]),
            ["python3", "-m", "infera.server"]
        );
        assert_eq!(
            strings(&sidecar["args"]),
            [
                "--router-mode",
                "direct",
                "--host",
                "0.0.0.0",
                "--port",
                "8000",
                "--discovery-backend",
                "kubernetes",
                "--k8s-label-selector",
                "infera.amd.com/deployment=demo",
                "--kv-event-transport",
                "nats",
                "--nats-server",
                "$(NATS_SERVER)",
                "--router-tokenizer-path",
                "Qwen/Qwen3-0.6B",
            ]
        );
        assert_eq!(
            sidecar["readinessProbe"]["httpGet"],
            serde_json::json!({"path": "/v1/models", "port": 8000})
        );
    }

    #[test]
    fn the_epp_is_infera_s_own() {
        let children = render(&deployment(&[("worker", "mixed", 1)]));
        let epp = child(&children, ChildKind::Deployment, "demo-epp");
        let pod = &epp["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "demo-epp");
        let container = &pod["containers"][0];
        assert_eq!(container["image"], "img");
        assert_eq!(
            strings(&container["command"]),
            ["python3", "-m", "infera.gaie"]
        );
        assert_eq!(
            strings(&container["args"]),
            [
                "--grpc-port",
                "9002",
                "--grpc-health-port",
                "9003",
                "--destination-port",
                "8000",
                "--router-tokenizer-path",
                "Qwen/Qwen3-0.6B",
                "--discovery-backend",
                "kubernetes",
                "--k8s-label-selector",
                "infera.amd.com/deployment=demo",
                "--kv-event-transport",
                "nats",
                "--nats-server",
                "$(NATS_SERVER)",
            ]
        );
        assert_eq!(
            container["readinessProbe"]["tcpSocket"],
            serde_json::json!({"port": 9002})
        );
    }

    #[test]
    fn the_route_attaches_to_the_named_gateway_and_backs_onto_the_pool() {
        let route = child(
            &render(&deployment(&[("worker", "mixed", 1)])),
            ChildKind::HttpRoute,
            "demo-route",
        );
        assert_eq!(
            route["spec"]["parentRefs"],
            serde_json::json!([{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "infra"}])
        );
        assert_eq!(
            route["spec"]["hostnames"],
            serde_json::json!(["chat.example.com"])
        );
        assert_eq!(
            route["spec"]["rules"][0]["backendRefs"],
            serde_json::json!([{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "demo-pool"}])
        );
    }

    #[test]
    fn the_epp_reads_pods_only() {
        let children = render(&deployment(&[("worker", "mixed", 1)]));
        let rules = child(&children, ChildKind::Role, "demo-epp")["rules"].take();
        assert_eq!(
            rules,
            serde_json::json!([
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
            ])
        );
    }

    #[test]
    fn the_cluster_serves_v1_unless_it_has_only_v1alpha2() {
        let served = |kinds: &[ChildKind]| PoolApi::served(|kind| kinds.contains(&kind));
        assert_eq!(served(&[]), PoolApi::V1);
        assert_eq!(served(&[ChildKind::InferencePool]), PoolApi::V1);
        let both = [ChildKind::InferencePool, ChildKind::InferencePoolV1Alpha2];
        assert_eq!(served(&both), PoolApi::V1);
        assert_eq!(
            served(&[ChildKind::InferencePoolV1Alpha2]),
            PoolApi::V1Alpha2
        );
    }

    #[test]
    fn a_v1alpha2_cluster_gets_the_pool_and_route_in_that_api() {
        let apis = Apis {
            inference_pool: PoolApi::V1Alpha2,
            ..Apis::default()
        };
        let children = render_for(&deployment(&[("worker", "mixed", 1)]), apis);
        assert!(
            children
                .iter()
                .all(|c| c.kind() != ChildKind::InferencePool)
        );
        let pool = child(&children, ChildKind::InferencePoolV1Alpha2, "demo-pool");
        assert_eq!(pool["apiVersion"], "inference.networking.x-k8s.io/v1alpha2");
        assert_eq!(
            pool["spec"],
            serde_json::json!({
                "selector": {
                    "infera.amd.com/deployment": "demo",
                    "infera.amd.com/gaie-frontend": "true",
                },
                "targetPortNumber": 8000,
                "extensionRef": {"name": "demo-epp", "portNumber": 9002, "failureMode": "FailClose"},
            })
        );
        let route = child(&children, ChildKind::HttpRoute, "demo-route");
        assert_eq!(
            route["spec"]["rules"][0]["backendRefs"][0]["group"],
            "inference.networking.x-k8s.io"
        );
    }
}
