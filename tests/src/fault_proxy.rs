//! A fault-injecting HTTPS proxy between one client and the kube-apiserver, on loopback, for the
//! tests that prove faults lose nothing. It terminates TLS with the cluster's `webhook` serving
//! certificate (SAN 127.0.0.1, signed by the cluster CA, so a kubeconfig trusting the cluster
//! trusts it) and forwards each request over a TLS connection of its own, with the client's
//! `Authorization` header: this works for token identities (ServiceAccounts), not for client
//! certificates. A script chooses, per request, to pass it or to inject a [`Fault`]; the proxy
//! counts what passed through by `VERB resource[/subresource]`. It stops when dropped.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{Context as _, anyhow};
use bytes::Bytes;
use futures::StreamExt as _;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::{
    Request, Response, StatusCode,
    body::{Frame, Incoming},
    service::service_fn,
};
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioIo},
};
use kube::config::Kubeconfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};

use crate::{bins::target_dir, kubeconfig_path};

/// What the proxy does to one request instead of passing it.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answers `code` (with `Retry-After` seconds when given) without forwarding.
    Status {
        /// HTTP status, e.g. 429, 500, 503, 410.
        code: u16,
        /// `Retry-After` in seconds.
        retry_after: Option<u32>,
    },
    /// Forwards it, lets the server process it, then closes the connection instead of answering:
    /// a lost response.
    DropResponse,
    /// Forwards it after this delay.
    Delay(Duration),
    /// Closes the connection without forwarding.
    Reset,
    /// Forwards it (a watch) and cuts the response stream after this long.
    CutAfter(Duration),
    /// Answers a watch as the API server does when its resourceVersion is too old: 200 and one
    /// `ERROR` event with a 410 `Expired` Status.
    Expired,
}

impl Fault {
    /// Its name in [`FaultProxy::faulted`]'s keys.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::Status { .. } => "status",
            Fault::DropResponse => "drop-response",
            Fault::Delay(_) => "delay",
            Fault::Reset => "reset",
            Fault::CutAfter(_) => "cut",
            Fault::Expired => "expired",
        }
    }
}

/// One request, as the script sees it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `GET`, `PATCH`, ...
    pub method: String,
    /// `deployments`, `inferadeployments/status`, ...
    pub resource: String,
    /// The query string, e.g. `watch=true&resourceVersion=12`.
    pub query: String,
}

impl Seen {
    /// Whether it is a watch.
    pub fn is_watch(&self) -> bool {
        self.query
            .split('&')
            .any(|p| p == "watch=true" || p == "watch=1")
    }

    /// `METHOD resource`, the key of [`FaultProxy::count`].
    pub fn key(&self) -> String {
        format!("{} {}", self.method, self.resource)
    }
}

type Script = Box<dyn Fn(&Seen) -> Option<Fault> + Send + Sync>;

struct State {
    script: Mutex<Script>,
    counts: Mutex<BTreeMap<String, u64>>,
    /// Requests the script faulted, by key.
    faulted: Mutex<BTreeMap<String, u64>>,
    upstream: String,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Incoming>,
}

/// A running proxy; see the module documentation.
pub struct FaultProxy {
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
    kubeconfig: PathBuf,
}

type Body = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

