//! `podTemplate` overlays (`spec.podTemplate`, `spec.services.*.podTemplate`): what they may not
//! touch because the operator owns it, and how the deployment's and a service's merge into the
//! one [`PodOverlay`] the renderer adds to that service's pods.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, LocalObjectReference, TopologySpreadConstraint, Volume,
    VolumeMount,
};

use super::rules::{
    DEFAULT_GPU_TYPE, ENGINE_FIELD_OURS, ENGINE_OWNED_FIELDS, FRONTEND_OURS, GPU_OURS,
    INIT_NAME_OURS, LABEL_OURS, NO_IMAGE, SERVICE_ACCOUNT_OURS, SHM_OURS,
};
use super::{
    Errors,
    limits::{MAX_OVERLAY_CONTAINERS, MAX_OVERLAY_ENTRIES},
};
use crate::{
    naming::{ENGINE_CONTAINER, FRONTEND_CONTAINER, SHM_VOLUME, is_owned_label},
    types::{InferaDeploymentSpec, PodTemplateOverlay, ServiceSpec},
};

/// Checks `spec.podTemplate` and every service's `podTemplate`.
pub(super) fn overlays(
    errors: &mut Errors,
    spec: &InferaDeploymentSpec,
    kubernetes_discovery: bool,
) {
    if let Some(overlay) = &spec.pod_template {
        let path = "spec.podTemplate";
        rules(errors, path, overlay);
        let mut gpus: Vec<&str> = spec.services.values().map(|svc| gpu_of(svc)).collect();
        gpus.push(DEFAULT_GPU_TYPE);
        no_gpu(errors, path, overlay, &gpus);
        service_account(errors, path, overlay, kubernetes_discovery);
    }
    for (service, svc) in &spec.services {
        if let Some(overlay) = &svc.pod_template {
            let path = format!("spec.services.{service}.podTemplate");
            rules(errors, &path, overlay);
            no_gpu(errors, &path, overlay, &[gpu_of(svc)]);
            service_account(errors, &path, overlay, kubernetes_discovery);
        }
    }
}

/// The GPU resource name of a service.
fn gpu_of(svc: &ServiceSpec) -> &str {
    svc.resources
        .as_ref()
        .and_then(|r| r.gpu_type.as_deref())
        .unwrap_or(DEFAULT_GPU_TYPE)
}

/// Labels added to pods (a `podTemplate`'s, `podLabels`): at most [`MAX_OVERLAY_ENTRIES`], none
/// of the operator's.
pub(super) fn check_labels(
    errors: &mut Errors,
    path: &str,
    labels: &std::collections::BTreeMap<String, String>,
) {
    errors.at_most(path, "entries", labels.len(), MAX_OVERLAY_ENTRIES);
    let ours: Vec<&str> = labels
        .keys()
        .map(String::as_str)
        .filter(|key| is_owned_label(key))
        .collect();
    if !ours.is_empty() {
        errors.push(path, format!("{LABEL_OURS} (now {})", ours.join(", ")));
    }
}

/// Checks what an overlay at `path` may set, whatever the service.
fn rules(errors: &mut Errors, path: &str, overlay: &PodTemplateOverlay) {
    if let Some(metadata) = &overlay.metadata {
        check_labels(errors, &format!("{path}.metadata.labels"), &metadata.labels);
    }
    let Some(spec) = &overlay.spec else { return };
    let containers = format!("{path}.spec.containers");
    let init_containers = format!("{path}.spec.initContainers");
    let volumes = format!("{path}.spec.volumes");
    errors.at_most(
        &containers,
        "entries",
        spec.containers.len(),
        MAX_OVERLAY_CONTAINERS,
    );
    errors.at_most(
        &init_containers,
        "entries",
        spec.init_containers.len(),
        MAX_OVERLAY_CONTAINERS,
    );
    errors.at_most(&volumes, "entries", spec.volumes.len(), MAX_OVERLAY_ENTRIES);
    for container in &spec.containers {
        match container.name.as_str() {
            ENGINE_CONTAINER => {
                let owned = engine_owned_fields(container);
                if !owned.is_empty() {
                    errors.push(
                        &containers,
                        format!("{ENGINE_FIELD_OURS} (now {})", owned.join(", ")),
                    );
                }
            }
            FRONTEND_CONTAINER => errors.push(&containers, FRONTEND_OURS),
            _ if container.image.is_none() => {
                errors.push(&containers, format!("{NO_IMAGE} (on {})", container.name))
            }
            _ => {}
        }
    }
    for container in &spec.init_containers {
        if [ENGINE_CONTAINER, FRONTEND_CONTAINER].contains(&container.name.as_str()) {
            errors.push(&init_containers, INIT_NAME_OURS);
        }
        if container.image.is_none() {
            errors.push(
                &init_containers,
                format!("{NO_IMAGE} (on {})", container.name),
            );
        }
    }
    if spec.volumes.iter().any(|v| v.name == SHM_VOLUME) {
        errors.push(volumes, SHM_OURS);
    }
}

