use std::sync::Arc;

use infera_core::{ModelStatus, naming::LABEL_SERVICE};
use k8s_openapi::{
    api::core::v1::{Pod, PodCondition, PodStatus},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
    jiff::Timestamp,
};
use kube::api::ApiResource;
use serde_json::json;

use super::*;
use kube::api::DynamicObject;

fn now() -> Time {
    Time(Timestamp::UNIX_EPOCH)
}

fn deployment(service: &str, desired: i64, ready: i64) -> ((ChildKind, String), Arc<Live>) {
    deployment_with_status(
        service,
        desired,
        json!({"observedGeneration": 1, "readyReplicas": ready}),
    )
}

fn deployment_with_status(
    service: &str,
    desired: i64,
    status: serde_json::Value,
) -> ((ChildKind, String), Arc<Live>) {
    let mut object = DynamicObject::new(
        &format!("demo-{service}"),
        &ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
    )
    .data(json!({"spec": {"replicas": desired}, "status": status}));
    object.metadata.generation = Some(1);
    (
        (ChildKind::Deployment, object.name_any()),
        Arc::new(Live::from(object)),
    )
}

fn pod(service: &str, condition: PodCondition) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            labels: Some([(LABEL_SERVICE.to_string(), service.to_string())].into()),
            ..Default::default()
        },
        status: Some(PodStatus {
            conditions: Some(vec![condition]),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The outcome of applying what `snapshot` holds: its Deployments are the rendered workloads.
fn outcome(applied: Applied, snapshot: &Snapshot) -> Outcome {
    let workloads = snapshot
        .children
        .values()
        .map(|object| Workload {
            service: object.name_any().replacen("demo-", "", 1),
            kind: ChildKind::Deployment,
            name: object.name_any(),
            replicas: Some(
                object
                    .state()
                    .and_then(|s| s.replicas)
                    .map_or(1, |r| r as i32),
            ),
            group_size: None,
            revision: None,
        })
        .collect();
    Outcome::Applied {
        applied,
        endpoint: Some("http://demo-server.ns.svc.cluster.local:8000".into()),
        workloads,
        model: None,
        downloads: Vec::new(),
        blocked: Vec::new(),
        deadline_seconds: 600,
    }
}

/// The status of a deployment whose render is what `snapshot` holds, applied cleanly.
fn status_of(snapshot: &Snapshot) -> InferaDeploymentStatus {
    compute(
        Some(1),
        snapshot,
        &outcome(Applied::default(), snapshot),
        &[],
        None,
        now(),
    )
}

/// A pod of `service` the scheduler could not place, with its message.
fn unschedulable_pod(service: &str, message: &str) -> Arc<Pod> {
    let condition = PodCondition {
        type_: "PodScheduled".into(),
        status: "False".into(),
        reason: Some("Unschedulable".into()),
        message: Some(message.into()),
        ..Default::default()
    };
    pod(service, condition)
}

/// Upstream's `status.gaie`: names, the Endpoint Picker's replicas, and ready only once the
/// pool exists and a Gateway accepted the route; nothing without GAIE.
#[test]
fn gaie_status_reports_the_picker_pool_and_route() {
    let idep = |gaie: serde_json::Value| -> InferaDeployment {
        serde_json::from_value(json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "demo", "namespace": "ns"},
            "spec": {"image": "i", "gaie": gaie, "services": {}},
        }))
        .expect("a deployment")
    };
    let gateway = |kind: ChildKind, name: &str, status: serde_json::Value| {
        let object = DynamicObject::new(name, &kind.api_resource())
            .data(json!({"spec": {}, "status": status}));
        ((kind, name.to_string()), Arc::new(Live::from(object)))
    };
    let on = idep(json!({"enabled": true, "gatewayName": "gw", "tokenizerPath": "t"}));
    let accepted = json!({"parents": [{"conditions": [{"type": "Accepted", "status": "True"}]}]});
    let mut snapshot = Snapshot {
        children: [
            deployment("epp", 2, 1),
            gateway(ChildKind::InferencePool, "demo-pool", json!({})),
        ]
        .into(),
        ..Snapshot::default()
    };
    let waiting = gaie(&on, &snapshot).expect("a GAIE status");
    assert_eq!(
        waiting,
        GaieStatus {
            epp_replicas: 2,
            epp_ready_replicas: 1,
            inference_pool_name: Some("demo-pool".into()),
            inference_pool_ready: Some(true),
            http_route_name: Some("demo-route".into()),
            http_route_accepted: Some(false),
            ready: Some(false),
        }
    );
    let (key, route) = gateway(ChildKind::HttpRoute, "demo-route", accepted);
    snapshot.children.insert(key, route);
    assert_eq!(gaie(&on, &snapshot).and_then(|g| g.ready), Some(true));
    for off in [json!(false), serde_json::Value::Null] {
        let off = idep(json!({"enabled": off, "gatewayName": "gw", "tokenizerPath": "t"}));
        assert_eq!(gaie(&off, &snapshot), None);
    }
}

