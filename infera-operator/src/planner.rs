//! The SLO planner's loop: for each deployment whose `spec.planner` is on, once per interval, it
//! reads the `/metrics` of the deployment's Ready engine pods (the leader of each multi-node
//! group) straight from their pod IPs, pairs the reading with the one an interval before, runs
//! [`infera_core::planner::plan`] for each planned pool, and writes what it saw and decided to
//! `status.planner` (server-side apply as [`PLANNER_MANAGER`], which owns that field alone; a look
//! that sees nothing new writes nothing). In
//! `Act` it sets the pools' `replicas` as `kubectl infera scale` does — one JSON merge patch
//! guarded by the resourceVersion read — except while a Lockstep rollout is under way, whose
//! steps a new count would break. Each change recommended or made is an Event.
//!
//! With `spec.planner.prometheus` it asks that Prometheus instead, once per interval, for the
//! same figures over the interval (the series the graph's PodMonitor collects,
//! [`infera_core::load::prometheus`]); an unanswered query is a look without metrics, which
//! holds the counts and says so.
//!
//! Readings live in memory: after a restart (or a leader change) the first decision comes one
//! interval after the first reading. What the planner learned (each pool's capacity, its last
//! change) is in the status and survives both.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures::{StreamExt, stream};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::{
    client::legacy::{Client as HttpClient, connect::HttpConnector},
    rt::TokioExecutor,
};
use infera_core::{
    InferaDeployment, PlannerMode, PlannerStatus, RolloutStrategy,
    load::{self, PoolLoad, Role, Scraped, Series, prometheus},
    metrics::{DEPLOYMENT_LABEL, SERVICE_LABEL},
    naming::PLANNER_MANAGER,
    planner::{self, Change, Planner, Window},
    validate::ValidDeployment,
};
use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{
        events::{Event, EventType},
        reflector::{ObjectRef, Store},
    },
};
use serde_json::json;
use tracing::{info, warn};

use crate::{Error, Result, chain, context::Context};

/// How often the loop checks which deployments are due (a fraction of the shortest interval).
const TICK: Duration = Duration::from_secs(1);
/// How long one pod's `/metrics` may take.
const READ_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one query to Prometheus may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest `/metrics` body read.
const MAX_BODY: usize = 16 << 20;

type Http = HttpClient<HttpConnector, Empty<Bytes>>;

/// One reading of a deployment's engine pods.
struct Reading {
    at: Instant,
    /// Each pod's name, pool and samples (or why it did not answer).
    pods: Vec<(String, String, std::result::Result<Vec<Series>, String>)>,
}

