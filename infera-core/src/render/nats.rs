//! The managed NATS JetStream that carries KV events.

use k8s_openapi::{
    api::{
        apps::v1::{StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec},
        core::v1::{
            Container, ContainerPort, PersistentVolumeClaim, PersistentVolumeClaimSpec, PodSpec,
            PodTemplateSpec, Service, ServicePort, ServiceSpec, VolumeMount,
            VolumeResourceRequirements,
        },
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{LabelSelector, ObjectMeta},
    },
};

use super::{
    Child, Context, meta,
    pod::{QUICK_TIMEOUT, readiness_probe},
    security,
};
use crate::{
    flags::NATS_PORT,
    naming::{self, Component},
    validate::{Nats, ValidDeployment},
};

const MONITOR_PORT: i32 = 8222;

/// The URL services use for KV events, if any.
pub fn url(d: &ValidDeployment) -> Option<String> {
    match &d.nats {
        Nats::None => None,
        Nats::External { url } => Some(url.clone()),
        Nats::Managed { .. } => Some(format!(
            "nats://{}:{NATS_PORT}",
            naming::service_host(&Component::Nats.object_name(&d.name), &d.namespace)
        )),
    }
}

/// Headless Service, client Service and the single-replica JetStream StatefulSet.
pub fn managed(
    cx: &Context<'_>,
    storage: &Quantity,
    image: &str,
    storage_class_name: Option<&str>,
) -> [Child; 3] {
    let d = cx.deployment;
    let selector = naming::selector(&d.name, Component::Nats);
    let port = |name: &str, number: i32| ServicePort {
        name: Some(name.into()),
        port: number,
        target_port: None,
        protocol: Some("TCP".into()),
        ..Default::default()
    };
    [
        Child::Service(Service {
            metadata: meta::object_meta(d, Component::Nats, naming::nats_headless_name(&d.name)),
            spec: Some(ServiceSpec {
                cluster_ip: Some("None".into()),
                publish_not_ready_addresses: Some(true),
                selector: Some(selector.clone()),
                ports: Some(vec![
                    port("client", NATS_PORT),
                    port("monitor", MONITOR_PORT),
                ]),
                ..Default::default()
            }),
            ..Default::default()
        }),
        Child::Service(Service {
            metadata: meta::object_meta(d, Component::Nats, Component::Nats.object_name(&d.name)),
            spec: Some(ServiceSpec {
                type_: Some("ClusterIP".into()),
                selector: Some(selector),
                ports: Some(vec![port("client", NATS_PORT)]),
                ..Default::default()
            }),
            ..Default::default()
        }),
        Child::StatefulSet(stateful_set(cx, storage, image, storage_class_name)),
    ]
}

/// One JetStream server whose store is a claim of `storage`, deleted with the StatefulSet.
fn stateful_set(
    cx: &Context<'_>,
    storage: &Quantity,
    image: &str,
    storage_class_name: Option<&str>,
) -> StatefulSet {
    let d = cx.deployment;
    StatefulSet {
        metadata: meta::object_meta(d, Component::Nats, Component::Nats.object_name(&d.name)),
        spec: Some(StatefulSetSpec {
            replicas: Some(1),
            service_name: Some(naming::nats_headless_name(&d.name)),
            selector: LabelSelector {
                match_labels: Some(naming::selector(&d.name, Component::Nats)),
                ..Default::default()
            },
            persistent_volume_claim_retention_policy: Some(
                StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some("Delete".into()),
                    when_scaled: Some("Delete".into()),
                },
            ),
            template: PodTemplateSpec {
                metadata: Some(meta::pod_meta(d, Component::Nats)),
                spec: Some(PodSpec {
                    automount_service_account_token: Some(false),
                    security_context: Some(security::restricted_pod()),
                    containers: vec![server(image)],
                    ..Default::default()
                }),
            },
            volume_claim_templates: Some(vec![PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some("data".into()),
                    ..Default::default()
                },
                spec: Some(PersistentVolumeClaimSpec {
                    access_modes: Some(vec!["ReadWriteOnce".into()]),
                    storage_class_name: storage_class_name.map(Into::into),
                    resources: Some(VolumeResourceRequirements {
                        requests: Some([("storage".to_string(), storage.clone())].into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The `nats` container: JetStream on `/data`, ready when JetStream is; `restricted`, as
/// nats-server writes nothing but its store.
fn server(image: &str) -> Container {
    let port = |name: &str, number: i32| ContainerPort {
        name: Some(name.into()),
        container_port: number,
        ..Default::default()
    };
    Container {
        name: "nats".into(),
        image: Some(image.into()),
        args: Some(vec![
            "--jetstream".into(),
            "--store_dir=/data".into(),
            format!("--port={NATS_PORT}"),
            format!("--http_port={MONITOR_PORT}"),
        ]),
        ports: Some(vec![
            port("client", NATS_PORT),
            port("monitor", MONITOR_PORT),
        ]),
        readiness_probe: Some(readiness_probe(
            "/healthz?js-enabled-only=true",
            MONITOR_PORT,
            QUICK_TIMEOUT,
        )),
        volume_mounts: Some(vec![VolumeMount {
            name: "data".into(),
            mount_path: "/data".into(),
            ..Default::default()
        }]),
        security_context: Some(security::restricted_container()),
        ..Default::default()
    }
}
