//! Gateway API Inference Extension: the Endpoint Picker (EPP), the InferencePool it picks from and
//! the HTTPRoute from the Gateway to the pool.
//!
//! What points at what: `HTTPRoute.parentRefs` → the user's Gateway (listener `sectionName` when
//! given); `HTTPRoute.backendRefs` → the InferencePool; `InferencePool.endpointPickerRef` → the EPP
//! Service's gRPC port; `InferencePool.selector` → the worker pods labelled
//! `infera.amd.com/endpoint=true` (single-node pods and group leaders, never rank > 0), on the
//! frontend sidecar's port; the EPP watches the pool by name.
//!
//! Every fact about the EPP comes from GAIE v1.3.0 (`kubernetes-sigs/gateway-api-inference-extension`,
//! tag v1.3.0): its flags from `pkg/epp/server/options.go`, its ports, probes, environment and
//! shutdown from the reference chart `config/charts/inferencepool/templates/epp-deployment.yaml`,
//! its Role from `.../templates/rbac.yaml`, its default plugins from `.../templates/epp-config.yaml`.
//! The prefill/decode configuration is llm-d's (`llm-d/llm-d-inference-scheduler` v0.5.0,
//! `deploy/config/pd-epp-config.yaml`), whose plugins exist only in llm-d's EPP image.

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy},
        core::v1::{
            Container, ContainerPort, EnvVar, EnvVarSource, GRPCAction, ObjectFieldSelector,
            PodSpec, PodTemplateSpec, Probe, Service, ServicePort, ServiceSpec,
        },
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};

use super::{
    Child, Context, EPP_IMAGE, EPP_PD_IMAGE, PoolApi, meta, pull_policy,
    rbac::{identity, read_rule},
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
    flags::FRONTEND_PORT,
    naming::{self, Component},
    types::Role,
    validate::{Gaie, ValidDeployment},
};

/// The EPP's ext_proc port (`--grpc-port`, default 9002).
const EPP_GRPC_PORT: i32 = 9002;
/// The EPP's plain gRPC health port (`--grpc-health-port`, default 9003).
const EPP_HEALTH_PORT: i32 = 9003;
/// The EPP's metrics port (`--metrics-port`, default 9090).
const EPP_METRICS_PORT: i32 = 9090;
/// The gRPC health service the chart probes while leader election is off (one replica).
const EPP_HEALTH_SERVICE: &str = "inference-extension";
const INFERENCE_X_GROUP: &str = "inference.networking.x-k8s.io";
/// How long one request through the route may take; the chart's `timeouts.request`.
const ROUTE_REQUEST_TIMEOUT: &str = "300s";

/// GAIE's default plugins: queue depth, KV-cache use and prefix-cache affinity.
const AGGREGATED_CONFIG: &str = "\
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
";

/// The Endpoint Picker (identity, Deployment, Service), the InferencePool over the pods that serve
/// requests, and the HTTPRoute from the Gateway to the pool.
///
/// The Role is the chart's namespaced one. The chart also binds a ClusterRole (tokenreviews,
/// subjectaccessreviews) so the EPP's metrics endpoint, authenticated by default, can check its
/// scrapers; we render nothing cluster-scoped, so scraping EPP metrics needs that granted apart.
pub fn objects(cx: &Context<'_>, gaie: &Gaie) -> Vec<Child> {
    let rules = vec![
        read_rule(
            INFERENCE_X_GROUP,
            &["inferenceobjectives", "inferencemodelrewrites"],
        ),
        read_rule(cx.apis.inference_pool.group(), &["inferencepools"]),
        read_rule("", &["pods"]),
    ];
    let mut children = identity(cx, Component::EndpointPicker, rules, None).to_vec();
    children.extend([
        endpoint_picker(cx, gaie),
        endpoint_picker_service(cx),
        inference_pool(cx),
        http_route(cx, gaie),
    ]);
    children
}

/// Whether the graph disaggregates prefill and decode, so the EPP must pick a pair.
fn disaggregated(d: &ValidDeployment) -> bool {
    d.workers.iter().any(|w| w.role == Role::Prefill)
}

