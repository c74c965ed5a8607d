//! A real Prometheus for the tests (v3.5.0, built from its Go module by `tests/cluster/build.sh`)
//! and an exporter of known rates for it to scrape: a router (`server`) and an SGLang decode
//! engine, labelled as the graph's PodMonitor labels the pods of `NAMESPACE/demo`.

use std::process::Stdio;
use std::time::Instant;

use anyhow::Context as _;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{target_dir, test_bin_dir};

/// A Prometheus scraping an [`Exporter`] every second; both stop when dropped.
pub struct Prometheus {
    /// Its URL, `http://127.0.0.1:PORT`.
    pub url: String,
    _process: tokio::process::Child,
    exporter: tokio::task::JoinHandle<()>,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.exporter.abort();
    }
}

impl Prometheus {
    /// Starts the exporter and a Prometheus scraping it as the pools `server` and `decode` of
    /// `namespace/demo`.
    pub async fn start(namespace: &str) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let target = listener.local_addr()?.port();
        let exporter = tokio::spawn(serve(listener));
        let port = crate::operator::free_port()?;
        let process = prometheus(namespace, target, port)?;
        Ok(Self {
            url: format!("http://127.0.0.1:{port}"),
            _process: process,
            exporter,
        })
    }
}

/// The exposition of `path` (`/server` or `/decode`) `t` seconds after the start: counters at
/// fixed rates (2 requests, 100 output and 400 prompt tokens per second), half the requests in
/// the lower bucket of each histogram.
fn exposition(path: &str, t: f64) -> String {
    let requests = 2.0 * t;
    let histogram = |name: &str, labels: &str, low: f64, high: f64| {
        format!(
            "{name}_bucket{{{labels}le=\"{low:?}\"}} {}\n{name}_bucket{{{labels}le=\"{high:?}\"}} {requests}\n{name}_bucket{{{labels}le=\"+Inf\"}} {requests}\n{name}_count{{{labels}}} {requests}\n",
            requests / 2.0
        )
    };
    match path {
        "/server" => format!(
            "infera_request_inflight{{router=\"r\"}} 3\n{}",
            histogram(
                "infera_request_duration_seconds",
                "router=\"r\",outcome=\"ok\",",
                0.5,
                1.0
            )
        ),
        _ => format!(
            "sglang:num_running_reqs 4\nsglang:num_queue_reqs 1\nsglang:token_usage 0.25\n\
             sglang:generation_tokens_total {}\nsglang:prompt_tokens_total {}\nsglang:num_requests_total {requests}\n{}{}",
            100.0 * t,
            400.0 * t,
            histogram("sglang:time_to_first_token_seconds", "", 0.1, 0.2),
            histogram("sglang:inter_token_latency_seconds", "", 0.01, 0.02),
        ),
    }
}

/// Serves [`exposition`] on `listener` until dropped.
async fn serve(listener: tokio::net::TcpListener) {
    let start = Instant::now();
    while let Ok((mut socket, _)) = listener.accept().await {
        let mut request = vec![0u8; 4096];
        let Ok(read) = socket.read(&mut request).await else {
            continue;
        };
        let head = String::from_utf8_lossy(&request[..read]);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let body = exposition(&path, start.elapsed().as_secs_f64());
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
    }
}

/// A Prometheus scraping `/server` and `/decode` on `target` every second, labelled as pools of
/// `namespace/demo`, on `port`; killed when dropped.
fn prometheus(namespace: &str, target: u16, port: u16) -> anyhow::Result<tokio::process::Child> {
    let dir = target_dir().join(format!("prometheus-{namespace}"));
    std::fs::create_dir_all(&dir)?;
    let job = |pool: &str| {
        json!({
            "job_name": pool, "metrics_path": format!("/{pool}"),
            "static_configs": [{"targets": [format!("127.0.0.1:{target}")], "labels": {
                "namespace": namespace, "infera_deployment": "demo",
                "infera_service": pool, "infera_role": pool, "pod": format!("demo-{pool}-0"),
            }}],
        })
    };
    let config = json!({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [job("server"), job("decode")],
    });
    let file = dir.join("prometheus.yml");
    std::fs::write(&file, serde_json::to_string(&config)?)?;
    let binary = test_bin_dir()?.join("prometheus");
    tokio::process::Command::new(&binary)
        .arg(format!("--config.file={}", file.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log"))?)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("{} (tests/cluster/build.sh builds it)", binary.display()))
}
