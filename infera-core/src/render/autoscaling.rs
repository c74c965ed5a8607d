//! The autoscaler of a service with `autoscaling`: a HorizontalPodAutoscaler, or a KEDA
//! ScaledObject, which KEDA turns into a HorizontalPodAutoscaler named `keda-hpa-<name>` that it
//! owns (kedacore/keda v2.20.2, `controllers/keda/hpa.go`, `getDefaultHpaName`).
//!
//! It targets the service's workload through its scale subresource. A Deployment's counts pods.
//! A LeaderWorkerSet's counts groups: its CRD declares
//! `+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.hpaPodSelector`
//! (lws v0.9.0, `api/leaderworkerset/v1/leaderworkerset_types.go`), and the controller sets
//! `status.hpaPodSelector` to the set's name plus `worker-index=0`, the leaders only
//! (`pkg/controllers/leaderworkerset_controller.go`, `updateConditions`). So the HPA averages
//! its metrics over one pod per group and its replica math is per group, like `replicas`.
//! KEDA scales any target that has the scale subresource, custom resources included: it reads the
//! target's `/scale` and refuses one without it (`controllers/keda/scaledobject_controller.go`,
//! `checkTargetResourceIsScalable`), so a LeaderWorkerSet is scaled per group through KEDA too.

use k8s_openapi::{
    api::autoscaling::v2::{
        CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::Resource;

use super::{Child, Context, meta::object_meta};
use crate::{
    external::{
        lws::LeaderWorkerSet,
        scaled_object::{
            ScaledObject, ScaledObjectScaleTargetRef, ScaledObjectSpec, ScaledObjectTriggers,
            ScaledObjectTriggersAuthenticationRef, ScaledObjectTriggersAuthenticationRefKind,
        },
    },
    naming::Component,
    types::{KedaAuthenticationKind, KedaMetricType, KedaTrigger},
    validate::{Autoscaling, Pod, Scaler},
};

/// KEDA's admission webhook refuses a ScaledObject whose target an HPA it does not own already
/// scales, unless that HPA carries this annotation set to `"false"` (kedacore/keda v2.20.2,
/// `apis/keda/v1alpha1/scaledobject_webhook.go`, `verifyHpas`, and `scaledobject_types.go`,
/// `ValidationsHpaOwnershipAnnotation`). Our HPAs carry it: when a pool moves from `provider:
/// hpa` to `keda`, the apply that creates the ScaledObject also deletes the HPA, and a refused
/// ScaledObject would stop both.
const KEDA_HPA_OWNERSHIP_CHECK: &str = "validations.keda.sh/hpa-ownership";

/// The autoscaler of the service whose pods are `pod`, for its workload `component` (a
/// LeaderWorkerSet with `lws`); none without `autoscaling`. It takes the workload's name.
pub fn autoscaler(
    cx: &Context<'_>,
    component: Component<'_>,
    pod: &Pod,
    lws: bool,
) -> Option<Child> {
    let Autoscaling {
        min_replicas,
        max_replicas,
        scaler,
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
    let metadata = object_meta(d, component, name.clone());
    Some(match scaler {
        Scaler::Hpa(metrics) => Child::HorizontalPodAutoscaler(HorizontalPodAutoscaler {
            metadata: ObjectMeta {
                annotations: Some(
                    [(KEDA_HPA_OWNERSHIP_CHECK.to_string(), "false".to_string())].into(),
                ),
                ..metadata
            },
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
        }),
        Scaler::Keda(triggers) => Child::ScaledObject(ScaledObject {
            metadata,
            spec: ScaledObjectSpec {
                scale_target_ref: ScaledObjectScaleTargetRef {
                    api_version: Some(api_version.into_owned()),
                    kind: Some(kind.into_owned()),
                    name,
                    env_source_container_name: None,
                },
                min_replica_count: Some(*min_replicas),
                max_replica_count: Some(*max_replicas),
                triggers: triggers.iter().map(trigger).collect(),
                ..Default::default()
            },
            status: None,
        }),
    })
}

/// A trigger as the ScaledObject takes it.
fn trigger(trigger: &KedaTrigger) -> ScaledObjectTriggers {
    ScaledObjectTriggers {
        r#type: trigger.scaler.clone(),
        name: trigger.name.clone(),
        metadata: trigger.metadata.clone(),
        metric_type: trigger.metric_type.map(|metric_type| {
            match metric_type {
                KedaMetricType::AverageValue => "AverageValue",
                KedaMetricType::Value => "Value",
                KedaMetricType::Utilization => "Utilization",
            }
            .to_string()
        }),
        authentication_ref: trigger.authentication_ref.as_ref().map(|reference| {
            ScaledObjectTriggersAuthenticationRef {
                name: reference.name.clone(),
                kind: reference.kind.map(|kind| match kind {
                    KedaAuthenticationKind::TriggerAuthentication => {
                        ScaledObjectTriggersAuthenticationRefKind::TriggerAuthentication
                    }
                    KedaAuthenticationKind::ClusterTriggerAuthentication => {
                        ScaledObjectTriggersAuthenticationRefKind::ClusterTriggerAuthentication
                    }
                }),
            }
        }),
        use_cached_metrics: trigger.use_cached_metrics,
    }
}
