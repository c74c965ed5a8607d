//! `status NAME --load`: each Ready router and engine pod's `/metrics`, read through the API
//! server's proxy (`pods/proxy`), once, or twice a window apart; eight pods at a time, each read
//! bounded in time, one that does not answer named with why.

use std::time::Duration;

use futures::{StreamExt, stream};
use infera_core::{
    BackendFramework, InferaDeployment, PodHealth,
    naming::{ENGINE_CONTAINER, LABEL_COMPONENT, LABEL_SERVICE, LWS_LABEL_WORKER_INDEX},
    validate::main_container,
};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use serde::Serialize;

use crate::{
    client::Kube,
    load::{self, Engine, PoolLoad, Role, Scraped, Series},
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
    pub pools: Vec<PoolLoad>,
}

/// A pod to read: its pool, role, name and metrics port.
struct Target {
    pool: String,
    role: Role,
    pod: String,
    port: i32,
}

/// The Ready router and engine pods (the leader of each multi-node group: the others serve no
/// requests), with the port of their engine container (`http`, as rendered), else of the main
/// container of an `extraPodSpec`.
fn targets(pods: &[Pod]) -> Vec<Target> {
    pods.iter()
        .filter(|pod| PodHealth::of(pod).ready)
        .filter(|pod| {
            pod.labels()
                .get(LWS_LABEL_WORKER_INDEX)
                .is_none_or(|rank| rank == "0")
        })
        .filter_map(|pod| {
            let labels = pod.labels();
            let role = match labels.get(LABEL_COMPONENT).map(String::as_str) {
                Some("server") => Role::Router,
                Some("worker") => Role::Engine,
                _ => return None,
            };
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
                pool: labels.get(LABEL_SERVICE)?.clone(),
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

/// The load of `idep`'s pools from its `pods`: one sample, or two `window` apart.
pub async fn load(
    kube: &Kube,
    idep: &InferaDeployment,
    pods: &[Pod],
    window: Duration,
) -> LoadSection {
    let namespace = idep.namespace().unwrap_or_else(|| kube.namespace.clone());
    let targets = targets(pods);
    let first = read_all(kube, &namespace, &targets).await;
    let second = if window.is_zero() {
        None
    } else {
        tokio::time::sleep(window).await;
        Some(read_all(kube, &namespace, &targets).await)
    };
    let mut second = second.map(Vec::into_iter);
    let scraped: Vec<Scraped> = targets
        .into_iter()
        .zip(first)
        .map(|(target, first)| Scraped {
            pool: target.pool,
            role: target.role,
            first,
            second: second.as_mut().and_then(Iterator::next),
        })
        .collect();
    let engine = match idep.spec.backend_framework {
        BackendFramework::Sglang => Engine::Sglang,
        BackendFramework::Vllm => Engine::Vllm,
    };
    let window = (!window.is_zero()).then_some(window.as_secs_f64());
    LoadSection {
        window_seconds: window,
        pools: load::pools(&scraped, engine, window),
    }
}

#[cfg(test)]
mod tests;