/// Which of [`ENGINE_OWNED_FIELDS`] `engine` sets.
fn engine_owned_fields(engine: &Container) -> Vec<&'static str> {
    let set = [
        engine.image.is_some(),
        engine.image_pull_policy.is_some(),
        engine.command.is_some(),
        engine.args.is_some(),
        engine.ports.is_some(),
        engine.startup_probe.is_some(),
        engine.readiness_probe.is_some(),
        engine.liveness_probe.is_some(),
        engine.lifecycle.is_some(),
    ];
    ENGINE_OWNED_FIELDS
        .into_iter()
        .zip(set)
        .filter_map(|(field, set)| set.then_some(field))
        .collect()
}

/// Checks that no container of the overlay at `path` asks for any of `gpus` (resource names).
fn no_gpu(errors: &mut Errors, path: &str, overlay: &PodTemplateOverlay, gpus: &[&str]) {
    let Some(spec) = &overlay.spec else { return };
    let asks = spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .filter_map(|c| c.resources.as_ref())
        .flat_map(|r| r.limits.iter().chain(r.requests.iter()))
        .any(|resources| gpus.iter().any(|gpu| resources.contains_key(*gpu)));
    if asks {
        errors.push(format!("{path}.spec"), GPU_OURS);
    }
}

/// Checks that the overlay at `path` names no ServiceAccount when discovery is Kubernetes'.
fn service_account(
    errors: &mut Errors,
    path: &str,
    overlay: &PodTemplateOverlay,
    kubernetes_discovery: bool,
) {
    let names_one = overlay
        .spec
        .as_ref()
        .is_some_and(|s| s.service_account_name.is_some());
    if kubernetes_discovery && names_one {
        errors.push(
            format!("{path}.spec.serviceAccountName"),
            SERVICE_ACCOUNT_OURS,
        );
    }
}

/// What the renderer adds to a service's pods: `spec.podTemplate` with the service's on top.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodOverlay {
    /// Added pod labels.
    pub labels: BTreeMap<String, String>,
    /// Added pod annotations.
    pub annotations: BTreeMap<String, String>,
    /// Merged into the engine container: env, envFrom, volumeMounts, resources (by key) and
    /// securityContext, nothing else.
    pub engine: Option<Container>,
    /// Added containers.
    pub containers: Vec<Container>,
    /// Added init containers.
    pub init_containers: Vec<Container>,
    /// Added volumes.
    pub volumes: Vec<Volume>,
    /// Pod affinity.
    pub affinity: Option<Affinity>,
    /// Pull secrets.
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// Spread constraints.
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// PriorityClass.
    pub priority_class_name: Option<String>,
    /// Scheduler.
    pub scheduler_name: Option<String>,
    /// RuntimeClass.
    pub runtime_class_name: Option<String>,
    /// Host IPC namespace.
    pub host_ipc: Option<bool>,
    /// ServiceAccount (only with etcd discovery).
    pub service_account_name: Option<String>,
}

impl PodOverlay {
    /// The deployment's overlay with the service's on top.
    pub(super) fn merged(
        deployment: Option<&PodTemplateOverlay>,
        service: Option<&PodTemplateOverlay>,
    ) -> Self {
        let mut merged = Self::default();
        for overlay in [deployment, service].into_iter().flatten() {
            merged.add(overlay);
        }
        merged
    }

