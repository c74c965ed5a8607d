//! `logs NAME [POOL…]`: the logs of a deployment's pods together, each line prefixed by its pool
//! and pod (and rank, in a multi-node group). Tails are merged into one timeline by the API
//! server's timestamps; `-f` prints lines as they come and follows pods as they come and go (a
//! rollout, a scale) through a watch; `--operator` adds the operator's lines about the deployment.
//! Passwords in URLs are shown as `***` (upstream's router logs the NATS URL it connects to).

#[cfg(test)]
mod tests;

use std::collections::HashSet;

use futures::{
    AsyncBufReadExt, StreamExt,
    stream::{self, BoxStream, SelectAll},
};
use infera_core::InferaDeployment;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, ResourceExt,
    api::{ListParams, LogParams},
    runtime::watcher,
};

use crate::{
    bundle,
    cli::{GlobalArgs, LogsArgs},
    client::{self, Kube},
    error::{Error, Result, kube_message},
    pod_logs::{self, Container, Line, Source},
    printer::{Printer, Style},
    view, watch,
};

/// How many of the operator's last lines `--operator` searches for the deployment's.
const OPERATOR_LINES: i64 = 10_000;

pub async fn run(args: &LogsArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let kube = client::connect(global).await?;
    let idep = view::deployment(&kube, &kube.namespace, &args.name).await?;
    check_selection(&idep, &args.pools, args.rank)?;
    let operator = if args.operator {
        operator_listable(&kube, printer).await?
    } else {
        false
    };
    let mut shown = Shown {
        printer,
        timestamps: args.timestamps,
        namespace: kube.namespace.clone(),
        name: args.name.clone(),
        sources: Vec::new(),
        pools: Vec::new(),
        width: 0,
    };
    if args.follow {
        follow(&kube, args, operator, &mut shown).await
    } else {
        tails(&kube, args, operator, &mut shown).await
    }
}

/// The pools named exist in the spec (or are the parts the operator adds), and `--rank` names a
/// rank that one of them has.
fn check_selection(idep: &InferaDeployment, pools: &[String], rank: Option<u32>) -> Result<()> {
    let name = idep.name_any();
    let services = &idep.spec.services;
    let known = self::pools(idep);
    let unknown: Vec<String> = pools
        .iter()
        .filter(|pool| !known.contains(pool))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(Error::UnknownPools {
            object: format!(
                "InferaDeployment {}/{name}",
                idep.namespace().unwrap_or_default()
            ),
            unknown,
            pools: known,
        });
    }
    let Some(rank) = rank else { return Ok(()) };
    let ranks = services
        .iter()
        .filter(|(pool, _)| pools.is_empty() || pools.contains(pool))
        .map(|(_, service)| service.number_of_nodes.unwrap_or(1))
        .filter(|nodes| *nodes > 1)
        .max();
    match ranks {
        None if pools.is_empty() => Err(Error::Usage(format!(
            "--rank {rank}: no pool of {name} spans nodes (numberOfNodes > 1)"
        ))),
        None => Err(Error::Usage(format!(
            "--rank {rank}: none of {} spans nodes (numberOfNodes > 1)",
            pools.join(", ")
        ))),
        Some(nodes) if i64::from(rank) >= i64::from(nodes) => Err(Error::Usage(format!(
            "--rank {rank}: the multi-node pools of {name} have ranks 0 to {}",
            nodes - 1
        ))),
        Some(_) => Ok(()),
    }
}

/// Pools that are not in the spec: the managed NATS, the Endpoint Picker, the model download.
const ADDED: [&str; 3] = ["nats", "epp", "model"];

/// The pools `logs` takes: the spec's services, then the parts the operator adds.
pub fn pools(idep: &InferaDeployment) -> Vec<String> {
    let services = idep.spec.services.keys().cloned();
    services.chain(ADDED.map(String::from)).collect()
}

