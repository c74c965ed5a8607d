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
                rollout_strategy: Some(WorkerRollout::bounds(worker).lws_strategy()),
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
                strategy: Some(WorkerRollout::bounds(worker).deployment_strategy()),
                ..Default::default()
            }),
            ..Default::default()
        })
    }
}

/// How a worker workload rolls out now: within `max_surge` and `max_unavailable`; a Deployment
/// `paused` (it then neither creates nor removes replicas: kubernetes
/// pkg/controller/deployment/deployment_controller.go, sync), a LeaderWorkerSet's groups below
/// `partition` kept at their revision (LeaderWorkerSet v0.9 api/leaderworkerset/v1
/// RollingUpdateConfiguration). The render writes the pool's own bounds; the operator's rollout
/// step narrows them ([`Child::set_rollout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerRollout {
    /// A Deployment held where it is.
    pub paused: bool,
    /// Replicas (groups) above the desired count while rolling.
    pub max_surge: i32,
    /// Replicas (groups) below the desired count while rolling.
    pub max_unavailable: i32,
    /// A LeaderWorkerSet's groups kept at their revision (those below it); 0 for none.
    pub partition: i32,
}

impl WorkerRollout {
    /// The pool's own bounds, nothing held.
    fn bounds(worker: &Worker) -> Self {
        Self {
            paused: false,
            max_surge: worker.rollout.max_surge,
            max_unavailable: worker.rollout.max_unavailable,
            partition: 0,
        }
    }

    fn deployment_strategy(self) -> DeploymentStrategy {
        DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(IntOrString::Int(self.max_surge)),
                max_unavailable: Some(IntOrString::Int(self.max_unavailable)),
            }),
        }
    }

    fn lws_strategy(self) -> LeaderWorkerSetRolloutStrategy {
        LeaderWorkerSetRolloutStrategy {
            r#type: LeaderWorkerSetRolloutStrategyType::RollingUpdate,
            rolling_update_configuration: Some(
                LeaderWorkerSetRolloutStrategyRollingUpdateConfiguration {
                    max_surge: Some(IntOrString::Int(self.max_surge)),
                    max_unavailable: Some(IntOrString::Int(self.max_unavailable)),
                    partition: (self.partition > 0).then_some(self.partition),
                },
            ),
        }
    }
}

impl Child {
    /// Writes `rollout` into this worker workload: a Deployment's `paused` and strategy, a
    /// LeaderWorkerSet's `rolloutStrategy`; other kinds have none.
    pub fn set_rollout(&mut self, rollout: WorkerRollout) {
        match self {
            Child::Deployment(deployment) => {
                if let Some(spec) = deployment.spec.as_mut() {
                    spec.paused = rollout.paused.then_some(true);
                    spec.strategy = Some(rollout.deployment_strategy());
                }
            }
            Child::LeaderWorkerSet(lws) => {
                lws.spec.rollout_strategy = Some(rollout.lws_strategy());
            }
            _ => {}
        }
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