/// Runs until dropped: the controller holds it while it leads.
pub async fn run(ctx: Arc<Context>, deployments: Store<InferaDeployment>) {
    let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
    let mut readings: HashMap<ObjectRef<InferaDeployment>, Reading> = HashMap::new();
    let mut asked: HashMap<ObjectRef<InferaDeployment>, Instant> = HashMap::new();
    // One client (and its connection pool) per Prometheus, kept while a deployment it plans names it.
    let mut prometheus_clients: HashMap<String, kube::Client> = HashMap::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if !ctx.observed.synced() {
            continue;
        }
        let (mut planned, mut named) = (HashSet::new(), HashSet::new());
        for idep in deployments.state() {
            let on = idep
                .spec
                .planner
                .as_ref()
                .is_some_and(|p| p.mode() != PlannerMode::Off);
            let reported = idep.status.as_ref().is_some_and(|s| s.planner.is_some());
            if !on && !reported {
                // The common case at fleet scale: no validation, nothing to do.
                continue;
            }
            let key = ObjectRef::from(idep.as_ref());
            let valid = on.then(|| infera_core::validate(&idep).ok()).flatten();
            let Some((valid, planner)) =
                valid.and_then(|v| v.planner.clone().map(|planner| (v, planner)))
            else {
                if reported && let Err(error) = write(&ctx, &idep, None).await {
                    warn!(deployment = idep.name_any(), error = %chain(&error), "cannot clear status.planner");
                }
                continue;
            };
            planned.insert(key.clone());
            let interval = Duration::from_secs(planner.interval_seconds.unsigned_abs());
            let pods = ctx.observed.snapshot(&idep).pods;
            let seen = match &planner.prometheus {
                Some(url) => {
                    named.insert(url.clone());
                    if asked.get(&key).is_some_and(|at| at.elapsed() < interval) {
                        continue;
                    }
                    asked.insert(key, Instant::now());
                    let asking = from_prometheus(&mut prometheus_clients, url, &valid, interval);
                    Some(asking.await.unwrap_or_else(|why| {
                        warn!(
                            deployment = idep.name_any(),
                            prometheus = url,
                            error = why,
                            "no metrics from Prometheus"
                        );
                        (Vec::new(), None, None)
                    }))
                }
                None => {
                    if readings
                        .get(&key)
                        .is_some_and(|r| r.at.elapsed() < interval)
                    {
                        continue;
                    }
                    let reading = read(&http, &valid, &pods).await;
                    // A reading more than two intervals old (a lost lead, a slow loop) is no
                    // window.
                    let earlier = readings
                        .remove(&key)
                        .filter(|e| e.at.elapsed() < interval * 2 + TICK);
                    let seen = earlier.map(|earlier| between(&valid, &earlier, &reading));
                    readings.insert(key, reading);
                    seen
                }
            };
            if let Some(seen) = seen
                && let Err(error) = look(&ctx, &idep, &valid, &planner, &seen, &pods).await
            {
                warn!(
                    namespace = idep.namespace().unwrap_or_default(),
                    deployment = idep.name_any(),
                    error = %chain(&error),
                    "the planner could not act"
                );
            }
        }
        readings.retain(|key, _| planned.contains(key));
        asked.retain(|key, _| planned.contains(key));
        prometheus_clients.retain(|url, _| named.contains(url));
    }
}

/// Reads the Ready engine pods of `valid` (a multi-node group's leader alone), eight at a time.
async fn read(http: &Http, valid: &ValidDeployment, pods: &[Arc<Pod>]) -> Reading {
    let at = Instant::now();
    let targets: Vec<(String, String, String, i32)> =
        load::serving_pods(pods.iter().map(AsRef::as_ref))
            .into_iter()
            .filter(|(_, _, role)| *role == Role::Engine)
            .filter_map(|(pod, pool, _)| {
                let port = valid
                    .workers
                    .iter()
                    .find(|w| w.pod.service == pool)?
                    .pod
                    .port;
                let ip = pod.status.as_ref()?.pod_ip.clone()?;
                Some((pod.name_any(), pool.to_string(), ip, port))
            })
            .collect();
    let pods = stream::iter(targets)
        .map(|(name, pool, ip, port)| async move {
            let samples = metrics(http, &ip, port)
                .await
                .map_err(|why| format!("{name}: {why}"));
            (name, pool, samples)
        })
        .buffered(8)
        .collect()
        .await;
    Reading { at, pods }
}

/// The samples of `http://ip:port/metrics`.
async fn metrics(http: &Http, ip: &str, port: i32) -> std::result::Result<Vec<Series>, String> {
    let host = if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip.to_string()
    };
    let uri: http::Uri = format!("http://{host}:{port}/metrics")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let answer = async {
        let response = http.get(uri).await.map_err(|e| format!("{e}"))?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let body = Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| format!("{e}"))?
            .to_bytes();
        Ok(load::parse(&String::from_utf8_lossy(&body)))
    };
    tokio::time::timeout(READ_TIMEOUT, answer)
        .await
        .map_err(|_| format!("no answer within {}s", READ_TIMEOUT.as_secs()))?
}

