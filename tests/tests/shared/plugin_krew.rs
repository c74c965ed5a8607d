//! The release installs with the real `krew` (built by tests/cluster/build.sh) and the real kubectl
//! runs the installed plugin: from the archive and manifest of `make release` as the README says,
//! and from a Krew index of the test's own (a git repository with `plugins/infera.yaml`) whose
//! archives a small HTTP server on 127.0.0.1 serves — install, then a newer version published
//! into the index and `kubectl krew upgrade`, then `kubectl krew uninstall`.
//! Needs `make release`; no cluster. Linux amd64 only (the host's platform).
//!
//! Krew v0.4.3 (sigs.k8s.io/krew): `index add NAME URL` is `git clone URL`
//! (internal/gitutil/git.go `EnsureCloned`), so a local path is a valid index URL; `upgrade`
//! first updates every index with `git fetch` + `git reset --hard @{upstream}` (`EnsureUpdated`);
//! archives are downloaded with `http.Get` (internal/download/fetch.go) and checked against the
//! manifest's sha256.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure};
use infera_e2e::release::{FileServer, VERSION, archive, krew_dir, repo, run};
use infera_e2e::{target_dir, test_bin_dir, unique_suffix};

const PLATFORM: &str = "linux_amd64";
/// The version the test publishes as the newer one.
const NEXT: &str = "99.0.0";

/// A Krew home of the test's own: `KREW_ROOT`, and a PATH with kubectl (the one built with the
/// control plane), `kubectl-krew` and Krew's bin directory, without the workspace's target dirs
/// (so the plugin kubectl finds is the installed one).
struct Krew {
    root: PathBuf,
    path: std::ffi::OsString,
}

impl Krew {
    fn new(work: &Path) -> anyhow::Result<Self> {
        let krew = test_bin_dir()?.join("krew");
        if !krew.is_file() {
            bail!(
                "{} not found: run tests/cluster/build.sh (it builds krew)",
                krew.display()
            );
        }
        let tools = work.join("tools");
        std::fs::create_dir_all(&tools)?;
        std::os::unix::fs::symlink(&krew, tools.join("kubectl-krew"))?;
        let root = work.join("krew-root");
        let system = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|p| !p.starts_with(target_dir()) && !p.starts_with(repo().join("target")))
            .collect::<Vec<_>>();
        let path = std::env::join_paths(
            [test_bin_dir()?, tools, root.join("bin")]
                .into_iter()
                .chain(system),
        )?;
        Ok(Self { root, path })
    }

    /// `kubectl ARGS` with this Krew home; stdout.
    fn kubectl(&self, args: &[&str]) -> anyhow::Result<String> {
        run(Command::new("kubectl")
            .args(args)
            .env("KREW_ROOT", &self.root)
            // No upgrade check of krew itself (it would ask GitHub).
            .env("KREW_NO_UPGRADE_CHECK", "1")
            .env("PATH", &self.path))
    }

    /// The plugin's version as the installed binary prints it.
    fn plugin_version(&self) -> anyhow::Result<String> {
        let out = self.kubectl(&["infera", "version", "--client", "-o", "json"])?;
        let versions: serde_json::Value = serde_json::from_str(&out)?;
        Ok(versions["plugin"].as_str().unwrap_or_default().to_string())
    }

    /// The version directories of the plugin in Krew's store.
    fn store(&self) -> anyhow::Result<Vec<String>> {
        let dir = self.root.join("store/infera");
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let mut versions: Vec<String> = std::fs::read_dir(&dir)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        versions.sort();
        Ok(versions)
    }
}

