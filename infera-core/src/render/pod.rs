//! Pod templates of the server and the workers.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, HTTPGetAction,
        ObjectFieldSelector, PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Volume,
        VolumeMount,
    },
    apimachinery::pkg::{api::resource::Quantity, util::intstr::IntOrString},
};

use super::{Context, meta};
use crate::{
    flags::{self, FRONTEND_PORT, SERVER_PORT},
    naming::{Component, LABEL_ENDPOINT},
    validate::{Pod, Worker},
};

/// Name of the engine container in every pod.
pub const ENGINE_CONTAINER: &str = "engine";
/// Name of the GAIE frontend sidecar.
pub const FRONTEND_CONTAINER: &str = "frontend";

/// The server's pod template.
pub fn server(cx: &Context<'_>) -> PodTemplateSpec {
    let server = &cx.deployment.server;
    let component = Component::Server(&server.service);
    let mut args = server.args.clone();
    args.extend(cx.injection.server());
    let container = Container {
        resources: resources(server, None),
        ..engine(server, args, SERVER_PORT)
    };
    template(cx, component, server, vec![container], Vec::new())
}

/// Which pods of a worker pool a template is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// Every pod of a single-node pool (a Deployment).
    Single,
    /// Rank 0 of a multi-node group: it serves HTTP.
    Leader,
    /// Rank > 0 of a multi-node group: it joins the leader's group and serves nothing itself.
    Follower,
}

/// A worker's pod template. Pods that serve requests (single-node pods and group leaders) get the
/// HTTP port, the readiness probe, the GAIE frontend sidecar and the endpoint label; rank > 0 pods
/// get none of them. Every pod of a group reads its rank from the LeaderWorkerSet environment.
pub fn worker(cx: &Context<'_>, worker: &Worker, rank: Rank) -> PodTemplateSpec {
    let component = Component::Worker(&worker.pod.service, worker.role);
    let mut args = worker.pod.args.clone();
    args.extend(cx.injection.worker(worker.role, worker.multi_node()));
    let port = flags::worker_port(cx.deployment.backend);
    let serves = rank != Rank::Follower;
    let mut engine = Container {
        resources: resources(&worker.pod, Some((&worker.gpu_type, worker.gpu))),
        ..engine(&worker.pod, args, port)
    };
    if !serves {
        engine.ports = None;
        engine.readiness_probe = None;
    }
    let mut volumes = Vec::new();
    if let Some(size) = &worker.shared_memory {
        engine.volume_mounts = Some(vec![VolumeMount {
            name: "dshm".into(),
            mount_path: "/dev/shm".into(),
            ..Default::default()
        }]);
        volumes.push(Volume {
            name: "dshm".into(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".into()),
                size_limit: Some(size.clone()),
            }),
            ..Default::default()
        });
    }
    let mut containers = vec![engine];
    if serves && cx.deployment.gaie.is_some() {
        containers.push(frontend(&worker.pod.image, port));
    }
    let mut template = template(cx, component, &worker.pod, containers, volumes);
    if serves && let Some(labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
        labels.insert(LABEL_ENDPOINT.into(), "true".into());
    }
    template
}

fn template(
    cx: &Context<'_>,
    component: Component<'_>,
    pod: &Pod,
    containers: Vec<Container>,
    volumes: Vec<Volume>,
) -> PodTemplateSpec {
    let kubernetes_discovery = cx.deployment.discovery == flags::DiscoveryFlags::Kubernetes;
    PodTemplateSpec {
        metadata: Some(meta::pod_meta(cx.deployment, component)),
        spec: Some(PodSpec {
            containers,
            volumes: (!volumes.is_empty()).then_some(volumes),
            service_account_name: kubernetes_discovery
                .then(|| Component::Discovery.object_name(&cx.deployment.name)),
            automount_service_account_token: Some(kubernetes_discovery),
            node_selector: (!pod.node_selector.is_empty()).then(|| pod.node_selector.clone()),
            tolerations: (!pod.tolerations.is_empty()).then(|| pod.tolerations.clone()),
            ..Default::default()
        }),
    }
}

fn engine(pod: &Pod, args: Vec<String>, port: i32) -> Container {
    let mut env = vec![EnvVar {
        name: "POD_NAMESPACE".into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: "metadata.namespace".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }];
    env.extend(pod.env.iter().cloned());
    Container {
        name: ENGINE_CONTAINER.into(),
        image: Some(pod.image.clone()),
        args: Some(args),
        env: Some(env),
        ports: Some(vec![ContainerPort {
            name: Some("http".into()),
            container_port: port,
            protocol: Some("TCP".into()),
            ..Default::default()
        }]),
        readiness_probe: Some(http_probe("/health", port)),
        ..Default::default()
    }
}

fn frontend(image: &str, engine_port: i32) -> Container {
    Container {
        name: FRONTEND_CONTAINER.into(),
        image: Some(image.into()),
        args: Some(vec![
            "frontend".into(),
            "--port".into(),
            FRONTEND_PORT.to_string(),
            "--engine-url".into(),
            format!("http://127.0.0.1:{engine_port}"),
        ]),
        ports: Some(vec![ContainerPort {
            name: Some("frontend".into()),
            container_port: FRONTEND_PORT,
            protocol: Some("TCP".into()),
            ..Default::default()
        }]),
        readiness_probe: Some(http_probe("/health", FRONTEND_PORT)),
        ..Default::default()
    }
}

pub(super) fn http_probe(path: &str, port: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::Int(port),
            ..Default::default()
        }),
        period_seconds: Some(10),
        ..Default::default()
    }
}

/// Requests and limits: CPU and memory as given, the GPU as an extended resource in limits.
fn resources(pod: &Pod, gpu: Option<(&String, i32)>) -> Option<ResourceRequirements> {
    let mut requests = BTreeMap::new();
    for (name, quantity) in [("cpu", &pod.cpu), ("memory", &pod.memory)] {
        if let Some(q) = quantity {
            requests.insert(name.to_string(), q.clone());
        }
    }
    let mut limits = requests.clone();
    if let Some((gpu_type, count)) = gpu {
        limits.insert(gpu_type.clone(), Quantity(count.to_string()));
    }
    (!limits.is_empty()).then(|| ResourceRequirements {
        requests: (!requests.is_empty()).then_some(requests),
        limits: Some(limits),
        ..Default::default()
    })
}
