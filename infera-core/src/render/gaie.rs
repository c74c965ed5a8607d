//! Gateway API Inference Extension: Endpoint Picker, InferencePool and HTTPRoute.

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec},
        core::v1::{
            Container, ContainerPort, PodSpec, PodTemplateSpec, Service, ServiceAccount,
            ServicePort, ServiceSpec,
        },
        rbac::v1::{Role, RoleBinding, RoleRef, Subject},
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};

use super::{Child, Context, EPP_IMAGE, meta, rbac::read_rule};
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
    let d = cx.deployment;
    let epp = Component::EndpointPicker.object_name(&d.name);
    let pool = naming::inference_pool_name(&d.name);
    let epp_meta = || meta::object_meta(d, Component::EndpointPicker, epp.clone());
    let epp_selector = naming::selector(&d.name, Component::EndpointPicker);
    let mut workers = naming::selector(&d.name, Component::Gateway);
    workers.remove(naming::LABEL_SERVICE);
    workers.insert(naming::LABEL_COMPONENT.into(), "worker".into());

    vec![
        Child::ServiceAccount(ServiceAccount {
            metadata: epp_meta(),
            ..Default::default()
        }),
        Child::Role(Role {
            metadata: epp_meta(),
            rules: Some(vec![
                read_rule("", "pods"),
                read_rule(INFERENCE_GROUP, "inferencepools"),
                read_rule("inference.networking.x-k8s.io", "inferenceobjectives"),
            ]),
        }),
        Child::RoleBinding(RoleBinding {
            metadata: epp_meta(),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "Role".into(),
                name: epp.clone(),
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".into(),
                name: epp.clone(),
                namespace: Some(d.namespace.clone()),
                ..Default::default()
            }]),
        }),
        Child::Deployment(Deployment {
            metadata: epp_meta(),
            spec: Some(DeploymentSpec {
                replicas: Some(1),
                selector: LabelSelector {
                    match_labels: Some(epp_selector.clone()),
                    ..Default::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(meta::pod_meta(d, Component::EndpointPicker)),
                    spec: Some(PodSpec {
                        service_account_name: Some(epp.clone()),
                        containers: vec![Container {
                            name: "epp".into(),
                            image: Some(gaie.epp_image.clone().unwrap_or_else(|| EPP_IMAGE.into())),
                            args: Some(vec![
                                "--pool-name".into(),
                                pool.clone(),
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
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }),
            ..Default::default()
        }),
        Child::Service(Service {
            metadata: epp_meta(),
            spec: Some(ServiceSpec {
                selector: Some(epp_selector),
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
        }),
        Child::InferencePool(InferencePool {
            metadata: meta::object_meta(d, Component::Gateway, pool.clone()),
            spec: InferencePoolSpec {
                selector: InferencePoolSelector {
                    match_labels: workers,
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
                        name: pool,
                        ..Default::default()
                    }]),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            status: None,
        }),
    ]
}
