//! Validation of an `InferaDeployment` into a [`ValidDeployment`], the only input renderers accept.
//!
//! Every rule of the product contract lives here, including those the CRD's CEL rules also enforce
//! (with the same wording), so the plugin rejects a bad spec before sending it and the operator can
//! report what admission could not catch. All errors are collected, not only the first.

use std::{collections::BTreeMap, fmt};

use k8s_openapi::{
    api::core::v1::{EnvVar, Toleration},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::OwnerReference},
};
use kube::Resource;

use crate::{
    flags::{self, DiscoveryFlags},
    naming::{self, MAX_DEPLOYMENT_NAME, MAX_DEPLOYMENT_PLUS_SERVICE, RESERVED_SERVICE_NAMES},
    types::{
        BackendFramework, ComponentType, DiscoveryBackend, InferaDeployment, Role, ServiceSpec,
    },
};

/// Default GPU resource name.
pub const DEFAULT_GPU_TYPE: &str = "amd.com/gpu";
/// Default size of the managed NATS JetStream volume.
pub const DEFAULT_NATS_STORAGE: &str = "1Gi";

/// One broken rule: the field path, what is wrong, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Path of the offending field, e.g. `spec.services.prefill.resources.gpu`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every rule a spec breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

/// A deployment that passed every rule, with defaults resolved. Renderers read only this.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidDeployment {
    pub name: String,
    pub namespace: String,
    /// Controller reference for children; `None` when rendering a spec that was never created.
    pub owner: Option<OwnerReference>,
    pub backend: BackendFramework,
    pub discovery: DiscoveryFlags,
    pub nats: Nats,
    pub gaie: Option<Gaie>,
    pub server: Pod,
    pub workers: Vec<Worker>,
}

/// The KV-event plane.
#[derive(Clone, Debug, PartialEq)]
pub enum Nats {
    None,
    Managed { storage: Quantity },
    External { url: String },
}

/// Gateway API Inference Extension settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gaie {
    pub gateway_name: String,
    pub gateway_namespace: Option<String>,
    pub epp_image: Option<String>,
}

/// What every service's pods share.
#[derive(Clone, Debug, PartialEq)]
pub struct Pod {
    pub service: String,
    pub image: String,
    pub replicas: i32,
    pub args: Vec<String>,
    pub env: Vec<EnvVar>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    pub cpu: Option<Quantity>,
    pub memory: Option<Quantity>,
}

/// A worker pool.
#[derive(Clone, Debug, PartialEq)]
pub struct Worker {
    pub pod: Pod,
    pub role: Role,
    /// Pods per replica; above 1 the pool is a LeaderWorkerSet.
    pub nodes: i32,
    pub gpu: i32,
    pub gpu_type: String,
    pub shared_memory: Option<Quantity>,
}

impl Worker {
    pub fn multi_node(&self) -> bool {
        self.nodes > 1
    }
}

