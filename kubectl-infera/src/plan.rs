//! The [`Source::Flags`](crate::spec::Source) source of a spec, which the wizard's answers also
//! go through: spec flags resolved with defaults into a [`Plan`], the plan turned into an
//! InferaDeployment, and back into the equivalent flags-only command line. Pure.

use std::collections::BTreeMap;

use infera_core::validate::ModelSource;
use infera_core::{
    BackendFramework, ComponentType, DiscoveryBackend, HealthSpec, InferaDeployment,
    InferaDeploymentSpec, ModelCache, ModelSpec, NatsSpec, NetworkSpec, RdmaSpec, ResourcesSpec,
    Role, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::{
    cli::{Backend, Discovery, GlobalArgs, SpecFlags, Topology},
    error::{Error, Result},
};

/// Image tag used when `--image` is not given.
pub const DEFAULT_IMAGE_TAG: &str = "v0.1.1";
pub const DEFAULT_GPU_TYPE: &str = "amd.com/gpu";
/// Size of the volume an `--model hf://…` is downloaded to.
pub const DEFAULT_MODEL_CACHE: &str = "100Gi";

/// Every choice, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub name: String,
    pub backend: Backend,
    pub model: String,
    /// What the router loads its tokenizer from: `--tokenizer`, else the model's id.
    pub tokenizer: String,
    pub topology: Topology,
    pub image: String,
    pub server_replicas: i32,
    /// Worker replicas (aggregated, multinode) or prefill replicas (pd).
    pub replicas: i32,
    pub decode_replicas: i32,
    pub gpus: i32,
    pub gpu_type: String,
    /// GPU product of the workers; `None`: any.
    pub gpu_product: Option<String>,
    pub nodes: i32,
    pub tp: i32,
    pub transfer_backend: Option<String>,
    pub ib_device: Option<String>,
    /// `spec.network.rdma.resourceName`; `None`: no RDMA.
    pub rdma_resource: Option<String>,
    /// `spec.network.rdma.networks`.
    pub rdma_networks: Vec<String>,
    pub router_policy: String,
    pub nats: bool,
    pub nats_storage: Option<String>,
    pub discovery: Discovery,
    pub etcd_endpoint: Option<String>,
    /// Memory per worker pod.
    pub memory: String,
    /// Size of `/dev/shm` per worker pod.
    pub shared_memory: String,
    /// `health.startupTimeout` of the workers; `None`: the engine contract's default.
    pub startup_timeout: Option<String>,
}

/// Default memory of a worker pod per GPU: the seed example's 64Gi for one GPU.
pub const MEMORY_GIB_PER_GPU: i32 = 64;
/// Default `/dev/shm` per GPU: half the memory, as in the seed example (32Gi of 64Gi). The volume is
/// memory-backed and counts against the pod's memory, so it must stay below it.
pub const SHARED_MEMORY_GIB_PER_GPU: i32 = 32;

/// Default memory of a worker pod with `gpus` GPUs.
pub fn default_memory(gpus: i32) -> String {
    format!("{}Gi", MEMORY_GIB_PER_GPU.saturating_mul(gpus.max(1)))
}

/// Default `/dev/shm` of a worker pod with `gpus` GPUs.
pub fn default_shared_memory(gpus: i32) -> String {
    format!(
        "{}Gi",
        SHARED_MEMORY_GIB_PER_GPU.saturating_mul(gpus.max(1))
    )
}

/// The flags a non-interactive `deploy` cannot do without.
pub fn missing(flags: &SpecFlags) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if flags.name.is_none() {
        missing.push("--name");
    }
    if flags.backend.is_none() {
        missing.push("--backend sglang|vllm");
    }
    if flags.model.is_none() {
        missing.push("--model");
    }
    if flags.tokenizer.is_none()
        && flags
            .model
            .as_deref()
            .is_some_and(|model| model_tokenizer(model).is_none())
    {
        missing.push("--tokenizer (the router cannot read a pvc:// or hostPath:// model)");
    }
    if flags.discovery == Some(Discovery::Etcd) && flags.etcd_endpoint.is_none() {
        missing.push("--etcd-endpoint (with --discovery etcd)");
    }
    if !flags.rdma_networks.is_empty() && flags.rdma_resource.is_none() {
        missing.push("--rdma-resource (with --rdma-network)");
    }
    missing
}

