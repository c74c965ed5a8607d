//! The five Krew archives of `make release` hold what their platform runs: the object format and
//! architecture are read from each binary's headers (the `object` crate), the Linux ones are
//! static, the Linux arm64 one runs under qemu user-mode emulation and the Windows one under Wine,
//! and every binary is at most 15 MiB. Each archive carries the notices and SBOM of the crates its
//! binary links. Packing the same binaries again gives the same bytes.
//! Needs `make release`; no cluster.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail, ensure};
use infera_e2e::release::{
    PLATFORMS, VERSION, archive, krew_dir, release_var, repo, run, sha256, triple, unpack,
};
use infera_e2e::{target_dir, unique_suffix};
use object::{Architecture, BinaryFormat, Object as _, ObjectKind};

/// The size budget of a shipped binary (issue 12): 15 MiB, stripped.
const MAX_SIZE: u64 = 15 * 1024 * 1024;

fn work(name: &str) -> PathBuf {
    target_dir()
        .join("e2e-logs")
        .join(format!("{name}-{}", unique_suffix()))
}

/// The binary of `platform`'s archive, unpacked into `dir`; the archive must hold exactly it,
/// LICENSE, and its crates' notices and SBOM.
fn unpacked(platform: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    let exe = if platform.starts_with("windows") {
        "kubectl-infera.exe"
    } else {
        "kubectl-infera"
    };
    let names = unpack(&archive(platform)?, &dir.join(platform))?;
    let expected = ["LICENSE", "THIRD-PARTY-NOTICES.txt", exe, "sbom.cdx.json"];
    ensure!(
        names == expected,
        "{platform}: the archive holds {names:?}, not {expected:?}"
    );
    Ok(dir.join(platform).join(exe))
}

/// `(name, version)` of each crate a notices file lists (`NAME VERSION: LICENCE (SOURCE)`).
fn listed(notices: &str) -> BTreeSet<(String, String)> {
    notices
        .lines()
        .take_while(|line| !line.starts_with("====="))
        .filter_map(|line| {
            let (crate_, rest) = line.split_once(": ")?;
            let (name, version) = crate_.split_once(' ')?;
            (rest.ends_with("(registry)") || rest.ends_with("(workspace)"))
                .then(|| (name.to_string(), version.to_string()))
        })
        .collect()
}

/// `(name, version)` → checksum of each registry package of a Cargo.lock (`[[package]]` tables of
/// `key = "value"` lines).
fn lock_checksums(lock: &str) -> BTreeMap<(String, String), String> {
    lock.split("[[package]]")
        .filter_map(|table| {
            let field = |key: &str| {
                table.lines().find_map(|line| {
                    let value = line.strip_prefix(key)?.trim_start().strip_prefix('=')?;
                    Some(value.trim().trim_matches('"').to_string())
                })
            };
            Some(((field("name")?, field("version")?), field("checksum")?))
        })
        .collect()
}