/// Validates a deployment. Errors come sorted by field path, so output is stable.
pub fn validate(idep: &InferaDeployment) -> Result<ValidDeployment, ValidationErrors> {
    let mut errors = Errors::default();
    let spec = &idep.spec;
    let name = idep.metadata.name.clone().unwrap_or_default();
    let namespace = idep
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());

    let name_ok = naming::is_dns_label(&name) && name.len() <= MAX_DEPLOYMENT_NAME;
    if name.is_empty() {
        errors.push("metadata.name", "is required; give the deployment a name");
    } else if !name_ok {
        errors.push(
            "metadata.name",
            format!("must be a DNS label of at most {MAX_DEPLOYMENT_NAME} characters (lowercase letters, digits and '-', starting with a letter); choose a shorter name"),
        );
    }

    let servers: Vec<&String> = spec
        .services
        .iter()
        .filter(|(_, s)| s.component_type == ComponentType::Server)
        .map(|(n, _)| n)
        .collect();
    match servers.len() {
        1 => {}
        0 => errors.push(
            "spec.services",
            "exactly one service must have componentType: server; add one server",
        ),
        _ => errors.push(
            "spec.services",
            format!(
                "exactly one service must have componentType: server, found {}; remove the extras",
                join(&servers)
            ),
        ),
    }
    if !spec
        .services
        .values()
        .any(|s| s.component_type == ComponentType::Worker)
    {
        errors.push(
            "spec.services",
            "at least one service must have componentType: worker; add a worker pool",
        );
    }
    let has_role = |role| spec.services.values().any(|s| s.role == Some(role));
    if has_role(Role::Prefill) != has_role(Role::Decode) {
        let (present, missing) = if has_role(Role::Prefill) {
            ("prefill", "decode")
        } else {
            ("decode", "prefill")
        };
        errors.push(
            "spec.services",
            format!("{present} pools need {missing} pools; add a service with role: {missing}, or use role: mixed"),
        );
    }

    let discovery = match (
        spec.discovery_backend.unwrap_or_default(),
        &spec.etcd_endpoint,
    ) {
        (DiscoveryBackend::Kubernetes, None) => DiscoveryFlags::Kubernetes,
        (DiscoveryBackend::Etcd, Some(endpoint)) => DiscoveryFlags::Etcd(endpoint.clone()),
        (DiscoveryBackend::Etcd, None) => {
            errors.push(
                "spec.etcdEndpoint",
                "is required when discoveryBackend is etcd; set the URL of your etcd",
            );
            DiscoveryFlags::Kubernetes
        }
        (DiscoveryBackend::Kubernetes, Some(_)) => {
            errors.push(
                "spec.etcdEndpoint",
                "is only used when discoveryBackend is etcd; remove it or set discoveryBackend: etcd",
            );
            DiscoveryFlags::Kubernetes
        }
    };

    let nats = match &spec.nats {
        None => Nats::None,
        Some(nats) if nats.deploy => {
            if nats.url.is_some() {
                errors.push(
                    "spec.nats.url",
                    "is only used when deploy is false; remove it or set deploy: false",
                );
            }
            let storage = nats
                .storage_size
                .clone()
                .unwrap_or_else(|| Quantity(DEFAULT_NATS_STORAGE.into()));
            check_quantity(&mut errors, "spec.nats.storageSize", &storage);
            Nats::Managed { storage }
        }
        Some(nats) => {
            if nats.storage_size.is_some() {
                errors.push(
                    "spec.nats.storageSize",
                    "is only used when deploy is true; remove it or set deploy: true",
                );
            }
            match &nats.url {
                Some(url) => Nats::External { url: url.clone() },
                None => {
                    errors.push(
                        "spec.nats.url",
                        "is required when deploy is false; set the URL of your NATS, or set deploy: true",
                    );
                    Nats::None
                }
            }
        }
    };

    let gaie = spec.gaie.as_ref().map(|g| {
        if !is_dns_subdomain(&g.gateway_name) {
            errors.push(
                "spec.gaie.gatewayName",
                "must be the name of a Gateway (a DNS subdomain); fix the name",
            );
        }
        if let Some(ns) = &g.gateway_namespace
            && !naming::is_dns_label(ns)
        {
            errors.push(
                "spec.gaie.gatewayNamespace",
                "must be a namespace name (a DNS label); fix the name",
            );
        }
        Gaie {
            gateway_name: g.gateway_name.clone(),
            gateway_namespace: g.gateway_namespace.clone(),
            epp_image: g.epp_image.clone(),
        }
    });

    let mut server = None;
    let mut workers = Vec::new();
    for (service, svc) in &spec.services {
        let path = format!("spec.services.{service}");
        // A bad deployment name is reported once, not again with every service.
        check_service_name(
            &mut errors,
            &path,
            if name_ok { &name } else { "" },
            service,
        );
        let pod = pod(&mut errors, &path, service, svc, spec.image.as_deref());
        match svc.component_type {
            ComponentType::Server => {
                check_server(&mut errors, &path, svc);
                server = Some(pod);
            }
            ComponentType::Worker => workers.push(worker(&mut errors, &path, svc, pod)),
        }
    }

    let Some(server) = server.filter(|_| errors.0.is_empty()) else {
        errors.0.sort_by(|a, b| a.path.cmp(&b.path));
        return Err(ValidationErrors(errors.0));
    };
    Ok(ValidDeployment {
        owner: owner_reference(idep),
        name,
        namespace,
        backend: spec.backend_framework,
        discovery,
        nats,
        gaie,
        server,
        workers,
    })
}