/// The tokenizer a model brings: an `hf://` source's repository, or `--model` as given when it is
/// no volume; `None` for a volume (`pvc://`, `hostPath://`), which the server does not mount.
pub fn model_tokenizer(model: &str) -> Option<String> {
    match infera_core::validate::parse_source(model) {
        Some(ModelSource::HuggingFace { repo, .. }) => Some(repo),
        Some(_) => None,
        None => Some(model.to_string()),
    }
}

/// Resolves flags that must say enough (the flags source, or the wizard's completed answers):
/// missing flags are a usage error.
pub fn resolve(flags: &SpecFlags) -> Result<Plan> {
    Plan::from_flags(flags)
        .map_err(|missing| Error::Usage(format!("missing {}", missing.join(", "))))
}

pub fn default_image(backend: Backend) -> String {
    format!("rocm/infera:{}-{DEFAULT_IMAGE_TAG}", backend_name(backend))
}

pub fn backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::Sglang => "sglang",
        Backend::Vllm => "vllm",
    }
}

fn topology_name(topology: Topology) -> &'static str {
    match topology {
        Topology::Aggregated => "aggregated",
        Topology::Pd => "pd",
        Topology::Multinode => "multinode",
    }
}

impl Plan {
    /// Resolves flags with defaults. `Err` lists the missing flags.
    pub fn from_flags(flags: &SpecFlags) -> std::result::Result<Self, Vec<&'static str>> {
        let missing = missing(flags);
        let (Some(name), Some(backend), Some(model)) = (&flags.name, flags.backend, &flags.model)
        else {
            return Err(missing);
        };
        let Some(tokenizer) = flags.tokenizer.clone().or_else(|| model_tokenizer(model)) else {
            return Err(missing);
        };
        if !missing.is_empty() {
            return Err(missing);
        }
        let topology = flags.topology.unwrap_or(Topology::Aggregated);
        let gpus = flags.gpus.unwrap_or(1);
        let nodes = if topology == Topology::Multinode {
            flags.nodes.unwrap_or(2)
        } else {
            1
        };
        let router_default = if topology == Topology::Pd {
            "kv-aware"
        } else {
            "round-robin"
        };
        Ok(Self {
            name: name.clone(),
            backend,
            model: model.clone(),
            tokenizer,
            topology,
            image: flags
                .image
                .clone()
                .unwrap_or_else(|| default_image(backend)),
            server_replicas: flags.server_replicas.unwrap_or(1),
            replicas: if topology == Topology::Pd {
                flags.prefill_replicas
            } else {
                flags.replicas
            }
            .unwrap_or(1),
            decode_replicas: if topology == Topology::Pd {
                flags.decode_replicas.unwrap_or(1)
            } else {
                0
            },
            gpus,
            gpu_type: flags
                .gpu_type
                .clone()
                .unwrap_or_else(|| DEFAULT_GPU_TYPE.into()),
            gpu_product: flags.gpu_product.clone(),
            nodes,
            tp: flags.tp.unwrap_or(gpus),
            transfer_backend: flags.transfer_backend.clone(),
            ib_device: flags.ib_device.clone(),
            rdma_resource: flags.rdma_resource.clone(),
            rdma_networks: flags.rdma_networks.clone(),
            router_policy: flags
                .router_policy
                .clone()
                .unwrap_or_else(|| router_default.into()),
            nats: flags.nats.unwrap_or(true),
            nats_storage: flags.nats_storage.clone(),
            discovery: flags.discovery.unwrap_or(Discovery::Kubernetes),
            etcd_endpoint: flags.etcd_endpoint.clone(),
            memory: flags.memory.clone().unwrap_or_else(|| default_memory(gpus)),
            shared_memory: flags
                .shared_memory
                .clone()
                .unwrap_or_else(|| default_shared_memory(gpus)),
            startup_timeout: flags.startup_timeout.clone(),
        })
    }

    /// `spec.model` when `--model` names a volume source (`hf://`, `pvc://`, `hostPath://`)
    /// rather than an id the engine resolves itself.
    fn model_spec(&self) -> Option<ModelSpec> {
        let source = infera_core::validate::parse_source(&self.model)?;
        let hf = matches!(source, ModelSource::HuggingFace { .. });
        Some(ModelSpec {
            source: self.model.clone(),
            cache: hf.then(|| ModelCache {
                size: Quantity(DEFAULT_MODEL_CACHE.into()),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// Engine arguments of a worker pool.
    fn worker_args(&self) -> Vec<String> {
        let sglang = self.backend == Backend::Sglang;
        let mut args = Vec::new();
        if self.model_spec().is_none() {
            args.extend([
                if sglang { "--model-path" } else { "--model" }.to_string(),
                self.model.clone(),
            ]);
        }
        args.push(
            if sglang {
                "--tp-size"
            } else {
                "--tensor-parallel-size"
            }
            .into(),
        );
        args.push(self.tp.to_string());
        let total = self.gpus * self.nodes;
        if self.tp > 0 && total != self.tp {
            // Pipeline parallelism covers the rest; validation reports sizes that do not divide.
            args.push(
                if sglang {
                    "--pp-size"
                } else {
                    "--pipeline-parallel-size"
                }
                .into(),
            );
            args.push((total / self.tp).max(1).to_string());
        }
        if sglang && self.nats {
            args.push("--enable-kv-events".into());
        }
        if self.topology == Topology::Pd && sglang {
            if let Some(backend) = &self.transfer_backend {
                args.extend(["--disaggregation-transfer-backend".into(), backend.clone()]);
            }
            // With RDMA the device is spec.network.rdma.device, which injects the flag.
            if let Some(device) = self
                .ib_device
                .as_ref()
                .filter(|_| self.rdma_resource.is_none())
            {
                args.extend(["--disaggregation-ib-device".into(), device.clone()]);
            }
        }
        args
    }

    /// The worker args of a pool of `role`: on vLLM a prefill or decode pool's role is the
    /// `kv_role` of its `--kv-transfer-config` (infera-core validation requires it), with the
    /// connector of the chosen transfer backend (MoRI-IO by default).
    fn role_args(&self, role: Option<Role>) -> Vec<String> {
        let mut args = self.worker_args();
        let kv_role = match role {
            Some(Role::Prefill) => "kv_producer",
            Some(Role::Decode) => "kv_consumer",
            _ => return args,
        };
        if self.backend == Backend::Vllm {
            let connector = match self.transfer_backend.as_deref() {
                Some("mooncake") => "MooncakeConnector",
                Some("nixl") => "NixlConnector",
                _ => "MoRIIOConnector",
            };
            args.extend([
                "--kv-transfer-config".into(),
                format!(r#"{{"kv_connector":"{connector}","kv_role":"{kv_role}"}}"#),
            ]);
        }
        args
    }

    fn worker(&self, role: Option<Role>, replicas: i32) -> ServiceSpec {
        ServiceSpec {
            component_type: ComponentType::Worker,
            role,
            replicas: Some(replicas),
            autoscaling: None,
            number_of_nodes: (self.nodes > 1).then_some(self.nodes),
            resources: Some(Box::new(ResourcesSpec {
                gpu: Some(self.gpus),
                gpu_type: (self.gpu_type != DEFAULT_GPU_TYPE).then(|| self.gpu_type.clone()),
                gpu_product: self.gpu_product.clone(),
                cpu: None,
                memory: Some(Quantity(self.memory.clone())),
                shared_memory: Some(Quantity(self.shared_memory.clone())),
            })),
            args: self.role_args(role),
            command: None,
            image: None,
            env: Vec::new(),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            health: self.startup_timeout.as_ref().map(|timeout| {
                Box::new(HealthSpec {
                    startup_timeout: Some(timeout.clone()),
                    ..Default::default()
                })
            }),
            pod_template: None,
            network: None,
            model: None,
            rollout: None,
            port: None,
            skip_readiness_probe: false,
            pod_labels: BTreeMap::new(),
            extra_pod_spec: None,
        }
    }

    /// The InferaDeployment these choices describe.
    pub fn to_deployment(&self, namespace: Option<&str>) -> InferaDeployment {
        // Upstream's router does not start without a tokenizer, whatever its policy
        // (infera/server/args.py: --router-tokenizer-path is required).
        let server_args = vec![
            "--router-policy".to_string(),
            self.router_policy.clone(),
            "--router-tokenizer-path".into(),
            self.tokenizer.clone(),
        ];
        let server = ServiceSpec {
            component_type: ComponentType::Server,
            role: None,
            replicas: Some(self.server_replicas),
            autoscaling: None,
            number_of_nodes: None,
            resources: None,
            args: server_args,
            command: None,
            image: None,
            env: Vec::new(),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            health: None,
            pod_template: None,
            network: None,
            model: None,
            rollout: None,
            port: None,
            skip_readiness_probe: false,
            pod_labels: BTreeMap::new(),
            extra_pod_spec: None,
        };
        let mut services = BTreeMap::from([("server".to_string(), server)]);
        match self.topology {
            Topology::Aggregated | Topology::Multinode => {
                services.insert("worker".into(), self.worker(None, self.replicas));
            }
            Topology::Pd => {
                services.insert(
                    "prefill".into(),
                    self.worker(Some(Role::Prefill), self.replicas),
                );
                services.insert(
                    "decode".into(),
                    self.worker(Some(Role::Decode), self.decode_replicas),
                );
            }
        }
        let spec = InferaDeploymentSpec {
            rollout: None,
            revision_history_limit: None,
            backend_framework: match self.backend {
                Backend::Sglang => BackendFramework::Sglang,
                Backend::Vllm => BackendFramework::Vllm,
            },
            image: Some(self.image.clone()),
            discovery_backend: Some(match self.discovery {
                Discovery::Kubernetes => DiscoveryBackend::Kubernetes,
                Discovery::Etcd => DiscoveryBackend::Etcd,
            }),
            etcd_endpoint: self.etcd_endpoint.clone(),
            // Written out either way: an omitted `nats` is a managed NATS, as upstream's.
            nats: Some(NatsSpec {
                deploy: Some(self.nats),
                storage_size: self
                    .nats_storage
                    .as_ref()
                    .filter(|_| self.nats)
                    .map(|s| Quantity(s.clone())),
                ..Default::default()
            }),
            envs: Vec::new(),
            gaie: None,
            network_policy: None,
            monitoring: None,
            planner: None,
            image_policy: None,
            pod_template: None,
            model: self.model_spec(),
            network: self.rdma_resource.as_ref().map(|resource| NetworkSpec {
                rdma: Some(RdmaSpec {
                    resource_name: resource.clone(),
                    per_pod: None,
                    networks: self.rdma_networks.clone(),
                    device: self
                        .ib_device
                        .clone()
                        .filter(|_| self.backend == Backend::Sglang),
                    ipc_lock: None,
                }),
            }),
            services: services
                .into_iter()
                .map(|(name, svc)| (name, Box::new(svc)))
                .collect(),
        };
        let mut idep = InferaDeployment::new(&self.name, spec);
        idep.metadata.namespace = namespace.map(String::from);
        idep
    }
}

mod command_line;
#[cfg(test)]
mod tests;
