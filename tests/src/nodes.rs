//! Extra fake nodes managed by kwok (tier 2), for tests that must not share capacity.

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus, Taint};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::eventually;

/// Taint key on nodes made by [`FakeNode::create`]; its value is the node's name. Only pods that
/// tolerate it (see [`FakeNode::toleration`]) are scheduled there, so other tests never use up
/// its capacity.
pub const DEDICATED_TAINT: &str = "infera.test/dedicated";

/// A kwok-managed node with `gpus` × `amd.com/gpu`, created Ready and deleted by
/// [`FakeNode::delete`] or, best-effort, on drop.
pub struct FakeNode {
    name: String,
    deleted: bool,
}

impl FakeNode {
    /// Creates node `<prefix>-<unique suffix>` (tainted `infera.test/dedicated=<name>:NoSchedule`,
    /// label `kubernetes.io/hostname=<name>`) and waits until kwok reports it Ready.
    pub async fn create(admin: &Client, prefix: &str, gpus: u32) -> anyhow::Result<Self> {
        Self::create_with(admin, prefix, gpus, &[], &[]).await
    }

    /// [`FakeNode::create`] with extra `labels` (e.g. AMD's `amd.com/gpu.product-name`) and
    /// extra allocatable `resources` (e.g. an RDMA device plugin's `rdma/hca`).
    pub async fn create_with(
        admin: &Client,
        prefix: &str,
        gpus: u32,
        labels: &[(&str, &str)],
        resources: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let name = format!("{prefix}-{}", crate::unique_suffix());
        let gpus = gpus.to_string();
        let resources: std::collections::BTreeMap<String, Quantity> = [
            ("cpu", "32"),
            ("memory", "256Gi"),
            ("pods", "110"),
            ("amd.com/gpu", gpus.as_str()),
        ]
        .iter()
        .chain(resources)
        .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
        .collect();
        let node = Node {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                annotations: Some([("kwok.x-k8s.io/node".to_owned(), "fake".to_owned())].into()),
                labels: Some(
                    [
                        ("kubernetes.io/hostname", name.as_str()),
                        ("kubernetes.io/os", "linux"),
                        ("kubernetes.io/arch", "amd64"),
                        ("type", "kwok"),
                        ("infera.test/dedicated", name.as_str()),
                    ]
                    .iter()
                    .chain(labels)
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                ),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                provider_id: Some(format!("kwok://{name}")),
                taints: Some(vec![Taint {
                    key: DEDICATED_TAINT.to_owned(),
                    value: Some(name.clone()),
                    effect: "NoSchedule".to_owned(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                allocatable: Some(resources.clone()),
                capacity: Some(resources),
                ..Default::default()
            }),
        };
        let api: Api<Node> = Api::all(admin.clone());
        api.create(&PostParams::default(), &node)
            .await
            .with_context(|| format!("creating node {name}"))?;
        let this = Self {
            name,
            deleted: false,
        };
        eventually(Duration::from_secs(60), || async {
            let n = api.get(&this.name).await?;
            let ready = n
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            anyhow::ensure!(ready, "node {} is not Ready yet", this.name);
            anyhow::Ok(())
        })
        .await?;
        Ok(this)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The toleration a pod needs to run on this node (add a nodeSelector on
    /// `kubernetes.io/hostname` too, to pin it there).
    pub fn toleration(&self) -> k8s_openapi::api::core::v1::Toleration {
        k8s_openapi::api::core::v1::Toleration {
            key: Some(DEDICATED_TAINT.to_owned()),
            operator: Some("Equal".to_owned()),
            value: Some(self.name.clone()),
            effect: Some("NoSchedule".to_owned()),
            ..Default::default()
        }
    }

    /// Deletes the node (pods still bound to it are garbage-collected by kube-controller-manager).
    pub async fn delete(mut self, admin: &Client) -> anyhow::Result<()> {
        self.deleted = true;
        let api: Api<Node> = Api::all(admin.clone());
        match api.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e).with_context(|| format!("deleting node {}", self.name)),
        }
    }
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        if self.deleted {
            return;
        }
        crate::clients::delete_from_drop::<Node>(self.name.clone());
    }
}
