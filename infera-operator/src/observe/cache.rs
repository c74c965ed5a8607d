//! A watch cache with an index: which cached objects are filed under which key (a deployment's
//! uid, a namespace), kept from the same watch events as the cache, so that a reconcile reads its
//! own deployment's objects without looking at every other deployment's.

use std::{
    collections::HashMap,
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
    index: Arc<RwLock<Index>>,
    dyntype: K::DynamicType,
}

/// The writing side: applies each watch event to the store and to the index.
pub struct CacheWriter<K: Lookup + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    store: Store<K>,
    index: Arc<RwLock<Index>>,
    key_of: KeyOf<K>,
    dyntype: K::DynamicType,
}

/// The namespace and name of each object filed under a key: what the store's reference needs
/// back. About 200 bytes per key of one object (a deployment's child of one kind). An object's
/// previous key is read from its previous version in the store, so nothing maps objects back to
/// keys. (Sets of kube's `ObjectRef`s, with its uid and resourceVersion slots and a set's table of
/// at least four, took about 1 KB per key: 22 MiB more over 5,000 deployments.)
#[derive(Default)]
struct Index {
    filed: HashMap<String, Vec<Entry>>,
    /// A relist in progress, which replaces `filed` when it ends, as the store's objects are
    /// replaced (`Writer::apply_watcher_event` in kube-runtime-5.0.0's store.rs).
    relist: HashMap<String, Vec<Entry>>,
}

#[derive(PartialEq, Eq)]
struct Entry {
    namespace: Option<Box<str>>,
    name: Box<str>,
}

impl Entry {
    fn of<K: Lookup>(object: &K) -> Self {
        Self {
            namespace: object.namespace().map(|n| n.into()),
            name: object.name().unwrap_or_default().into(),
        }
    }

    /// The store's reference of the object (its uid and resourceVersion, which the store's
    /// lookup ignores, left out).
    fn reference<K: Lookup>(&self, dyntype: &K::DynamicType) -> ObjectRef<K>
    where
        K::DynamicType: Clone,
    {
        let reference = ObjectRef::new_with(&self.name, dyntype.clone());
        match &self.namespace {
            Some(namespace) => reference.within(namespace),
            None => reference,
        }
    }
}

/// Files `entry` under `key`; a new key's list holds exactly one.
fn file(filed: &mut HashMap<String, Vec<Entry>>, key: String, entry: Entry) {
    match filed.entry(key) {
        std::collections::hash_map::Entry::Occupied(mut entries) => entries.get_mut().push(entry),
        std::collections::hash_map::Entry::Vacant(slot) => {
            slot.insert(vec![entry]);
        }
    }
}

/// Takes `entry` out of `key`'s objects, and the key out when none is left.
fn unfile(filed: &mut HashMap<String, Vec<Entry>>, key: &str, entry: &Entry) {
    if let Some(entries) = filed.get_mut(key) {
        entries.retain(|e| e != entry);
        if entries.is_empty() {
            filed.remove(key);
        }
    }
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
            index: Arc::default(),
            key_of,
            dyntype,
        }
    }

    pub fn as_reader(&self) -> Cache<K> {
        Cache {
            store: self.store.clone(),
            index: self.index.clone(),
            dyntype: self.dyntype.clone(),
        }
    }

    /// Applies `event` to the index, then to the store.
    pub fn apply(&mut self, event: &Event<K>) {
        {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            match event {
                Event::Apply(object) => {
                    let entry = Entry::of(object);
                    let key = (self.key_of)(object);
                    let before = self.key_in_store(&entry);
                    if before != key {
                        if let Some(before) = before {
                            unfile(&mut index.filed, &before, &entry);
                        }
                        if let Some(key) = key {
                            file(&mut index.filed, key, entry);
                        }
                    }
                }
                Event::Delete(object) => {
                    let entry = Entry::of(object);
                    if let Some(key) = self.key_in_store(&entry).or_else(|| (self.key_of)(object)) {
                        unfile(&mut index.filed, &key, &entry);
                    }
                }
                Event::Init => index.relist.clear(),
                Event::InitApply(object) => {
                    if let Some(key) = (self.key_of)(object) {
                        file(&mut index.relist, key, Entry::of(object));
                    }
                }
                Event::InitDone => index.filed = std::mem::take(&mut index.relist),
            }
        }
        self.writer.apply_watcher_event(event);
    }

    /// The key of the object's version in the store, if it is there and has one.
    fn key_in_store(&self, entry: &Entry) -> Option<String> {
        let stored = self.store.get(&entry.reference(&self.dyntype))?;
        (self.key_of)(&stored)
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
            .map(|entries| entries.iter().map(|e| e.reference(&self.dyntype)).collect())
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