/// Whether the user may list the operator's pods; a warning when not.
async fn operator_listable(kube: &Kube, printer: &Printer) -> Result<bool> {
    let pods: Api<Pod> = Api::namespaced(kube.client.clone(), bundle::NAMESPACE);
    match pods
        .list(&ListParams::default().labels(bundle::OPERATOR_PODS).limit(1))
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 403 => {
            printer.warn(&format!(
                "--operator: cannot list the operator's pods in {}: {}",
                bundle::NAMESPACE,
                s.message
            ));
            Ok(false)
        }
        Err(e) => Err(Error::kube(
            format!("listing the operator's pods in {}", bundle::NAMESPACE),
            e,
        )),
    }
}

/// Whose log a source is: the graph's pods are shown as they are, the operator's by its lines
/// about this deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Of {
    Graph,
    Operator,
}

/// The sources seen so far and how their lines are shown: the prefix padded to the widest one, a
/// colour per pool where colour is on.
struct Shown<'a> {
    printer: &'a Printer,
    timestamps: bool,
    namespace: String,
    name: String,
    sources: Vec<(Source, Of)>,
    pools: Vec<String>,
    width: usize,
}

impl Shown<'_> {
    /// The index of `source`, added when new.
    fn index(&mut self, source: &Source, of: Of) -> usize {
        if let Some(index) = self.sources.iter().position(|(s, _)| s == source) {
            return index;
        }
        if !self.pools.contains(&source.pool) {
            self.pools.push(source.pool.clone());
        }
        self.width = self.width.max(source.prefix().chars().count());
        self.sources.push((source.clone(), of));
        self.sources.len() - 1
    }

    /// A line of the API server's (with its timestamp in front) as shown: `None` for an
    /// operator's line about something else.
    fn line(&self, source: usize, raw: &str) -> Option<Line> {
        let (time, text) = pod_logs::split_timestamp(raw);
        let text = match self.sources[source].1 {
            Of::Graph => text.to_string(),
            Of::Operator => pod_logs::operator_line(text, &self.namespace, &self.name)?,
        };
        let text = pod_logs::redact(&text).into_owned();
        let shown = match (self.timestamps, raw.split_once(' ')) {
            (true, Some((stamp, _))) if time.is_some() => format!("{stamp} {text}"),
            _ => text,
        };
        Some(Line {
            time,
            source,
            raw: shown,
        })
    }

    fn print(&self, line: &Line) {
        let (source, _) = &self.sources[line.source];
        let prefix = format!("{:<width$}", source.prefix(), width = self.width);
        let pool = self.pools.iter().position(|p| *p == source.pool);
        let prefix = self
            .printer
            .paint(Style::Series(pool.unwrap_or_default()), &prefix);
        self.printer.out(&format!("{prefix} {}", line.raw));
    }

    /// A note on stderr about one source.
    fn note(&self, source: usize, text: &str) {
        let prefix = self.sources[source].0.prefix();
        self.printer.note(&format!("{prefix} {text}"));
    }
}

/// Lines per container from the end of its log: `--tail` (-1: all), else all since `--since`,
/// else 10 (kubectl's default for a label selector).
fn tail_lines(tail: Option<i64>, since: bool) -> Option<i64> {
    match tail {
        Some(n) if n >= 0 => Some(n),
        Some(_) => None,
        None if since => None,
        None => Some(10),
    }
}

/// The request of one container's log.
fn params(container: &Container, args: &LogsArgs, of: Of, whole: bool) -> LogParams {
    let tail = match of {
        _ if whole => None,
        Of::Graph => tail_lines(args.tail, args.since.is_some()),
        Of::Operator => Some(OPERATOR_LINES),
    };
    LogParams {
        container: Some(container.name.clone()),
        follow: args.follow,
        previous: args.previous,
        since_seconds: if whole {
            None
        } else {
            args.since.map(|d| d.as_secs().max(1) as i64)
        },
        tail_lines: tail,
        timestamps: true,
        ..LogParams::default()
    }
}