impl FaultProxy {
    /// Starts a proxy in front of the server of `kubeconfig` (a token kubeconfig of the test
    /// cluster, e.g. a ServiceAccount's), and writes a copy of it that points at the proxy.
    pub async fn start(kubeconfig: &Path) -> anyhow::Result<Self> {
        let pki = kubeconfig_path()?
            .parent()
            .map(|dir| dir.join("pki"))
            .ok_or_else(|| anyhow!("the cluster's kubeconfig has no directory"))?;
        let read = |name: &str| {
            std::fs::read(pki.join(name))
                .with_context(|| format!("reading {name} in {}", pki.display()))
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&read("ca.crt")?) {
            roots.add(cert?)?;
        }
        let client_tls = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(client_tls)
            .https_only()
            .enable_http1()
            .build();
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(&read("webhook.crt")?).collect::<Result<_, _>>()?;
        let key = PrivateKeyDer::from_pem_slice(&read("webhook.key")?)?;
        let mut server_tls = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)?;
        server_tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_tls));

        let mut config: serde_json::Value =
            serde_json::to_value(Kubeconfig::read_from(kubeconfig)?)?;
        let server = config["clusters"][0]["cluster"]["server"]
            .as_str()
            .ok_or_else(|| anyhow!("{} names no server", kubeconfig.display()))?
            .trim_end_matches('/')
            .to_string();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr: SocketAddr = listener.local_addr()?;
        config["clusters"][0]["cluster"]["server"] = format!("https://{addr}").into();
        let proxied = target_dir()
            .join("e2e-logs")
            .join(format!("proxy-{}.kubeconfig", addr.port()));
        std::fs::write(&proxied, serde_json::to_vec_pretty(&config)?)?;

        let state = Arc::new(State {
            script: Mutex::new(Box::new(|_: &Seen| None)),
            counts: Mutex::new(BTreeMap::new()),
            faulted: Mutex::new(BTreeMap::new()),
            upstream: server,
            client: Client::builder(TokioExecutor::new()).build(connector),
        });
        let serving = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let state = serving.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = service_fn(move |request| handle(state.clone(), request));
                    // A fault ends a connection with an error: that is the point.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Ok(Self {
            state,
            task,
            kubeconfig: proxied,
        })
    }

    /// The kubeconfig that goes through the proxy.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Replaces the script: from now on each request gets `script`'s fault, or passes.
    pub fn script(&self, script: impl Fn(&Seen) -> Option<Fault> + Send + Sync + 'static) {
        if let Ok(mut current) = self.state.script.lock() {
            *current = Box::new(script);
        }
    }

    /// Requests seen with this `METHOD resource` key (faulted ones included).
    pub fn count(&self, key: &str) -> u64 {
        self.state
            .counts
            .lock()
            .map(|c| c.get(key).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Every request seen, by key.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.state
            .counts
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }

    /// All requests seen.
    pub fn total(&self) -> u64 {
        self.counts().values().sum()
    }

    /// Every fault given, by `fault METHOD resource` (see [`faulted`](Self::faulted)).
    pub fn faults(&self) -> BTreeMap<String, u64> {
        self.state
            .faulted
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }

    /// Requests the script gave a fault, by `fault METHOD resource` (the fault's
    /// [`name`](Fault::name), e.g. `expired GET inferadeployments`): what a test checks to know
    /// that its fault fired, not only that requests passed.
    pub fn faulted(&self, key: &str) -> u64 {
        self.state
            .faulted
            .lock()
            .map(|c| c.get(key).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `deployments` of `/apis/apps/v1/namespaces/ns/deployments/x`, `inferadeployments/status` of
/// `.../inferadeployments/x/status`, `namespaces` of `/api/v1/namespaces/ns`.
fn resource_of(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] | ["apis", _, _version, rest @ ..] => rest,
        _ => return path.to_string(),
    };
    let rest = match rest {
        ["namespaces", _, resource, more @ ..] => {
            let mut r = vec![*resource];
            r.extend(more);
            r
        }
        other => other.to_vec(),
    };
    match rest.as_slice() {
        [resource] | [resource, _] => resource.to_string(),
        [resource, _, sub, ..] => format!("{resource}/{sub}"),
        [] => path.to_string(),
    }
}

fn status_body(code: u16, retry_after: Option<u32>) -> Response<Body> {
    let reason = match code {
        410 => "Expired",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        _ => "InternalError",
    };
    let status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("injected by the test's fault proxy ({reason})"),
        "reason": reason, "code": code,
        "details": {"retryAfterSeconds": retry_after.unwrap_or(0)},
    });
    let mut response = Response::new(
        Full::new(Bytes::from(status.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() =
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert("retry-after", hyper::header::HeaderValue::from(seconds));
    }
    response
}

/// A watch answer of one `ERROR` event: 410 Expired. The API server's watch cache refuses a too
/// old resourceVersion with `errors.NewResourceExpired("too old resource version: %d (%d)")`
/// (k8s.io/apiserver `pkg/storage/cacher/watch_cache.go`), which reaches a watching client as an
/// `ERROR` event carrying that Status; kube-runtime's watcher re-lists on it (`watcher.rs`).
fn expired_event() -> Response<Body> {
    let event = serde_json::json!({
        "type": "ERROR",
        "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "too old resource version: 1 (2) (injected by the test's fault proxy)",
            "reason": "Expired", "code": 410,
        },
    });
    let mut response = Response::new(
        Full::new(Bytes::from(format!("{event}\n")))
            .map_err(|never| match never {})
            .boxed(),
    );
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// A fault or the upstream's answer. An `Err` closes the client's connection unanswered.
async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Body>, std::io::Error> {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    let resource = resource_of(&path);
    let key = format!("{method} {resource}");
    *state
        .counts
        .lock()
        .map_err(|_| std::io::Error::other("poisoned"))?
        .entry(key)
        .or_insert(0) += 1;
    let seen = Seen {
        method,
        resource,
        query,
    };
    let fault = state
        .script
        .lock()
        .map_err(|_| std::io::Error::other("poisoned"))?(&seen);
    if let Some(fault) = &fault {
        let mut faulted = state
            .faulted
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        *faulted
            .entry(format!("{} {}", fault.name(), seen.key()))
            .or_insert(0) += 1;
    }
    match &fault {
        Some(Fault::Status { code, retry_after }) => return Ok(status_body(*code, *retry_after)),
        Some(Fault::Expired) => return Ok(expired_event()),
        Some(Fault::Reset) => return Err(std::io::Error::other("injected reset")),
        Some(Fault::Delay(delay)) => tokio::time::sleep(*delay).await,
        _ => {}
    }
    let (mut parts, body) = request.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    parts.uri = format!("{}{path_and_query}", state.upstream)
        .parse()
        .map_err(std::io::Error::other)?;
    parts.headers.remove(hyper::header::HOST);
    let response = state
        .client
        .request(Request::from_parts(parts, body))
        .await
        .map_err(std::io::Error::other)?;
    let (parts, body) = response.into_parts();
    match fault {
        Some(Fault::DropResponse) => {
            // The server has processed it; read the answer so it is complete, then lose it.
            let _ = body.collect().await;
            Err(std::io::Error::other("injected lost response"))
        }
        Some(Fault::CutAfter(after)) => {
            let deadline = tokio::time::sleep(after);
            let frames = http_body_util::BodyStream::new(body)
                .map(|frame| {
                    frame.map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })
                })
                .take_until(deadline)
                .chain(futures::stream::once(async {
                    Err::<Frame<Bytes>, Box<dyn std::error::Error + Send + Sync>>(
                        "injected cut of the stream".into(),
                    )
                }));
            Ok(Response::from_parts(
                parts,
                BodyExt::boxed(StreamBody::new(frames)),
            ))
        }
        _ => Ok(Response::from_parts(
            parts,
            body.map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })
                .boxed(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::resource_of;

    #[test]
    fn resources_are_named_as_rbac_does() {
        assert_eq!(
            resource_of("/apis/apps/v1/namespaces/n/deployments"),
            "deployments"
        );
        assert_eq!(
            resource_of("/apis/apps/v1/namespaces/n/deployments/x"),
            "deployments"
        );
        assert_eq!(
            resource_of("/apis/infera.amd.com/v1alpha1/namespaces/n/inferadeployments/x/status"),
            "inferadeployments/status"
        );
        assert_eq!(resource_of("/api/v1/namespaces/n"), "namespaces");
        assert_eq!(resource_of("/api/v1/namespaces/n/pods"), "pods");
        assert_eq!(
            resource_of("/apis/coordination.k8s.io/v1/namespaces/n/leases/l"),
            "leases"
        );
    }
}
