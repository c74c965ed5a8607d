//! Proxies on loopback for the kubeconfig `proxy-url` tests: an HTTP proxy (`CONNECT` tunnels,
//! RFC 9110 §9.3.6) and a SOCKS5 proxy (RFC 1928, no authentication, `CONNECT` only). Each
//! records where every tunnel it opened goes, so a test can tell the client really used it.

use std::sync::{Arc, Mutex};

use anyhow::{Context as _, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running proxy; stopped when dropped.
pub struct Proxy {
    /// For a kubeconfig's `proxy-url`: `http://127.0.0.1:PORT` or `socks5://127.0.0.1:PORT`.
    pub url: String,
    tunnels: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone, Copy)]
enum Kind {
    Http,
    Socks5,
}

impl Proxy {
    /// An HTTP proxy that tunnels `CONNECT host:port`.
    pub async fn http() -> anyhow::Result<Self> {
        Self::start(Kind::Http).await
    }

    /// A SOCKS5 proxy.
    pub async fn socks5() -> anyhow::Result<Self> {
        Self::start(Kind::Socks5).await
    }

    async fn start(kind: Kind) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let scheme = match kind {
            Kind::Http => "http",
            Kind::Socks5 => "socks5",
        };
        let tunnels = Arc::new(Mutex::new(Vec::new()));
        let seen = tunnels.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let seen = seen.clone();
                tokio::spawn(async move {
                    let _ = tunnel(kind, client, seen).await;
                });
            }
        });
        Ok(Self {
            url: format!("{scheme}://127.0.0.1:{port}"),
            tunnels,
            task,
        })
    }

    /// `host:port` of every tunnel opened so far.
    pub fn tunnels(&self) -> Vec<String> {
        self.tunnels.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads the client's request, connects to its target, answers, then copies both ways.
async fn tunnel(
    kind: Kind,
    mut client: TcpStream,
    seen: Arc<Mutex<Vec<String>>>,
) -> anyhow::Result<()> {
    let target = match kind {
        Kind::Http => http_connect(&mut client).await?,
        Kind::Socks5 => socks5_connect(&mut client).await?,
    };
    let mut upstream = TcpStream::connect(&target)
        .await
        .with_context(|| format!("connecting to {target}"))?;
    if let Ok(mut seen) = seen.lock() {
        seen.push(target);
    }
    match kind {
        Kind::Http => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        // Succeeded, bound to 0.0.0.0:0 (the client does not use it).
        Kind::Socks5 => client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?,
    }
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// `CONNECT host:port HTTP/1.1` and its headers; the target.
async fn http_connect(client: &mut TcpStream) -> anyhow::Result<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte).await? == 0 || head.len() > 16 * 1024 {
            bail!("the request ended before its headers did");
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    match head.split_whitespace().collect::<Vec<_>>()[..] {
        ["CONNECT", target, ..] => Ok(target.to_string()),
        _ => bail!("not a CONNECT request: {head}"),
    }
}

/// The SOCKS5 greeting (answered: no authentication) and a `CONNECT` request; the target.
async fn socks5_connect(client: &mut TcpStream) -> anyhow::Result<String> {
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting).await?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    client.read_exact(&mut methods).await?;
    if greeting[0] != 5 || !methods.contains(&0) {
        bail!("not a SOCKS5 client offering no authentication");
    }
    client.write_all(&[5, 0]).await?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request).await?;
    if request[..2] != [5, 1] {
        bail!("not a SOCKS5 CONNECT");
    }
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            client.read_exact(&mut ip).await?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut ip = [0u8; 16];
            client.read_exact(&mut ip).await?;
            format!("[{}]", std::net::Ipv6Addr::from(ip))
        }
        other => bail!("unknown SOCKS5 address type {other}"),
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).await?;
    Ok(format!("{host}:{}", u16::from_be_bytes(port)))
}
