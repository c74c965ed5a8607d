//! `infera-operator`: with no arguments, reconciles InferaDeployments in every namespace using
//! `KUBECONFIG` or the in-cluster configuration.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use futures::{FutureExt, future::BoxFuture};
use infera_operator::{
    controller,
    leader::{self, LeaseConfig},
    metrics::Metrics,
};
use k8s_openapi::api::coordination::v1::Lease;
use kube::{Api, Client, Config, client::ClientBuilder};
use tokio::signal::unix::{SignalKind, signal};
use tracing::{error, info};

/// Reconciles InferaDeployment resources (infera.amd.com/v1alpha1) into inference graphs.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Address serving /metrics, /healthz and /readyz.
    #[arg(long, env = "INFERA_HTTP_ADDR", default_value = "0.0.0.0:8080")]
    http_addr: SocketAddr,

    /// Elect one active replica through a Lease (run several replicas for high availability).
    #[arg(long, env = "INFERA_LEADER_ELECT")]
    leader_elect: bool,

    /// Namespace of the leader Lease (default: the pod's namespace, else infera-system).
    #[arg(long, env = "POD_NAMESPACE", default_value = "infera-system")]
    leader_election_namespace: String,

    /// Name of the leader Lease.
    #[arg(long, default_value = infera_core::naming::LEADER_LEASE)]
    lease_name: String,

    /// Seconds a leader keeps the Lease without renewing it; a standby takes over after that.
    #[arg(long, default_value_t = 15)]
    lease_duration: u64,

    /// Reconcile InferaDeployments of this namespace only (default: all namespaces).
    #[arg(long, short = 'n', env = "INFERA_WATCH_NAMESPACE")]
    namespace: Option<String>,

    /// Deployments reconciled at the same time.
    #[arg(long, default_value_t = 16)]
    concurrency: u16,

    /// Seconds after which an unchanged deployment is reconciled again, to catch anything a watch
    /// missed (a reconcile of an unchanged deployment sends no request).
    #[arg(long, env = "INFERA_RESYNC_SECONDS", default_value_t = infera_operator::RESYNC.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    resync_seconds: u64,

    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Json,
    Text,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    init_logging(args.log_format);
    let metrics = Arc::new(Metrics::default());
    let client = client(metrics.clone()).await?;

    let listener = tokio::net::TcpListener::bind(args.http_addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.http_addr))?;
    info!(addr = %listener.local_addr()?, "serving /metrics, /healthz and /readyz");
    tokio::spawn(infera_operator::http::serve(listener, metrics.clone()));

    let shutdown = shutdown_signal()?.shared();
    let identity = std::env::var("POD_NAME")
        .unwrap_or_else(|_| format!("{}-{}", hostname(), std::process::id()));
    let settings = controller::Settings {
        namespace: args.namespace.clone(),
        concurrency: args.concurrency,
        identity: identity.clone(),
        resync: Duration::from_secs(args.resync_seconds),
    };
    if !args.leader_elect {
        controller::run(client, metrics, settings, shutdown).await;
        return Ok(());
    }

    let leases = Api::<Lease>::namespaced(client.clone(), &args.leader_election_namespace);
    let lease = LeaseConfig {
        name: args.lease_name.clone(),
        identity: identity.clone(),
        duration: Duration::from_secs(args.lease_duration),
        retry: Duration::from_secs(args.lease_duration.div_ceil(3).max(1)),
    };
    // Ready as a standby: only the leader reconciles.
    metrics.set_ready(true);
    let run = |stop| controller::run(client, metrics.clone(), settings, stop);
    if let Some(reason) = leader::lead(&leases, &lease, &metrics, shutdown, run).await {
        error!(error = %reason, "lost leadership; exiting so a fresh replica can stand by");
        std::process::exit(1);
    }
    Ok(())
}

