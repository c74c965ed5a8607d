//! `render -f` and `deploy -f` on input that is not a spec — random and non-UTF-8 bytes, the
//! seed's example cut at random points, a huge file, deep nesting, an alias bomb — answer with a
//! one-paragraph error and exit 1: no panic, no backtrace, no hang, nothing sent.
//! `INFERA_GARBAGE_CASES` (default 40) random and truncated files each, seeded, reproducible.

use std::{path::Path, time::Duration};

use infera_e2e::{binary, kubeconfig_path, rng::Rng, target_dir};

/// Runs `kubectl-infera args… -f file` and checks it fails as a user should see it fail.
async fn refused(file: &Path, args: &[&str], what: &str) -> anyhow::Result<()> {
    let mut command = tokio::process::Command::new(binary("kubectl-infera")?);
    command
        .args(args)
        .arg("-f")
        .arg(file)
        .env("KUBECONFIG", kubeconfig_path()?)
        .env("RUST_BACKTRACE", "1")
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .map_err(|_| anyhow::anyhow!("{what}: {args:?} still running after 60 s"))??;
    let stderr = String::from_utf8_lossy(&output.stderr);
    anyhow::ensure!(
        output.status.code() == Some(1),
        "{what}: {args:?} exited {:?}; stderr: {stderr}",
        output.status
    );
    anyhow::ensure!(
        stderr.starts_with("error: ")
            && !stderr.contains("panicked")
            && !stderr.contains("stack backtrace"),
        "{what}: {args:?} stderr: {stderr}"
    );
    anyhow::ensure!(output.stdout.is_empty(), "{what}: printed to stdout");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn render_and_deploy_refuse_garbage_with_a_clear_error() -> anyhow::Result<()> {
    let dir = target_dir().join("e2e-logs").join("garbage");
    std::fs::create_dir_all(&dir)?;
    let seed_text = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/pd.yaml"))?;
    let cases = std::env::var("INFERA_GARBAGE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let mut rng = Rng(7);
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (
            "deep sequences".into(),
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        (
            "deep maps".into(),
            (0..3000)
                .map(|i| format!("{}a:\n", " ".repeat(i)))
                .collect::<String>()
                .into_bytes(),
        ),
        (
            "alias bomb".into(),
            std::iter::once("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n".to_string())
                .chain((1..12).map(|i| {
                    format!(
                        "a{i}: &a{i} [{}]\n",
                        vec![format!("*a{}", i - 1); 10].join(", ")
                    )
                }))
                .collect::<String>()
                .into_bytes(),
        ),
        ("huge".into(), vec![b'a'; 30 << 20]),
        (
            "not UTF-8".into(),
            [b"apiVersion: \xff\xfe\n".as_slice(), &seed_text].concat(),
        ),
        ("empty".into(), Vec::new()),
    ];
    for case in 0..cases {
        let len = rng.below(4096);
        files.push((format!("random {case}"), rng.bytes(len)));
        let cut = rng.below(seed_text.len());
        let mut truncated = seed_text[..cut].to_vec();
        // A cut that still parses as a whole spec is not garbage; make it one.
        truncated.extend_from_slice(b"\n  bogus: [");
        files.push((format!("truncated at {cut}"), truncated));
    }
    for (what, bytes) in files {
        let file = dir.join(what.replace(' ', "-"));
        std::fs::write(&file, &bytes)?;
        refused(&file, &["render"], &what).await?;
        refused(&file, &["deploy", "--dry-run=client"], &what).await?;
    }
    Ok(())
}