/// The window from `earlier` to `later`, in the pairs [`load::pools`] reads: each pod `later`
/// read, with its `earlier` sample if it had one; each under its pool, or all under one when
/// `whole` (for the deployment's latencies).
fn scraped(earlier: &Reading, later: &Reading, whole: bool) -> Vec<Scraped> {
    later
        .pods
        .iter()
        .map(|(name, pool, last)| {
            let first = earlier
                .pods
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, _, s)| s.clone());
            let (first, second) = match first {
                Some(first) => (first, Some(last.clone())),
                None => (last.clone(), None),
            };
            Scraped {
                pool: if whole { String::new() } else { pool.clone() },
                role: Role::Engine,
                first,
                second,
            }
        })
        .collect()
}

/// What the engines showed over one interval: each pool's load, the deployment's TTFT and
/// inter-token latency p95s.
type Seen = (Vec<PoolLoad>, Option<f64>, Option<f64>);

/// A query to Prometheus: the figure it answers, its PromQL, the label its answer is read by.
type Question = ((prometheus::Figure, String), &'static str);

/// The queries of `valid`'s figures over the last `interval`, each with the label its answer is
/// read by, and its pools in order: what [`ask`] sends.
fn questions(valid: &ValidDeployment, interval: Duration) -> (Vec<Question>, Vec<String>) {
    let (namespace, name, seconds) = (&valid.namespace, &valid.name, interval.as_secs().max(1));
    let by_pool = prometheus::queries(namespace, name, valid.backend, seconds)
        .into_iter()
        .map(|query| (query, SERVICE_LABEL));
    let whole = prometheus::deployment_latencies(namespace, name, valid.backend, seconds)
        .into_iter()
        .map(|query| (query, DEPLOYMENT_LABEL));
    let order = valid
        .workers
        .iter()
        .map(|w| w.pod.service.clone())
        .collect();
    (by_pool.chain(whole).collect(), order)
}

/// What the Prometheus at `url` saw of `valid` over the last `interval`; its client made once
/// and kept in `clients` (validation made `url` an HTTP URL).
async fn from_prometheus(
    clients: &mut HashMap<String, kube::Client>,
    url: &str,
    valid: &ValidDeployment,
    interval: Duration,
) -> std::result::Result<Seen, String> {
    let client = match clients.get(url) {
        Some(client) => client.clone(),
        None => {
            let uri: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
            let client = kube::Client::try_from(kube::Config::new(uri)).map_err(|e| chain(&e))?;
            clients.insert(url.to_string(), client.clone());
            client
        }
    };
    let (queries, order) = questions(valid, interval);
    ask(client, queries, order).await
}

/// The figures of the `queries` (each pool's load, the deployment's p95s) from the Prometheus of
/// `client`, eight at a time; the pools in `order`.
async fn ask(
    client: kube::Client,
    queries: Vec<Question>,
    order: Vec<String>,
) -> std::result::Result<Seen, String> {
    // The futures made first: a stream mapping by a closure over `&'static str` is not Send
    // for every lifetime (rustc's higher-ranked inference), which spawning the loop needs.
    let asking: Vec<_> = queries
        .into_iter()
        .map(|question| query_one(client.clone(), question))
        .collect();
    let answers: Vec<_> = stream::iter(asking)
        .buffered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<std::result::Result<_, String>>()?;
    let of = |wanted: &str| {
        answers
            .iter()
            .filter(|(by, _, _)| *by == wanted)
            .map(|(_, figure, values)| (*figure, values.clone()))
            .collect::<Vec<_>>()
    };
    let pools = prometheus::pools(&of(SERVICE_LABEL), &order);
    let whole = of(DEPLOYMENT_LABEL);
    let p95 = |figure| {
        whole
            .iter()
            .find(|(f, _)| *f == figure)
            .and_then(|(_, values)| values.first())
            .map(|(_, v)| *v)
    };
    Ok((
        pools,
        p95(prometheus::Figure::Ttft(prometheus::Quantile::P95)),
        p95(prometheus::Figure::Itl(prometheus::Quantile::P95)),
    ))
}

/// Prometheus's values of one query (of a figure), by the series' label it names.
async fn query_one(
    client: kube::Client,
    ((figure, query), by): Question,
) -> std::result::Result<(&'static str, prometheus::Figure, Vec<(String, f64)>), String> {
    let path = form_urlencoded::Serializer::new("/api/v1/query?".to_string())
        .append_pair("query", &query)
        .finish();
    let request = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| format!("{e}"))?;
    let body = match tokio::time::timeout(QUERY_TIMEOUT, client.request_text(request)).await {
        Ok(Ok(body)) => body,
        // Prometheus's refusal of a query is its JSON answer, with the error.
        Ok(Err(kube::Error::Api(s))) => s.message,
        Ok(Err(e)) => return Err(chain(&e)),
        Err(_) => return Err(format!("no answer within {}s", QUERY_TIMEOUT.as_secs())),
    };
    Ok((by, figure, prometheus::answer(&body, by)?))
}

