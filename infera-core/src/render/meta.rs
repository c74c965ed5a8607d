//! Object metadata shared by every child.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{
    naming::{self, Component},
    validate::ValidDeployment,
};

/// Metadata of a child: name, namespace, our labels and the controller reference.
pub fn object_meta(
    deployment: &ValidDeployment,
    component: Component<'_>,
    name: String,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(deployment.namespace.clone()),
        labels: Some(naming::labels(&deployment.name, component)),
        owner_references: deployment.owner.clone().map(|o| vec![o]),
        ..Default::default()
    }
}

/// Metadata of a pod template: labels only.
pub fn pod_meta(deployment: &ValidDeployment, component: Component<'_>) -> ObjectMeta {
    ObjectMeta {
        labels: Some(naming::labels(&deployment.name, component)),
        ..Default::default()
    }
}
