//! `release/notices.py` on small workspaces of its own (no release needed): what it refuses —
//! a licence outside its allow-list, a crate without a licence expression, a path dependency
//! outside the workspace — each named with the crate, and what it writes for a crate it accepts.

use std::path::Path;
use std::process::Command;

use anyhow::ensure;
use infera_e2e::release::{repo, run};
use infera_e2e::{target_dir, unique_suffix};

/// Writes a crate `name` with `manifest`'s extra lines under `dir`.
fn crate_at(dir: &Path, name: &str, manifest: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{manifest}"
        ),
    )?;
    std::fs::write(dir.join("src/lib.rs"), "")?;
    Ok(())
}

/// A workspace at `dir` whose member `app` depends on `dependencies` (TOML lines), locked.
fn workspace(dir: &Path, dependencies: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"app\", \"mit\"]\nresolver = \"2\"\n",
    )?;
    crate_at(
        &dir.join("app"),
        "app",
        &format!("license = \"Apache-2.0\"\n[dependencies]\n{dependencies}"),
    )?;
    crate_at(&dir.join("mit"), "mit", "license = \"MIT\"\n")?;
    std::fs::write(
        dir.join("mit/LICENSE"),
        "Permission is hereby granted, free of charge\n",
    )?;
    run(Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(dir))?;
    Ok(())
}

fn notices(dir: &Path, out: Option<&Path>) -> Command {
    let mut command = Command::new(repo().join("release/notices.py"));
    command
        .args(["--package", "app", "--target", "x86_64-unknown-linux-musl"])
        .current_dir(dir);
    if let Some(out) = out {
        command.arg("--out").arg(out);
    }
    command
}

#[test]
fn notices_refuse_a_licence_outside_the_list_a_missing_one_and_a_path_outside_the_workspace()
-> anyhow::Result<()> {
    let root = target_dir()
        .join("e2e-logs")
        .join(format!("notices-{}", unique_suffix()));
    crate_at(&root.join("gpl"), "gpl", "license = \"GPL-3.0-only\"\n")?;
    crate_at(&root.join("unlicensed"), "unlicensed", "")?;
    let refused = root.join("refused");
    workspace(
        &refused,
        "gpl = { path = \"../../gpl\" }\nunlicensed = { path = \"../../unlicensed\" }\n",
    )?;
    let output = notices(&refused, None).output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(
        output.status.code() == Some(1),
        "exit {:?}: {stderr}",
        output.status
    );
    for expected in [
        "gpl 0.1.0: comes from a path outside the workspace; depend on a released version instead",
        "gpl 0.1.0: licensed GPL-3.0-only, none of which deny.toml's licenses.allow lists",
        "unlicensed 0.1.0: declares no licence expression",
    ] {
        ensure!(stderr.contains(expected), "no {expected:?} in {stderr}");
    }

    // A member under MIT: accepted, listed, its licence text carried, and in the SBOM.
    let accepted = root.join("accepted");
    workspace(&accepted, "mit = { path = \"../mit\" }\n")?;
    let out = accepted.join("out");
    run(&mut notices(&accepted, Some(&out)))?;
    let text = std::fs::read_to_string(out.join("THIRD-PARTY-NOTICES.txt"))?;
    ensure!(text.contains("\nmit 0.1.0: MIT (workspace)\n"), "{text}");
    ensure!(
        text.contains("The licence text of: mit 0.1.0 (LICENSE)"),
        "{text}"
    );
    ensure!(
        text.contains("Permission is hereby granted, free of charge"),
        "{text}"
    );
    let sbom: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sbom.cdx.json"))?)?;
    ensure!(
        sbom["components"][0]["purl"] == "pkg:cargo/mit@0.1.0",
        "{sbom}"
    );
    ensure!(
        sbom["dependencies"]
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["ref"] == "pkg:cargo/app@0.1.0"
                && d["dependsOn"] == serde_json::json!(["pkg:cargo/mit@0.1.0"]))),
        "{sbom}"
    );
    // Reproducible: the same inputs, the same bytes.
    let again = accepted.join("again");
    run(&mut notices(&accepted, Some(&again)))?;
    for file in ["THIRD-PARTY-NOTICES.txt", "sbom.cdx.json"] {
        ensure!(
            std::fs::read(out.join(file))? == std::fs::read(again.join(file))?,
            "{file} differs"
        );
    }
    std::fs::remove_dir_all(&root).ok();
    Ok(())
}