fn ready_condition(status: &InferaDeploymentStatus) -> (&str, &str, &str) {
    let c = &status.conditions[0];
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

#[test]
fn all_replicas_ready_is_ready() {
    let snapshot = Snapshot {
        children: [deployment("server", 2, 2), deployment("decode", 1, 1)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let status = compute(
        Some(3),
        &snapshot,
        &outcome(Applied::default(), &snapshot),
        &[],
        None,
        now(),
    );
    assert_eq!(status.state, Some(State::Ready));
    assert_eq!(status.services_ready.as_deref(), Some("2/2"));
    assert_eq!(
        ready_condition(&status),
        (
            "True",
            "AllReplicasReady",
            "every service has all replicas ready"
        )
    );
    assert_eq!(status.observed_generation, Some(3));
    assert_eq!(
        status.services["server"],
        ServiceStatus {
            kind: "Deployment".into(),
            desired_replicas: 2,
            ready_replicas: 2,
            ready_groups: None,
            updated_replicas: None,
        }
    );
    assert_eq!(
        status.endpoint.as_deref(),
        Some("http://demo-server.ns.svc.cluster.local:8000")
    );
}

#[test]
fn a_rendered_pool_that_does_not_exist_is_not_ready() {
    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("decode", 1, 1)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let Outcome::Applied {
        applied,
        endpoint,
        mut workloads,
        ..
    } = outcome(Applied::default(), &snapshot)
    else {
        unreachable!()
    };
    workloads.push(Workload {
        service: "prefill".into(),
        kind: ChildKind::Deployment,
        name: "demo-prefill".into(),
        replicas: Some(1),
        group_size: None,
        revision: None,
    });
    let outcome = Outcome::Applied {
        applied,
        endpoint,
        workloads,
        model: None,
        downloads: Vec::new(),
        blocked: Vec::new(),
        deadline_seconds: 600,
    };
    let status = compute(Some(1), &snapshot, &outcome, &[], None, now());
    assert_eq!(
        ready_condition(&status),
        ("False", "PodsNotReady", "prefill: 0/1 ready")
    );
}

/// A Job of the model download in `status`.
fn download_job(status: serde_json::Value) -> ((ChildKind, String), Arc<Live>) {
    let object = DynamicObject::new(
        "demo-model",
        &ApiResource::erase::<k8s_openapi::api::batch::v1::Job>(&()),
    )
    .data(json!({ "status": status }));
    (
        (ChildKind::Job, "demo-model".into()),
        Arc::new(Live::from(object)),
    )
}

/// The commit a succeeded download pod wrote to its termination message is the resolved
/// revision; without the pod, the one reported before for the same source stays, and a
/// message that is no commit is not taken.
#[test]
fn the_resolved_revision_comes_from_the_download_pods_termination_message() {
    let commit = "c1e7ed4b1f4ea4bd5e1c41f8bb25c8b8d7f0e2a1";
    let pod = |job_uid: &str, exit: i32, message: &str| -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": "demo-model-x", "labels": {"batch.kubernetes.io/controller-uid": job_uid}},
                "status": {"containerStatuses": [{"name": "download", "image": "i", "imageID": "", "ready": false,
                    "restartCount": 0, "state": {"terminated": {"exitCode": exit, "message": message}}}]},
            }))
            .expect("a pod"),
        )
    };
    let resolved = |pods: Vec<Arc<Pod>>| {
        let (key, job) = download_job(json!({"succeeded": 1}));
        let mut job = (*job).clone();
        job.metadata.uid = Some("uid-1".into());
        let snapshot = Snapshot {
            pods,
            children: [(key, Arc::new(job))].into(),
            ..Snapshot::default()
        };
        Download::of(&snapshot, "demo-model", "hf://Qwen/Qwen3-0.6B".into()).resolved_revision
    };
    assert_eq!(
        resolved(vec![pod("uid-1", 0, &format!("{commit}\n"))]).as_deref(),
        Some(commit)
    );
    assert_eq!(resolved(vec![pod("uid-1", 1, commit)]), None);
    assert_eq!(
        resolved(vec![pod("uid-of-a-replaced-job", 0, commit)]),
        None
    );
    assert_eq!(resolved(vec![pod("uid-1", 0, "not a commit")]), None);

    let download = |source: &str, resolved: Option<&str>| Download {
        job: "demo-model".into(),
        source: source.into(),
        resolved_revision: resolved.map(String::from),
    };
    let before = InferaDeploymentStatus {
        models: [(
            "demo-model".to_string(),
            ModelStatus {
                source: "hf://Qwen/Qwen3-0.6B".into(),
                resolved_revision: Some(commit.into()),
            },
        )]
        .into(),
        ..Default::default()
    };
    let kept = models::status(&[download("hf://Qwen/Qwen3-0.6B", None)], Some(&before));
    assert_eq!(kept, before.models);
    let moved = models::status(&[download("hf://Qwen/Qwen3-0.6B@v2", None)], Some(&before));
    assert_eq!(moved["demo-model"].resolved_revision, None);
}