fn work(name: &str) -> anyhow::Result<PathBuf> {
    let dir = target_dir()
        .join("e2e-logs")
        .join(format!("{name}-{}", unique_suffix()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    run(Command::new("git")
        .args([
            "-c",
            "user.name=infera-e2e",
            "-c",
            "user.email=e2e@infera.invalid",
        ])
        .args(args)
        .current_dir(dir))
}

/// The release manifest with its GitHub release URIs pointed at `base` (the archives are the same
/// bytes, so the sha256 still hold).
fn manifest_served_from(base: &str) -> anyhow::Result<String> {
    let manifest = std::fs::read_to_string(krew_dir()?.join("infera.yaml"))?;
    let release = format!("https://github.com/amd/infera/releases/download/v{VERSION}");
    ensure!(
        manifest.contains(&release),
        "no {release} URI in:\n{manifest}"
    );
    Ok(manifest.replace(&release, base))
}

#[test]
fn krew_installs_the_release_archive_as_the_readme_says() -> anyhow::Result<()> {
    let work = work("krew-archive")?;
    let krew = Krew::new(&work)?;
    let manifest = krew_dir()?.join("infera.yaml");
    krew.kubectl(&[
        "krew",
        "install",
        &format!("--manifest={}", manifest.display()),
        &format!("--archive={}", archive(PLATFORM)?.display()),
    ])?;
    for file in ["LICENSE", "THIRD-PARTY-NOTICES.txt", "sbom.cdx.json"] {
        ensure!(
            krew.root
                .join(format!("store/infera/v{VERSION}/{file}"))
                .is_file(),
            "{file} was not installed"
        );
    }
    ensure!(krew.plugin_version()? == VERSION);
    let plugins = krew.kubectl(&["plugin", "list", "--name-only"])?;
    ensure!(plugins.contains("kubectl-infera"), "{plugins}");
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}

#[test]
fn krew_installs_upgrades_and_uninstalls_from_a_local_index() -> anyhow::Result<()> {
    let work = work("krew-index")?;
    let krew = Krew::new(&work)?;
    let www = work.join("www");
    std::fs::create_dir_all(&www)?;
    let server = FileServer::start(&www)?;
    let base = server.base_uri();

    // The index: a git repository with plugins/infera.yaml, the release's manifest.
    let index = work.join("index");
    std::fs::create_dir_all(index.join("plugins"))?;
    let current = format!("kubectl-infera_{VERSION}_{PLATFORM}.tar.gz");
    std::fs::copy(archive(PLATFORM)?, www.join(&current))?;
    std::fs::write(
        index.join("plugins/infera.yaml"),
        manifest_served_from(&base)?,
    )?;
    git(&index, &["init", "--quiet", "--initial-branch=main"])?;
    git(&index, &["add", "plugins"])?;
    git(
        &index,
        &["commit", "--quiet", "-m", &format!("infera v{VERSION}")],
    )?;

    krew.kubectl(&[
        "krew",
        "index",
        "add",
        "local",
        &index.display().to_string(),
    ])?;
    let indexes = krew.kubectl(&["krew", "index", "list"])?;
    ensure!(indexes.contains("local"), "{indexes}");
    krew.kubectl(&["krew", "install", "local/infera"])?;
    ensure!(
        server.served() == [format!("/{current}")],
        "krew downloaded {:?}",
        server.served()
    );
    ensure!(
        krew.store()? == [format!("v{VERSION}")],
        "{:?}",
        krew.store()?
    );
    ensure!(krew.plugin_version()? == VERSION);

    // Publish a newer version, packed by krew/package.sh and served too: another executable (a
    // script that answers `version` as NEXT), so that the upgrade is seen to replace the binary.
    let binary = work.join("next");
    std::fs::create_dir_all(&binary)?;
    let script = binary.join("kubectl-infera");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho '{{\"plugin\": \"{NEXT}\"}}'\n"),
    )?;
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    run(Command::new(repo().join("krew/package.sh"))
        .args(["--out", &www.display().to_string()])
        .args([
            "--version",
            NEXT,
            "--platforms",
            PLATFORM,
            "--base-uri",
            &base,
        ])
        .arg("--bin")
        .arg(format!(
            "{PLATFORM}={}",
            binary.join("kubectl-infera").display()
        )))?;
    std::fs::copy(www.join("infera.yaml"), index.join("plugins/infera.yaml"))?;
    git(
        &index,
        &["commit", "--quiet", "-am", &format!("infera v{NEXT}")],
    )?;

    krew.kubectl(&["krew", "upgrade", "infera"])?;
    let next = format!("/kubectl-infera_{NEXT}_{PLATFORM}.tar.gz");
    ensure!(
        server.served().last() == Some(&next),
        "krew downloaded {:?}",
        server.served()
    );
    ensure!(krew.store()? == [format!("v{NEXT}")], "{:?}", krew.store()?);
    // `krew list` prints only names when stdout is not a terminal (cmd/krew/cmd/list.go); the
    // receipt has the installed version.
    let list = krew.kubectl(&["krew", "list"])?;
    ensure!(list.lines().any(|l| l == "local/infera"), "{list}");
    let receipt = std::fs::read_to_string(krew.root.join("receipts/infera.yaml"))?;
    ensure!(receipt.contains(&format!("version: v{NEXT}")), "{receipt}");
    // What runs now is the new executable.
    ensure!(krew.plugin_version()? == NEXT);

    krew.kubectl(&["krew", "uninstall", "infera"])?;
    ensure!(krew.store()?.is_empty(), "{:?}", krew.store()?);
    ensure!(!krew.root.join("bin/kubectl-infera").exists());
    let plugins = run(Command::new("kubectl")
        .args(["plugin", "list", "--name-only"])
        .env("PATH", &krew.path));
    ensure!(
        plugins
            .as_ref()
            .map_or(true, |p| !p.contains("kubectl-infera")),
        "{plugins:?}"
    );
    drop(server);
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}