/// What the engines showed over the window from `earlier` to `later`, read from the pods.
fn between(valid: &ValidDeployment, earlier: &Reading, later: &Reading) -> Seen {
    let seconds = later.at.duration_since(earlier.at).as_secs_f64();
    let pools = load::pools(
        &scraped(earlier, later, false),
        valid.backend,
        Some(seconds),
    );
    let whole = load::pools(&scraped(earlier, later, true), valid.backend, Some(seconds));
    let whole = whole.first();
    (
        pools,
        whole.and_then(|w| w.ttft).map(|p| p.p95),
        whole.and_then(|w| w.itl).map(|p| p.p95),
    )
}

/// One look: [`planner::look`] over what was `seen` (and `pods`, the deployment's, for those that
/// wait for capacity); in `Act` the counts are set, then each change is an Event and the status
/// is written when it changed.
async fn look(
    ctx: &Context,
    idep: &InferaDeployment,
    valid: &ValidDeployment,
    planner: &Planner,
    seen: &Seen,
    pods: &[Arc<Pod>],
) -> Result<()> {
    let (pools, ttft_p95, itl_p95) = seen;
    let status = idep.status.as_ref();
    let window = Window {
        now: Timestamp::now(),
        revision: status.and_then(|s| s.update_revision.clone()),
        rolling: valid.rollout.strategy == RolloutStrategy::Lockstep
            && status.is_some_and(|s| s.rollout_start_time.is_some()),
        pools,
        ttft_p95: *ttft_p95,
        itl_p95: *itl_p95,
        unplaced: planner::unplaced(pods.iter().map(AsRef::as_ref)),
    };
    let replicas = |pool: &str| {
        idep.spec
            .services
            .get(pool)
            .and_then(|s| s.replicas)
            .unwrap_or(1)
    };
    let previous = status.and_then(|s| s.planner.as_ref());
    let (next, changes) = planner::look(planner, replicas, previous, &window);
    if planner.acts && !changes.is_empty() {
        scale(ctx, idep, &changes).await?;
    }
    for change in &changes {
        publish(ctx, idep, planner.acts, change).await;
    }
    if previous.is_none_or(|p| !same_but_time(p, &next)) {
        write(ctx, idep, Some(&next)).await?;
    }
    Ok(())
}

/// Whether two statuses differ only in when they were looked at: then nothing is written.
fn same_but_time(a: &PlannerStatus, b: &PlannerStatus) -> bool {
    let timeless = |s: &PlannerStatus| PlannerStatus {
        last_look_time: None,
        ..s.clone()
    };
    timeless(a) == timeless(b)
}

