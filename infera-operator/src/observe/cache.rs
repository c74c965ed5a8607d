//! A watch cache with an index: which cached objects are filed under which key (a deployment's
//! uid, a namespace), kept from the same watch events as the cache, so that a reconcile reads its
//! own deployment's objects without looking at every other deployment's.

use std::{
    collections::{HashMap, HashSet},
    hash::Hash,
    sync::{Arc, PoisonError, RwLock},
};

use kube::runtime::{
    reflector::{Lookup, ObjectRef, Store, store::Writer},
    watcher::Event,
};

/// The key an object is filed under; `None` leaves it out of the index (it stays in the store).
pub type KeyOf<K> = fn(&K) -> Option<String>;

/// The reading side: the objects of one key, in no particular order.
#[derive(Clone)]
pub struct Cache<K: Lookup + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    pub store: Store<K>,
    index: Arc<RwLock<Index<K>>>,
}

/// The writing side: applies each watch event to the store and to the index.
pub struct CacheWriter<K: Lookup + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    store: Store<K>,
    index: Arc<RwLock<Index<K>>>,
    key_of: KeyOf<K>,
    dyntype: K::DynamicType,
}

/// The references of the cached objects by key: a name and namespace each (no uid or
/// resourceVersion), about 100 bytes per object. An object's previous key is read from its
/// previous version in the store, so there is no map back from objects to keys.
struct Index<K: Lookup>
where
    K::DynamicType: Eq + Hash,
{
    filed: HashMap<String, HashSet<ObjectRef<K>>>,
    /// A relist in progress, which replaces `filed` when it ends, as the store's objects are
    /// replaced (`Writer::apply_watcher_event` in kube-runtime-5.0.0's store.rs).
    relist: HashMap<String, HashSet<ObjectRef<K>>>,
}

impl<K: Lookup + Clone + 'static> CacheWriter<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    pub fn new(dyntype: K::DynamicType, key_of: KeyOf<K>) -> Self {
        let writer = Writer::new(dyntype.clone());
        Self {
            store: writer.as_reader(),
            writer,
            index: Arc::new(RwLock::new(Index {
                filed: HashMap::new(),
                relist: HashMap::new(),
            })),
            key_of,
            dyntype,
        }
    }

    pub fn as_reader(&self) -> Cache<K> {
        Cache {
            store: self.store.clone(),
            index: self.index.clone(),
        }
    }

    /// Applies `event` to the index, then to the store.
    pub fn apply(&mut self, event: &Event<K>) {
        {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            match event {
                Event::Apply(object) => {
                    let reference = self.reference(object);
                    let key = (self.key_of)(object);
                    let before = self
                        .store
                        .get(&reference)
                        .and_then(|old| (self.key_of)(&old));
                    if before != key {
                        if let Some(before) = before {
                            remove(&mut index.filed, &before, &reference);
                        }
                        if let Some(key) = key {
                            index.filed.entry(key).or_default().insert(reference);
                        }
                    }
                }
                Event::Delete(object) => {
                    let reference = self.reference(object);
                    let stored = self.store.get(&reference);
                    let key = match stored {
                        Some(stored) => (self.key_of)(&stored),
                        None => (self.key_of)(object),
                    };
                    if let Some(key) = key {
                        remove(&mut index.filed, &key, &reference);
                    }
                }
                Event::Init => index.relist.clear(),
                Event::InitApply(object) => {
                    if let Some(key) = (self.key_of)(object) {
                        let reference = self.reference(object);
                        index.relist.entry(key).or_default().insert(reference);
                    }
                }
                Event::InitDone => index.filed = std::mem::take(&mut index.relist),
            }
        }
        self.writer.apply_watcher_event(event);
    }

    /// `object`'s reference as the store keys it, without the uid and resourceVersion it ignores.
    fn reference(&self, object: &K) -> ObjectRef<K> {
        let name = object.name().unwrap_or_default();
        let reference = ObjectRef::new_with(&name, self.dyntype.clone());
        match object.namespace() {
            Some(namespace) => reference.within(&namespace),
            None => reference,
        }
    }
}

/// Takes `reference` out of `key`'s objects, and the key out when none is left.
fn remove<K: Lookup>(
    filed: &mut HashMap<String, HashSet<ObjectRef<K>>>,
    key: &str,
    reference: &ObjectRef<K>,
) where
    K::DynamicType: Eq + Hash,
{
    if let Some(objects) = filed.get_mut(key) {
        objects.remove(reference);
        if objects.is_empty() {
            filed.remove(key);
        }
    }
}

impl<K: Lookup + Clone + 'static> Cache<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// The cached objects filed under `key`.
    pub fn filed_under(&self, key: &str) -> Vec<Arc<K>> {
        let references: Vec<ObjectRef<K>> = self
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .filed
            .get(key)
            .map(|filed| filed.iter().cloned().collect())
            .unwrap_or_default();
        references
            .iter()
            .filter_map(|reference| self.store.get(reference))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;

    use super::*;

    fn object(name: &str, owner: &str) -> ConfigMap {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"owner": owner}}
        }))
        .unwrap_or_default()
    }

    fn owner(object: &ConfigMap) -> Option<String> {
        object.labels().get("owner").cloned()
    }

    fn names(cache: &Cache<ConfigMap>, key: &str) -> Vec<String> {
        let mut names: Vec<String> = cache
            .filed_under(key)
            .iter()
            .map(|o| o.name_any())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn objects_are_filed_moved_and_dropped_as_the_watch_says() {
        let mut writer = CacheWriter::new((), owner);
        let cache = writer.as_reader();
        writer.apply(&Event::Apply(object("a", "x")));
        writer.apply(&Event::Apply(object("b", "x")));
        writer.apply(&Event::Apply(object("c", "y")));
        assert_eq!(names(&cache, "x"), ["a", "b"]);
        assert_eq!(names(&cache, "y"), ["c"]);
        // Its key changes: it moves.
        writer.apply(&Event::Apply(object("b", "y")));
        assert_eq!(names(&cache, "x"), ["a"]);
        assert_eq!(names(&cache, "y"), ["b", "c"]);
        writer.apply(&Event::Delete(object("a", "x")));
        assert!(names(&cache, "x").is_empty());
        assert_eq!(cache.store.state().len(), 2);
    }

    #[test]
    fn a_relist_replaces_the_index_when_it_ends_as_it_replaces_the_store() {
        let mut writer = CacheWriter::new((), owner);
        let cache = writer.as_reader();
        writer.apply(&Event::Apply(object("gone", "x")));
        writer.apply(&Event::Apply(object("kept", "x")));
        writer.apply(&Event::Init);
        writer.apply(&Event::InitApply(object("kept", "x")));
        writer.apply(&Event::InitApply(object("new", "y")));
        // Until the relist ends, the cache and its index are as they were.
        assert_eq!(names(&cache, "x"), ["gone", "kept"]);
        assert!(names(&cache, "y").is_empty());
        writer.apply(&Event::InitDone);
        assert_eq!(names(&cache, "x"), ["kept"]);
        assert_eq!(names(&cache, "y"), ["new"]);
        // The dropped object left no entry behind to move or drop.
        writer.apply(&Event::Delete(object("kept", "x")));
        assert!(names(&cache, "x").is_empty());
    }

    #[test]
    fn an_object_without_a_key_is_cached_but_filed_under_none() {
        let mut writer = CacheWriter::new((), |_: &ConfigMap| None);
        let cache = writer.as_reader();
        writer.apply(&Event::Apply(object("a", "x")));
        assert!(names(&cache, "x").is_empty());
        assert_eq!(cache.store.state().len(), 1);
    }
}