/// The pods of the graph (and the operator's) and their containers to read.
async fn containers(
    kube: &Kube,
    args: &LogsArgs,
    operator: bool,
) -> Result<Vec<(Container, Of, String)>> {
    let selector = pod_logs::selector(&args.name, &args.pools, args.rank);
    let mut found = Vec::new();
    let mut lists = vec![(kube.namespace.clone(), selector, Of::Graph)];
    if operator {
        let operator = bundle::OPERATOR_PODS.to_string();
        lists.push((bundle::NAMESPACE.into(), operator, Of::Operator));
    }
    for (namespace, selector, of) in lists {
        let api: Api<Pod> = Api::namespaced(kube.client.clone(), &namespace);
        let pods = api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| Error::kube(format!("listing pods in {namespace} ({selector})"), e))?;
        for pod in &pods.items {
            for container in pod_logs::containers(pod, Some("operator")) {
                found.push((container, of, namespace.clone()));
            }
        }
    }
    Ok(found)
}

/// Without `-f`: each container's tail, read a few at a time, printed as one timeline.
async fn tails(kube: &Kube, args: &LogsArgs, operator: bool, shown: &mut Shown<'_>) -> Result<()> {
    let mut reads = Vec::new();
    for (container, of, namespace) in containers(kube, args, operator).await? {
        let index = shown.index(&container.source, of);
        if args.previous && container.restarts == 0 {
            continue;
        }
        if !container.started {
            let why = container.waiting.as_deref().unwrap_or("not started");
            shown.note(index, &format!("no log yet: {why}"));
            continue;
        }
        let params = params(&container, args, of, false);
        let api: Api<Pod> = Api::namespaced(kube.client.clone(), &namespace);
        reads.push(async move {
            let read = api.logs(&container.source.pod, &params).await;
            (index, of, read)
        });
    }
    if reads.is_empty() {
        let what = if args.previous {
            "no container of the selected pods has restarted: there are no previous logs"
        } else {
            "no pod of the deployment has a log yet"
        };
        shown
            .printer
            .note(&format!("{}/{}: {what}", shown.namespace, shown.name));
        return Ok(());
    }
    let total = reads.len();
    let read: Vec<_> = stream::iter(reads)
        .buffered(args.max_log_requests.max(1))
        .collect()
        .await;
    let mut failed = Vec::new();
    let mut tails = Vec::new();
    for (index, of, result) in read {
        match result {
            Ok(text) => {
                let mut tail: Vec<Line> = text
                    .lines()
                    .filter_map(|raw| shown.line(index, raw))
                    .collect();
                if of == Of::Operator
                    && let Some(keep) = tail_lines(args.tail, args.since.is_some())
                {
                    let keep = usize::try_from(keep).unwrap_or(usize::MAX);
                    tail.drain(..tail.len().saturating_sub(keep));
                }
                tails.push(tail);
            }
            Err(kube::Error::Api(s)) if s.code == 403 => {
                return Err(Error::kube(
                    format!("reading the log of {}", shown.sources[index].0.prefix()),
                    kube::Error::Api(s),
                ));
            }
            Err(e) => {
                shown.note(index, &format!("cannot read the log: {}", kube_message(e)));
                failed.push(index);
            }
        }
    }
    for line in pod_logs::merge(tails) {
        shown.print(&line);
    }
    match failed.len() {
        0 => Ok(()),
        n => Err(Error::Api {
            action: format!("logs of {}/{}", shown.namespace, shown.name),
            message: format!("{n} of {total} logs could not be read (see above)"),
            code: 0,
        }),
    }
}

/// What a followed log sends.
enum Streamed {
    Line(usize, String),
    Failed(usize, kube::Error),
    Broken(usize, std::io::Error),
}

