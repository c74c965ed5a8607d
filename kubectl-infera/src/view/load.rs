//! `status NAME --load`: each Ready router and engine pod's `/metrics`, read through the API
//! server's proxy (`pods/proxy`), once, or twice a window apart; eight pods at a time, each read
//! bounded in time, one that does not answer named with why. With `--prometheus URL`, the same
//! figures from a Prometheus that scrapes the graph's PodMonitor, one instant query each.

use std::time::Duration;

use futures::{StreamExt, stream};
use infera_core::{
    BackendFramework, InferaDeployment,
    load::{self, PoolLoad, Role, Scraped, Series, prometheus},
    metrics::SERVICE_LABEL,
    naming::ENGINE_CONTAINER,
    validate::main_container,
};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use serde::Serialize;

use crate::{
    client::Kube,
    error::{Error, Result},
};

/// How long one pod's `/metrics` may take.
const READ_TIMEOUT: Duration = Duration::from_secs(3);

/// The load section of `status NAME --load`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSection {
    /// Seconds between the two samples the rates and percentiles are over; none for one sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_seconds: Option<f64>,
    /// The Prometheus the figures come from; none when read from the pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<String>,
    pub pools: Vec<PoolLoad>,
}

/// A pod to read: its pool, role, name and metrics port.
struct Target {
    pool: String,
    role: Role,
    pod: String,
    port: i32,
}

/// The pods [`load::serving_pods`] names, with the port of their engine container (`http`, as
/// rendered), else of the main container of an `extraPodSpec`.
fn targets(pods: &[Pod]) -> Vec<Target> {
    load::serving_pods(pods)
        .into_iter()
        .filter_map(|(pod, pool, role)| {
            let spec = pod.spec.as_ref()?;
            let container = spec
                .containers
                .iter()
                .find(|c| c.name == ENGINE_CONTAINER)
                .or_else(|| spec.containers.get(main_container(spec)))?;
            let ports = container.ports.as_deref().unwrap_or_default();
            let port = ports
                .iter()
                .find(|p| p.name.as_deref() == Some("http"))
                .or_else(|| ports.first())?
                .container_port;
            Some(Target {
                pool: pool.to_string(),
                role,
                pod: pod.name_any(),
                port,
            })
        })
        .collect()
}

/// One pod's samples, or why it did not answer.
async fn read(kube: &Kube, namespace: &str, target: &Target) -> Result<Vec<Series>, String> {
    let uri = format!(
        "/api/v1/namespaces/{namespace}/pods/{}:{}/proxy/metrics",
        target.pod, target.port
    );
    let request = http::Request::get(uri)
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let why = |message: String| format!("{}: {message}", target.pod);
    match tokio::time::timeout(READ_TIMEOUT, kube.client.request_text(request)).await {
        Ok(Ok(text)) => Ok(load::parse(&text)),
        // RBAC's refusal, as opposed to the API server's own (a destination it does not proxy to).
        Ok(Err(kube::Error::Api(s)))
            if s.code == 403 && s.message.contains("cannot get resource") =>
        {
            Err(why(format!(
                "no access (needs get on pods/proxy): {}",
                s.message
            )))
        }
        Ok(Err(e)) => Err(why(crate::error::kube_message(e))),
        Err(_) => Err(why(format!("no answer within {}s", READ_TIMEOUT.as_secs()))),
    }
}

/// Every target's samples, eight at a time.
async fn read_all(
    kube: &Kube,
    namespace: &str,
    targets: &[Target],
) -> Vec<Result<Vec<Series>, String>> {
    stream::iter(targets)
        .map(|target| read(kube, namespace, target))
        .buffered(8)
        .collect()
        .await
}

/// One reading of every target's `/metrics`.
pub struct Reading {
    targets: Vec<Target>,
    samples: Vec<Result<Vec<Series>, String>>,
}

/// Reads the `/metrics` of the Ready router and engine pods among `pods`, eight at a time.
pub async fn read_pods(kube: &Kube, namespace: &str, pods: &[Pod]) -> Reading {
    let targets = targets(pods);
    let samples = read_all(kube, namespace, &targets).await;
    Reading { targets, samples }
}