/// Sets the pools' replicas: one merge patch as [`PLANNER_MANAGER`], guarded by the
/// resourceVersion read (a conflict waits for the next interval).
async fn scale(ctx: &Context, idep: &InferaDeployment, changes: &[Change]) -> Result<()> {
    let name = idep.name_any();
    let namespace = idep
        .namespace()
        .ok_or_else(|| Error::NoNamespace { name: name.clone() })?;
    let patch = infera_core::replicas::patch(
        idep.metadata.resource_version.as_deref(),
        changes.iter().map(|c| (c.pool.as_str(), c.to)),
    );
    let params = PatchParams {
        field_manager: Some(PLANNER_MANAGER.into()),
        ..PatchParams::default()
    };
    Api::<InferaDeployment>::namespaced(ctx.client.clone(), &namespace)
        .patch(&name, &params, &Patch::Merge(patch))
        .await
        .map_err(|source| Error::Scale { name, source })?;
    Ok(())
}

/// Writes `status.planner` (server-side apply, as the field's only manager); `None` removes it.
async fn write(
    ctx: &Context,
    idep: &InferaDeployment,
    status: Option<&PlannerStatus>,
) -> Result<()> {
    let status = match status {
        Some(planner) => json!({"planner": planner}),
        None => json!({}),
    };
    ctx.apply_status(idep, PLANNER_MANAGER, false, status)
        .await
        .map(drop)
}

/// The Event of one change: `PlannerScaled` (`Act`) or `PlannerRecommends` (`Advise`).
async fn publish(ctx: &Context, idep: &InferaDeployment, acted: bool, change: &Change) {
    let Change {
        pool,
        from,
        to,
        reason,
    } = change;
    let note = if acted {
        format!("scaled {pool} from {from} to {to}: {reason}")
    } else {
        format!("recommends {pool} {to} (now {from}): {reason}")
    };
    info!(
        namespace = idep.namespace().unwrap_or_default(),
        deployment = idep.name_any(),
        pool,
        from,
        to,
        "planner {note}"
    );
    let event = Event {
        type_: EventType::Normal,
        reason: if acted {
            "PlannerScaled"
        } else {
            "PlannerRecommends"
        }
        .into(),
        note: Some(note.chars().take(1000).collect()),
        action: "Plan".into(),
        secondary: None,
    };
    if let Err(error) = ctx.recorder.publish(&event, &idep.object_ref(&())).await {
        warn!(deployment = idep.name_any(), %error, "cannot publish event");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(value: f64) -> std::result::Result<Vec<Series>, String> {
        Ok(load::parse(&format!(
            "sglang:generation_tokens_total {value}\n"
        )))
    }

    #[test]
    fn a_window_pairs_each_pod_with_its_earlier_sample_by_name() {
        let at = Instant::now();
        let earlier = Reading {
            at,
            pods: vec![
                ("a".into(), "decode".into(), sample(10.0)),
                ("gone".into(), "decode".into(), sample(99.0)),
            ],
        };
        let later = Reading {
            at,
            pods: vec![
                ("a".into(), "decode".into(), sample(30.0)),
                (
                    "new".into(),
                    "prefill".into(),
                    Err("new: no answer within 3s".into()),
                ),
            ],
        };
        let pools = scraped(&earlier, &later, false);
        assert_eq!(
            pools,
            [
                Scraped {
                    pool: "decode".into(),
                    role: Role::Engine,
                    first: sample(10.0),
                    second: Some(sample(30.0)),
                },
                Scraped {
                    pool: "prefill".into(),
                    role: Role::Engine,
                    first: Err("new: no answer within 3s".into()),
                    second: None,
                },
            ]
        );
        let whole = scraped(&earlier, &later, true);
        assert!(whole.iter().all(|s| s.pool.is_empty()), "{whole:?}");
        // 20 tokens in 10 s on the one pod read twice.
        let rates = load::pools(&pools, infera_core::BackendFramework::Sglang, Some(10.0));
        assert_eq!(rates[0].tokens_per_second, Some(2.0));
    }
}
