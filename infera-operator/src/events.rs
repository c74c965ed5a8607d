//! Publishes Events (events.k8s.io/v1) on InferaDeployments, as kube-runtime's `Recorder` does —
//! the same object, and the same Event repeated within six minutes counted in its `series` — but
//! remembering of each Event it published only what a repeat needs.
//!
//! kube-runtime 5.0's `Recorder` keeps every Event it published for six minutes, whole and keyed by
//! a second copy of its identity (`events.rs`, `cache: HashMap<EventKey, K8sEvent>`): about 1.5 KB
//! an Event, and a table that doubles as it grows. Over 1,000 new deployments (one Event each) it
//! was the largest thing the operator allocated while converging — 4.4 MB of the 28.8 MB heap
//! peak, measured with heaptrack — and it grows with the fleet. Here a repeat is found by a hash of
//! the same identity, and remembered as the name it was created under, its count and when it was
//! last seen.

use std::{
    collections::HashMap,
    hash::{DefaultHasher, Hash, Hasher},
    sync::Mutex,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event as K8sEvent},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
    runtime::events::{Event, EventType, Reporter},
};
use serde_json::json;

/// How long a published Event is counted again rather than created anew (kube-runtime's
/// `CACHE_TTL`, client-go's as well).
const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// Publishes Events as `reporter`.
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    published: Mutex<HashMap<u64, Published>>,
}

/// What a repeat of a published Event needs.
struct Published {
    name: String,
    count: i32,
    last: Instant,
}

impl Recorder {
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            published: Mutex::default(),
        }
    }

    /// Creates `event` about `regarding`, in its namespace; the same event (type, action, reason,
    /// what it regards and relates to) published within six minutes counts again in the first
    /// one's `series` instead.
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let key = self.key(event, regarding);
        let now = Instant::now();
        let repeat = self.published.lock().ok().and_then(|mut published| {
            published.retain(|_, p| now.duration_since(p.last) < SERIES_WINDOW);
            published.get(&key).map(|p| (p.name.clone(), p.count + 1))
        });
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let events = Api::<K8sEvent>::namespaced(self.client.clone(), namespace);
        let counted = match repeat {
            Some((name, count)) => {
                let series = json!({"series": {
                    "count": count,
                    "lastObservedTime": MicroTime(Timestamp::now()),
                }});
                match events
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&series))
                    .await
                {
                    Ok(_) => Some((name, count)),
                    // Deleted since (by someone, or its TTL): created anew below.
                    Err(kube::Error::Api(status)) if status.code == 404 => None,
                    Err(error) => return Err(error),
                }
            }
            None => None,
        };
        let (name, count) = match counted {
            Some(counted) => counted,
            None => {
                let created = self.event(event, regarding);
                events.create(&PostParams::default(), &created).await?;
                (created.metadata.name.unwrap_or_default(), 1)
            }
        };
        if let Ok(mut published) = self.published.lock() {
            published.insert(
                key,
                Published {
                    name,
                    count,
                    last: now,
                },
            );
        }
        Ok(())
    }

    /// The Event object kube-runtime's `Recorder` creates for `event`.
    fn event(&self, event: &Event, regarding: &ObjectReference) -> K8sEvent {
        let now = Timestamp::now();
        let controller = &self.reporter.controller;
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_ref().unwrap_or(controller),
                    now.as_nanosecond()
                )),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .into(),
            ),
            related: event.secondary.clone(),
            ..K8sEvent::default()
        }
    }

    /// What makes two Events the same one (kube-runtime's `EventKey`), hashed.
    fn key(&self, event: &Event, regarding: &ObjectReference) -> u64 {
        let mut hasher = DefaultHasher::new();
        event.type_.hash(&mut hasher);
        event.action.hash(&mut hasher);
        event.reason.hash(&mut hasher);
        for reference in [Some(regarding), event.secondary.as_ref()] {
            reference.map(reference_key).hash(&mut hasher);
        }
        hasher.finish()
    }
}

/// Every field of an ObjectReference (which does not implement `Hash`).
fn reference_key(reference: &ObjectReference) -> [&Option<String>; 7] {
    [
        &reference.api_version,
        &reference.field_path,
        &reference.kind,
        &reference.name,
        &reference.namespace,
        &reference.resource_version,
        &reference.uid,
    ]
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ObjectReference;
    use kube::runtime::events::{Event, EventType};
    use serde_json::json;

    use crate::fixtures;

    fn event(reason: &str, note: &str) -> Event {
        Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: Some(note.into()),
            action: "Reconcile".into(),
            secondary: None,
        }
    }

    /// An Event is created as kube-runtime's `Recorder` creates it; the same one again (even with
    /// another note) counts in its series; another reason, or another object, is a new Event.
    #[tokio::test]
    async fn a_repeated_event_counts_in_its_series_and_another_is_created() {
        let (ctx, _caches, mut server) = fixtures::context(json!({}), Vec::new()).await;
        let regarding = ObjectReference {
            api_version: Some("infera.amd.com/v1alpha1".into()),
            kind: Some("InferaDeployment".into()),
            name: Some("calm".into()),
            namespace: Some("demo".into()),
            uid: Some("calm-uid".into()),
            ..ObjectReference::default()
        };
        let other = ObjectReference {
            name: Some("other".into()),
            ..regarding.clone()
        };
        let publish = async {
            for (reason, note, about) in [
                ("Ready", "Ready: the note", &regarding),
                ("Ready", "Ready: the note", &regarding),
                ("Ready", "another note", &regarding),
                ("Degraded", "Degraded", &regarding),
                ("Ready", "Ready", &other),
            ] {
                ctx.recorder.publish(&event(reason, note), about).await?;
            }
            Ok::<_, kube::Error>(())
        };
        let (result, sent) = server.serve(publish).await;
        assert!(result.is_ok(), "{result:?}");
        let lines: Vec<&str> = sent.iter().map(|s| s.line.as_str()).collect();
        let create = "POST /apis/events.k8s.io/v1/namespaces/demo/events?";
        let name = sent[0].body["metadata"]["name"]
            .as_str()
            .unwrap_or_default();
        assert!(name.starts_with("calm."), "{name}");
        let repeat = format!("PATCH /apis/events.k8s.io/v1/namespaces/demo/events/{name}?");
        assert_eq!(lines, [create, &repeat, &repeat, create, create]);
        let created = &sent[0].body;
        assert_eq!(created["reason"], "Ready");
        assert_eq!(created["note"], "Ready: the note");
        assert_eq!(created["action"], "Reconcile");
        assert_eq!(created["type"], "Normal");
        assert_eq!(created["regarding"]["uid"], "calm-uid");
        assert_eq!(created["reportingController"], "infera-operator");
        assert!(created["eventTime"].is_string(), "{created}");
        assert_eq!(sent[1].body["series"]["count"], 2);
        assert_eq!(sent[2].body["series"]["count"], 3);
        assert!(sent[2].body["series"]["lastObservedTime"].is_string());
        assert_eq!(sent[3].body["reason"], "Degraded");
        assert_eq!(sent[4].body["regarding"]["name"], "other");
    }
}