/// The pools' load from the `later` reading, with rates and percentiles over the `window`
/// seconds since the `earlier` one for the pods both read (matched by name; a pod read only
/// later counts in the gauges alone).
pub fn load_section(
    backend: BackendFramework,
    earlier: Option<&Reading>,
    later: &Reading,
    window: Option<f64>,
) -> LoadSection {
    let scraped: Vec<Scraped> = later
        .targets
        .iter()
        .zip(&later.samples)
        .map(|(target, last)| {
            let last = last.clone();
            let first = earlier.and_then(|earlier| {
                let at = earlier.targets.iter().position(|t| t.pod == target.pod)?;
                earlier.samples.get(at).cloned()
            });
            let (first, second) = match first {
                Some(first) => (first, Some(last)),
                None => (last, None),
            };
            Scraped {
                pool: target.pool.clone(),
                role: target.role,
                first,
                second,
            }
        })
        .collect();
    let window = window.filter(|_| earlier.is_some());
    LoadSection {
        window_seconds: window,
        prometheus: None,
        pools: load::pools(&scraped, backend, window),
    }
}

/// How long one query to Prometheus may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The load of `idep`'s pools from the Prometheus at `url` (its series as the graph's PodMonitor
/// labels them), rates and percentiles over the last `window`: one instant query per figure,
/// eight at a time.
pub async fn load_from_prometheus(
    url: &str,
    idep: &InferaDeployment,
    window: Duration,
) -> Result<LoadSection> {
    let unreachable = |message: String| Error::Unreachable {
        context: format!("Prometheus {url}"),
        message,
    };
    let uri: http::Uri = url
        .parse()
        .map_err(|e| Error::Usage(format!("--prometheus {url}: not a URL ({e})")))?;
    let client = kube::Client::try_from(kube::Config::new(uri))
        .map_err(|e| unreachable(crate::error::chain(&e)))?;
    let namespace = idep.namespace().unwrap_or_default();
    let queries = prometheus::queries(
        &namespace,
        &idep.name_any(),
        idep.spec.backend_framework,
        window.as_secs().max(1),
    );
    let ask = async |(figure, query): (prometheus::Figure, String)| {
        let path = form_urlencoded::Serializer::new("/api/v1/query?".to_string())
            .append_pair("query", &query)
            .finish();
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| Error::Usage(e.to_string()))?;
        let body = match tokio::time::timeout(QUERY_TIMEOUT, client.request_text(request)).await {
            Ok(Ok(body)) => body,
            // Prometheus's refusal of a query is its JSON answer, with the error.
            Ok(Err(kube::Error::Api(s))) => s.message,
            Ok(Err(e)) => return Err(Error::kube(format!("querying Prometheus {url}"), e)),
            Err(_) => {
                return Err(unreachable(format!(
                    "no answer within {}s",
                    QUERY_TIMEOUT.as_secs()
                )));
            }
        };
        let values = prometheus::answer(&body, SERVICE_LABEL).map_err(|message| Error::Api {
            action: format!("querying Prometheus {url} for {query}"),
            message,
            code: 0,
        })?;
        Ok((figure, values))
    };
    let answers: Vec<_> = stream::iter(queries)
        .map(ask)
        .buffered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let order: Vec<String> = idep.spec.services.keys().cloned().collect();
    Ok(LoadSection {
        window_seconds: Some(window.as_secs_f64()),
        prometheus: Some(url.to_string()),
        pools: prometheus::pools(&answers, &order),
    })
}

/// The load of `idep`'s pools from its `pods`: one reading, or two `window` apart.
pub async fn load(
    kube: &Kube,
    idep: &InferaDeployment,
    pods: &[Pod],
    window: Duration,
) -> LoadSection {
    let namespace = idep.namespace().unwrap_or_else(|| kube.namespace.clone());
    let first = read_pods(kube, &namespace, pods).await;
    if window.is_zero() {
        return load_section(idep.spec.backend_framework, None, &first, None);
    }
    tokio::time::sleep(window).await;
    let second = read_pods(kube, &namespace, pods).await;
    load_section(
        idep.spec.backend_framework,
        Some(&first),
        &second,
        Some(window.as_secs_f64()),
    )
}

#[cfg(test)]
mod tests;
