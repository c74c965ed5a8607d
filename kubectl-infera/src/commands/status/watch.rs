//! `status --watch`: watches instead of polling. On a terminal (table output) the view is redrawn
//! on every change; otherwise one line, or one JSON document with `-o json`, per change that is
//! more than time passing.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use futures::{StreamExt, TryStreamExt, future, stream};
use infera_core::{InferaDeployment, naming};
use k8s_openapi::{
    api::core::v1::{Event, Pod},
    jiff::Timestamp,
};
use kube::{
    Api,
    runtime::{WatchStreamExt, reflector, watcher},
};

use super::{
    ideps,
    text::{change_line, detail_text, list_table, now_to_the_second},
};
use crate::{
    cli::{Output, StatusArgs},
    client::Kube,
    error::{Error, Result},
    printer::{Printer, Style},
    view::{self, Detail, Listed, LoadSection, Reading, Summary},
};

/// `(namespace, name)`.
type Key = (String, String);

/// The list as one watch has seen it so far.
#[derive(Debug, Default)]
struct Listing {
    current: BTreeMap<Key, Summary>,
    /// What a (re)list delivers, until it is complete.
    relisting: BTreeMap<Key, Summary>,
    /// The first complete list is in.
    listed: bool,
}

impl Listing {
    /// Applies one watcher event; returns the changes worth a line (`ADDED`, `MODIFIED`,
    /// `DELETED`). A change of age alone is none.
    fn apply(
        &mut self,
        event: watcher::Event<Listed>,
        now: Timestamp,
    ) -> Vec<(&'static str, Summary)> {
        let key = |s: &Summary| (s.namespace.clone(), s.name.clone());
        match event {
            watcher::Event::Init => {
                self.relisting.clear();
                vec![]
            }
            watcher::Event::InitApply(idep) => {
                let s = view::summarize(&idep, now);
                self.relisting.insert(key(&s), s);
                vec![]
            }
            watcher::Event::InitDone => {
                let kind = if self.listed { "MODIFIED" } else { "ADDED" };
                let changes = self
                    .relisting
                    .iter()
                    .filter(|(k, s)| self.current.get(*k) != Some(*s))
                    .map(|(_, s)| (kind, s.clone()))
                    .collect();
                self.current = std::mem::take(&mut self.relisting);
                self.listed = true;
                changes
            }
            watcher::Event::Apply(idep) => {
                let s = view::summarize(&idep, now);
                let old = self.current.insert(key(&s), s.clone());
                let kind = if old.is_some() { "MODIFIED" } else { "ADDED" };
                let ageless = |s: &Summary| Summary {
                    age_seconds: 0,
                    ..s.clone()
                };
                match old {
                    Some(old) if ageless(&old) == ageless(&s) => vec![],
                    _ => vec![(kind, s)],
                }
            }
            watcher::Event::Delete(idep) => {
                let s = view::summarize(&idep, now);
                self.current.remove(&key(&s));
                vec![("DELETED", s)]
            }
        }
    }
}

/// `status --watch`: one watch of the InferaDeployments.
pub async fn list(kube: &Kube, args: &StatusArgs, printer: &Printer) -> Result<()> {
    let api = ideps(kube, args.all_namespaces);
    let redraw = printer.stdout_is_tty() && matches!(args.output, Output::Table | Output::Wide);
    let events = watcher(api, watcher::Config::default()).default_backoff();
    let mut events = crate::watch::recovering(events, "InferaDeployments".into()).boxed();
    let mut listing = Listing::default();
    while let Some(event) = events.try_next().await? {
        let changes = listing.apply(event, Timestamp::now());
        if !listing.listed || (changes.is_empty() && !redraw) {
            continue;
        }
        if redraw {
            printer.clear_screen();
            let heading = format!(
                "watching InferaDeployments ({}); Ctrl-C to stop",
                now_to_the_second()
            );
            printer.out(&format!("{}\n", printer.paint(Style::Dim, &heading)));
            let rows: Vec<Summary> = listing.current.values().cloned().collect();
            let wide = args.output == Output::Wide;
            printer.out(&list_table(printer, &rows, args.all_namespaces, wide));
            continue;
        }
        for (kind, s) in changes {
            match args.output {
                Output::Json => {
                    printer.json_line(&serde_json::json!({"type": kind, "object": s}))?
                }
                _ => printer.out(&change_line(kind, &s)),
            }
        }
    }
    Ok(())
}

/// What changed in `status NAME --watch`.
enum Update {
    Deployment(Option<Box<InferaDeployment>>),
    /// A pod event; `true` once the initial list is complete.
    Pods(bool),
    /// A warning event; `true` once the initial list is complete (or events cannot be read).
    Events(bool),
    /// A reading of the pods' metrics (`--load`).
    Load(Reading),
    /// Time to ask Prometheus again (`--load --prometheus`).
    Query,
}