/// One container's log, followed: its lines, or why it could not be read.
fn stream_of(
    api: Api<Pod>,
    pod: String,
    params: LogParams,
    index: usize,
) -> BoxStream<'static, Streamed> {
    stream::once(async move { api.log_stream(&pod, &params).await })
        .flat_map(move |opened| match opened {
            Ok(reader) => reader
                .lines()
                .map(move |line| match line {
                    Ok(line) => Streamed::Line(index, line),
                    Err(error) => Streamed::Broken(index, error),
                })
                .boxed(),
            Err(error) => stream::once(async move { Streamed::Failed(index, error) }).boxed(),
        })
        .boxed()
}

/// With `-f`: a watch on the graph's pods (and the operator's) starts following each container
/// when it has started — the pods listed first from their tails, those that come later (a rollout,
/// a scale, a restart) from their first line — until interrupted.
async fn follow(kube: &Kube, args: &LogsArgs, operator: bool, shown: &mut Shown<'_>) -> Result<()> {
    let selector = pod_logs::selector(&args.name, &args.pools, args.rank);
    let watch_pods = |namespace: &str, selector: &str, of: Of| {
        let api: Api<Pod> = Api::namespaced(kube.client.clone(), namespace);
        let what = format!("pods in {namespace} ({selector})");
        let config = watcher::Config::default().labels(selector);
        watch::recovering(watcher(api.clone(), config), what)
            .map(move |event| (api.clone(), of, event))
    };
    let graph = watch_pods(&kube.namespace, &selector, Of::Graph);
    let mut events = if operator {
        let operator = watch_pods(bundle::NAMESPACE, bundle::OPERATOR_PODS, Of::Operator);
        stream::select(graph, operator).boxed()
    } else {
        graph.boxed()
    };
    let mut streams: SelectAll<BoxStream<'static, Streamed>> = SelectAll::new();
    let mut started: HashSet<(String, String, i32)> = HashSet::new();
    let mut listed: HashSet<Of> = HashSet::new();
    loop {
        tokio::select! {
            Some((api, of, event)) = events.next() => {
                let (pod, first) = match event? {
                    watcher::Event::InitApply(pod) => (pod, true),
                    watcher::Event::Apply(pod) => (pod, false),
                    watcher::Event::InitDone => {
                        listed.insert(of);
                        continue;
                    }
                    _ => continue,
                };
                let whole = !first && listed.contains(&of);
                for container in pod_logs::containers(&pod, Some("operator")) {
                    let key = (pod.uid().unwrap_or_default(), container.name.clone(), container.restarts);
                    if !container.started || started.contains(&key) {
                        continue;
                    }
                    // The cap is on what the first list starts; a rollout's pods and a re-list
                    // after a watch desync come on top.
                    if !listed.contains(&of) && started.len() >= args.max_log_requests {
                        return Err(Error::Usage(format!(
                            "more than {} logs to follow at once (--max-log-requests): name the pools to follow, or raise it",
                            args.max_log_requests
                        )));
                    }
                    started.insert(key);
                    let index = shown.index(&container.source, of);
                    let params = params(&container, args, of, whole);
                    streams.push(stream_of(api.clone(), container.source.pod.clone(), params, index));
                }
            }
            Some(streamed) = streams.next(), if !streams.is_empty() => match streamed {
                Streamed::Line(index, raw) => {
                    if let Some(line) = shown.line(index, &raw) {
                        shown.print(&line);
                    }
                }
                Streamed::Failed(index, kube::Error::Api(s)) if s.code == 403 => {
                    return Err(Error::kube(
                        format!("reading the log of {}", shown.sources[index].0.prefix()),
                        kube::Error::Api(s),
                    ));
                }
                Streamed::Failed(index, error) => {
                    shown.note(index, &format!("cannot follow the log: {}", kube_message(error)));
                }
                Streamed::Broken(index, error) => {
                    shown.note(index, &format!("the log stream broke: {error}"));
                }
            },
            else => return Err(Error::WatchEnded { what: format!("pods of {}/{}", shown.namespace, shown.name) }),
        }
    }
}