/// The `hf://` download: Downloading while the Job runs (Ready waits with ModelNotReady),
/// DownloadFailed with the Job's reason and message, Downloaded once it succeeded.
#[test]
fn the_model_download_is_a_condition_and_holds_ready() {
    let phase = |job: Option<serde_json::Value>| {
        let mut children: BTreeMap<_, _> = [deployment("decode", 0, 0)].into();
        children.extend(job.map(download_job));
        ModelPhase::of(
            &Snapshot {
                children,
                ..Snapshot::default()
            },
            "demo-model",
            "Qwen/Qwen3-0.6B",
            "hf://Qwen/Qwen3-0.6B",
        )
    };
    assert_eq!(
        phase(None),
        ModelPhase::Downloading(
            "downloading Qwen/Qwen3-0.6B: Job demo-model is being created".into()
        )
    );
    let running = phase(Some(json!({"active": 1})));
    assert_eq!(
        running,
        ModelPhase::Downloading("downloading Qwen/Qwen3-0.6B: Job demo-model has 1 pod(s) running, 0 failed; the GPU pools start when it succeeds".into())
    );
    let failed = phase(Some(
        json!({"failed": 7, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}),
    ));
    assert_eq!(
        failed,
        ModelPhase::Failed("downloading Qwen/Qwen3-0.6B failed: Job demo-model: BackoffLimitExceeded: Job has reached the specified backoff limit".into())
    );
    assert_eq!(phase(Some(json!({"succeeded": 1}))), ModelPhase::Downloaded);

    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("decode", 0, 0)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let with = |model: ModelPhase| {
        let Outcome::Applied {
            applied,
            endpoint,
            workloads,
            ..
        } = outcome(Applied::default(), &snapshot)
        else {
            unreachable!()
        };
        let outcome = Outcome::Applied {
            applied,
            endpoint,
            workloads,
            model: Some(model),
            downloads: Vec::new(),
            blocked: Vec::new(),
            deadline_seconds: 600,
        };
        let status = compute(Some(1), &snapshot, &outcome, &[], None, now());
        let model = &status.conditions[2];
        (
            status.state,
            ready_condition(&status).1.to_string(),
            (
                model.type_.clone(),
                model.status.clone(),
                model.reason.clone(),
            ),
        )
    };
    let row = |status: &str, reason: &str| {
        (
            "ModelReady".to_string(),
            status.to_string(),
            reason.to_string(),
        )
    };
    assert_eq!(
        with(running),
        (
            Some(State::Pending),
            "ModelNotReady".into(),
            row("False", "Downloading")
        )
    );
    assert_eq!(
        with(failed),
        (
            Some(State::Pending),
            "ModelNotReady".into(),
            row("False", "DownloadFailed")
        )
    );
    assert_eq!(
        with(ModelPhase::Downloaded),
        (
            Some(State::Ready),
            "AllReplicasReady".into(),
            row("True", "Downloaded")
        )
    );
}

