//! The server and the worker pools.

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment},
        core::v1::{Service, ServicePort, ServiceSpec},
    },
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{Child, Context, meta::object_meta, model, pod};
use crate::{
    external::lws::{
        LeaderWorkerSet, LeaderWorkerSetLeaderWorkerTemplate,
        LeaderWorkerSetLeaderWorkerTemplateRestartPolicy, LeaderWorkerSetRolloutStrategy,
        LeaderWorkerSetRolloutStrategyRollingUpdateConfiguration,
        LeaderWorkerSetRolloutStrategyType, LeaderWorkerSetSpec,
    },
    flags::Rank,
    naming::{self, Component},
    validate::{Pod, Worker},
};

/// The server's Deployment and its ClusterIP Service.
pub fn server(cx: &Context<'_>, server: &Pod) -> [Child; 2] {
    let d = cx.deployment;
    let component = Component::Server(&server.service);
    let name = component.object_name(&d.name);
    let deployment = Deployment {
        metadata: object_meta(d, component, name.clone()),
        spec: Some(DeploymentSpec {
            replicas: replicas(server),
            selector: selector(&d.name, component),
            template: pod::server(cx, server),
            ..Default::default()
        }),
        ..Default::default()
    };
    let service = Service {
        metadata: object_meta(d, component, name),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".into()),
            selector: Some(naming::selector(&d.name, component)),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: server.port,
                target_port: Some(IntOrString::Int(server.port)),
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    [Child::Deployment(deployment), Child::Service(service)]
}

/// A worker pool: a Deployment, or a LeaderWorkerSet of `nodes` pods per group, rolling out
/// within its `maxSurge` and `maxUnavailable` (the operator narrows them step by step, see
/// [`crate::lockstep`]).
pub fn worker(cx: &Context<'_>, worker: &Worker) -> Child {
    let d = cx.deployment;
    let component = Component::Worker(&worker.pod.service, worker.role);
    let name = component.object_name(&d.name);
    if worker.multi_node() {
        Child::LeaderWorkerSet(LeaderWorkerSet {
            metadata: object_meta(d, component, name),
            spec: LeaderWorkerSetSpec {
                replicas: replicas(&worker.pod)
                    .map(|n| model::gpu_replicas(worker.model.as_ref(), n)),
                leader_worker_template: LeaderWorkerSetLeaderWorkerTemplate {
                    size: Some(worker.nodes),
                    restart_policy: Some(
                        LeaderWorkerSetLeaderWorkerTemplateRestartPolicy::RecreateGroupOnPodRestart,
                    ),
                    leader_template: Some(super::to_json_map(&pod::worker(
                        cx,
                        worker,
                        Rank::Leader,
                    ))),
                    worker_template: super::to_json_map(&pod::worker(cx, worker, Rank::Follower)),
                    ..Default::default()
                },
                rollout_strategy: Some(LeaderWorkerSetRolloutStrategy {
                    r#type: LeaderWorkerSetRolloutStrategyType::RollingUpdate,
                    rolling_update_configuration: Some(
                        LeaderWorkerSetRolloutStrategyRollingUpdateConfiguration {
                            max_surge: Some(IntOrString::Int(worker.rollout.max_surge)),
                            max_unavailable: Some(IntOrString::Int(worker.rollout.max_unavailable)),
                            partition: None,
                        },
                    ),
                }),
                ..Default::default()
            },
            status: None,
        })
    } else {
        Child::Deployment(Deployment {
            metadata: object_meta(d, component, name),
            spec: Some(DeploymentSpec {
                replicas: replicas(&worker.pod)
                    .map(|n| model::gpu_replicas(worker.model.as_ref(), n)),
                selector: selector(&d.name, component),
                template: pod::worker(cx, worker, Rank::Single),
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(IntOrString::Int(worker.rollout.max_surge)),
                        max_unavailable: Some(IntOrString::Int(worker.rollout.max_unavailable)),
                    }),
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
    }
}

/// The workload's `replicas`: none when an autoscaler owns the count, so that the operator's
/// apply neither sets nor holds it and the autoscaler and `kubectl scale` are not undone.
fn replicas(pod: &Pod) -> Option<i32> {
    pod.autoscaling.is_none().then_some(pod.replicas)
}

fn selector(deployment: &str, component: Component<'_>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(naming::selector(deployment, component)),
        ..Default::default()
    }
}
