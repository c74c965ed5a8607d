//! What exists: one watch per resource type, cached in reflector stores, read without API calls.
//!
//! The caches hold only what reconcile and status read (see [`Live`], [`slim_pod`],
//! [`slim_deployment`], [`slim_revision`]), so the operator's memory grows by a few hundred bytes per child, not by
//! the size of whole objects with their pod templates and `managedFields`. Kinds whose status is not
//! read are watched metadata-only. The initial LIST of every watch is read in pages of [`PAGE`]
//! objects, and each page is slimmed before the next is read.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures::{Stream, StreamExt, TryStreamExt};
use infera_core::{
    ChildKind, InferaDeployment,
    naming::{LABEL_DEPLOYMENT, LABEL_REVISION, WORKER_INFO_ANNOTATION, managed_selector},
    render::{ApiServer, Workload},
};
use k8s_openapi::{
    api::apps::v1::ControllerRevision,
    api::core::v1::{
        Affinity, Container, NodeAffinity, NodeSelector, NodeSelectorTerm, Pod, PodSpec,
        ResourceQuota,
    },
    api::discovery::v1::EndpointSlice,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::PartialObjectMeta,
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        utils::ResetTimerBackoff,
        watcher,
        watcher::ExponentialBackoff,
    },
};
use tracing::{debug, warn};

use crate::live::Live;

mod cache;
pub use cache::{Cache, CacheWriter};

/// Objects per page of a watch's initial LIST. kube-runtime 5.0 reads pages of 500 by default
/// (`page_size: Some(500)` in kube-runtime-5.0.0/src/watcher.rs); a page is held whole, as
/// parsed JSON, until it is slimmed, and every watch lists at once on a cold start, so 500 whole
/// Deployments per watch made most of the operator's peak memory. 50 costs a LIST request per
/// 50 objects instead: over 1,000 deployments, the release build's peak RSS on a cold start was
/// 49.3 MiB with pages of 100, 46.0 with 50 and 44.2 with 25 (glibc; docs/performance.md).
pub const PAGE: u32 = 50;

/// How every watch lists and watches: in pages of [`PAGE`].
pub fn paged() -> watcher::Config {
    watcher::Config::default().page_size(PAGE)
}

/// The watch caches the controller reads instead of the API, each object filed under what a
/// reconcile looks it up by: children and revisions under their controller's uid
/// ([`controller_uid`]), pods under their deployment ([`deployment_of`]), quotas under their
/// namespace.
#[derive(Clone)]
pub struct Observed {
    pub children: BTreeMap<ChildKind, Cache<Live>>,
    pub pods: Cache<Pod>,
    pub crds: Store<PartialObjectMeta<CustomResourceDefinition>>,
    pub quotas: Cache<ResourceQuota>,
    /// The ControllerRevisions of the revision history (see [`slim_revision`]).
    pub revisions: Cache<ControllerRevision>,
    /// The API server's EndpointSlice ([`ApiServer::SLICE`]).
    pub api_server: Store<EndpointSlice>,
    /// Whether the watch of that slice has listed it, or failed to, once (see
    /// [`Observed::api_server_tried`]).
    api_server_tried: Arc<AtomicBool>,
    synced: Arc<Synced>,
}

/// Which caches have their initial list.
#[derive(Default)]
struct Synced {
    pods: Arc<AtomicBool>,
    crds: Arc<AtomicBool>,
    quotas: Arc<AtomicBool>,
    revisions: Arc<AtomicBool>,
    kinds: BTreeMap<ChildKind, Arc<AtomicBool>>,
}

/// The streams that fill [`Observed`]; the controller consumes them as triggers.
pub struct Watches {
    pub children: Vec<(
        ChildKind,
        futures::stream::BoxStream<'static, Result<Live, watcher::Error>>,
    )>,
    pub pods: futures::stream::BoxStream<'static, Result<Pod, watcher::Error>>,
    pub crds: futures::stream::BoxStream<
        'static,
        Result<PartialObjectMeta<CustomResourceDefinition>, watcher::Error>,
    >,
    pub quotas: futures::stream::BoxStream<'static, Result<ResourceQuota, watcher::Error>>,
    pub revisions: futures::stream::BoxStream<'static, Result<ControllerRevision, watcher::Error>>,
    pub api_server: futures::stream::BoxStream<'static, Result<EndpointSlice, watcher::Error>>,
}

