//! Gateway API Inference Extension: Endpoint Picker, InferencePool and HTTPRoute.

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec},
        core::v1::{
            Container, ContainerPort, PodSpec, PodTemplateSpec, Service, ServicePort, ServiceSpec,
        },
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};

use super::{
    Child, Context, EPP_IMAGE, meta,
    rbac::{identity, read_rule},
};
use crate::{
    external::{
        http_route::{
            HttpRoute, HttpRouteParentRefs, HttpRouteRules, HttpRouteRulesBackendRefs,
            HttpRouteSpec,
        },
        inference_pool::{
            InferencePool, InferencePoolEndpointPickerRef,
            InferencePoolEndpointPickerRefFailureMode, InferencePoolEndpointPickerRefPort,
            InferencePoolSelector, InferencePoolSpec, InferencePoolTargetPorts,
        },
    },
    flags::FRONTEND_PORT,
    naming::{self, Component},
    validate::Gaie,
};

const EPP_GRPC_PORT: i32 = 9002;
const EPP_HEALTH_PORT: i32 = 9003;
const INFERENCE_GROUP: &str = "inference.networking.k8s.io";

/// The Endpoint Picker (identity, Deployment, Service), the InferencePool over every worker's
/// frontend sidecar, and the HTTPRoute from the Gateway to the pool.
pub fn objects(cx: &Context<'_>, gaie: &Gaie) -> Vec<Child> {
    let rules = vec![
        read_rule("", "pods"),
        read_rule(INFERENCE_GROUP, "inferencepools"),
        read_rule("inference.networking.x-k8s.io", "inferenceobjectives"),
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

/// The Endpoint Picker Deployment, watching the pool.
fn endpoint_picker(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    let epp = Component::EndpointPicker.object_name(&d.name);
    let container = Container {
        name: "epp".into(),
        image: Some(gaie.epp_image.clone().unwrap_or_else(|| EPP_IMAGE.into())),
        args: Some(vec![
            "--pool-name".into(),
            naming::inference_pool_name(&d.name),
            "--pool-namespace".into(),
            d.namespace.clone(),
            "--pool-group".into(),
            INFERENCE_GROUP.into(),
            "--grpc-port".into(),
            EPP_GRPC_PORT.to_string(),
            "--grpc-health-port".into(),
            EPP_HEALTH_PORT.to_string(),
        ]),
        ports: Some(vec![ContainerPort {
            name: Some("grpc".into()),
            container_port: EPP_GRPC_PORT,
            ..Default::default()
        }]),
        ..Default::default()
    };
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
                    containers: vec![container],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The Service the InferencePool's endpoint picker reference names.
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
                name: Some("grpc".into()),
                port: EPP_GRPC_PORT,
                app_protocol: Some("http2".into()),
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The InferencePool over every worker pod's frontend sidecar.
fn inference_pool(cx: &Context<'_>) -> Child {
    let d = cx.deployment;
    let mut workers = naming::selector(&d.name, Component::Gateway);
    workers.remove(naming::LABEL_SERVICE);
    workers.insert(naming::LABEL_COMPONENT.into(), "worker".into());
    Child::InferencePool(InferencePool {
        metadata: meta::object_meta(d, Component::Gateway, naming::inference_pool_name(&d.name)),
        spec: InferencePoolSpec {
            selector: InferencePoolSelector {
                match_labels: workers,
            },
            target_ports: vec![InferencePoolTargetPorts {
                number: FRONTEND_PORT,
            }],
            endpoint_picker_ref: InferencePoolEndpointPickerRef {
                name: Component::EndpointPicker.object_name(&d.name),
                port: Some(InferencePoolEndpointPickerRefPort {
                    number: EPP_GRPC_PORT,
                }),
                failure_mode: Some(InferencePoolEndpointPickerRefFailureMode::FailClose),
                ..Default::default()
            },
        },
        status: None,
    })
}

/// The HTTPRoute from the named Gateway to the InferencePool.
fn http_route(cx: &Context<'_>, gaie: &Gaie) -> Child {
    let d = cx.deployment;
    Child::HttpRoute(HttpRoute {
        metadata: meta::object_meta(d, Component::Gateway, naming::http_route_name(&d.name)),
        spec: HttpRouteSpec {
            parent_refs: Some(vec![HttpRouteParentRefs {
                name: gaie.gateway_name.clone(),
                namespace: gaie.gateway_namespace.clone(),
                ..Default::default()
            }]),
            rules: Some(vec![HttpRouteRules {
                backend_refs: Some(vec![HttpRouteRulesBackendRefs {
                    group: Some(INFERENCE_GROUP.into()),
                    kind: Some("InferencePool".into()),
                    name: naming::inference_pool_name(&d.name),
                    ..Default::default()
                }]),
                ..Default::default()
            }]),
            ..Default::default()
        },
        status: None,
    })
}