fn owner_reference(idep: &InferaDeployment) -> Option<OwnerReference> {
    idep.metadata.uid.as_ref()?;
    idep.controller_owner_ref(&())
}

#[derive(Default)]
struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            path: path.into(),
            message: message.into(),
        });
    }
}

fn check_service_name(errors: &mut Errors, path: &str, deployment: &str, service: &str) {
    if !naming::is_dns_label(service) {
        errors.push(
            path,
            "service names must be DNS labels (lowercase letters, digits and '-', starting with a letter); rename the service",
        );
    } else if RESERVED_SERVICE_NAMES.contains(&service) {
        errors.push(
            path,
            format!(
                "the names {} are reserved for objects the operator creates; rename the service",
                RESERVED_SERVICE_NAMES.join(", ")
            ),
        );
    } else if deployment.len() + service.len() > MAX_DEPLOYMENT_PLUS_SERVICE {
        errors.push(
            path,
            format!(
                "the deployment name plus a service name must be at most {MAX_DEPLOYMENT_PLUS_SERVICE} characters so that every child name fits in 63 (now {}); shorten the service name or metadata.name",
                deployment.len() + service.len()
            ),
        );
    }
}

fn pod(
    errors: &mut Errors,
    path: &str,
    service: &str,
    svc: &ServiceSpec,
    default_image: Option<&str>,
) -> Pod {
    let image = svc
        .image
        .as_deref()
        .or(default_image)
        .unwrap_or_default()
        .to_string();
    if image.is_empty() {
        errors.push(
            format!("{path}.image"),
            "no image is set; set spec.image or an image for this service",
        );
    }
    let replicas = svc.replicas.unwrap_or(1);
    if replicas < 0 {
        errors.push(
            format!("{path}.replicas"),
            "must be 0 or more; set a non-negative number",
        );
    }
    for (i, arg) in svc.args.iter().enumerate() {
        if let Some(flag) = flags::flag_name(arg).filter(|f| flags::RESERVED.contains(f)) {
            errors.push(
                format!("{path}.args[{i}]"),
                format!("{flag} is injected by the operator; remove it (see the injected-flag table in the README)"),
            );
        }
    }
    let resources = svc.resources.clone().unwrap_or_default();
    for (field, quantity) in [
        ("cpu", &resources.cpu),
        ("memory", &resources.memory),
        ("sharedMemory", &resources.shared_memory),
    ] {
        if let Some(q) = quantity {
            check_quantity(errors, &format!("{path}.resources.{field}"), q);
        }
    }
    Pod {
        service: service.to_string(),
        image,
        replicas,
        args: svc.args.clone(),
        env: svc.env.clone(),
        node_selector: svc.node_selector.clone(),
        tolerations: svc.tolerations.clone(),
        cpu: resources.cpu,
        memory: resources.memory,
    }
}

fn check_server(errors: &mut Errors, path: &str, svc: &ServiceSpec) {
    if svc.role.is_some() {
        errors.push(
            format!("{path}.role"),
            "only workers have a role; remove it from the server",
        );
    }
    if svc
        .resources
        .as_ref()
        .and_then(|r| r.gpu)
        .is_some_and(|gpu| gpu != 0)
    {
        errors.push(
            format!("{path}.resources.gpu"),
            "the server runs no model and gets no GPU; remove resources.gpu",
        );
    }
    if svc.number_of_nodes.is_some_and(|n| n != 1) {
        errors.push(
            format!("{path}.numberOfNodes"),
            "the server runs on one node; remove numberOfNodes",
        );
    }
}