/// Starts one LIST+WATCH per child kind, for pods of our deployments and for CRD metadata, in
/// `namespace` or, with `None`, in all namespaces. Children are watched metadata-only unless
/// reconcile reads their status (see [`reads_status`]).
pub fn watch(client: &Client, namespace: Option<&str>) -> (Observed, Watches) {
    let managed = paged().labels(&managed_selector());
    let mut stores = BTreeMap::new();
    let mut streams = Vec::new();
    for kind in ChildKind::ALL {
        let writer = child_cache(kind);
        stores.insert(kind, writer.as_reader());
        let what = kind.api_resource().plural;
        let stream = if reads_status(kind) {
            let api = match namespace {
                Some(ns) => Api::<Live>::namespaced_with(client.clone(), ns, &kind),
                None => Api::<Live>::all_with(client.clone(), &kind),
            };
            reflect(cached(writer), watcher(api, managed.clone()), what)
        } else {
            // `Api<PartialObjectMeta<_>>` sends metadata-only requests (kube-core 5.0,
            // `Resource::metadata_api`); the metadata goes into the same kind of store.
            let api = match namespace {
                Some(ns) => {
                    Api::<PartialObjectMeta<Live>>::namespaced_with(client.clone(), ns, &kind)
                }
                None => Api::<PartialObjectMeta<Live>>::all_with(client.clone(), &kind),
            };
            let objects = watcher(api, managed.clone()).map_ok(metadata_only);
            reflect(cached(writer), objects, what)
        };
        streams.push((kind, stream));
    }
    let pod_writer = pod_cache();
    let pods = pod_writer.as_reader();
    let pod_api = namespace.map_or_else(
        || Api::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    );
    let pod_watch = watcher(pod_api, paged().labels(LABEL_DEPLOYMENT));
    let (crds, mut crd_writer) = reflector::store();
    let crd_watch = watcher(
        Api::<PartialObjectMeta<CustomResourceDefinition>>::all(client.clone()),
        paged(),
    )
    .modify(|crd| crd.metadata = name_only(&crd.metadata));
    let quota_writer = quota_cache();
    let quotas = quota_writer.as_reader();
    let quota_api = namespace.map_or_else(
        || Api::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    );
    let quota_watch = watcher(quota_api, paged()).modify(|quota: &mut ResourceQuota| {
        quota.managed_fields_mut().clear();
        quota.annotations_mut().clear();
    });
    // Ours only, like the children: the label selector keeps other controllers' revisions
    // (every StatefulSet's and DaemonSet's) out of the LIST and the cache.
    let revision_writer = revision_cache();
    let revisions = revision_writer.as_reader();
    let revision_api = namespace.map_or_else(
        || Api::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    );
    let revision_watch = watcher(revision_api, managed).modify(slim_revision);
    // One object, by name: the operator's Role in `default` grants it by that name only.
    let (api_server, mut api_server_writer) = reflector::store();
    let (namespace_of_api, name_of_api) = ApiServer::SLICE;
    let api_server_watch = watcher(
        Api::<EndpointSlice>::namespaced(client.clone(), namespace_of_api),
        watcher::Config::default().fields(&format!("metadata.name={name_of_api}")),
    )
    .modify(|slice: &mut EndpointSlice| slice.managed_fields_mut().clear());
    // Tried once the store holds the list (it fills at InitDone), or once the watch failed.
    let api_server_tried = Arc::new(AtomicBool::new(false));
    let (listed, failed) = (api_server_tried.clone(), api_server_tried.clone());
    let api_server_watch =
        api_server_watch.inspect_err(move |_| failed.store(true, Ordering::Release));
    (
        Observed {
            children: stores,
            pods,
            crds,
            quotas,
            revisions,
            api_server,
            api_server_tried,
            synced: Arc::new(Synced {
                kinds: ChildKind::ALL
                    .iter()
                    .map(|kind| (*kind, Arc::default()))
                    .collect(),
                ..Synced::default()
            }),
        },
        Watches {
            children: streams,
            pods: reflect(
                cached(pod_writer),
                pod_watch.modify(slim_pod),
                "pods".into(),
            ),
            crds: reflect(
                move |event| crd_writer.apply_watcher_event(event),
                crd_watch,
                "customresourcedefinitions".into(),
            ),
            quotas: reflect(cached(quota_writer), quota_watch, "resourcequotas".into()),
            revisions: reflect(
                cached(revision_writer),
                revision_watch,
                "controllerrevisions".into(),
            ),
            api_server: reflect(
                move |event| {
                    api_server_writer.apply_watcher_event(event);
                    if matches!(event, watcher::Event::InitDone) {
                        listed.store(true, Ordering::Release);
                    }
                },
                api_server_watch,
                "endpointslices".into(),
            ),
        },
    )
}