/// How often `--watch --load` reads the pods' metrics when `--load` names no window.
const LOAD_EVERY: Duration = Duration::from_secs(10);

/// Events are optional: a user who may not list them still gets the rest.
fn forbidden<T>(item: &std::result::Result<T, watcher::Error>) -> bool {
    matches!(
        item,
        Err(watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s))) if s.code == 403
    )
}

/// Three watches, no polling: the deployment (field selector metadata.name), its pods (label
/// selector) and the namespace's warning events; redraws from the cached state on each change.
/// With `--load`, the pods' metrics are read every window too (metrics are only ever read), and
/// the rates and latencies are over the time since the previous reading; with `--prometheus`,
/// Prometheus is asked every window (10 s when `--load` names none) for the figures over the
/// window (a minute when none), and a failed query is a note that keeps the last figures.
pub async fn detail(kube: &Kube, name: &str, args: &StatusArgs, printer: &Printer) -> Result<()> {
    let namespace = kube.namespace.clone();
    let (pod_store, pod_writer) = reflector::store::<Pod>();
    let (event_store, event_writer) = reflector::store::<Event>();
    let mut updates = detail_updates(kube, name, pod_writer, event_writer).boxed_local();
    let given = args.load.filter(|window| !window.is_zero());
    let every = given.unwrap_or(LOAD_EVERY);
    if args.prometheus.is_some() {
        let queries = stream::unfold(true, move |first| async move {
            if !first {
                tokio::time::sleep(every).await;
            }
            Some((Ok(Update::Query), false))
        });
        updates = stream::select(updates, queries.boxed_local()).boxed_local();
    } else if args.load.is_some() {
        let readings = load_readings(kube.clone(), pod_store.clone(), every);
        updates = stream::select(updates, readings).boxed_local();
    }
    let (mut idep, mut pods_listed, mut events_listed) = (None, false, false);
    let (mut earlier, mut load): (Option<(Reading, Instant)>, Option<LoadSection>) = (None, None);
    let mut last: Option<Detail> = None;
    let redraw = printer.stdout_is_tty() && matches!(args.output, Output::Table | Output::Wide);
    while let Some(update) = updates.next().await {
        match update? {
            Update::Deployment(Some(d)) => {
                // Prometheus is asked at once for a deployment just seen, not a window later.
                let first = idep.is_none();
                idep = Some(d);
                if first && let Some(url) = &args.prometheus {
                    load = query(printer, url, idep.as_deref(), given).await.or(load);
                }
            }
            Update::Deployment(None) if idep.is_some() => {
                printer.note(&format!("InferaDeployment {namespace}/{name} was deleted"));
                return Ok(());
            }
            Update::Deployment(None) => return Err(view::not_found(&namespace, name)),
            Update::Pods(done) => pods_listed |= done,
            Update::Events(done) => events_listed |= done,
            Update::Load(reading) => {
                let now = Instant::now();
                if let Some(current) = &idep {
                    let window = earlier.as_ref().map(|(_, at)| (now - *at).as_secs_f64());
                    let previous = earlier.as_ref().map(|(reading, _)| reading);
                    let backend = current.spec.backend_framework;
                    load = Some(view::load_section(backend, previous, &reading, window));
                }
                earlier = Some((reading, now));
            }
            Update::Query => {
                if let Some(url) = &args.prometheus {
                    load = query(printer, url, idep.as_deref(), given).await.or(load);
                }
            }
        }
        let Some(current) = &idep else { continue };
        if !(pods_listed && events_listed) {
            continue;
        }
        let pods: Vec<Pod> = pod_store.state().iter().map(|p| (**p).clone()).collect();
        let events: Vec<Event> = event_store.state().iter().map(|e| (**e).clone()).collect();
        let mut d = view::detail(current, &pods, &events, Timestamp::now());
        d.load.clone_from(&load);
        // A line of text says what the summary says: a new reading alone is no change there.
        let compared = |d: &Detail| {
            let mut d = ageless(d);
            if args.output != Output::Json {
                d.load = None;
            }
            d
        };
        if redraw {
            printer.clear_screen();
            printer.out(&detail_text(printer, &d));
        } else if last.as_ref().is_none_or(|l| compared(l) != compared(&d)) {
            match args.output {
                Output::Json => printer.json_line(&d)?,
                _ => printer.out(&change_line("MODIFIED", &d.summary)),
            }
        }
        last = Some(d);
    }
    Err(Error::WatchEnded {
        what: format!("{namespace}/{name}"),
    })
}