#[test]
fn an_autoscaled_pool_wants_what_its_live_workload_says() {
    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("decode", 3, 2)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let Outcome::Applied {
        applied,
        endpoint,
        mut workloads,
        ..
    } = outcome(Applied::default(), &snapshot)
    else {
        unreachable!()
    };
    for workload in &mut workloads {
        workload.replicas = None;
    }
    workloads.push(Workload {
        service: "prefill".into(),
        kind: ChildKind::Deployment,
        name: "demo-prefill".into(),
        replicas: None,
        group_size: None,
        revision: None,
    });
    let outcome = Outcome::Applied {
        applied,
        endpoint,
        workloads,
        model: None,
        downloads: Vec::new(),
        blocked: Vec::new(),
        deadline_seconds: 600,
    };
    let status = compute(Some(1), &snapshot, &outcome, &[], None, now());
    let desired = |service: &str| status.services[service].desired_replicas;
    assert_eq!((desired("server"), desired("decode")), (1, 3));
    assert_eq!(
        desired("prefill"),
        1,
        "not created yet: the API server's default"
    );
    assert_eq!(
        ready_condition(&status),
        (
            "False",
            "PodsNotReady",
            "decode: 2/3 ready, prefill: 0/1 ready"
        )
    );
}

#[test]
fn worker_pools_report_updated_replicas_and_the_rollout() {
    let snapshot = |revisions: &[&str]| Snapshot {
        children: [deployment("server", 1, 1), deployment("decode", 2, 2)].into(),
        pods: revisions
            .iter()
            .map(|revision| {
                let mut pod = Pod::default();
                pod.metadata.labels = Some(
                    [
                        (LABEL_SERVICE.to_string(), "decode".to_string()),
                        (
                            infera_core::naming::LABEL_REVISION.to_string(),
                            revision.to_string(),
                        ),
                    ]
                    .into(),
                );
                pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
                    conditions: Some(vec![k8s_openapi::api::core::v1::PodCondition {
                        type_: "Ready".into(),
                        status: "True".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                });
                Arc::new(pod)
            })
            .collect(),
        ..Snapshot::default()
    };
    let status = |snapshot: &Snapshot, previous: Option<&InferaDeploymentStatus>| {
        let Outcome::Applied {
            applied,
            endpoint,
            mut workloads,
            ..
        } = outcome(Applied::default(), snapshot)
        else {
            unreachable!()
        };
        for workload in workloads.iter_mut().filter(|w| w.service == "decode") {
            workload.revision = Some("new".into());
        }
        let outcome = Outcome::Applied {
            applied,
            endpoint,
            workloads,
            model: None,
            downloads: Vec::new(),
            blocked: Vec::new(),
            deadline_seconds: 600,
        };
        compute(Some(1), snapshot, &outcome, &[], previous, now())
    };
    let progressing = |status: &InferaDeploymentStatus| {
        let c = &status.conditions[2];
        (
            c.type_.clone(),
            c.status.clone(),
            c.reason.clone(),
            c.message.clone(),
        )
    };
    let done = status(&snapshot(&["new", "new"]), None);
    assert_eq!(done.services["decode"].updated_replicas, Some(2));
    assert_eq!(done.services["server"].updated_replicas, None);
    assert_eq!(
        (
            done.current_revision.as_deref(),
            done.update_revision.as_deref()
        ),
        (Some("new"), Some("new"))
    );
    assert_eq!(
        progressing(&done),
        (
            "Progressing".into(),
            "True".into(),
            "RolloutComplete".into(),
            "every worker pool runs revision new".into()
        )
    );
    // Mid-rollout the current revision stays what it was.
    let mut before = done.clone();
    before.current_revision = Some("old".into());
    let rolling = status(&snapshot(&["new", "old"]), Some(&before));
    assert_eq!(rolling.services["decode"].updated_replicas, Some(1));
    assert_eq!(rolling.current_revision.as_deref(), Some("old"));
    assert_eq!(
        progressing(&rolling).2,
        "RollingOut",
        "{:?}",
        progressing(&rolling)
    );
    // The rollout started now (the fixtures' clock), and says when its deadline passes.
    assert_eq!(rolling.rollout_start_time, Some(now()));
    let at = |seconds: i64| Time(Timestamp::from_second(seconds).expect("a time"));
    assert_eq!(
        until_deadline(&rolling, 600, &at(100)),
        Some(std::time::Duration::from_secs(501))
    );
    assert_eq!(done.rollout_start_time, None, "a complete rollout has none");
    // Started 601 s before the clock: past its deadline, reported, still rolling out.
    let mut late = rolling.clone();
    late.rollout_start_time = Some(at(-601));
    let reported = status(&snapshot(&["new", "old"]), Some(&late));
    assert_eq!(
        progressing(&reported),
        (
            "Progressing".into(),
            "False".into(),
            "ProgressDeadlineExceeded".into(),
            "the rollout to revision new has not finished within progressDeadlineSeconds (600s): to revision new: decode 1/2 updated".into()
        )
    );
    assert_eq!(reported.rollout_start_time, Some(at(-601)));
    assert_eq!(until_deadline(&reported, 600, &now()), None);
}

#[test]
fn not_ready_pools_are_listed() {
    let snapshot = Snapshot {
        children: [deployment("server", 2, 1), deployment("decode", 1, 1)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let status = status_of(&snapshot);
    assert_eq!(status.state, Some(State::Deploying));
    assert_eq!(
        ready_condition(&status),
        ("False", "PodsNotReady", "server: 1/2 ready")
    );
    assert_eq!(status.services_ready.as_deref(), Some("1/2"));
}

#[test]
fn a_crash_looping_pod_says_why_its_pool_is_not_ready() {
    let crashing: Pod = serde_json::from_value(json!({
        "metadata": {"name": "demo-decode-x", "labels": {LABEL_SERVICE: "decode"}},
        "status": {"containerStatuses": [{
            "name": "engine", "image": "rocm/infera", "imageID": "", "ready": false,
            "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
        }]},
    }))
    .expect("a pod");
    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("decode", 1, 0)].into(),
        pods: vec![Arc::new(crashing)],
        ..Snapshot::default()
    };
    assert_eq!(
        ready_condition(&status_of(&snapshot)),
        (
            "False",
            "PodsNotReady",
            "decode: 0/1 ready (pod demo-decode-x: container engine CrashLoopBackOff, 7 restarts, last exit 137 (OOMKilled))"
        )
    );
}

#[test]
fn a_serving_pod_the_router_has_not_registered_says_so() {
    let waiting = |registered: &str| -> Arc<Pod> {
        let pod = json!({
            "metadata": {"name": "demo-decode-x", "labels": {LABEL_SERVICE: "decode"}},
            "spec": {"containers": [{"name": "engine"}],
                "readinessGates": [{"conditionType": "infera.amd.com/registered"}]},
            "status": {"conditions": [
                {"type": "ContainersReady", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady"},
                {"type": "infera.amd.com/registered", "status": registered},
            ]},
        });
        Arc::new(serde_json::from_value(pod).expect("a pod"))
    };
    let status = |pod| {
        let snapshot = Snapshot {
            children: [deployment("server", 1, 1), deployment("decode", 1, 0)].into(),
            pods: vec![pod],
            ..Snapshot::default()
        };
        ready_condition(&status_of(&snapshot)).2.to_string()
    };
    assert_eq!(
        status(waiting("False")),
        "decode: 0/1 ready (pod demo-decode-x: its engine serves, not yet registered with the router (no infera.amd.com/worker-info annotation))"
    );
    // Registered and marked, the pod waits for the kubelet to count it: nothing to add.
    assert_eq!(status(waiting("True")), "decode: 0/1 ready");
}

#[test]
fn unschedulable_pods_name_the_pool() {
    let snapshot = Snapshot {
        children: [deployment("decode", 1, 0)].into(),
        pods: vec![unschedulable_pod(
            "decode",
            "0/2 nodes are available: 2 Insufficient amd.com/gpu.",
        )],
        ..Snapshot::default()
    };
    let status = status_of(&snapshot);
    assert_eq!(status.state, Some(State::Pending));
    assert_eq!(
        ready_condition(&status),
        (
            "False",
            "InsufficientCapacity",
            "pool decode: 1 pod unschedulable: 0/2 nodes are available: 2 Insufficient amd.com/gpu."
        )
    );
}

/// Pods the API server refuses are `PodsRefused` (Degraded), from the Deployment's
/// `ReplicaFailure` condition: Pod Security named as such, anything else in its own words.
#[test]
fn refused_pods_are_pods_refused_naming_pod_security() {
    let refusing = |service: &str, message: &str| {
        let condition = json!({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message});
        deployment_with_status(
            service,
            1,
            json!({"observedGeneration": 1, "conditions": [condition]}),
        )
    };
    let snapshot = Snapshot {
        children: [
            refusing("decode", r#"pods "demo-decode-7c9-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true"#),
            refusing("prefill", r#"pods "demo-prefill-5f-y" is forbidden: exceeded quota: q, requested: amd.com/gpu=1"#),
            deployment("server", 1, 1),
        ]
        .into(),
        ..Snapshot::default()
    };
    let status = status_of(&snapshot);
    assert_eq!(status.state, Some(State::Degraded));
    assert_eq!(
        ready_condition(&status),
        (
            "False",
            "PodsRefused",
            "decode: Pod Security refuses its pods: violates PodSecurity \"restricted:latest\": runAsNonRoot != true (the namespace's pod-security.kubernetes.io/enforce label; docs/security.md lists what each pod needs)\nprefill: the API server refuses its pods: pods \"demo-prefill-5f-y\" is forbidden: exceeded quota: q, requested: amd.com/gpu=1"
        )
    );
}

/// A pool that names a GPU product no node has is short of capacity, not misplaced: the
/// product is never substituted.
#[test]
fn a_missing_gpu_product_is_insufficient_capacity_naming_the_product() {
    let message = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    let mut pod = Arc::unwrap_or_clone(unschedulable_pod("decode", message));
    pod.spec = Some(serde_json::from_value(json!({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "amd.com/gpu.product-name", "operator": "In", "values": ["AMD_Instinct_MI355X", "AMD_Instinct_MI355X_OAM"]}]}]}}}})).expect("a pod spec"));
    let snapshot = Snapshot {
        children: [deployment("decode", 1, 0)].into(),
        pods: vec![Arc::new(pod)],
        ..Snapshot::default()
    };
    let status = status_of(&snapshot);
    assert_eq!(status.state, Some(State::Pending));
    let expected = format!(
        "pool decode: 1 pod unschedulable: no node of GPU product MI355X can take it: {message}"
    );
    assert_eq!(
        ready_condition(&status),
        ("False", "InsufficientCapacity", expected.as_str())
    );
}

