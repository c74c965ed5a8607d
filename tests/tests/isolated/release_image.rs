//! The operator image of `make release` (target/image, an OCI layout) pushes to a real registry on
//! loopback — the Distribution registry, built from its Go module by release/tools.sh — with crane
//! (go-containerregistry), and what comes back is what the release promises: one index for
//! linux/amd64 + linux/arm64, each image only the static operator binary, run as 65532:65532, and
//! the index digest is the one the release's bundle pins and the plugin installs; the SBOM the
//! image holds is also attached to its index as an OCI 1.1 referrer; both released images sign
//! with cosign (release/sign.sh) and verify.
//! Needs `make release`; no cluster.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use infera_e2e::release::{
    VERSION, archive, image_dir, image_sbom_dir, install_dir, krew_dir, nats_image_dir,
    release_tool, release_var, repo, run, triple, unpack,
};
use infera_e2e::{target_dir, unique_suffix};

/// A Distribution registry (`registry serve`) on 127.0.0.1, storing into a directory of the test;
/// killed on drop.
struct Registry {
    child: Child,
    host: String,
}

impl Registry {
    fn start(dir: &Path) -> anyhow::Result<Self> {
        // A free port: bind, read it, release it for the registry.
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let host = format!("127.0.0.1:{port}");
        let config = dir.join("config.yml");
        // distribution v3 configuration (docs/content/about/configuration.md): filesystem storage,
        // HTTP on loopback, no auth, no TLS.
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
                dir.join("data").display()
            ),
        )?;
        let log = std::fs::File::create(dir.join("registry.log"))?;
        let child = Command::new(release_tool("registry")?)
            .arg("serve")
            .arg(&config)
            .stdout(log.try_clone()?)
            .stderr(log)
            .stdin(Stdio::null())
            // No OpenTelemetry exporter (distribution v3 traces with OTel when configured).
            .env("OTEL_TRACES_EXPORTER", "none")
            .spawn()
            .context("starting the registry")?;
        let mut registry = Self { child, host };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ping = Command::new(release_tool("crane")?)
                .args(["catalog", &registry.host])
                .output()?;
            if ping.status.success() {
                return Ok(registry);
            }
            if let Some(status) = registry.child.try_wait()? {
                bail!(
                    "the registry exited ({status}); see {}",
                    dir.join("registry.log").display()
                );
            }
            if Instant::now() > deadline {
                bail!(
                    "the registry did not answer on {} within 20 s; see {}",
                    registry.host,
                    dir.join("registry.log").display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn crane(args: &[&str]) -> anyhow::Result<String> {
    run(Command::new(release_tool("crane")?).args(args))
}

fn json(text: &str) -> anyhow::Result<serde_json::Value> {
    serde_json::from_str(text).with_context(|| format!("not JSON: {text}"))
}

fn work() -> anyhow::Result<PathBuf> {
    let dir = target_dir()
        .join("e2e-logs")
        .join(format!("release-image-{}", unique_suffix()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The root filesystem of `reference`'s `platform` image (`crane export`), unpacked into a
/// directory of `work`: its entries as `tar -tv` lists them, and the directory.
fn unpacked(
    work: &Path,
    reference: &str,
    platform: &str,
) -> anyhow::Result<(Vec<String>, PathBuf)> {
    let name = format!(
        "{}-{}",
        reference.replace(['/', ':', '@'], "_"),
        platform.replace('/', "-")
    );
    let rootfs = work.join(format!("{name}.tar"));
    crane(&[
        "export",
        "--platform",
        platform,
        reference,
        &rootfs.display().to_string(),
    ])?;
    let listing = run(Command::new("tar").arg("-tvf").arg(&rootfs))?;
    let dir = work.join(platform.replace('/', "-"));
    std::fs::create_dir_all(&dir)?;
    run(Command::new("tar")
        .arg("-xf")
        .arg(&rootfs)
        .arg("-C")
        .arg(&dir))?;
    Ok((listing.lines().map(str::to_string).collect(), dir))
}

/// Whether `binary` is a static executable for `machine` (as `file` names it: x86-64, aarch64).
fn static_binary(binary: &Path, machine: &str) -> anyhow::Result<()> {
    let kind = run(Command::new("file").arg(binary))?;
    ensure!(
        kind.contains(machine) && kind.contains("statically linked"),
        "{kind}"
    );
    Ok(())
}

/// The image the release pins (target/krew/operator-image.txt), as repository and digest.
fn pinned_image() -> anyhow::Result<(String, String)> {
    let pinned = std::fs::read_to_string(krew_dir()?.join("operator-image.txt"))?;
    let (repository, digest) = pinned
        .trim()
        .split_once('@')
        .with_context(|| format!("operator-image.txt is not REPO@DIGEST: {pinned}"))?;
    Ok((repository.to_string(), digest.to_string()))
}

#[test]
fn the_operator_image_pushes_to_a_registry_and_comes_back_as_released() -> anyhow::Result<()> {
    let work = work()?;
    let (repository, digest) = pinned_image()?;
    ensure!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{repository}@{digest}"
    );

    // The bundle the release's plugin installs pins that digest.
    let bundle: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&std::fs::read_to_string(krew_dir()?.join("bundle.yaml"))?)?;
    let images: Vec<&serde_json::Value> = bundle
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|o| &o["spec"]["template"]["spec"]["containers"][0]["image"])
        .collect();
    ensure!(
        images == [&serde_json::Value::from(format!("{repository}@{digest}"))],
        "bundle.yaml's Deployment images {images:?}, the release pins {repository}@{digest}"
    );

    let registry = Registry::start(&work)?;
    let reference = format!("{}/infera-operator:{VERSION}", registry.host);
    let pushed = crane(&["push", &image_dir()?.display().to_string(), &reference])?;
    ensure!(
        pushed.trim() == format!("{}/infera-operator@{digest}", registry.host),
        "crane pushed {pushed}, the release pins {digest}"
    );
    ensure!(crane(&["digest", &reference])?.trim() == digest);

    let index = json(&crane(&["manifest", &reference])?)?;
    ensure!(
        index["mediaType"] == "application/vnd.oci.image.index.v1+json",
        "{index}"
    );
    let mut platforms: Vec<String> = index["manifests"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|m| {
            format!(
                "{}/{}",
                m["platform"]["os"].as_str().unwrap_or_default(),
                m["platform"]["architecture"].as_str().unwrap_or_default()
            )
        })
        .collect();
    platforms.sort();
    ensure!(platforms == ["linux/amd64", "linux/arm64"], "{index}");

    for (platform, machine) in [("linux/amd64", "x86-64"), ("linux/arm64", "aarch64")] {
        let config = json(&crane(&["config", "--platform", platform, &reference])?)?;
        ensure!(config["config"]["User"] == "65532:65532", "{config}");
        ensure!(
            config["config"]["Entrypoint"] == serde_json::json!(["/infera-operator"]),
            "{config}"
        );
        // The whole filesystem is the one binary and the notices and SBOM of its crates.
        let (listing, dir) = unpacked(&work, &reference, platform)?;
        let names: Vec<&str> = listing
            .iter()
            .filter_map(|line| line.split_whitespace().last())
            .collect();
        ensure!(
            names
                == [
                    "infera-operator",
                    "licenses",
                    "licenses/THIRD-PARTY-NOTICES.txt",
                    "licenses/sbom.cdx.json"
                ],
            "{platform}: the image holds {listing:?}"
        );
        ensure!(
            listing[0].starts_with("-rwxr-xr-x 0/0 "),
            "{platform}: {listing:?}"
        );
        static_binary(&dir.join("infera-operator"), machine)?;
        let notices = std::fs::read_to_string(dir.join("licenses/THIRD-PARTY-NOTICES.txt"))?;
        ensure!(
            notices.starts_with("Third-party software in infera-operator")
                && notices.contains("\nkube-runtime ")
                && notices.contains("\ntokio "),
            "{platform}: the notices list no kube-runtime or tokio"
        );
        let sbom = json(&std::fs::read_to_string(
            dir.join("licenses/sbom.cdx.json"),
        )?)?;
        ensure!(
            sbom["bomFormat"] == "CycloneDX"
                && sbom["metadata"]["component"]["name"] == "infera-operator",
            "{platform}: {}",
            sbom["metadata"]
        );
    }
    // Its SBOM is attached as an OCI 1.1 referrer: the artifact manifest names the index as its
    // subject, and the referrers tag schema's index (tag sha256-<hex>) lists it; its one layer is
    // the SBOM the image holds.
    let fallback = format!(
        "{}/infera-operator:{}",
        registry.host,
        digest.replace(':', "-")
    );
    crane(&["push", &image_sbom_dir()?.display().to_string(), &fallback])?;
    let referrers = json(&crane(&["manifest", &fallback])?)?;
    let listed = &referrers["manifests"];
    ensure!(
        listed.as_array().map(Vec::len) == Some(1)
            && listed[0]["artifactType"] == "application/vnd.cyclonedx+json",
        "{referrers}"
    );
    let at = |d: &serde_json::Value| {
        format!(
            "{}/infera-operator@{}",
            registry.host,
            d.as_str().unwrap_or_default()
        )
    };
    let artifact = json(&crane(&["manifest", &at(&listed[0]["digest"])])?)?;
    ensure!(
        artifact["subject"]["digest"] == digest.as_str()
            && artifact["subject"]["mediaType"] == "application/vnd.oci.image.index.v1+json"
            && artifact["layers"][0]["mediaType"] == "application/vnd.cyclonedx+json",
        "{artifact}"
    );
    let attached = crane(&["blob", &at(&artifact["layers"][0]["digest"])])?;
    let held = std::fs::read_to_string(work.join("linux-amd64/licenses/sbom.cdx.json"))?;
    ensure!(
        attached == held,
        "the attached SBOM is not the one the image holds"
    );

    // The amd64 image's binary runs here, as the image runs it.
    let version = run(Command::new(work.join("linux-amd64/infera-operator")).arg("--version"))?;
    ensure!(version.contains(VERSION), "{version}");

    drop(registry);
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}

/// Every string under an `image` key of `value`: the images of a rendered object's containers.
fn images(value: &serde_json::Value, found: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match value.as_str() {
                    Some(image) if key == "image" => {
                        found.insert(image.to_string());
                    }
                    _ => images(value, found),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| images(v, found)),
        _ => {}
    }
}

/// The NATS image of `make release` (target/nats-image), a managed NATS's default: nats-server
/// alone, static, run as 65532:65532, with the licence files of every Go module it was built from;
/// and what the release's binaries name by default is exactly what the release built, pinned by
/// digest from release/versions.sh's table: the bundle names the operator image (the test above),
/// the seed rendered by the release's plugin names the NATS image beside the seed's own image.
#[test]
fn the_nats_image_is_nats_server_with_its_notices_and_the_binaries_pin_it() -> anyhow::Result<()> {
    let work = work()?;
    let layout = nats_image_dir()?;
    let reference = std::fs::read_to_string(layout.join("reference.txt"))?;
    let reference = reference.trim();
    let (tag, digest) = reference
        .split_once('@')
        .with_context(|| format!("reference.txt is not REPO:TAG@DIGEST: {reference}"))?;
    let version = release_var("NATS_SERVER_VERSION")?;
    let version = version.trim_start_matches('v');
    ensure!(
        tag == format!("{}:{version}", release_var("NATS_IMAGE_REPO")?),
        "{reference} is not the table's NATS image"
    );
    let top = json(&std::fs::read_to_string(layout.join("index.json"))?)?;
    ensure!(
        top["manifests"][0]["digest"] == digest,
        "{top}, {reference}"
    );

    let plugin = work.join("plugin");
    unpack(&archive("linux_amd64")?, &plugin)?;
    let rendered = json(&run(Command::new(plugin.join("kubectl-infera"))
        .args(["render", "-o", "json", "-f"])
        .arg(repo().join("examples/pd.yaml")))?)?;
    let mut named = BTreeSet::new();
    images(&rendered, &mut named);
    ensure!(
        named.remove("rocm/infera:sglang-v0.1.1")
            && named == BTreeSet::from([reference.to_string()]),
        "the seed rendered by the release's plugin names {named:?} besides its own image, expected {reference}"
    );

    let registry = Registry::start(&work)?;
    let pushed_as = format!("{}/nats:{version}", registry.host);
    let pushed = crane(&["push", &layout.display().to_string(), &pushed_as])?;
    ensure!(
        pushed.trim() == format!("{}/nats@{digest}", registry.host),
        "crane pushed {pushed}, the release pins {reference}"
    );
    for (platform, machine) in [("linux/amd64", "x86-64"), ("linux/arm64", "aarch64")] {
        let config = json(&crane(&["config", "--platform", platform, &pushed_as])?)?;
        ensure!(config["config"]["User"] == "65532:65532", "{config}");
        ensure!(
            config["config"]["Entrypoint"] == serde_json::json!(["/nats-server"]),
            "{config}"
        );
        let (listing, dir) = unpacked(&work, &pushed_as, platform)?;
        let names: Vec<&str> = listing
            .iter()
            .filter_map(|line| line.split_whitespace().last())
            .collect();
        let others: Vec<&&str> = names
            .iter()
            .filter(|e| **e != "nats-server" && !e.starts_with("licenses"))
            .collect();
        ensure!(
            others.is_empty(),
            "{platform}: besides nats-server and licenses/: {others:?}"
        );
        for notice in [
            "licenses/github.com/nats-io/nats-server/v2/LICENSE",
            "licenses/github.com/klauspost/compress/LICENSE",
            "licenses/golang.org/x/crypto/LICENSE",
            "licenses/go/LICENSE",
        ] {
            ensure!(
                names.contains(&notice),
                "{platform}: no {notice} in {names:?}"
            );
        }
        static_binary(&dir.join("nats-server"), machine)?;
    }
    let said = run(Command::new(work.join("linux-amd64/nats-server")).arg("--version"))?;
    ensure!(said.contains(version), "nats-server --version: {said}");

    drop(registry);
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}

/// release/sign.sh signs both released images by digest with a key (a throw-away one here, made by
/// `cosign generate-key-pair`; the Rekor upload off, as this machine is offline), and cosign
/// verifies each with the key's public half: the index and, signed recursively, each platform's
/// image — none before it is signed, none with another key.
#[test]
fn the_release_signs_both_images_and_cosign_verifies_them() -> anyhow::Result<()> {
    let work = work()?;
    let cosign = PathBuf::from(release_var("COSIGN")?);
    ensure!(
        cosign.is_file(),
        "{} not found: run release/tools.sh (`make release` does)",
        cosign.display()
    );
    let registry = Registry::start(&work)?;
    let mut images = Vec::new();
    for (layout, name) in [(image_dir()?, "operator"), (nats_image_dir()?, "nats")] {
        let pushed = crane(&[
            "push",
            &layout.display().to_string(),
            &format!("{}/infera/{name}:{VERSION}", registry.host),
        ])?;
        images.push(pushed.trim().to_string());
    }
    let (_, operator_digest) = pinned_image()?;
    ensure!(
        images[0].ends_with(&format!("@{operator_digest}")),
        "crane pushed {}, the release pins {operator_digest}",
        images[0]
    );
    for key in ["release", "other"] {
        run(Command::new(&cosign)
            .args(["generate-key-pair", "--output-key-prefix", key])
            .env("COSIGN_PASSWORD", "throw-away")
            .current_dir(&work))?;
    }
    // The index's images: each platform's manifest, by digest.
    let mut signed = images.clone();
    for image in &images {
        let (repository, _) = image.split_once('@').context("pushed by digest")?;
        let index = json(&crane(&["manifest", image])?)?;
        for manifest in index["manifests"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let digest = manifest["digest"].as_str().context("a manifest's digest")?;
            signed.push(format!("{repository}@{digest}"));
        }
    }
    ensure!(
        signed.len() == 6,
        "two indexes of two platforms each: {signed:?}"
    );
    let verify = |reference: &str, key: &str| {
        Command::new(&cosign)
            .args([
                "verify",
                "--insecure-ignore-tlog=true",
                "--allow-http-registry",
            ])
            .arg("--key")
            .arg(work.join(format!("{key}.pub")))
            .arg(reference)
            .output()
    };
    for reference in &signed {
        ensure!(
            !verify(reference, "release")?.status.success(),
            "cosign verified {reference} before it was signed"
        );
    }

    let mut sign = Command::new(repo().join("release/sign.sh"));
    sign.args(["--tlog-upload=false", "--allow-http-registry"])
        .args(&images)
        .env("COSIGN_KEY", work.join("release.key"))
        .env("COSIGN_PASSWORD", "throw-away");
    run(&mut sign)?;

    for reference in &signed {
        let verified = verify(reference, "release")?;
        ensure!(
            verified.status.success(),
            "cosign did not verify {reference}: {}",
            String::from_utf8_lossy(&verified.stderr)
        );
        // Its payload names the digest it signs (cosign's simple signing format).
        let payloads = json(&String::from_utf8_lossy(&verified.stdout))?;
        let digest = reference.rsplit_once('@').map(|(_, d)| d);
        ensure!(
            payloads[0]["critical"]["image"]["docker-manifest-digest"].as_str() == digest,
            "{reference}: {payloads}"
        );
        ensure!(
            !verify(reference, "other")?.status.success(),
            "cosign verified {reference} with a key that did not sign it"
        );
    }
    drop(registry);
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}

/// The image digest is a function of the operator binaries and the crates they link: the layout
/// written again from the binaries the image holds and the notices written again from Cargo.lock
/// has the digest the release pins.
#[test]
fn the_image_layout_is_reproducible() -> anyhow::Result<()> {
    let work = work()?;
    let pinned = std::fs::read_to_string(krew_dir()?.join("operator-image.txt"))?;
    let digest = pinned.trim().split_once('@').map(|(_, d)| d.to_string());
    // The binaries, out of the layout's own layers (OCI image-layout: blobs/sha256/<hex>).
    let layout = image_dir()?;
    let blob = |digest: &str| {
        layout
            .join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:"))
    };
    let top = json(&std::fs::read_to_string(layout.join("index.json"))?)?;
    let index = json(&std::fs::read_to_string(blob(
        top["manifests"][0]["digest"].as_str().unwrap_or_default(),
    ))?)?;
    let mut binaries = Vec::new();
    for manifest in index["manifests"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let arch = manifest["platform"]["architecture"]
            .as_str()
            .unwrap_or_default();
        let image = json(&std::fs::read_to_string(blob(
            manifest["digest"].as_str().unwrap_or_default(),
        ))?)?;
        let dir = work.join(arch);
        std::fs::create_dir_all(&dir)?;
        run(Command::new("tar")
            .arg("-xzf")
            .arg(blob(
                image["layers"][0]["digest"].as_str().unwrap_or_default(),
            ))
            .arg("-C")
            .arg(&dir))?;
        binaries.push(format!("{arch}={}", dir.join("infera-operator").display()));
    }
    ensure!(binaries.len() == 2, "{index}");
    // The notices and SBOM written again from Cargo.lock, as release/build.sh writes them.
    let notices = work.join("notices");
    run(Command::new(repo().join("release/notices.py"))
        .current_dir(repo())
        .args(["--package", "infera-operator"])
        .args(["--target", &triple("linux_amd64")?])
        .args(["--target", &triple("linux_arm64")?])
        .arg("--out")
        .arg(&notices))?;
    let again = run(Command::new("python3")
        .arg(repo().join("release/image.py"))
        .args(["--out", &work.join("layout").display().to_string()])
        .args(["--version", VERSION])
        .arg("--notices")
        .arg(&notices)
        .args(&binaries))?;
    ensure!(
        Some(again.trim().to_string()) == digest,
        "image.py wrote {again}, the release pins {pinned}"
    );
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}

/// The release's Helm chart pushes as an OCI artifact next to the image (the release workflow pushes
/// it to oci://ghcr.io/amd/infera/charts), comes back with its version, and its values pin the
/// image by the digest the release pins; the single-file manifest is the bundle `init` applies.
#[test]
fn the_helm_chart_pushes_beside_the_image_and_pins_its_digest() -> anyhow::Result<()> {
    let work = work()?;
    let (repository, digest) = pinned_image()?;
    let chart = install_dir()?.join(format!("infera-operator-{VERSION}.tgz"));
    let registry = Registry::start(&work)?;
    let helm = |args: &[&str]| {
        run(Command::new(release_tool("helm")?)
            .args(args)
            // Helm's registry config and cache stay in the test's directory.
            .env("HELM_CONFIG_HOME", work.join("helm-config"))
            .env("HELM_CACHE_HOME", work.join("helm-cache")))
    };
    let repo_url = format!("oci://{}/charts", registry.host);
    helm(&[
        "push",
        &chart.display().to_string(),
        &repo_url,
        "--plain-http",
    ])?;
    let chart_ref = format!("{repo_url}/infera-operator");
    let shown = helm(&[
        "show",
        "chart",
        &chart_ref,
        "--version",
        VERSION,
        "--plain-http",
    ])?;
    let shown: serde_json::Value = serde_saphyr::from_str(&shown)?;
    ensure!(
        shown["name"] == "infera-operator" && shown["version"] == VERSION,
        "{shown}"
    );
    let values = helm(&[
        "show",
        "values",
        &chart_ref,
        "--version",
        VERSION,
        "--plain-http",
    ])?;
    let values: serde_json::Value = serde_saphyr::from_str(&values)?;
    ensure!(
        values["image"]["repository"] == repository && values["image"]["digest"] == digest,
        "the chart's image values {}, the release pins {repository}@{digest}",
        values["image"]
    );
    // What the operator and doctor tell a Helm user to run for a CRD older than the operator
    // (Helm never upgrades `crds/`) prints this release's CRD.
    let crds = helm(&[
        "show",
        "crds",
        &chart_ref,
        "--version",
        VERSION,
        "--plain-http",
    ])?;
    // Each CRD file after a `---` line (Helm v4.3.2 pkg/action/show.go:130-137).
    let crds = crds.trim().trim_start_matches("---").trim();
    ensure!(
        crds == include_str!("../../../crds/inferadeployments.infera.amd.com.yaml").trim(),
        "`helm show crds` printed another CRD:\n{crds}"
    );
    let manifest = install_dir()?.join(format!("infera-operator-{VERSION}.yaml"));
    ensure!(
        std::fs::read_to_string(manifest)?
            == std::fs::read_to_string(krew_dir()?.join("bundle.yaml"))?,
        "the manifest is not the bundle init applies"
    );
    Ok(())
}
