//! The managed NATS JetStream that carries KV events, and how the pods reach it.
//!
//! The managed NATS takes one user, [`NATS_USER`], whose password the operator generates into
//! the Secret [`naming::nats_credentials_name`] (see [`credentials`]): no client connects
//! anonymously. A user and password, not NKeys or a creds file, because upstream's clients take
//! nothing but a URL — `nats.connect(url)` (`infera/kv/nats_bus.py:142-147`,
//! `infera/common/nats_request.py:248-253`), the URL from `--nats-server` or `$NATS_SERVER`
//! (`nats_bus.py:41-47`) — and nats-py authenticates with the user and password of that URL
//! (nats-py 2.16.0, `nats/aio/client.py:1847-1852`). The URL reaches the pods from the Secret, as
//! `$NATS_SERVER`, which their `--nats-server $(NATS_SERVER)` expands: no pod spec shows it.

use k8s_openapi::{
    api::{
        apps::v1::{StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec},
        core::v1::{
            Container, ContainerPort, EnvVar, EnvVarSource, PersistentVolumeClaim,
            PersistentVolumeClaimSpec, PodSpec, PodTemplateSpec, Secret, SecretKeySelector,
            Service, ServicePort, ServiceSpec, VolumeMount, VolumeResourceRequirements,
        },
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{LabelSelector, ObjectMeta},
    },
};

use super::{
    Child, Context, meta,
    probes::{QUICK_TIMEOUT, readiness_probe},
    security,
};
use crate::{
    flags::{NATS_PORT, NATS_SERVER_ENV},
    naming::{self, Component, NATS_PASSWORD_KEY, NATS_URL_KEY, NATS_USER},
    validate::{Nats, NatsUrl, ValidDeployment},
};

pub(super) const MONITOR_PORT: i32 = 8222;
/// The NATS container's variable holding its password, which its `--pass` expands.
const PASSWORD_ENV: &str = "NATS_PASSWORD";

/// The NATS URL as the pods' command lines name it, if there is a NATS: an external one's URL;
/// for the managed one `$(NATS_SERVER)`, which the kubelet expands from [`server_env`].
pub fn url(d: &ValidDeployment) -> Option<String> {
    match &d.nats {
        Nats::None => None,
        Nats::External {
            url: NatsUrl::Value(url),
        } => Some(url.clone()),
        Nats::External {
            url: NatsUrl::Secret { .. },
        }
        | Nats::Managed { .. } => Some(format!("$({NATS_SERVER_ENV})")),
    }
}

/// `$NATS_SERVER` of the pods that talk to NATS: an external NATS's URL, or the managed one's
/// from its Secret.
pub fn server_env(d: &ValidDeployment) -> Option<EnvVar> {
    let (value, value_from) = match &d.nats {
        Nats::None => return None,
        Nats::External {
            url: NatsUrl::Value(url),
        } => (Some(url.clone()), None),
        Nats::External {
            url: NatsUrl::Secret { name, key },
        } => (None, Some(secret_ref(name, key))),
        Nats::Managed { credentials, .. } => (None, Some(secret_ref(credentials, NATS_URL_KEY))),
    };
    Some(EnvVar {
        name: NATS_SERVER_ENV.into(),
        value,
        value_from,
    })
}

/// Key `key` of the Secret `name`.
fn secret_ref(name: &str, key: &str) -> EnvVarSource {
    EnvVarSource {
        secret_key_ref: Some(SecretKeySelector {
            name: name.into(),
            key: key.into(),
            optional: None,
        }),
        ..Default::default()
    }
}

/// The managed NATS's credentials with `password`, which the operator generates once (a NATS
/// password is any string; give it one that needs no escaping in a URL): the Secret the NATS
/// server and its clients read. `None` without a managed NATS.
pub fn credentials(d: &ValidDeployment, password: &str) -> Option<Secret> {
    let Nats::Managed { credentials, .. } = &d.nats else {
        return None;
    };
    let host = naming::service_host(&Component::Nats.object_name(&d.name), &d.namespace);
    let url = format!("nats://{NATS_USER}:{password}@{host}:{NATS_PORT}");
    Some(Secret {
        metadata: meta::object_meta(d, Component::Nats, credentials.clone()),
        string_data: Some(
            [
                (NATS_PASSWORD_KEY.to_string(), password.to_string()),
                (NATS_URL_KEY.to_string(), url),
            ]
            .into(),
        ),
        type_: Some("Opaque".into()),
        ..Default::default()
    })
}

/// Headless Service, client Service and the single-replica JetStream StatefulSet.
pub fn managed(
    cx: &Context<'_>,
    storage: &Quantity,
    image: &str,
    storage_class_name: Option<&str>,
    credentials: &str,
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
        Child::StatefulSet(stateful_set(
            cx,
            storage,
            image,
            storage_class_name,
            credentials,
        )),
    ]
}

/// One JetStream server whose store is a claim of `storage`, deleted with the StatefulSet.
fn stateful_set(
    cx: &Context<'_>,
    storage: &Quantity,
    image: &str,
    storage_class_name: Option<&str>,
    credentials: &str,
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
                    containers: vec![server(credentials, image)],
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

/// The `nats` container: JetStream on `/data`, ready when JetStream is (the monitoring port asks
/// for no credentials); one user, whose password comes from the deployment's credentials
/// (nats-server's `--user` and `--pass`, `main.go:66-67`); `restricted`, as nats-server writes
/// nothing but its store.
fn server(credentials: &str, image: &str) -> Container {
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
            format!("--user={NATS_USER}"),
            format!("--pass=$({PASSWORD_ENV})"),
        ]),
        env: Some(vec![EnvVar {
            name: PASSWORD_ENV.into(),
            value_from: Some(secret_ref(credentials, NATS_PASSWORD_KEY)),
            ..Default::default()
        }]),
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
