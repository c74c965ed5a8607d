//! `podTemplate` and `command` on a real cluster: what the operator owns is refused at admission
//! with the field's path and infera-core's wording (and by infera-core the same way), and what a
//! user adds — a model PVC mounted in the engine, labels, an annotation, a command, a node
//! affinity the real scheduler honours, a priority class — reaches the live pods.

use std::time::Duration;

use crate::common::{merge, seed};
use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, apply_yaml, apply_yaml_in,
    kube::{Api, api::ListParams},
    operator::{Operator, install},
    ready,
};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

const READY_TIMEOUT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread")]
async fn owned_fields_in_a_pod_template_are_refused_by_admission_and_by_infera_core()
-> anyhow::Result<()> {
    let admin = admin().await?;
    install(&admin).await?;
    let ns = TestNamespace::new(&admin, "overlay-crd").await?;
    let (api, dry_run) = infera_e2e::admission_dry_run(&admin, ns.name());
    let engine = |entry: Value| json!({"spec": {"containers": [entry]}});
    let on_decode =
        |overlay: Value| json!({"spec": {"services": {"decode": {"podTemplate": overlay}}}});
    // (what, patch of the seed, the path and message admission reports, infera-core's path)
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "the GPU limit",
            on_decode(engine(
                json!({"name": "engine", "resources": {"limits": {"amd.com/gpu": "2"}}}),
            )),
            "spec.services[decode].podTemplate.spec: Invalid value: podTemplate.spec: the GPU resource is the operator's",
            "spec.services.decode.podTemplate.spec",
        ),
        (
            "the GPU in spec.podTemplate",
            json!({"spec": {"podTemplate": {"spec": {"initContainers": [{"name": "warm", "image": "x", "resources": {"requests": {"amd.com/gpu": "1"}}}]}}}}),
            "spec.podTemplate.spec: Invalid value: spec.podTemplate.spec: the GPU resource is the operator's",
            "spec.podTemplate.spec",
        ),
        (
            "an injected flag through the engine's args",
            on_decode(engine(json!({"name": "engine", "args": ["--port", "1"]}))),
            "spec.services[decode].podTemplate.spec.containers: Invalid value: spec.containers: the engine container's image, imagePullPolicy, command, args",
            "spec.services.decode.podTemplate.spec.containers",
        ),
        (
            "the engine's image",
            on_decode(engine(json!({"name": "engine", "image": "other"}))),
            "the engine container's image, imagePullPolicy, command, args, ports, probes and lifecycle are the operator's",
            "spec.services.decode.podTemplate.spec.containers",
        ),
        (
            "a selector label",
            json!({"spec": {"podTemplate": {"metadata": {"labels": {"infera.amd.com/service": "x"}}}}}),
            "spec.podTemplate.metadata.labels: Invalid value: metadata.labels: app.kubernetes.io/name, instance, component, managed-by and every infera.amd.com/ label are the operator's",
            "spec.podTemplate.metadata.labels",
        ),
        (
            "the shm volume",
            on_decode(json!({"spec": {"volumes": [{"name": "dshm", "emptyDir": {}}]}})),
            "spec.services[decode].podTemplate.spec.volumes: Invalid value: spec.volumes: dshm is the operator's",
            "spec.services.decode.podTemplate.spec.volumes",
        ),
        (
            "the frontend sidecar's name",
            on_decode(engine(json!({"name": "infera-frontend", "image": "x"}))),
            "spec.containers: infera-frontend is the operator's GAIE sidecar",
            "spec.services.decode.podTemplate.spec.containers",
        ),
        (
            "an added container without an image",
            on_decode(engine(json!({"name": "sidecar"}))),
            "spec.containers: an added container needs an image",
            "spec.services.decode.podTemplate.spec.containers",
        ),
        (
            "a ServiceAccount with Kubernetes discovery",
            on_decode(json!({"spec": {"serviceAccountName": "mine"}})),
            "with discoveryBackend kubernetes the pods run as the discovery ServiceAccount",
            "spec.services.decode.podTemplate.spec.serviceAccountName",
        ),
    ];
    for (what, patch, admission, rust_path) in cases {
        let mut spec = seed();
        merge(&mut spec, patch);
        let rust =
            infera_core::validate(&serde_json::from_value::<InferaDeployment>(spec.clone())?)
                .err()
                .map(|errors| errors.0)
                .unwrap_or_default();
        assert!(
            rust.iter().any(|e| e.path == rust_path),
            "{what}: infera-core reports no error at {rust_path}: {rust:?}"
        );
        match api.create(&dry_run, &serde_json::from_value(spec)?).await {
            Ok(_) => anyhow::bail!("{what}: accepted"),
            Err(infera_e2e::kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{what}: {}", status.message);
                assert!(
                    status.message.contains(admission),
                    "{what}: expected {admission:?} in {:?}",
                    status.message
                );
            }
            Err(other) => return Err(other.into()),
        }
    }

    // What a user may set is admitted, and with etcd discovery so is their own ServiceAccount.
    let mut spec = seed();
    merge(
        &mut spec,
        json!({"spec": {
            "discoveryBackend": "etcd",
            "etcdEndpoint": "http://etcd.infra:2379",
            "podTemplate": {"spec": {"serviceAccountName": "mine", "hostIPC": true}},
            "services": {"decode": {"command": ["python3", "-m", "sglang.launch_server"]}},
        }}),
    );
    api.create(&dry_run, &serde_json::from_value(spec)?).await?;
    ns.cleanup().await
}