#[test]
fn an_unbound_claim_is_not_missing_capacity() {
    let message = "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    let snapshot = Snapshot {
        children: [deployment("nats", 1, 0)].into(),
        pods: vec![unschedulable_pod("nats", message)],
        ..Snapshot::default()
    };
    let status = status_of(&snapshot);
    assert_eq!(status.state, Some(State::Pending));
    let expected = format!("pool nats: 1 pod unschedulable (waiting for its volumes): {message}");
    assert_eq!(
        ready_condition(&status),
        ("False", "Unschedulable", expected.as_str())
    );
}

#[test]
fn missing_dependency_outranks_conflicts_and_invalid_outranks_all() {
    let result = outcome(
        Applied {
            missing: vec!["decode: needs LWS".into()],
            conflicts: vec!["x".into()],
            rejected: vec!["y".into()],
            held: Vec::new(),
        },
        &Snapshot::default(),
    );
    let status = compute(Some(1), &Snapshot::default(), &result, &[], None, now());
    assert_eq!(
        (status.state, ready_condition(&status).1),
        (Some(State::Degraded), "MissingDependency")
    );

    let quota = "Deployment demo-decode: exceeded quota: gpus, requested: requests.amd.com/gpu=1";
    let result = outcome(
        Applied {
            rejected: vec![quota.into()],
            ..Applied::default()
        },
        &Snapshot::default(),
    );
    let status = compute(Some(1), &Snapshot::default(), &result, &[], None, now());
    assert_eq!(ready_condition(&status), ("False", "ApplyRejected", quota));

    let invalid = ValidationErrors(vec![infera_core::FieldError {
        path: "spec.services".into(),
        message: "bad; fix".into(),
    }]);
    let status = compute(
        Some(2),
        &Snapshot::default(),
        &Outcome::Invalid(invalid),
        &[],
        None,
        now(),
    );
    assert_eq!(status.state, Some(State::Failed));
    assert_eq!(
        ready_condition(&status),
        ("False", "InvalidSpec", "spec.services: bad; fix")
    );
}

