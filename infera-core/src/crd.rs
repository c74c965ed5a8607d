//! The generated CustomResourceDefinition, as committed in `crds/`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::types::InferaDeployment;

/// Annotation with the version of the Infera release that generated an object (CRD, bundle).
pub const VERSION_ANNOTATION: &str = "infera.amd.com/version";
/// This release.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The InferaDeployment CRD, stamped with this release's version.
pub fn crd() -> CustomResourceDefinition {
    let mut crd = InferaDeployment::crd();
    crd.metadata.annotations = Some([(VERSION_ANNOTATION.to_string(), VERSION.to_string())].into());
    crd.metadata.labels = Some(
        [(
            "app.kubernetes.io/part-of".to_string(),
            "infera".to_string(),
        )]
        .into(),
    );
    crd
}

/// The CRD as YAML, exactly as committed in `crds/inferadeployments.infera.amd.com.yaml`.
pub fn crd_yaml() -> Result<String, crate::yaml::YamlError> {
    crate::yaml::to_yaml(&crd())
}