    /// Puts `overlay` on top: named entries replace those of the same name, maps merge by key,
    /// other fields replace when set.
    fn add(&mut self, overlay: &PodTemplateOverlay) {
        if let Some(metadata) = &overlay.metadata {
            self.labels.extend(metadata.labels.clone());
            self.annotations.extend(metadata.annotations.clone());
        }
        let Some(spec) = &overlay.spec else { return };
        for container in &spec.containers {
            if container.name == ENGINE_CONTAINER {
                let engine = self.engine.get_or_insert_with(|| Container {
                    name: ENGINE_CONTAINER.into(),
                    ..Default::default()
                });
                merge_engine(engine, container);
            } else {
                upsert(&mut self.containers, container, |c| &c.name);
            }
        }
        for container in &spec.init_containers {
            upsert(&mut self.init_containers, container, |c| &c.name);
        }
        for volume in &spec.volumes {
            upsert(&mut self.volumes, volume, |v| &v.name);
        }
        for secret in &spec.image_pull_secrets {
            upsert(&mut self.image_pull_secrets, secret, |s| &s.name);
        }
        if !spec.topology_spread_constraints.is_empty() {
            self.topology_spread_constraints = spec.topology_spread_constraints.clone();
        }
        replace(&mut self.affinity, &spec.affinity);
        replace(&mut self.priority_class_name, &spec.priority_class_name);
        replace(&mut self.scheduler_name, &spec.scheduler_name);
        replace(&mut self.runtime_class_name, &spec.runtime_class_name);
        replace(&mut self.host_ipc, &spec.host_ipc);
        replace(&mut self.service_account_name, &spec.service_account_name);
    }
}

/// Merges the mergeable fields of an `engine` entry into `engine`.
pub fn merge_engine(engine: &mut Container, entry: &Container) {
    for var in entry.env.iter().flatten() {
        upsert(
            engine.env.get_or_insert_with(Vec::new),
            var,
            |v: &EnvVar| &v.name,
        );
    }
    if let Some(env_from) = &entry.env_from {
        engine
            .env_from
            .get_or_insert_with(Vec::new)
            .extend(env_from.iter().cloned());
    }
    for mount in entry.volume_mounts.iter().flatten() {
        upsert(
            engine.volume_mounts.get_or_insert_with(Vec::new),
            mount,
            |m: &VolumeMount| &m.mount_path,
        );
    }
    if let Some(resources) = &entry.resources {
        let into = engine.resources.get_or_insert_with(Default::default);
        for (from, to) in [
            (&resources.requests, &mut into.requests),
            (&resources.limits, &mut into.limits),
        ] {
            if let Some(from) = from {
                to.get_or_insert_with(BTreeMap::new).extend(from.clone());
            }
        }
    }
    replace(&mut engine.security_context, &entry.security_context);
}

/// Replaces the entry of `list` with `item`'s key, or appends `item`.
fn upsert<T: Clone>(list: &mut Vec<T>, item: &T, key: impl Fn(&T) -> &String) {
    match list.iter_mut().find(|old| key(old) == key(item)) {
        Some(old) => *old = item.clone(),
        None => list.push(item.clone()),
    }
}

