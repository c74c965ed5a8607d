//! The Krew archive installs with the real `krew` (built by tests/cluster/build.sh) and the real
//! kubectl runs the installed plugin. Needs no cluster.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use infera_e2e::{binary, target_dir, test_bin_dir, unique_suffix};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `$K8S_TEST_BIN/krew`.
fn krew() -> anyhow::Result<PathBuf> {
    let dir = test_bin_dir()?;
    let krew = dir.join("krew");
    if !krew.is_file() {
        bail!(
            "{} not found: run tests/cluster/build.sh (it builds krew)",
            krew.display()
        );
    }
    Ok(krew)
}

fn run(command: &mut Command) -> anyhow::Result<String> {
    let out = command
        .output()
        .with_context(|| format!("running {command:?}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("{command:?} failed ({}):\n{text}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn krew_installs_the_archive_and_kubectl_runs_the_plugin() -> anyhow::Result<()> {
    let platform = match std::env::consts::ARCH {
        "x86_64" => "linux_amd64",
        "aarch64" => "linux_arm64",
        other => bail!("no Krew platform for {other}"),
    };
    let work = target_dir()
        .join("e2e-logs")
        .join(format!("krew-{}", unique_suffix()));
    let dist = work.join("dist");
    let root = work.join("krew-root");
    let bin = binary("kubectl-infera")?;
    run(Command::new(repo().join("krew/package.sh"))
        .args([
            "--out",
            &dist.display().to_string(),
            "--platforms",
            platform,
        ])
        .arg("--bin")
        .arg(format!("{platform}={}", bin.display())))?;
    let version = env!("CARGO_PKG_VERSION");
    let archive = dist.join(format!("kubectl-infera_{version}_{platform}.tar.gz"));
    let manifest = dist.join("infera.yaml");
    let text = std::fs::read_to_string(&manifest)?;
    anyhow::ensure!(
        text.contains(&format!("version: v{version}")) && !text.contains("{{"),
        "{text}"
    );

    run(Command::new(krew()?)
        .arg("install")
        .arg(format!("--manifest={}", manifest.display()))
        .arg(format!("--archive={}", archive.display()))
        .env("KREW_ROOT", &root))?;
    let store = root.join("store/infera").join(format!("v{version}"));
    anyhow::ensure!(
        store.join("LICENSE").is_file(),
        "LICENSE was not installed into {}",
        store.display()
    );

    // Only Krew's bin directory and the system's: the plugin kubectl finds is the installed one.
    let path = std::env::join_paths(
        std::iter::once(root.join("bin")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .filter(|p| !p.starts_with(target_dir())),
        ),
    )?;
    let out = run(Command::new("kubectl")
        .args(["infera", "version", "--client", "-o", "json"])
        .env("PATH", &path))?;
    let versions: serde_json::Value = serde_json::from_str(&out)?;
    anyhow::ensure!(versions["plugin"] == version, "{out}");
    let which = run(Command::new("kubectl")
        .args(["plugin", "list", "--name-only"])
        .env("PATH", &path))?;
    anyhow::ensure!(which.contains("kubectl-infera"), "{which}");
    std::fs::remove_dir_all(&work).ok();
    Ok(())
}