/// `idep`'s load from the Prometheus at `url` over `given` (a minute when none); a failure is a
/// note, and no new figures.
async fn query(
    printer: &Printer,
    url: &str,
    idep: Option<&InferaDeployment>,
    given: Option<Duration>,
) -> Option<LoadSection> {
    let window = given.unwrap_or(super::PROMETHEUS_WINDOW);
    match view::load_from_prometheus(url, idep?, window).await {
        Ok(load) => Some(load),
        Err(error) => {
            printer.note(&error.to_string());
            None
        }
    }
}

/// The detail without its ages, which tick every second: what a change is compared on.
fn ageless(d: &Detail) -> Detail {
    let mut d = d.clone();
    d.summary.age_seconds = 0;
    d.pods.iter_mut().for_each(|p| p.age_seconds = 0);
    d.warnings.iter_mut().for_each(|w| w.age_seconds = 0);
    d
}

/// A reading of the `/metrics` of the pods in `pods` once its first list is in, then one every
/// `every` after the last reading ended.
fn load_readings(
    kube: Kube,
    pods: reflector::Store<Pod>,
    every: Duration,
) -> stream::LocalBoxStream<'static, Result<Update>> {
    stream::unfold(true, move |first| {
        let (kube, pods) = (kube.clone(), pods.clone());
        async move {
            if first {
                pods.wait_until_ready().await.ok()?;
            } else {
                tokio::time::sleep(every).await;
            }
            let list: Vec<Pod> = pods.state().iter().map(|p| (**p).clone()).collect();
            let reading = view::read_pods(&kube, &kube.namespace, &list).await;
            Some((Ok(Update::Load(reading)), false))
        }
    })
    .boxed_local()
}

/// Whether a watcher event completes the initial list.
fn listed<K>(event: &watcher::Event<K>) -> bool {
    matches!(event, watcher::Event::InitDone)
}

/// The three watches of `status NAME --watch` as one stream of updates; pods and events are
/// reflected into the stores whose writers are given.
fn detail_updates(
    kube: &Kube,
    name: &str,
    pod_writer: reflector::store::Writer<Pod>,
    event_writer: reflector::store::Writer<Event>,
) -> stream::BoxStream<'static, Result<Update>> {
    let namespace = &kube.namespace;
    let ideps: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(kube.client.clone(), namespace);
    let events: Api<Event> = Api::namespaced(kube.client.clone(), namespace);
    let deployment = format!("InferaDeployment {namespace}/{name}");
    let deployment = crate::watch::object(ideps, name, deployment)
        .map_ok(|d| Update::Deployment(d.map(Box::new)));
    let selector = format!("{}={name}", naming::LABEL_DEPLOYMENT);
    let pods = watcher(pods, watcher::Config::default().labels(&selector))
        .default_backoff()
        .reflect(pod_writer);
    let pods = crate::watch::recovering(pods, format!("pods of {namespace}/{name}"))
        .map_ok(|e| Update::Pods(listed(&e)));
    let events = watcher(events, watcher::Config::default().fields("type=Warning"))
        .default_backoff()
        .reflect(event_writer)
        .take_while(|r| future::ready(!forbidden(r)));
    let events = crate::watch::recovering(events, format!("events in {namespace}"))
        .map_ok(|e| Update::Events(listed(&e)))
        .chain(stream::once(future::ready(Ok(Update::Events(true)))));
    stream::select_all([deployment.boxed(), pods.boxed(), events.boxed()]).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::tests::listed;

    #[test]
    fn a_watched_list_reports_additions_changes_and_deletions_but_not_ageing() {
        let mut listing = Listing::default();
        let at = |s| Timestamp::from_second(s).unwrap_or_default();
        let kinds = |changes: Vec<(&'static str, Summary)>| -> Vec<&'static str> {
            changes.into_iter().map(|(k, _)| k).collect()
        };
        assert!(listing.apply(watcher::Event::Init, at(2_000)).is_empty());
        let changes = listing.apply(watcher::Event::InitApply(listed("Deploying")), at(2_000));
        assert!(changes.is_empty() && !listing.listed);
        let changes = listing.apply(watcher::Event::InitDone, at(2_000));
        assert_eq!(kinds(changes), ["ADDED"]);
        let older = listing.apply(watcher::Event::Apply(listed("Deploying")), at(2_060));
        assert!(older.is_empty(), "only the age changed");
        let ready = listing.apply(watcher::Event::Apply(listed("Ready")), at(2_060));
        assert_eq!(kinds(ready), ["MODIFIED"]);
        let deleted = listing.apply(watcher::Event::Delete(listed("Ready")), at(2_060));
        assert_eq!(kinds(deleted), ["DELETED"]);
        assert!(listing.current.is_empty());
    }
}