/// Sets `field` to `value` when `value` is set.
fn replace<T: Clone>(field: &mut Option<T>, value: &Option<T>) {
    if value.is_some() {
        field.clone_from(value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{super::found, *};

    fn overlay(json: serde_json::Value) -> PodTemplateOverlay {
        serde_json::from_value(json).expect("an overlay")
    }

    #[test]
    fn owned_fields_are_refused_with_what_was_set() {
        let o = overlay(json!({
            "metadata": {"labels": {"team": "a", "infera.amd.com/role": "x", "app.kubernetes.io/name": "y"}},
            "spec": {
                "containers": [
                    {"name": "engine", "image": "x", "args": ["--y"], "env": [{"name": "A", "value": "1"}]},
                    {"name": "infera-frontend", "image": "x"},
                    {"name": "sidecar"},
                ],
                "initContainers": [{"name": "engine"}, {"name": "fetch", "image": "x"}],
                "volumes": [{"name": "dshm", "emptyDir": {}}],
            },
        }));
        assert_eq!(
            found(|e| rules(e, "spec.podTemplate", &o)),
            [
                format!(
                    "spec.podTemplate.metadata.labels: {LABEL_OURS} (now app.kubernetes.io/name, infera.amd.com/role)"
                ),
                format!("spec.podTemplate.spec.containers: {ENGINE_FIELD_OURS} (now image, args)"),
                format!("spec.podTemplate.spec.containers: {FRONTEND_OURS}"),
                format!("spec.podTemplate.spec.containers: {NO_IMAGE} (on sidecar)"),
                format!("spec.podTemplate.spec.initContainers: {INIT_NAME_OURS}"),
                format!("spec.podTemplate.spec.initContainers: {NO_IMAGE} (on engine)"),
                format!("spec.podTemplate.spec.volumes: {SHM_OURS}"),
            ]
        );
    }

    #[test]
    fn what_an_overlay_may_set_passes() {
        let o = overlay(json!({
            "metadata": {"labels": {"team": "a"}, "annotations": {"infera.amd.com/x": "ok"}},
            "spec": {
                "containers": [
                    {"name": "engine", "env": [{"name": "A", "value": "1"}], "resources": {"limits": {"memory": "1Gi"}}},
                    {"name": "sidecar", "image": "busybox"},
                ],
                "volumes": [{"name": "models", "persistentVolumeClaim": {"claimName": "m"}}],
                "serviceAccountName": "mine",
            },
        }));
        assert!(found(|e| rules(e, "x", &o)).is_empty());
        assert!(found(|e| no_gpu(e, "x", &o, &["amd.com/gpu"])).is_empty());
        assert!(found(|e| service_account(e, "x", &o, false)).is_empty());
        assert_eq!(
            found(|e| service_account(e, "x", &o, true)),
            [format!("x.spec.serviceAccountName: {SERVICE_ACCOUNT_OURS}")]
        );
    }

    #[test]
    fn a_gpu_in_any_container_is_refused() {
        let o = overlay(json!({"spec": {"initContainers": [
            {"name": "warm", "image": "x", "resources": {"requests": {"amd.com/cpx_nps4": "1"}}},
        ]}}));
        assert!(found(|e| no_gpu(e, "x", &o, &["amd.com/gpu"])).is_empty());
        assert_eq!(
            found(|e| no_gpu(e, "x", &o, &["amd.com/gpu", "amd.com/cpx_nps4"])),
            [format!("x.spec: {GPU_OURS}")]
        );
    }

    #[test]
    fn the_service_overlay_goes_on_top_of_the_deployments() {
        let deployment = overlay(json!({
            "metadata": {"labels": {"team": "a", "tier": "gpu"}},
            "spec": {
                "containers": [{"name": "engine",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "1"}],
                    "volumeMounts": [{"name": "models", "mountPath": "/models"}],
                    "resources": {"requests": {"cpu": "4"}, "limits": {"memory": "8Gi"}}}],
                "volumes": [{"name": "models", "persistentVolumeClaim": {"claimName": "shared"}}],
                "priorityClassName": "high",
                "schedulerName": "default-scheduler",
            },
        }));
        let service = overlay(json!({
            "metadata": {"labels": {"team": "b"}},
            "spec": {
                "containers": [{"name": "engine",
                    "env": [{"name": "B", "value": "2"}],
                    "volumeMounts": [{"name": "models-70b", "mountPath": "/models"}],
                    "resources": {"limits": {"memory": "16Gi"}}}],
                "volumes": [{"name": "models-70b", "persistentVolumeClaim": {"claimName": "llama-70b"}}],
                "priorityClassName": "critical",
            },
        }));
        let merged = PodOverlay::merged(Some(&deployment), Some(&service));
        assert_eq!(
            serde_json::to_value(&merged.engine).expect("json"),
            json!({
                "name": "engine",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "volumeMounts": [{"name": "models-70b", "mountPath": "/models"}],
                "resources": {"requests": {"cpu": "4"}, "limits": {"memory": "16Gi"}},
            })
        );
        assert_eq!(
            merged.labels,
            BTreeMap::from([("team".into(), "b".into()), ("tier".into(), "gpu".into())])
        );
        let volumes: Vec<&str> = merged.volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(volumes, ["models", "models-70b"]);
        assert_eq!(merged.priority_class_name.as_deref(), Some("critical"));
        assert_eq!(merged.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(PodOverlay::merged(None, None), PodOverlay::default());
    }
}