/// What the example's pods need from the cluster: the claim with the weights and the priority
/// class (the Priority admission plugin refuses a pod naming one that does not exist).
const PREREQUISITES: &str = r#"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: qwen3-weights}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"#;
const PRIORITY_CLASS: &str = r#"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: inference}
value: 1000
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_pod_template_reaches_the_live_pods() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "overlay").await?;
    let identity = install(&admin).await?;
    let log = format!("operator-{}", ns.name());
    let mut operator = Operator::start(&identity, &["--namespace", ns.name()], &log).await?;
    apply_yaml(&admin, PRIORITY_CLASS).await?;
    apply_yaml_in(&admin, ns.name(), PREREQUISITES).await?;
    // The README's example, with its decode affinity pointed at a node of this cluster.
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/pod-template.yaml"
    ))?
    .replace(
        "{key: infera.amd.com/decode-pool, operator: In, values: [\"true\"]}",
        "{key: kubernetes.io/hostname, operator: In, values: [gpu-node-1]}",
    );
    anyhow::ensure!(
        example.contains("gpu-node-1"),
        "the example's affinity moved"
    );
    apply_yaml_in(&admin, ns.name(), &example).await?;
    let ideps: Api<InferaDeployment> = ns.api();
    ready(&ideps, "overlay", READY_TIMEOUT).await?;

    let pods: Api<Pod> = ns.api();
    let decode = pods
        .list(&ListParams::default().labels("infera.amd.com/service=decode"))
        .await?
        .items;
    anyhow::ensure!(!decode.is_empty(), "no decode pod");
    for pod in &decode {
        let spec = pod.spec.clone().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(labels.get("team").map(String::as_str), Some("inference"));
        assert_eq!(
            annotations.get("prometheus.io/scrape").map(String::as_str),
            Some("true")
        );
        assert_eq!(
            spec.node_name.as_deref(),
            Some("gpu-node-1"),
            "the affinity"
        );
        assert_eq!(spec.priority_class_name.as_deref(), Some("inference"));
        assert_eq!(spec.priority, Some(1000), "the priority class was resolved");
        let engine = spec
            .containers
            .iter()
            .find(|c| c.name == "engine")
            .ok_or_else(|| anyhow::anyhow!("no engine container"))?;
        assert_eq!(
            engine.command.as_deref(),
            Some(&["python3", "-u", "-m", "infera.engine.sglang"].map(String::from)[..])
        );
        let mounts = engine.volume_mounts.clone().unwrap_or_default();
        assert!(
            mounts
                .iter()
                .any(|m| m.name == "models" && m.mount_path == "/models"),
            "{mounts:?}"
        );
        assert!(
            mounts.iter().any(|m| m.mount_path == "/dev/shm"),
            "ours stays"
        );
        let claim = spec
            .volumes
            .unwrap_or_default()
            .into_iter()
            .find(|v| v.name == "models")
            .and_then(|v| v.persistent_volume_claim)
            .map(|c| c.claim_name);
        assert_eq!(claim.as_deref(), Some("qwen3-weights"));
        let resources = engine.resources.clone().unwrap_or_default();
        let quantity =
            |map: &Option<
                std::collections::BTreeMap<
                    String,
                    k8s_openapi::apimachinery::pkg::api::resource::Quantity,
                >,
            >,
             key: &str| { map.as_ref().and_then(|m| m.get(key)).map(|q| q.0.clone()) };
        assert_eq!(
            quantity(&resources.limits, "amd.com/gpu").as_deref(),
            Some("1")
        );
        assert_eq!(quantity(&resources.requests, "cpu").as_deref(), Some("8"));
    }
    // The spec-wide additions reach the other services' pods too; theirs only where set.
    let server = pods
        .list(&ListParams::default().labels("infera.amd.com/service=server"))
        .await?
        .items;
    for pod in &server {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get("team").map(String::as_str), Some("inference"));
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        assert!(!annotations.contains_key("prometheus.io/scrape"));
    }

    operator.ensure_running()?;
    ns.cleanup().await
}