#[test]
fn transition_time_is_kept_while_the_condition_holds() {
    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("w", 1, 1)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let first = status_of(&snapshot);
    let later = Time(Timestamp::from_second(1000).expect("timestamp"));
    let second = compute(
        Some(1),
        &snapshot,
        &outcome(Applied::default(), &snapshot),
        &[],
        Some(&first),
        later,
    );
    assert_eq!(first, second);
}

fn images_condition(status: &InferaDeploymentStatus) -> (&str, &str, &str, &str) {
    let c = &status.conditions[1];
    (
        c.type_.as_str(),
        c.status.as_str(),
        c.reason.as_str(),
        c.message.as_str(),
    )
}

fn mutable() -> Vec<MutableImage> {
    vec![
        MutableImage {
            path: "spec.image".into(),
            image: "rocm/infera:sglang-v0.1.1".into(),
        },
        MutableImage {
            path: "spec.services.decode.image".into(),
            image: "rocm/infera".into(),
        },
    ]
}

#[test]
fn images_pinned_follows_ready_and_lists_mutable_images() {
    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("w", 1, 1)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let result = outcome(Applied::default(), &snapshot);
    let status = compute(Some(2), &snapshot, &result, &mutable(), None, now());
    assert_eq!(status.state, Some(State::Ready));
    assert_eq!(
        ready_condition(&status),
        (
            "True",
            "AllReplicasReady",
            "every service has all replicas ready"
        )
    );
    assert_eq!(
        images_condition(&status),
        (
            "ImagesPinned",
            "False",
            "MutableImages",
            "mutable tags (pods may run different images): spec.image rocm/infera:sglang-v0.1.1, spec.services.decode.image rocm/infera; pin them by digest, or set spec.imagePolicy.requireDigest to require it"
        )
    );
    assert_eq!(status.conditions[1].observed_generation, Some(2));
    assert_eq!(status.conditions.len(), 2);

    let pinned = compute(Some(2), &snapshot, &result, &[], None, now());
    assert_eq!(
        images_condition(&pinned),
        (
            "ImagesPinned",
            "True",
            "AllImagesPinned",
            "every image the spec names is pinned by digest"
        )
    );
}

