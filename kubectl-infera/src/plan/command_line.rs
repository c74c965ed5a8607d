//! The flags-only `kubectl infera deploy` command line equivalent to a plan, which the wizard
//! prints so the same deployment can be repeated without it.

use super::*;

impl Plan {
    /// The equivalent flags-only command line, deploying where this one does: the kubeconfig
    /// flags given in `global` and `-n namespace` (the namespace the wizard confirmed, or `-n`).
    pub fn command_line(&self, global: &GlobalArgs, namespace: Option<&str>) -> String {
        let mut parts: Vec<String> = vec!["kubectl infera deploy".into()];
        let mut flag = |name: &str, value: &str| parts.push(format!("{name} {}", quote(value)));
        let kubeconfig = global.kubeconfig.as_ref().map(|p| p.display().to_string());
        for (name, value) in [
            ("--kubeconfig", kubeconfig.as_deref()),
            ("--context", global.context.as_deref()),
            ("--cluster", global.cluster.as_deref()),
            ("--user", global.user.as_deref()),
            ("-n", namespace),
        ] {
            if let Some(value) = value {
                flag(name, value);
            }
        }
        flag("--name", &self.name);
        flag("--backend", backend_name(self.backend));
        flag("--model", &self.model);
        if model_tokenizer(&self.model).as_ref() != Some(&self.tokenizer) {
            flag("--tokenizer", &self.tokenizer);
        }
        flag("--topology", topology_name(self.topology));
        if self.image != default_image(self.backend) {
            flag("--image", &self.image);
        }
        if self.server_replicas != 1 {
            flag("--server-replicas", &self.server_replicas.to_string());
        }
        if self.topology == Topology::Pd {
            flag("--prefill-replicas", &self.replicas.to_string());
            flag("--decode-replicas", &self.decode_replicas.to_string());
        } else {
            flag("--replicas", &self.replicas.to_string());
        }
        flag("--gpus", &self.gpus.to_string());
        if self.gpu_type != DEFAULT_GPU_TYPE {
            flag("--gpu-type", &self.gpu_type);
        }
        if let Some(product) = &self.gpu_product {
            flag("--gpu-product", product);
        }
        if self.topology == Topology::Multinode {
            flag("--nodes", &self.nodes.to_string());
        }
        flag("--tp", &self.tp.to_string());
        for (name, value) in [
            ("--transfer-backend", &self.transfer_backend),
            ("--ib-device", &self.ib_device),
            ("--rdma-resource", &self.rdma_resource),
        ] {
            if let Some(value) = value {
                flag(name, value);
            }
        }
        for network in &self.rdma_networks {
            flag("--rdma-network", network);
        }
        flag("--router-policy", &self.router_policy);
        flag("--nats", if self.nats { "true" } else { "false" });
        if self.memory != default_memory(self.gpus) {
            flag("--memory", &self.memory);
        }
        if self.shared_memory != default_shared_memory(self.gpus) {
            flag("--shared-memory", &self.shared_memory);
        }
        for (name, value) in [
            ("--nats-storage", &self.nats_storage),
            ("--startup-timeout", &self.startup_timeout),
        ] {
            if let Some(value) = value {
                flag(name, value);
            }
        }
        if self.discovery == Discovery::Etcd {
            flag("--discovery", "etcd");
            if let Some(endpoint) = &self.etcd_endpoint {
                flag("--etcd-endpoint", endpoint);
            }
        }
        parts.join(" \\\n    ")
    }
}

/// A value as one shell word: single-quoted when the shell would otherwise split or expand it.
fn quote(value: &str) -> String {
    if value.is_empty()
        || value.contains(|c: char| c.is_whitespace() || "'\"$\\<>|&;*?".contains(c))
    {
        format!("'{}'", value.replace('\'', r"'\''"))
    } else {
        value.to_string()
    }
}