/// A client that counts every request it sends, by verb and resource, and records whether the
/// API answered (see [`Metrics::set_api_reachable`]).
async fn client(metrics: Arc<Metrics>) -> anyhow::Result<Client> {
    let config = Config::infer()
        .await
        .context("no Kubernetes configuration (KUBECONFIG or in-cluster)")?;
    let counted = metrics.clone();
    let counting =
        tower::util::MapRequestLayer::new(move |request: http::Request<kube::client::Body>| {
            counted.api_request(&request_label(&request));
            request
        });
    let answered = tower::util::MapResultLayer::new(move |result: Answer| {
        let status = result.as_ref().ok().map(http::Response::status);
        metrics.set_api_reachable(infera_operator::metrics::reachable(status));
        result
    });
    Ok(ClientBuilder::try_from(config)?
        .with_layer(&counting)
        .with_layer(&answered)
        .build())
}

/// What the client's service stack answers a request with.
type Answer = Result<http::Response<Box<kube::client::DynBody>>, tower::BoxError>;

/// `PATCH deployments`, `WATCH pods`, `GET leases`; a dry run as `PATCH deployments (dry run)`,
/// as it writes nothing.
fn request_label<B>(request: &http::Request<B>) -> String {
    let query = |is: fn(&str) -> bool| request.uri().query().is_some_and(|q| q.split('&').any(is));
    let watch = query(|p| p == "watch=true" || p == "watch=1");
    let dry_run = if query(|p| p.starts_with("dryRun=")) {
        " (dry run)"
    } else {
        ""
    };
    let verb = if watch {
        "WATCH"
    } else {
        request.method().as_str()
    };
    let segments: Vec<&str> = request.uri().path().trim_matches('/').split('/').collect();
    let resource = match segments.iter().position(|s| *s == "namespaces") {
        Some(i) if segments.len() > i + 2 => segments[i + 2],
        _ => match segments.first() {
            Some(&"api") => segments.get(2).copied().unwrap_or_default(),
            _ => segments.get(3).copied().unwrap_or_default(),
        },
    };
    format!("{verb} {resource}{dry_run}")
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "infera-operator".into())
}

/// Resolves on SIGTERM or SIGINT.
fn shutdown_signal() -> anyhow::Result<BoxFuture<'static, ()>> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
        info!("shutting down");
    }
    .boxed())
}

/// The static (musl) build allocates with jemalloc: musl's own allocator kept freed pages, so
/// the operator's resident memory crept up by 0.66 MiB a minute at steady state over 1,000
/// deployments, and peaked at 46.8 MiB while converging them; with jemalloc it stayed flat
/// (29.3–29.8 MiB over 5 minutes) and peaked at 38.2 MiB (docs/performance.md). Its options are
/// compiled in by release/build.sh (`JEMALLOC_SYS_WITH_MALLOC_CONF`: one arena, freed pages given
/// back after 1 s).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(test)]
mod tests {
    use super::request_label;

    fn label(method: &str, uri: &str) -> String {
        let request = http::Request::builder()
            .method(method)
            .uri(uri)
            .body(())
            .expect("a request");
        request_label(&request)
    }

    #[test]
    fn requests_are_counted_by_verb_and_resource_and_dry_runs_apart() {
        let apps = "/apis/apps/v1/namespaces/n/deployments";
        assert_eq!(
            label("PATCH", &format!("{apps}/d?fieldManager=m")),
            "PATCH deployments"
        );
        assert_eq!(
            label("PATCH", &format!("{apps}/d?dryRun=All&fieldManager=m")),
            "PATCH deployments (dry run)"
        );
        assert_eq!(
            label("GET", &format!("{apps}?watch=true&resourceVersion=1")),
            "WATCH deployments"
        );
        assert_eq!(
            label(
                "PATCH",
                "/apis/infera.amd.com/v1alpha1/namespaces/n/inferadeployments/d/status"
            ),
            "PATCH inferadeployments"
        );
        assert_eq!(label("GET", "/api/v1/pods?limit=50"), "GET pods");
        assert_eq!(
            label(
                "GET",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
            ),
            "GET customresourcedefinitions"
        );
    }
}