fn worker(errors: &mut Errors, path: &str, svc: &ServiceSpec, pod: Pod) -> Worker {
    let resources = svc.resources.clone().unwrap_or_default();
    let gpu = resources.gpu.unwrap_or(0);
    if gpu < 1 {
        errors.push(
            format!("{path}.resources.gpu"),
            "a worker needs at least one GPU per pod; set resources.gpu",
        );
    }
    let nodes = svc.number_of_nodes.unwrap_or(1);
    if nodes < 1 {
        errors.push(
            format!("{path}.numberOfNodes"),
            "must be at least 1; set the number of nodes per replica",
        );
    }
    let gpu_type = resources
        .gpu_type
        .clone()
        .unwrap_or_else(|| DEFAULT_GPU_TYPE.into());
    if !is_resource_name(&gpu_type) {
        errors.push(
            format!("{path}.resources.gpuType"),
            "must be an extended resource name such as amd.com/gpu; fix the name",
        );
    }
    if gpu >= 1 && nodes >= 1 {
        check_parallelism(errors, path, &svc.args, gpu * nodes);
    }
    Worker {
        pod,
        role: svc.role.unwrap_or_default(),
        nodes,
        gpu,
        gpu_type,
        shared_memory: resources.shared_memory,
    }
}

/// Tensor × pipeline parallelism must use exactly the GPUs of one replica.
fn check_parallelism(errors: &mut Errors, path: &str, args: &[String], gpus: i32) {
    let mut product: i64 = 1;
    let mut named = Vec::new();
    for group in [&flags::TENSOR_PARALLEL[..], &flags::PIPELINE_PARALLEL[..]] {
        let Some((i, flag, value)) = find_flag(args, group) else {
            continue;
        };
        match value
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|v| *v >= 1)
        {
            Some(v) => {
                product = product.saturating_mul(v);
                named.push(format!("{flag} {v}"));
            }
            None => errors.push(
                format!("{path}.args[{i}]"),
                format!("{flag} needs a positive integer value; fix it"),
            ),
        }
    }
    if !named.is_empty() && product != i64::from(gpus) {
        errors.push(
            format!("{path}.args"),
            format!(
                "{} uses {product} GPUs but resources.gpu × numberOfNodes is {gpus}; make the parallelism flags multiply to {gpus} or change resources.gpu / numberOfNodes",
                named.join(" × ")
            ),
        );
    }
}

/// Position, spelling and value of the first flag of `names` in `args` (`--tp 2` or `--tp=2`).
fn find_flag<'a>(args: &'a [String], names: &[&str]) -> Option<(usize, &'a str, Option<&'a str>)> {
    args.iter()
        .enumerate()
        .find_map(|(i, arg)| match arg.split_once('=') {
            Some((flag, value)) if names.contains(&flag) => Some((i, flag, Some(value))),
            None if names.contains(&arg.as_str()) => {
                Some((i, arg.as_str(), args.get(i + 1).map(String::as_str)))
            }
            _ => None,
        })
}

fn check_quantity(errors: &mut Errors, path: &str, quantity: &Quantity) {
    if !is_quantity(&quantity.0) {
        errors.push(
            path,
            format!(
                "{:?} is not a size; write a non-negative quantity like 64Gi or 500m",
                quantity.0
            ),
        );
    }
}

/// Kubernetes quantity syntax for a size: a non-negative decimal number with an optional binary,
/// decimal or exponent suffix.
pub fn is_quantity(s: &str) -> bool {
    let s = s.strip_prefix('+').unwrap_or(s);
    let digits_end = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let number_ok = !number.is_empty() && number != "." && number.matches('.').count() <= 1;
    let suffix_ok = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || suffix
        .strip_prefix(['e', 'E'])
        .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
        .is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()));
    number_ok && suffix_ok
}

fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

/// `prefix/name` extended resource name.
fn is_resource_name(s: &str) -> bool {
    let (prefix, name) = s.split_once('/').unwrap_or(("", s));
    (prefix.is_empty() || is_dns_subdomain(prefix))
        && !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
        && name
            .as_bytes()
            .last()
            .is_some_and(u8::is_ascii_alphanumeric)
}

fn join(names: &[&String]) -> String {
    names
        .iter()
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