/// A reflector over `stream`, giving each event to `apply` (a cache's writer), that yields the
/// objects it stores. The watch retries on its own (with backoff); its errors are logged here, as
/// `what`'s, and never passed on.
///
/// Passing them on stalls the controller: kube-runtime 5.0's applier splits its trigger stream
/// into the objects and the errors through one shared `Peekable` (`trystream_split_result` in
/// kube-runtime-5.0.0/src/utils/mod.rs), whose object branch answers `Pending` without a wake-up
/// when an error is next. With a watch that keeps failing (a missing CRD's 404, an API server
/// gone) every trigger then waits for an unrelated timer: the operator took 19 s to start on a
/// cluster without the LeaderWorkerSet CRD, and after the API server came back from a crash it
/// never reconciled again (compare kube-rs issue #1316).
pub fn reflect<K>(
    mut apply: impl FnMut(&watcher::Event<K>) + Send + 'static,
    stream: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    what: String,
) -> futures::stream::BoxStream<'static, Result<K, watcher::Error>>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    // A watch the operator's RBAC forbids is said once (its fix is the release's RBAC), not at
    // every retry; again after it has listed since.
    let mut forbidden_said = false;
    stream
        .backoff(retry())
        .inspect(move |result| match result {
            Ok(watcher::Event::InitDone) => forbidden_said = false,
            Ok(_) => {}
            // A kind whose CRD is not installed: expected, and reported as MissingDependency.
            Err(watcher::Error::InitialListFailed(kube::Error::Api(status)))
                if status.code == 404 =>
            {
                debug!(watch = %what, "not served; retrying");
            }
            Err(watcher::Error::InitialListFailed(kube::Error::Api(status)))
                if status.code == 403 && forbidden_said =>
            {
                debug!(watch = %what, "still forbidden; retrying");
            }
            Err(error) => {
                forbidden_said |= matches!(error,
                    watcher::Error::InitialListFailed(kube::Error::Api(status)) if status.code == 403);
                warn!(watch = %what, error = %crate::chain(error), "watch failed; retrying")
            }
        })
        .inspect_ok(move |event| apply(event))
        .touched_objects()
        .filter_map(|result| {
            std::future::ready(result.ok().map(Ok))
        })
        .boxed()
}

/// The writing side of a [`Cache`], as [`reflect`] takes it.
fn cached<K>(mut writer: CacheWriter<K>) -> impl FnMut(&watcher::Event<K>) + Send + 'static
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    move |event| writer.apply(event)
}

/// How a failed watch retries: kube-runtime's default (`DefaultBackoff` in
/// kube-runtime-5.0.0/src/watcher.rs: from 0.8 s, doubling, with jitter, reset after 120 s
/// without failure) but at most 5 s apart instead of 30 s (backon's jitter adds up to as much
/// again). The first watch to reach an API server
/// that is back marks it reachable and triggers every deployment (see `Metrics::api_returns`),
/// so the ceiling bounds how long a recovered API goes unnoticed.
fn retry() -> Escalating {
    let exponential = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(800))
        .with_max_delay(Duration::from_secs(5))
        .with_factor(2.0)
        .with_jitter()
        .without_max_times();
    Escalating(ResetTimerBackoff::new(
        exponential.into(),
        Duration::from_secs(120),
    ))
}