/// The EPP's scheduling configuration: GAIE's defaults, or llm-d's prefill/decode profiles whose
/// filters select on our role label (`by-label` instead of llm-d's `prefill-filter`, which reads
/// `llm-d.ai/role`).
fn epp_config(d: &ValidDeployment) -> String {
    if !disaggregated(d) {
        return AGGREGATED_CONFIG.into();
    }
    let filter = |role: &str| {
        format!(
            "- name: {role}-filter\n  type: by-label\n  parameters:\n    label: {}\n    validValues: [{role}]\n    allowsNoLabel: false\n",
            naming::LABEL_ROLE
        )
    };
    let profile = |role: &str| {
        format!(
            "- name: {role}\n  plugins:\n  - pluginRef: {role}-filter\n  - pluginRef: max-score-picker\n  - pluginRef: prefix-cache-scorer\n    weight: 2\n"
        )
    };
    format!(
        "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n\
         - type: prefill-header-handler\n- type: prefix-cache-scorer\n{}{}\
         - type: max-score-picker\n- type: pd-profile-handler\nschedulingProfiles:\n{}{}",
        filter("prefill"),
        filter("decode"),
        profile("prefill"),
        profile("decode"),
    )
}

/// The Endpoint Picker Deployment: one replica (no leader election), watching the pool by name.
fn endpoint_picker(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    let epp = Component::EndpointPicker.object_name(&d.name);
    let container = endpoint_picker_container(cx, gaie);
    Child::Deployment(Deployment {
        metadata: meta::object_meta(d, Component::EndpointPicker, epp.clone()),
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(naming::selector(&d.name, Component::EndpointPicker)),
                ..Default::default()
            },
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".into()),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(meta::pod_meta(d, Component::EndpointPicker)),
                spec: Some(PodSpec {
                    service_account_name: Some(epp),
                    termination_grace_period_seconds: Some(130),
                    containers: vec![container],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The EPP container: GAIE's flags, its configuration as text, the chart's environment, ports
/// and gRPC probes.
fn endpoint_picker_container(cx: &Context<'_>, gaie: &Gaie) -> Container {
    let d = cx.deployment;
    let default_image = if disaggregated(d) {
        EPP_PD_IMAGE
    } else {
        EPP_IMAGE
    };
    let field = |path: &str| EnvVarSource {
        field_ref: Some(ObjectFieldSelector {
            field_path: path.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let port = |name: &str, number: i32| ContainerPort {
        name: Some(name.into()),
        container_port: number,
        ..Default::default()
    };
    let image = gaie
        .epp_image
        .clone()
        .unwrap_or_else(|| default_image.into());
    Container {
        name: "epp".into(),
        image_pull_policy: pull_policy(&image),
        image: Some(image),
        args: Some(vec![
            "--pool-name".into(),
            naming::inference_pool_name(&d.name),
            "--pool-namespace".into(),
            d.namespace.clone(),
            "--pool-group".into(),
            cx.apis.inference_pool.group().into(),
            "--grpc-port".into(),
            EPP_GRPC_PORT.to_string(),
            "--grpc-health-port".into(),
            EPP_HEALTH_PORT.to_string(),
            "--metrics-port".into(),
            EPP_METRICS_PORT.to_string(),
            "--config-text".into(),
            epp_config(d),
        ]),
        env: Some(vec![
            EnvVar {
                name: "NAMESPACE".into(),
                value_from: Some(field("metadata.namespace")),
                ..Default::default()
            },
            EnvVar {
                name: "POD_NAME".into(),
                value_from: Some(field("metadata.name")),
                ..Default::default()
            },
        ]),
        ports: Some(vec![
            port("grpc", EPP_GRPC_PORT),
            port("grpc-health", EPP_HEALTH_PORT),
            port("metrics", EPP_METRICS_PORT),
        ]),
        liveness_probe: Some(Probe {
            initial_delay_seconds: Some(5),
            period_seconds: Some(10),
            ..health_probe()
        }),
        readiness_probe: Some(Probe {
            period_seconds: Some(2),
            ..health_probe()
        }),
        ..Default::default()
    }
}

/// The EPP's gRPC health check, which answers SERVING once the pool is synced.
fn health_probe() -> Probe {
    Probe {
        grpc: Some(GRPCAction {
            port: EPP_HEALTH_PORT,
            service: Some(EPP_HEALTH_SERVICE.into()),
        }),
        timeout_seconds: Some(1),
        ..Default::default()
    }
}

/// The Service the InferencePool's endpoint picker reference names.
fn endpoint_picker_service(cx: &Context<'_>) -> Child {
    let d = cx.deployment;
    let port = |name: &str, number: i32, protocol: Option<&str>| ServicePort {
        name: Some(name.into()),
        port: number,
        app_protocol: protocol.map(Into::into),
        protocol: Some("TCP".into()),
        ..Default::default()
    };
    Child::Service(Service {
        metadata: meta::object_meta(
            d,
            Component::EndpointPicker,
            Component::EndpointPicker.object_name(&d.name),
        ),
        spec: Some(ServiceSpec {
            selector: Some(naming::selector(&d.name, Component::EndpointPicker)),
            ports: Some(vec![
                port("grpc-ext-proc", EPP_GRPC_PORT, Some("http2")),
                port("http-metrics", EPP_METRICS_PORT, None),
            ]),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The InferencePool over the frontend sidecars of the pods that serve requests: with prefill and
/// decode pools both roles (the EPP's profiles pick one of each), never a rank > 0 pod. In the
/// API the cluster serves: v1, or the pre-1.0 v1alpha2 (a flat selector, one target port, an
/// `extensionRef`).
fn inference_pool(cx: &Context<'_>) -> Child {
    let d = cx.deployment;
    let metadata = meta::object_meta(d, Component::Gateway, naming::inference_pool_name(&d.name));
    let selector = [
        (naming::LABEL_DEPLOYMENT.to_string(), d.name.clone()),
        (naming::LABEL_COMPONENT.into(), "worker".into()),
        (naming::LABEL_ENDPOINT.into(), "true".into()),
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
                    number: FRONTEND_PORT,
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
                target_port_number: FRONTEND_PORT,
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

/// The HTTPRoute from the named Gateway (and listener) to the InferencePool, for every path. The
/// backend reference carries no port: the pool's target port is what the Gateway uses.
fn http_route(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    Child::HttpRoute(HttpRoute {
        metadata: meta::object_meta(d, Component::Gateway, naming::http_route_name(&d.name)),
        spec: HttpRouteSpec {
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
            ..Default::default()
        },
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{
        ChildKind, InferaDeployment, render,
        render::{Apis, render_for},
        validate,
    };

    fn deployment(roles: &[(&str, &str, i32)]) -> ValidDeployment {
        let mut services = serde_json::json!({"server": {"componentType": "server"}});
        for (name, role, nodes) in roles {
            services[name] = serde_json::json!({
                "componentType": "worker", "role": role, "numberOfNodes": nodes, "resources": {"gpu": 1}
            });
        }
        let idep: InferaDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "demo", "namespace": "ns"},
            "spec": {"backendFramework": "sglang", "image": "img", "services": services,
                     "gaie": {"gatewayName": "gw", "gatewayNamespace": "infra"}}
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

    #[test]
    fn the_pool_selects_serving_workers_and_points_at_the_epp_service() {
        let children = render(&deployment(&[
            ("prefill", "prefill", 1),
            ("decode", "decode", 1),
        ]));
        let pool = child(&children, ChildKind::InferencePool, "demo-pool");
        assert_eq!(
            pool["spec"]["selector"]["matchLabels"],
            serde_json::json!({
                "app.kubernetes.io/component": "worker",
                "infera.amd.com/deployment": "demo",
                "infera.amd.com/endpoint": "true",
            })
        );
        assert_eq!(
            pool["spec"]["targetPorts"],
            serde_json::json!([{"number": FRONTEND_PORT}])
        );
        assert_eq!(
            pool["spec"]["endpointPickerRef"],
            serde_json::json!({"name": "demo-epp", "port": {"number": 9002}, "failureMode": "FailClose"})
        );
        let service = child(&children, ChildKind::Service, "demo-epp");
        assert_eq!(service["spec"]["ports"][0]["port"], 9002);
    }

    #[test]
    fn only_pods_that_serve_carry_the_endpoint_label_and_the_sidecar() {
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
            (labels.contains_key(naming::LABEL_ENDPOINT), containers)
        };
        let lws = ["spec", "leaderWorkerTemplate"];
        assert_eq!(
            template_of("demo-big", &[lws[0], lws[1], "leaderTemplate"]),
            (true, vec!["engine".into(), "frontend".into()])
        );
        assert_eq!(
            template_of("demo-big", &[lws[0], lws[1], "workerTemplate"]),
            (false, vec!["engine".into()])
        );
        assert_eq!(
            template_of("demo-small", &["spec", "template"]),
            (true, vec!["engine".into(), "frontend".into()])
        );
    }

    #[test]
    fn a_prefill_decode_graph_gets_llm_d_profiles_on_our_role_label() {
        let pd = deployment(&[("prefill", "prefill", 1), ("decode", "decode", 1)]);
        let config = epp_config(&pd);
        for needle in [
            "type: pd-profile-handler",
            "type: prefill-header-handler",
            "- name: prefill-filter\n  type: by-label\n  parameters:\n    label: infera.amd.com/role\n    validValues: [prefill]",
            "- name: decode-filter\n  type: by-label\n  parameters:\n    label: infera.amd.com/role\n    validValues: [decode]",
            "- name: prefill\n  plugins:\n  - pluginRef: prefill-filter",
            "- name: decode\n  plugins:\n  - pluginRef: decode-filter",
        ] {
            assert!(config.contains(needle), "{needle} not in\n{config}");
        }
        let epp = child(&render(&pd), ChildKind::Deployment, "demo-epp");
        assert_eq!(epp["metadata"]["name"], "demo-epp");
        assert_eq!(
            epp["spec"]["template"]["spec"]["containers"][0]["image"],
            EPP_PD_IMAGE
        );

        let aggregated = deployment(&[("worker", "mixed", 1)]);
        assert_eq!(epp_config(&aggregated), AGGREGATED_CONFIG);
        let epp = child(&render(&aggregated), ChildKind::Deployment, "demo-epp");
        let container = &epp["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], EPP_IMAGE);
        let args: Vec<&str> = container["args"]
            .as_array()
            .expect("args")
            .iter()
            .filter_map(|a| a.as_str())
            .collect();
        assert_eq!(
            args[..12],
            [
                "--pool-name",
                "demo-pool",
                "--pool-namespace",
                "ns",
                "--pool-group",
                "inference.networking.k8s.io",
                "--grpc-port",
                "9002",
                "--grpc-health-port",
                "9003",
                "--metrics-port",
                "9090",
            ]
        );
        assert_eq!(args[12..], ["--config-text", AGGREGATED_CONFIG]);
        assert_eq!(
            container["readinessProbe"]["grpc"],
            serde_json::json!({"port": 9003, "service": "inference-extension"})
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
            route["spec"]["rules"][0]["backendRefs"],
            serde_json::json!([{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "demo-pool"}])
        );
    }

    #[test]
    fn the_epp_reads_exactly_what_gaie_documents() {
        let children = render(&deployment(&[("worker", "mixed", 1)]));
        let rules = child(&children, ChildKind::Role, "demo-epp")["rules"].take();
        let read = serde_json::json!(["get", "list", "watch"]);
        assert_eq!(
            rules,
            serde_json::json!([
                {"apiGroups": ["inference.networking.x-k8s.io"], "resources": ["inferenceobjectives", "inferencemodelrewrites"], "verbs": read},
                {"apiGroups": ["inference.networking.k8s.io"], "resources": ["inferencepools"], "verbs": read},
                {"apiGroups": [""], "resources": ["pods"], "verbs": read},
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
    fn a_v1alpha2_cluster_gets_the_pool_route_and_epp_in_that_api() {
        let apis = Apis {
            inference_pool: PoolApi::V1Alpha2,
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
                    "app.kubernetes.io/component": "worker",
                    "infera.amd.com/deployment": "demo",
                    "infera.amd.com/endpoint": "true",
                },
                "targetPortNumber": FRONTEND_PORT,
                "extensionRef": {"name": "demo-epp", "portNumber": 9002, "failureMode": "FailClose"},
            })
        );
        let route = child(&children, ChildKind::HttpRoute, "demo-route");
        assert_eq!(
            route["spec"]["rules"][0]["backendRefs"][0]["group"],
            "inference.networking.x-k8s.io"
        );
        let epp = child(&children, ChildKind::Deployment, "demo-epp");
        let args = &epp["spec"]["template"]["spec"]["containers"][0]["args"];
        assert_eq!(args[4], "--pool-group");
        assert_eq!(args[5], "inference.networking.x-k8s.io");
        let role = child(&children, ChildKind::Role, "demo-epp");
        assert_eq!(
            role["rules"][1],
            serde_json::json!({"apiGroups": ["inference.networking.x-k8s.io"], "resources": ["inferencepools"], "verbs": ["get", "list", "watch"]})
        );
    }
}