#[test]
fn images_pinned_keeps_its_transition_time_until_its_status_changes() {
    let snapshot = Snapshot {
        children: [deployment("server", 1, 1), deployment("w", 1, 1)].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let result = outcome(Applied::default(), &snapshot);
    let first = compute(Some(1), &snapshot, &result, &mutable(), None, now());
    let later = Time(Timestamp::from_second(1000).expect("timestamp"));
    // One mutable image fewer: the message changes, the status and its time do not.
    let fewer = compute(
        Some(1),
        &snapshot,
        &result,
        &mutable()[..1],
        Some(&first),
        later.clone(),
    );
    assert_eq!(
        fewer.conditions[1].last_transition_time,
        first.conditions[1].last_transition_time
    );
    assert_ne!(fewer.conditions[1].message, first.conditions[1].message);
    // Pinned: a transition now; Ready, which held, keeps its time.
    let pinned = compute(
        Some(1),
        &snapshot,
        &result,
        &[],
        Some(&fewer),
        later.clone(),
    );
    assert_eq!(pinned.conditions[1].last_transition_time, later);
    assert_eq!(
        pinned.conditions[0].last_transition_time,
        first.conditions[0].last_transition_time
    );
}

#[test]
fn an_invalid_spec_still_reports_its_mutable_images() {
    let invalid = ValidationErrors(vec![infera_core::FieldError {
        path: "spec.image".into(),
        message: "must be pinned by digest; pin it".into(),
    }]);
    let status = compute(
        Some(1),
        &Snapshot::default(),
        &Outcome::Invalid(invalid),
        &mutable()[..1],
        None,
        now(),
    );
    assert_eq!(
        ready_condition(&status),
        (
            "False",
            "InvalidSpec",
            "spec.image: must be pinned by digest; pin it"
        )
    );
    assert_eq!(images_condition(&status).2, "MutableImages");
}

#[test]
fn stale_workload_status_counts_as_not_ready() {
    let (key, object) = deployment("server", 1, 1);
    let mut object = (*object).clone();
    object.metadata.generation = Some(2);
    let snapshot = Snapshot {
        children: [(key, Arc::new(object))].into(),
        pods: vec![],
        ..Snapshot::default()
    };
    let status = status_of(&snapshot);
    assert_eq!(status.services["server"].ready_replicas, 0);
}
fn reconciled_condition(status: &InferaDeploymentStatus) -> Option<(&str, &str, &str, i64)> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == RECONCILED)
        .map(|c| {
            (
                c.status.as_str(),
                c.reason.as_str(),
                c.message.as_str(),
                c.observed_generation.unwrap_or_default(),
            )
        })
}