/// A backoff that only its timer resets. kube-runtime's `StreamBackoff` resets the backoff on
/// every `Ok` item (kube-runtime-5.0.0/src/utils/stream_backoff.rs), and a watcher yields
/// `Ok(Event::Init)` before each attempt at its LIST (`watcher.rs`, state `Empty`), so a LIST
/// that keeps failing — a kind whose CRD is not installed answers 404 — was retried at the
/// first delay forever: 51 LISTs of `scaledobjects` a minute on a cluster without KEDA.
struct Escalating(ResetTimerBackoff<ExponentialBackoff>);

impl Iterator for Escalating {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.0.next()
    }
}

impl kube::runtime::utils::Backoff for Escalating {
    fn reset(&mut self) {}
}

/// Whether reconcile reads the status of children of `kind`: the workloads, whose ready
/// replicas make the deployment's readiness, the model's download Job, whose success lets
/// the GPU pools start, and the InferencePool and HTTPRoute, whose acceptance by a Gateway
/// `status.gaie` reports. Other kinds are watched metadata-only.
fn reads_status(kind: ChildKind) -> bool {
    matches!(
        kind,
        ChildKind::Deployment
            | ChildKind::StatefulSet
            | ChildKind::LeaderWorkerSet
            | ChildKind::Job
            | ChildKind::InferencePool
            | ChildKind::InferencePoolV1Alpha2
            | ChildKind::HttpRoute
    )
}

/// A metadata-only watch event as the [`Live`] the child stores hold (without state).
fn metadata_only(event: watcher::Event<PartialObjectMeta<Live>>) -> watcher::Event<Live> {
    match event {
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitDone => watcher::Event::InitDone,
        watcher::Event::InitApply(meta) => watcher::Event::InitApply(Live::from_meta(meta)),
        watcher::Event::Apply(meta) => watcher::Event::Apply(Live::from_meta(meta)),
        watcher::Event::Delete(meta) => watcher::Event::Delete(Live::from_meta(meta)),
    }
}

/// Strips a ControllerRevision of the history to what reconcile reads: its identity, our labels
/// (the revision hash among them), its controller reference and its `revision` number. The
/// `data` — a whole spec, read only by `kubectl infera rollout history` and `undo` — is dropped.
pub fn slim_revision(revision: &mut ControllerRevision) {
    let meta = &revision.metadata;
    let labels = meta.labels.as_ref().map(|labels| {
        labels
            .iter()
            .filter(|(key, _)| [LABEL_DEPLOYMENT, LABEL_REVISION].contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    });
    revision.metadata = ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        labels,
        owner_references: meta.owner_references.as_ref().map(|owners| {
            owners
                .iter()
                .filter(|owner| owner.controller == Some(true))
                .cloned()
                .collect()
        }),
        ..ObjectMeta::default()
    };
    revision.data = None;
}

/// Strips a pod to what status, the quota check and the registration step read: its metadata
/// without `managedFields` and annotations but for whether the worker registered (the
/// [`WORKER_INFO_ANNOTATION`] kept, its value dropped), its readiness gates, the names of its containers (their count makes readiness) and the resources of
/// its containers and init containers (what a quota charges it, see `infera_core::quota`), the GPU
/// product its node affinity requires (an unschedulable pod of a missing product lacks capacity),
/// and its status.
fn slim_pod(pod: &mut Pod) {
    pod.managed_fields_mut().clear();
    let registered = pod.annotations().contains_key(WORKER_INFO_ANNOTATION);
    pod.annotations_mut().clear();
    if registered {
        pod.annotations_mut()
            .insert(WORKER_INFO_ANNOTATION.into(), String::new());
    }
    if let Some(spec) = &pod.spec {
        let slim = |containers: &[Container]| -> Vec<Container> {
            containers
                .iter()
                .map(|container| Container {
                    name: container.name.clone(),
                    resources: container.resources.clone(),
                    ..Container::default()
                })
                .collect()
        };
        pod.spec = Some(PodSpec {
            containers: slim(&spec.containers),
            init_containers: spec.init_containers.as_deref().map(slim),
            affinity: product_affinity(spec),
            readiness_gates: spec.readiness_gates.clone(),
            ..PodSpec::default()
        });
    }
}