/// Each archive's notices list the crates of its platform's binary, as `cargo tree` resolves
/// them for that target, with their licence texts, and its SBOM names the same crates with the
/// package checksums of Cargo.lock.
#[test]
fn every_archive_carries_the_notices_and_sbom_of_its_platforms_crates() -> anyhow::Result<()> {
    let dir = work("release-notices");
    let checksums = lock_checksums(&std::fs::read_to_string(repo().join("Cargo.lock"))?);
    let mut lists = BTreeMap::new();
    for platform in PLATFORMS {
        unpacked(platform, &dir)?;
        let notices = std::fs::read_to_string(dir.join(platform).join("THIRD-PARTY-NOTICES.txt"))?;
        let crates = listed(&notices);
        let triple = triple(platform)?;
        let tree = run(Command::new("cargo").current_dir(repo()).args([
            "tree",
            "--locked",
            "-p",
            "kubectl-infera",
            "--target",
            &triple,
            "-e",
            "normal,no-proc-macro",
            "--prefix",
            "none",
            "-f",
            "{p}",
        ]))?;
        let linked: BTreeSet<(String, String)> = tree
            .lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                Some((
                    words.next()?.to_string(),
                    words.next()?.trim_start_matches('v').to_string(),
                ))
            })
            .filter(|(name, _)| name != "kubectl-infera")
            .collect();
        ensure!(
            crates == linked,
            "{platform}: the notices list {} crates, cargo tree {}; only listed: {:?}, only linked: {:?}",
            crates.len(),
            linked.len(),
            crates.difference(&linked).collect::<Vec<_>>(),
            linked.difference(&crates).collect::<Vec<_>>()
        );
        ensure!(
            notices.contains("Apache License") && notices.contains("Permission is hereby granted"),
            "{platform}: the notices carry no Apache-2.0 or MIT text"
        );
        let sbom: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            dir.join(platform).join("sbom.cdx.json"),
        )?)?;
        ensure!(
            sbom["bomFormat"] == "CycloneDX"
                && sbom["metadata"]["component"]["name"] == "kubectl-infera",
            "{platform}: {}",
            sbom["metadata"]
        );
        let mut components = BTreeSet::new();
        for component in sbom["components"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let key = (
                component["name"].as_str().unwrap_or_default().to_string(),
                component["version"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            let hash = component["hashes"][0]["content"].as_str();
            ensure!(
                hash == checksums.get(&key).map(String::as_str),
                "{platform}: {key:?} has hash {hash:?}, Cargo.lock {:?}",
                checksums.get(&key)
            );
            components.insert(key);
        }
        ensure!(
            components == crates,
            "{platform}: the SBOM's components are not the notices' crates"
        );
        lists.insert(platform, crates);
    }
    // Each platform's own: Windows links the Windows API crates, Linux does not.
    let windows_only = |p: &str| lists[p].iter().any(|(name, _)| name.starts_with("windows"));
    ensure!(windows_only("windows_amd64") && !windows_only("linux_amd64"));
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// What the headers of `platform`'s binary must say.
fn expected(platform: &str) -> (BinaryFormat, Architecture) {
    match platform {
        "linux_amd64" => (BinaryFormat::Elf, Architecture::X86_64),
        "linux_arm64" => (BinaryFormat::Elf, Architecture::Aarch64),
        "darwin_amd64" => (BinaryFormat::MachO, Architecture::X86_64),
        "darwin_arm64" => (BinaryFormat::MachO, Architecture::Aarch64),
        _ => (BinaryFormat::Pe, Architecture::X86_64),
    }
}

/// The DLLs a Windows binary may import: system libraries present on every Windows since 10,
/// including the Universal CRT's `api-ms-win-crt-*` API sets (part of the operating system since
/// Windows 10, Microsoft Learn "Universal CRT deployment"; Zig's MinGW links against it) and
/// `bcryptprimitives.dll` (Rust's standard library draws random numbers from its `ProcessPrng`).
/// No MinGW runtime (libgcc_s, libwinpthread, libstdc++): those are linked in statically.
fn is_windows_system_dll(dll: &str) -> bool {
    const SYSTEM: [&str; 11] = [
        "kernel32.dll",
        "ntdll.dll",
        "user32.dll",
        "ws2_32.dll",
        "advapi32.dll",
        "bcrypt.dll",
        "bcryptprimitives.dll",
        "userenv.dll",
        "crypt32.dll",
        "secur32.dll",
        "ucrtbase.dll",
    ];
    SYSTEM.contains(&dll)
        || dll.starts_with("api-ms-win-core-")
        || dll.starts_with("api-ms-win-crt-")
}

#[test]
fn every_archive_holds_a_binary_of_its_platform_within_15_mib() -> anyhow::Result<()> {
    let dir = work("release-binaries");
    let manifest = std::fs::read_to_string(krew_dir()?.join("infera.yaml"))?;
    let mut sizes = Vec::new();
    for platform in PLATFORMS {
        let archive = archive(platform)?;
        ensure!(
            manifest.contains(&format!("sha256: \"{}\"", sha256(&archive)?)),
            "the manifest does not carry the sha256 of {}",
            archive.display()
        );
        let bin = unpacked(platform, &dir)?;
        let data = std::fs::read(&bin)?;
        let size = data.len() as u64;
        sizes.push(format!("{platform} {size}"));
        ensure!(size <= MAX_SIZE, "{platform}: {size} bytes > 15 MiB");
        let file =
            object::File::parse(&*data).with_context(|| format!("parsing {}", bin.display()))?;
        let (format, arch) = expected(platform);
        ensure!(
            file.format() == format && file.architecture() == arch,
            "{platform}: {:?} {:?}, expected {format:?} {arch:?}",
            file.format(),
            file.architecture()
        );
        ensure!(file.is_64(), "{platform}: not a 64-bit binary");
        // Rust's musl targets link static-pie executables, which ELF types as ET_DYN.
        ensure!(
            file.kind() == ObjectKind::Executable
                || (format == BinaryFormat::Elf && file.kind() == ObjectKind::Dynamic),
            "{platform}: {:?}, not an executable",
            file.kind()
        );
        ensure!(
            file.symbols().next().is_none() || format != BinaryFormat::Elf,
            "{platform}: not stripped"
        );
        match format {
            // Static: no program interpreter (the dynamic loader), and file(1) agrees.
            BinaryFormat::Elf => {
                ensure!(
                    file.section_by_name(".interp").is_none(),
                    "{platform}: has a program interpreter (.interp): dynamically linked"
                );
                let described = run(Command::new("file").arg("--brief").arg(&bin))?;
                ensure!(
                    described.contains("statically linked")
                        || described.contains("static-pie linked"),
                    "{platform}: {described}"
                );
            }
            BinaryFormat::MachO => {
                let libraries: Vec<String> = file
                    .imports()?
                    .iter()
                    .map(|i| String::from_utf8_lossy(i.library()).into_owned())
                    .collect();
                for library in &libraries {
                    ensure!(
                        library.starts_with("/usr/lib/")
                            || library.starts_with("/System/Library/Frameworks/"),
                        "{platform}: links {library}, which is not part of macOS"
                    );
                }
            }
            _ => {
                let mut dlls: Vec<String> = file
                    .imports()?
                    .iter()
                    .map(|i| String::from_utf8_lossy(i.library()).to_lowercase())
                    .collect();
                dlls.sort();
                dlls.dedup();
                ensure!(!dlls.is_empty(), "{platform}: imports nothing?");
                for dll in &dlls {
                    ensure!(
                        is_windows_system_dll(dll),
                        "{platform}: imports {dll}, which is not a Windows system DLL (imports: {dlls:?})"
                    );
                }
            }
        }
    }
    eprintln!("sizes (bytes): {}", sizes.join(", "));
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// `version --client -o json` of a binary run through `runner` (qemu, wine) prints this version.
fn runs_and_prints_the_version(runner: &mut Command) -> anyhow::Result<()> {
    let out = run(runner.args(["version", "--client", "-o", "json"]))?;
    let versions: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("not JSON: {out}"))?;
    ensure!(versions["plugin"] == VERSION, "{out}");
    Ok(())
}

#[test]
fn the_linux_arm64_binary_runs_under_qemu() -> anyhow::Result<()> {
    let dir = work("release-qemu");
    let bin = unpacked("linux_arm64", &dir)?;
    // qemu-user (Debian), installed by release/tools.sh. The binary is static: no -L sysroot.
    let qemu = Path::new("/usr/bin/qemu-aarch64");
    if !qemu.is_file() {
        bail!(
            "{} not found: run release/tools.sh (installs qemu-user)",
            qemu.display()
        );
    }
    runs_and_prints_the_version(Command::new(qemu).arg(&bin))?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

#[test]
fn the_windows_binary_runs_under_wine() -> anyhow::Result<()> {
    let dir = work("release-wine");
    let bin = unpacked("windows_amd64", &dir)?;
    // wine (Debian), installed by release/tools.sh; a prefix of the test's own, no display.
    let wine = Path::new("/usr/bin/wine");
    if !wine.is_file() {
        bail!(
            "{} not found: run release/tools.sh (installs wine)",
            wine.display()
        );
    }
    // Wine 8 has no bcryptprimitives.dll: a stand-in next to the binary (found first, as on
    // Windows), compiled with the release's Zig (tests/support/bcryptprimitives.c says why).
    let zig_python = PathBuf::from(release_var("ZIG_VENV")?).join("bin/python");
    let shim = bin.with_file_name("bcryptprimitives.dll");
    run(Command::new(zig_python)
        .args([
            "-m",
            "ziglang",
            "cc",
            "-target",
            "x86_64-windows-gnu",
            "-shared",
            "-O2",
            "-o",
        ])
        .arg(&shim)
        .arg(repo().join("tests/support/bcryptprimitives.c"))
        .arg("-lbcrypt"))?;
    runs_and_prints_the_version(
        Command::new(wine)
            .arg(&bin)
            .env("WINEPREFIX", dir.join("wineprefix"))
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env_remove("DISPLAY"),
    )?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

#[test]
fn packing_the_same_binaries_again_gives_the_same_bytes() -> anyhow::Result<()> {
    let dir = work("release-repack");
    let mut args = vec![
        "--out".to_string(),
        dir.join("krew").display().to_string(),
        "--platforms".to_string(),
        PLATFORMS.join(" "),
    ];
    for platform in PLATFORMS {
        args.push("--bin".into());
        args.push(format!(
            "{platform}={}",
            unpacked(platform, &dir)?.display()
        ));
    }
    run(Command::new(repo().join("krew/package.sh")).args(&args))?;
    let mut names: Vec<String> = PLATFORMS
        .iter()
        .map(|p| format!("kubectl-infera_{VERSION}_{p}.tar.gz"))
        .collect();
    names.push("infera.yaml".into());
    for name in names {
        let (a, b) = (krew_dir()?.join(&name), dir.join("krew").join(&name));
        ensure!(
            std::fs::read(&a)? == std::fs::read(&b)?,
            "{name}: packing again gave other bytes ({} vs {})",
            a.display(),
            b.display()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