#[test]
fn a_failed_reconcile_shows_for_its_generation_and_degrades_a_ready_deployment() {
    let snapshot = Snapshot::default();
    let ready = status_of(&snapshot);
    let mut first = ready.clone();
    record_reconcile(&mut first, None, Some(1), &Reconciled::Succeeded, now());
    assert_eq!(
        reconciled_condition(&first),
        Some((
            "True",
            RECONCILE_SUCCEEDED,
            "every step of the last reconcile succeeded",
            1
        ))
    );
    // Generation 4 fails in its history step: said for generation 4, and not Ready any more
    // as a state, while the Ready condition still says what the pods do.
    let message =
        "history: cannot renumber ControllerRevision demo-bb14536a19: ApiError: field is immutable";
    let mut failed = first.clone();
    let later = Time(now().0 + k8s_openapi::jiff::SignedDuration::from_secs(60));
    record_reconcile(
        &mut failed,
        Some(&first),
        Some(4),
        &Reconciled::Failed(message.into()),
        later.clone(),
    );
    assert_eq!(
        reconciled_condition(&failed),
        Some(("False", RECONCILE_FAILED, message, 4))
    );
    assert_eq!(failed.state, Some(State::Degraded));
    assert_eq!(ready_condition(&failed).0, ready_condition(&first).0);
    let transition = |s: &InferaDeploymentStatus| {
        s.conditions
            .iter()
            .find(|c| c.type_ == RECONCILED)
            .map(|c| c.last_transition_time.clone())
    };
    assert_eq!(transition(&failed), Some(later));
    // A retryable failure before it shows keeps the condition as it was.
    let mut retrying = failed.clone();
    record_reconcile(
        &mut retrying,
        Some(&failed),
        Some(5),
        &Reconciled::Retrying,
        now(),
    );
    assert_eq!(retrying, failed);
    // Without a condition before, retrying adds none; an invalid spec stays Failed.
    let mut fresh = ready.clone();
    record_reconcile(&mut fresh, None, Some(1), &Reconciled::Retrying, now());
    assert_eq!(fresh, ready);
    let mut invalid = InferaDeploymentStatus {
        state: Some(State::Failed),
        ..ready
    };
    record_reconcile(
        &mut invalid,
        None,
        Some(1),
        &Reconciled::Failed("apply: x".into()),
        now(),
    );
    assert_eq!(invalid.state, Some(State::Failed));
}
