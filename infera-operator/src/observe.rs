//! What exists: one watch per resource type, cached in reflector stores, read without API calls.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use futures::{Stream, StreamExt};
use infera_core::{
    ChildKind, InferaDeployment,
    naming::{LABEL_DEPLOYMENT, LABEL_MANAGED_BY, OPERATOR_MANAGER, managed_selector},
};
use k8s_openapi::{
    api::core::v1::Pod,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{DynamicObject, PartialObjectMeta},
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store, store::Writer},
        watcher,
    },
};

/// The watch caches the controller reads instead of the API.
#[derive(Clone)]
pub struct Observed {
    pub children: BTreeMap<ChildKind, Store<DynamicObject>>,
    pub pods: Store<Pod>,
    pub crds: Store<PartialObjectMeta<CustomResourceDefinition>>,
    synced: Arc<Synced>,
}

/// Which caches have their initial list.
#[derive(Default)]
struct Synced {
    pods: Arc<AtomicBool>,
    crds: Arc<AtomicBool>,
    kinds: BTreeMap<ChildKind, Arc<AtomicBool>>,
}

/// The streams that fill [`Observed`]; the controller consumes them as triggers.
pub struct Watches {
    pub children: Vec<(
        ChildKind,
        futures::stream::BoxStream<'static, Result<DynamicObject, watcher::Error>>,
    )>,
    pub pods: futures::stream::BoxStream<'static, Result<Pod, watcher::Error>>,
    pub crds: futures::stream::BoxStream<
        'static,
        Result<PartialObjectMeta<CustomResourceDefinition>, watcher::Error>,
    >,
}

/// Starts one LIST+WATCH per child kind, for pods of our deployments and for CRD metadata, in
/// `namespace` or, with `None`, in all namespaces.
pub fn watch(client: &Client, namespace: Option<&str>) -> (Observed, Watches) {
    let managed = watcher::Config::default().labels(&managed_selector());
    let mut stores = BTreeMap::new();
    let mut streams = Vec::new();
    for kind in ChildKind::ALL {
        let resource = kind.api_resource();
        let writer = Writer::new(resource.clone());
        stores.insert(kind, writer.as_reader());
        let api = match namespace {
            Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &resource),
            None => Api::<DynamicObject>::all_with(client.clone(), &resource),
        };
        streams.push((kind, reflect(writer, watcher(api, managed.clone()))));
    }
    let (pods, pod_writer) = reflector::store();
    let pod_api = namespace.map_or_else(
        || Api::all(client.clone()),
        |ns| Api::namespaced(client.clone(), ns),
    );
    let pod_watch = watcher(pod_api, watcher::Config::default().labels(LABEL_DEPLOYMENT));
    let (crds, crd_writer) = reflector::store();
    let crd_watch = watcher(
        Api::<PartialObjectMeta<CustomResourceDefinition>>::all(client.clone()),
        watcher::Config::default(),
    );
    (
        Observed {
            children: stores,
            pods,
            crds,
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
            pods: reflect(pod_writer, pod_watch),
            crds: reflect(crd_writer, crd_watch),
        },
    )
}

fn reflect<K>(
    writer: Writer<K>,
    stream: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
) -> futures::stream::BoxStream<'static, Result<K, watcher::Error>>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    stream
        .default_backoff()
        .reflect(writer)
        .touched_objects()
        .boxed()
}

/// What exists for one deployment.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Our children of this deployment: our labels and its controller reference.
    pub children: BTreeMap<(ChildKind, String), Arc<DynamicObject>>,
    pub pods: Vec<Arc<Pod>>,
}

impl Observed {
    /// Everything the cache knows about one deployment; no API calls.
    pub fn snapshot(&self, idep: &InferaDeployment) -> Snapshot {
        let namespace = idep.namespace().unwrap_or_default();
        let name = idep.name_any();
        let uid = idep.uid();
        let mut snapshot = Snapshot::default();
        for (kind, store) in &self.children {
            for object in store.state() {
                if object.namespace().as_deref() == Some(namespace.as_str())
                    && is_ours(&object, &name, uid.as_deref())
                {
                    snapshot.children.insert((*kind, object.name_any()), object);
                }
            }
        }
        snapshot.pods = self.pods.state_filter(|pod| {
            pod.namespace().as_deref() == Some(namespace.as_str())
                && pod.labels().get(LABEL_DEPLOYMENT) == Some(&name)
        });
        snapshot
    }

    /// Whether every cache has its initial list: pods, CRDs, and each child kind whose CRD is
    /// installed (a kind without its CRD has nothing to list).
    pub fn synced(&self) -> bool {
        let synced = |flag: &AtomicBool| flag.load(Ordering::Relaxed);
        synced(&self.synced.pods)
            && synced(&self.synced.crds)
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
        track(self.pods.clone(), self.synced.pods.clone());
        track(self.crds.clone(), self.synced.crds.clone());
        for (kind, store) in &self.children {
            track(store.clone(), self.synced.kinds[kind].clone());
        }
    }

    /// Whether the CRD serving `kind` is installed (always true for built-in kinds).
    pub fn installed(&self, kind: ChildKind) -> bool {
        kind.crd()
            .is_none_or(|crd| self.crds.get(&ObjectRef::new(&crd.name)).is_some())
    }
}

/// Ours: our managed-by label, this deployment's label and its controller reference.
fn is_ours(object: &DynamicObject, deployment: &str, uid: Option<&str>) -> bool {
    let labels = object.labels();
    labels.get(LABEL_MANAGED_BY).map(String::as_str) == Some(OPERATOR_MANAGER)
        && labels.get(LABEL_DEPLOYMENT).map(String::as_str) == Some(deployment)
        && object
            .owner_references()
            .iter()
            .any(|owner| owner.controller == Some(true) && Some(owner.uid.as_str()) == uid)
}