/// Only the GPU product requirement of a pod's required node affinity, if it has one.
fn product_affinity(spec: &PodSpec) -> Option<Affinity> {
    let expression = spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms
        .iter()
        .flat_map(|term| term.match_expressions.iter().flatten())
        .find(|expression| expression.key == infera_core::gpu_product::PRODUCT_LABEL)?
        .clone();
    Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(vec![expression]),
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// Strips an InferaDeployment to what reconcile reads: `managedFields` and annotations (a
/// client-side `kubectl apply` keeps a whole copy of the spec in one) are dropped, but for the one
/// that rotates the NATS credentials; spec and status stay.
pub fn slim_deployment(idep: &mut InferaDeployment) {
    idep.managed_fields_mut().clear();
    idep.annotations_mut()
        .retain(|key, _| key == infera_core::naming::NATS_ROTATION_ANNOTATION);
}

/// Only the name, for CRDs, whose presence is all that is read.
fn name_only(meta: &ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        name: meta.name.clone(),
        resource_version: meta.resource_version.clone(),
        uid: meta.uid.clone(),
        ..ObjectMeta::default()
    }
}

/// What exists for one deployment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Our children of this deployment: our labels and its controller reference.
    pub children: BTreeMap<(ChildKind, String), Arc<Live>>,
    pub pods: Vec<Arc<Pod>>,
    /// The ResourceQuotas of the deployment's namespace.
    pub quotas: Vec<Arc<ResourceQuota>>,
    /// The ControllerRevisions of its history: our labels and its controller reference.
    pub revisions: Vec<Arc<ControllerRevision>>,
}

impl Snapshot {
    /// The replicas the live `workload` asks for, if it exists.
    pub fn live_replicas(&self, workload: &Workload) -> Option<i32> {
        let object = self.children.get(&(workload.kind, workload.name.clone()))?;
        i32::try_from(object.state()?.replicas?).ok()
    }
}

impl Observed {
    /// Everything the cache knows about one deployment; no API calls.
    pub fn snapshot(&self, idep: &InferaDeployment) -> Snapshot {
        let namespace = idep.namespace().unwrap_or_default();
        let uid = idep.uid().unwrap_or_default();
        let mut snapshot = Snapshot::default();
        for (kind, cache) in &self.children {
            for object in cache.filed_under(&uid) {
                snapshot.children.insert((*kind, object.name_any()), object);
            }
        }
        snapshot.pods = self
            .pods
            .filed_under(&format!("{namespace}/{}", idep.name_any()));
        snapshot.quotas = self.quotas.filed_under(&namespace);
        snapshot.revisions = self.revisions.filed_under(&uid);
        snapshot
    }

    /// Whether every cache has its initial list: pods, CRDs, quotas, and each child kind whose CRD is
    /// installed (a kind without its CRD has nothing to list).
    pub fn synced(&self) -> bool {
        let synced = |flag: &AtomicBool| flag.load(Ordering::Relaxed);
        synced(&self.synced.pods)
            && synced(&self.synced.crds)
            && synced(&self.synced.quotas)
            && synced(&self.synced.revisions)
            && self
                .synced
                .kinds
                .iter()
                .all(|(kind, flag)| synced(flag) || !self.installed(*kind))
    }

    /// Starts keeping [`Observed::synced`] up to date. Call once: a store wakes only one waiter.
    pub fn track_sync(&self) {
        fn track<K: Resource + Clone + Send + Sync + 'static>(
            store: Store<K>,
            flag: Arc<AtomicBool>,
        ) where
            K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
        {
            tokio::spawn(async move {
                if store.wait_until_ready().await.is_ok() {
                    flag.store(true, Ordering::Relaxed);
                }
            });
        }
        track(self.pods.store.clone(), self.synced.pods.clone());
        track(self.crds.clone(), self.synced.crds.clone());
        track(self.quotas.store.clone(), self.synced.quotas.clone());
        track(self.revisions.store.clone(), self.synced.revisions.clone());
        for (kind, cache) in &self.children {
            track(cache.store.clone(), self.synced.kinds[kind].clone());
        }
    }

    /// Whether the API server's EndpointSlice has been listed, or its watch has failed, at least
    /// once: not ready for the operator's readiness (a watch its RBAC forbids must not hold back
    /// every deployment), but before it a restricted deployment waits rather than reporting the
    /// endpoints unknown.
    pub fn api_server_tried(&self) -> bool {
        self.api_server_tried.load(Ordering::Acquire)
    }

    /// Where pods reach the API server, from its EndpointSlice: the ready endpoints' addresses
    /// and the TCP ports; `None` until it is seen (or when the operator may not read it).
    pub fn api_server(&self) -> Option<ApiServer> {
        let (namespace, name) = ApiServer::SLICE;
        let slice = self
            .api_server
            .get(&ObjectRef::new(name).within(namespace))?;
        ApiServer::of(&slice)
    }

    /// Whether the CRD serving `kind` is installed (always true for built-in kinds).
    pub fn installed(&self, kind: ChildKind) -> bool {
        kind.crd()
            .is_none_or(|crd| self.crds.get(&ObjectRef::new(&crd.name)).is_some())
    }
}

