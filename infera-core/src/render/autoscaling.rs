//! The HorizontalPodAutoscaler of a service with `autoscaling`.
//!
//! It targets the service's workload through its scale subresource. A Deployment's counts pods.
//! A LeaderWorkerSet's counts groups: its CRD declares
//! `+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.hpaPodSelector`
//! (lws v0.9.0, `api/leaderworkerset/v1/leaderworkerset_types.go`), and the controller sets
//! `status.hpaPodSelector` to the set's name plus `worker-index=0`, the leaders only
//! (`pkg/controllers/leaderworkerset_controller.go`, `updateConditions`). So the HPA averages
//! its metrics over one pod per group and its replica math is per group, like `replicas`.

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
};
use kube::Resource;

use super::{Child, Context, meta::object_meta};
use crate::{
    external::lws::LeaderWorkerSet,
    naming::Component,
    validate::{Autoscaling, Pod},
};

/// The HPA of the service whose pods are `pod`, for its workload `component`; none without
/// `autoscaling`. The HPA takes the workload's name.
pub fn hpa(cx: &Context<'_>, component: Component<'_>, pod: &Pod, lws: bool) -> Option<Child> {
    let Autoscaling {
        min_replicas,
        max_replicas,
        metrics,
    } = pod.autoscaling.as_ref()?;
    let d = cx.deployment;
    let name = component.object_name(&d.name);
    let (api_version, kind) = if lws {
        (
            LeaderWorkerSet::api_version(&()),
            LeaderWorkerSet::kind(&()),
        )
    } else {
        (
            k8s_openapi::api::apps::v1::Deployment::api_version(&()),
            k8s_openapi::api::apps::v1::Deployment::kind(&()),
        )
    };
    Some(Child::HorizontalPodAutoscaler(HorizontalPodAutoscaler {
        metadata: object_meta(d, component, name.clone()),
        spec: Some(HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some(api_version.into_owned()),
                kind: kind.into_owned(),
                name,
            },
            min_replicas: Some(*min_replicas),
            max_replicas: *max_replicas,
            metrics: Some(metrics.clone()),
            behavior: None,
        }),
        status: None,
    }))
}
