//! `kubectl infera bench` checks its flags before it reads the kubeconfig: a load that cannot be
//! sent exits 2 naming the flag, even with a kubeconfig that does not exist (which would exit 5).

use infera_e2e::binary;

#[tokio::test]
async fn bench_refuses_a_load_it_cannot_send_before_contacting_any_cluster() -> anyhow::Result<()> {
    for (args, says) in [
        (
            &["--rate", "0"][..],
            "--rate 0: give requests per second above 0",
        ),
        (&["--duration", "0s"][..], "--duration must be at least 1s"),
        (&["--slo-ttft", "0s"][..], "--slo-ttft must be above 0"),
        (
            &["--url", "demo-server:8000"][..],
            "--url demo-server:8000: give a URL with its scheme",
        ),
        (
            &["--rate", "2", "--concurrency", "4"][..],
            "cannot be used with",
        ),
    ] {
        let output = tokio::process::Command::new(binary("kubectl-infera")?)
            .args(["bench", "demo", "--kubeconfig", "/nonexistent/kubeconfig"])
            .args(args)
            .output()
            .await?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        anyhow::ensure!(
            output.status.code() == Some(2) && stderr.contains(says),
            "{args:?}: exit {:?}: {stderr}",
            output.status.code()
        );
    }
    Ok(())
}