/// The cache of one child kind, filed by controller.
pub fn child_cache(kind: ChildKind) -> CacheWriter<Live> {
    CacheWriter::new(kind, controller_uid)
}

/// The cache of our pods, filed by deployment.
pub fn pod_cache() -> CacheWriter<Pod> {
    CacheWriter::new((), deployment_of)
}

/// The cache of ResourceQuotas, filed by namespace.
pub fn quota_cache() -> CacheWriter<ResourceQuota> {
    CacheWriter::new((), |quota| quota.namespace())
}

/// The cache of our ControllerRevisions, filed by controller.
pub fn revision_cache() -> CacheWriter<ControllerRevision> {
    CacheWriter::new((), controller_uid)
}

/// A child's or revision's key: the uid of its controller, which is ours when it is one of our
/// deployments (a uid is unique in the cluster; every cached child and revision carries our labels:
/// the watches select on them).
fn controller_uid<K: Resource>(object: &K) -> Option<String> {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.uid.clone())
}

/// A pod's key: `namespace/deployment`, from its [`LABEL_DEPLOYMENT`] label.
fn deployment_of(pod: &Pod) -> Option<String> {
    Some(format!(
        "{}/{}",
        pod.namespace()?,
        pod.labels().get(LABEL_DEPLOYMENT)?
    ))
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use infera_core::{ChildKind, InferaDeployment};
    use k8s_openapi::api::core::v1::Pod;
    use kube::{ResourceExt, runtime::watcher};

    use super::reflect;

    fn pod(name: &str) -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": name, "namespace": "ns"}}))
            .unwrap_or_default()
    }

    #[test]
    fn a_slim_pod_keeps_that_it_registered_and_its_readiness_gates_not_the_record() {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "annotations": {
                "infera.amd.com/worker-info": "{\"worker_id\": \"10.0.0.7:8000\"}",
                "kubectl.kubernetes.io/restartedAt": "2026-12-06T10:00:00Z"}},
            "spec": {"containers": [{"name": "engine", "image": "rocm/infera"}],
                "readinessGates": [{"conditionType": "infera.amd.com/registered"}]}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        super::slim_pod(&mut pod);
        assert_eq!(
            pod.metadata.annotations,
            Some([("infera.amd.com/worker-info".to_string(), String::new())].into())
        );
        let spec = pod.spec.unwrap_or_default();
        assert_eq!(
            serde_json::to_value(&spec.readiness_gates).ok(),
            Some(serde_json::json!([{"conditionType": "infera.amd.com/registered"}]))
        );
        assert_eq!(spec.containers[0].image, None);
    }

    #[test]
    fn a_slim_deployment_keeps_only_the_rotation_annotation() {
        let mut idep: infera_core::InferaDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "d", "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{...}",
                "infera.amd.com/nats-credentials": "2"}},
            "spec": {"services": {}}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        super::slim_deployment(&mut idep);
        assert_eq!(
            idep.metadata.annotations,
            Some(
                [(
                    "infera.amd.com/nats-credentials".to_string(),
                    "2".to_string()
                )]
                .into()
            )
        );
    }

    /// As `StreamBackoff` uses it for a watch whose LIST keeps failing: reset (on the `Init`
    /// each attempt yields first), then asked for the delay before the next attempt.
    #[test]
    fn a_list_that_keeps_failing_is_retried_further_apart_up_to_five_seconds_and_jitter() {
        use kube::runtime::utils::Backoff;
        let mut backoff = super::retry();
        let delays: Vec<f64> = (0..6)
            .map(|_| {
                backoff.reset();
                backoff.next().map_or(0.0, |delay| delay.as_secs_f64())
            })
            .collect();
        let floors = [0.8, 1.6, 3.2, 5.0, 5.0, 5.0];
        for (delay, floor) in delays.iter().zip(floors) {
            assert!(*delay >= floor && *delay < 2.0 * floor, "{delays:?}");
        }
    }

    /// A child, revision or pod of `deployment` (whose uid is `<deployment>-uid`) in `demo`.
    fn of(deployment: &str, name: &str) -> serde_json::Value {
        serde_json::json!({
            "metadata": {
                "name": name, "namespace": "demo", "uid": format!("{name}-uid"),
                "labels": {infera_core::naming::LABEL_DEPLOYMENT: deployment},
                "ownerReferences": [{"apiVersion": "infera.amd.com/v1alpha1",
                    "kind": "InferaDeployment", "name": deployment,
                    "uid": format!("{deployment}-uid"), "controller": true}],
            },
        })
    }

    #[tokio::test]
    async fn a_snapshot_holds_its_own_deployments_objects_and_no_others() {
        let idep = |name: &str| {
            serde_json::json!({
                "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
                "metadata": {"name": name, "namespace": "demo", "uid": format!("{name}-uid")},
                "spec": {"backendFramework": "sglang", "services": {}},
            })
        };
        let object = |deployment: &str, name: &str| {
            serde_json::from_value::<kube::api::DynamicObject>(of(deployment, name))
                .expect("an object")
        };
        let children = vec![
            (ChildKind::Deployment, object("calm", "calm-worker")),
            (ChildKind::Service, object("calm", "calm-server")),
            (ChildKind::Deployment, object("busy", "busy-worker")),
        ];
        let (ctx, mut caches, _server) = crate::fixtures::context(idep("calm"), children).await;
        for (deployment, name) in [("calm", "calm-abc"), ("busy", "busy-abc")] {
            caches
                .apply_revision(serde_json::from_value(of(deployment, name)).expect("a revision"));
        }
        for (deployment, name) in [("calm", "calm-worker-1"), ("busy", "busy-worker-1")] {
            caches.apply_pod(serde_json::from_value(of(deployment, name)).expect("a pod"));
        }
        // Gone: dropped from the snapshot as from the cache.
        caches.delete(ChildKind::Service, object("calm", "calm-server"));

        for (deployment, other) in [("calm", "busy"), ("busy", "calm")] {
            let idep: InferaDeployment =
                serde_json::from_value(idep(deployment)).expect("an InferaDeployment");
            let snapshot = ctx.observed.snapshot(&idep);
            let children: Vec<(ChildKind, String)> = snapshot.children.keys().cloned().collect();
            assert_eq!(
                children,
                [(ChildKind::Deployment, format!("{deployment}-worker"))]
            );
            let revisions: Vec<String> = snapshot.revisions.iter().map(|r| r.name_any()).collect();
            assert_eq!(revisions, [format!("{deployment}-abc")], "not {other}'s");
            let pods: Vec<String> = snapshot.pods.iter().map(|p| p.name_any()).collect();
            assert_eq!(pods, [format!("{deployment}-worker-1")], "not {other}'s");
        }
    }

    #[tokio::test]
    async fn a_failing_watch_passes_on_its_objects_and_never_its_errors() {
        let events = futures::stream::iter([
            Ok(watcher::Event::Apply(pod("a"))),
            Err(watcher::Error::NoResourceVersion),
            Ok(watcher::Event::Apply(pod("b"))),
        ]);
        let writer = super::pod_cache();
        let cache = writer.as_reader();
        let passed: Vec<_> = reflect(super::cached(writer), events, "pods".into())
            .collect()
            .await;
        let names: Vec<_> = passed
            .iter()
            .map(|result| result.as_ref().map(|pod| pod.metadata.name.clone()).ok())
            .collect();
        assert_eq!(names, [Some(Some("a".into())), Some(Some("b".into()))]);
        assert_eq!(cache.store.state().len(), 2);
    }
}
