//! What the release tests share: the artifacts of `make release` (`target/krew/`, `target/image/`),
//! the release tools (`release/tools.sh`), commands whose failure is an error with their output, and
//! a small static HTTP server on 127.0.0.1 standing in for the GitHub release downloads.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, bail};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace version, which `make release` gives the archives (`kubectl-infera_<V>_<platform>`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The five Krew platforms, as krew/infera.yaml names them.
pub const PLATFORMS: [&str; 5] = [
    "linux_amd64",
    "linux_arm64",
    "darwin_amd64",
    "darwin_arm64",
    "windows_amd64",
];

/// The Rust target a Krew platform's binaries are built for, as release/versions.sh's `triple`
/// names it (`linux_amd64` → `x86_64-unknown-linux-musl`).
pub fn triple(platform: &str) -> anyhow::Result<String> {
    let script = format!(
        "source '{}' && triple {platform}",
        repo().join("release/versions.sh").display()
    );
    Ok(run(Command::new("bash").arg("-c").arg(script))?
        .trim()
        .to_string())
}

/// `target/krew/` after `make release`: the archives, `infera.yaml`, `operator-image.txt`,
/// `bundle.yaml`. Fails, saying how to make them, when the release was not built.
pub fn krew_dir() -> anyhow::Result<PathBuf> {
    let dir = repo().join("target/krew");
    if !dir.join("infera.yaml").is_file() {
        bail!(
            "{} has no infera.yaml: run `make release` first (the release tests check its artifacts)",
            dir.display()
        );
    }
    Ok(dir)
}

/// `target/install/` after `make release`: the Helm chart (`infera-operator-<V>.tgz`) and the
/// single-file manifest (`infera-operator-<V>.yaml`).
pub fn install_dir() -> anyhow::Result<PathBuf> {
    let dir = repo().join("target/install");
    if !dir.join(format!("infera-operator-{VERSION}.tgz")).is_file() {
        bail!(
            "{} has no infera-operator-{VERSION}.tgz: run `make release` first",
            dir.display()
        );
    }
    Ok(dir)
}

/// The operator image of `make release`: target/image, an OCI layout.
pub fn image_dir() -> anyhow::Result<PathBuf> {
    layout("image")
}

/// The SBOM attached to the operator image by `make release`: target/image-sbom, an OCI layout
/// whose one entry is the referrers index of the image (its artifact manifest inside).
pub fn image_sbom_dir() -> anyhow::Result<PathBuf> {
    layout("image-sbom")
}

/// The NATS image of `make release`: target/nats-image, an OCI layout, and beside its index
/// `reference.txt`, the reference the binaries pin (`REPO:TAG@sha256:…`).
pub fn nats_image_dir() -> anyhow::Result<PathBuf> {
    layout("nats-image")
}

fn layout(name: &str) -> anyhow::Result<PathBuf> {
    let dir = repo().join("target").join(name);
    if !dir.join("index.json").is_file() {
        bail!(
            "{} has no index.json: run `make release` first",
            dir.display()
        );
    }
    Ok(dir)
}

/// The archive of `platform` in `target/krew/`.
pub fn archive(platform: &str) -> anyhow::Result<PathBuf> {
    Ok(krew_dir()?.join(format!("kubectl-infera_{VERSION}_{platform}.tar.gz")))
}

/// A variable of release/versions.sh, e.g. `RELEASE_BIN` (where release/tools.sh put crane).
pub fn release_var(name: &str) -> anyhow::Result<String> {
    let versions = repo().join("release/versions.sh");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && printf %s \"${name}\"",
            versions.display()
        ))
        .output()
        .with_context(|| format!("sourcing {}", versions.display()))?;
    let value = String::from_utf8_lossy(&out.stdout).into_owned();
    if value.is_empty() {
        bail!("{name} is not set by {}", versions.display());
    }
    Ok(value)
}

/// A Go tool that release/tools.sh builds (`crane`, `registry`, `actionlint`, `helm`).
pub fn release_tool(name: &str) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(release_var("RELEASE_BIN")?).join(name);
    if !path.is_file() {
        bail!(
            "{} not found: run release/tools.sh (`make release` does)",
            path.display()
        );
    }
    Ok(path)
}

/// `helm ARGS…` (the release's Helm, `release/tools.sh`) in the repository; its stdout.
pub fn helm(args: &[&str]) -> anyhow::Result<String> {
    run(Command::new(release_tool("helm")?)
        .args(args)
        .current_dir(repo()))
}

/// Runs `command`; its stdout, or an error with the command, its status, stdout and stderr.
pub fn run(command: &mut Command) -> anyhow::Result<String> {
    let out = command
        .output()
        .with_context(|| format!("running {command:?}"))?;
    if !out.status.success() {
        bail!(
            "{command:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Unpacks a `.tar.gz` into `dir` (created) and returns the sorted names of its entries.
pub fn unpack(archive: &Path, dir: &Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    run(Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(dir))?;
    let listing = run(Command::new("tar").arg("-tzf").arg(archive))?;
    let mut names: Vec<String> = listing.lines().map(str::to_string).collect();
    names.sort();
    Ok(names)
}

/// `sha256sum` of a file, lowercase hex.
pub fn sha256(path: &Path) -> anyhow::Result<String> {
    let out = run(Command::new("sha256sum").arg(path))?;
    out.split_whitespace()
        .next()
        .map(str::to_string)
        .with_context(|| format!("sha256sum printed nothing for {}", path.display()))
}

/// A static file server on 127.0.0.1 (an ephemeral port) serving `GET /<name>` from one directory,
/// HTTP/1.0 style (one request per connection), and recording the paths it served. Stops on drop.
pub struct FileServer {
    port: u16,
    served: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    pub fn start(root: &Path) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let served = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (root, log, halt) = (root.to_path_buf(), served.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    serve(stream, &root, &log);
                }
            }
        });
        Ok(Self {
            port,
            served,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The paths served with 200 so far, in order.
    pub fn served(&self) -> Vec<String> {
        self.served.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, root: &Path, served: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    // Drain the headers.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
    let name = path.trim_start_matches('/');
    let file = (!name.is_empty() && !name.contains("..") && !name.contains('/'))
        .then(|| std::fs::read(root.join(name)).ok())
        .flatten();
    let mut stream = &stream;
    match file {
        Some(body) => {
            let _ = write!(
                stream,
                "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
            if let Ok(mut s) = served.lock() {
                s.push(path);
            }
        }
        None => {
            let _ = write!(
                stream,
                "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"
            );
        }
    }
}
