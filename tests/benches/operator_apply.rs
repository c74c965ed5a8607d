//! Benchmark: the operator at fleet scale, for each size (default 1,000 and 5,000
//! InferaDeployments), in one run:
//!
//! - the time a tight direct client takes to server-side apply every child the deployments render,
//!   and the operator's convergence, from the last create to the last `observedGeneration`
//!   (the ratio of the two);
//! - the operator's peak RSS while converging, its requests per second and failed reconciles;
//! - how long a change to one deployment, made while the others converge, waits (head-of-line);
//! - `kubectl infera status -A` against `kubectl get idep -A` over the fleet, and the plugin's
//!   peak RSS;
//! - a restart (SIGTERM, a new process, as in an upgrade): the writes the new process sends for the
//!   unchanged deployments (expected: none) and its peak RSS over the cold start;
//! - a soak of that process with a shortened resync period: the writes it sends (expected: none)
//!   and the slope of its resident memory;
//!
//! and then fails when a goal of docs/performance.md ("Goals") is missed, naming each miss.
//!
//!   cargo build --release -p infera-operator
//!   KUBECONFIG=... cargo bench -p infera-e2e --bench operator_apply   # needs a tier-2 cluster
//!
//! Environment: `INFERA_BENCH_SIZES` (default `1000,5000`), `INFERA_BENCH_SOAK_SECONDS` (default
//! 120), `INFERA_BENCH_RESYNC_SECONDS` (the operator's `--resync-seconds` during the soak, default
//! 30), `INFERA_E2E_OPERATOR` (another operator binary to measure, e.g. the release's static
//! build, `release_binary linux_amd64 infera-operator` after `source release/versions.sh`),
//! `INFERA_E2E_PLUGIN` (likewise for kubectl-infera: the debug build's JSON parsing is several
//! times slower than the release's, so measure the release build).
//!
//! Workers have `replicas: 0` so the comparison measures applying objects, not kwok's pod churn.
//! The direct client authenticates as the operator's ServiceAccount, so both are subject to the
//! same API Priority and Fairness level (an admin client would be exempt).

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt, stream};
use infera_core::{ChildKind, InferaDeployment, naming::OPERATOR_MANAGER, render, validate};
use infera_e2e::{
    ServiceAccountIdentity, TestNamespace, admin, binary, fleet,
    kube::{
        Api, Client,
        api::{DynamicObject, Patch, PatchParams},
    },
    operator::{
        Operator, dry_runs, install, sample, sum, writes, writes_and_dry_runs_by_request,
        writes_or_dry_runs,
    },
    plugin::kubectl,
};

/// Requests in flight of the direct client: the operator's default `--concurrency`.
const CONCURRENCY: usize = 16;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::var("INFERA_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,5000".into())
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()?;
    let soak = Duration::from_secs(env_or("INFERA_BENCH_SOAK_SECONDS", 120));
    let resync: u64 = env_or("INFERA_BENCH_RESYNC_SECONDS", 30);
    let admin = admin().await?;
    let identity = install(&admin).await?;
    println!(
        "operator_apply: {} cores, soak {soak:?} with --resync-seconds={resync}",
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    let mut missed = Vec::new();
    for size in sizes {
        let direct = direct(&admin, &identity, size).await?;
        println!("{size} InferaDeployments ({} children):", direct.1);
        println!(
            "  direct client ({CONCURRENCY} concurrent SSA):  {:>8.2?}",
            direct.0
        );
        let figures = operator(&admin, &identity, size, direct, soak, resync).await?;
        missed.extend(figures.missed(size));
    }
    anyhow::ensure!(
        missed.is_empty(),
        "goals of docs/performance.md missed:\n  {}",
        missed.join("\n  ")
    );
    Ok(())
}

/// What the benchmark measured of the operator at one size, for the goals.
struct Figures {
    /// Convergence after the last create, against the direct client's time.
    convergence_ratio: f64,
    /// Writes while converging (dry runs apart), against the direct client's.
    write_ratio: f64,
    peak_rss_mib: f64,
    cold_start_rss_mib: f64,
    restart: Duration,
    restart_writes: u64,
    soak_writes: u64,
    status_ratio: f64,
}

impl Figures {
    /// The goals of docs/performance.md ("Goals") this run missed, each with its figure.
    fn missed(&self, size: usize) -> Vec<String> {
        let mut missed = Vec::new();
        let mut check = |met: bool, what: String| {
            if !met {
                missed.push(format!("{size}: {what}"));
            }
        };
        let memory = match size {
            ..=1000 => 40.0,
            1001..=5000 => 120.0,
            _ => f64::INFINITY,
        };
        check(
            self.peak_rss_mib <= memory,
            format!(
                "peak RSS converging {:.1} MiB > {memory} MiB",
                self.peak_rss_mib
            ),
        );
        check(
            self.cold_start_rss_mib <= memory,
            format!(
                "peak RSS of a cold start {:.1} MiB > {memory} MiB",
                self.cold_start_rss_mib
            ),
        );
        check(
            self.restart <= Duration::from_secs(5),
            format!(
                "a restart reconciled every deployment after {:.2?} > 5 s",
                self.restart
            ),
        );
        check(
            self.restart_writes == 0 && self.soak_writes == 0,
            format!(
                "{} writes or dry runs after the restart and {} in the soak, not 0",
                self.restart_writes, self.soak_writes
            ),
        );
        let convergence = if size <= 1000 { 1.2 } else { 1.5 };
        check(
            self.convergence_ratio <= convergence,
            format!(
                "converged in {:.2}x the direct client's time > {convergence}x",
                self.convergence_ratio
            ),
        );
        check(
            self.write_ratio <= 1.3,
            format!("{:.2}x the direct client's writes > 1.3x", self.write_ratio),
        );
        check(
            size < 5000 || self.status_ratio <= 0.5,
            format!(
                "kubectl infera status -A took {:.2}x kubectl get idep -A's time > 0.5x",
                self.status_ratio
            ),
        );
        missed
    }
}

/// The direct client: renders `size` deployments locally and server-side applies every child,
/// [`CONCURRENCY`] at a time, as the operator's identity. Returns its time and the child count.
async fn direct(
    admin: &Client,
    identity: &ServiceAccountIdentity,
    size: usize,
) -> anyhow::Result<(Duration, usize)> {
    let ns = TestNamespace::new(admin, "bench-direct").await?;
    let mut children = Vec::new();
    for name in fleet::names("bench", size) {
        let mut idep: InferaDeployment = serde_json::from_value(fleet::small(&name))?;
        idep.metadata.namespace = Some(ns.name().to_string());
        children.extend(render(&validate(&idep)?));
    }
    let count = children.len();
    let as_operator = identity.client().await?;
    // RoleBindings go last: binding a Role that does not exist yet is refused.
    let (bindings, others): (Vec<_>, Vec<_>) = children
        .into_iter()
        .partition(|c| c.kind() == ChildKind::RoleBinding);
    let started = Instant::now();
    for batch in [others, bindings] {
        stream::iter(batch)
            .map(|child| {
                let api = Api::<DynamicObject>::namespaced_with(
                    as_operator.clone(),
                    ns.name(),
                    &child.kind().api_resource(),
                );
                async move {
                    api.patch(
                        child.name(),
                        &PatchParams::apply(OPERATOR_MANAGER),
                        &Patch::Apply(&child),
                    )
                    .await
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<_>>()
            .await?;
    }
    let elapsed = started.elapsed();
    ns.cleanup_and_wait(Duration::from_secs(900)).await?;
    Ok((elapsed, count))
}

async fn operator(
    admin: &Client,
    identity: &ServiceAccountIdentity,
    size: usize,
    (direct, children): (Duration, usize),
    soak: Duration,
    resync: u64,
) -> anyhow::Result<Figures> {
    let ns = TestNamespace::new(admin, "bench-operator").await?;
    // Converging with the default resync period: a shortened one would requeue every converged
    // deployment while the rest still wait, and measure that instead.
    let operator = Operator::start(identity, &["--namespace", ns.name()], "operator-bench").await?;
    let names = fleet::names("bench", size);
    let started = Instant::now();
    let probe = tokio::spawn(fleet::change_while_converging(
        admin.clone(),
        ns.name().to_string(),
        names[0].clone(),
        names.len(),
    ));
    fleet::create(admin, ns.name(), &names).await?;
    let last_create = Instant::now();
    let converged = fleet::wait_reconciled(admin, ns.name(), Duration::from_secs(3600)).await?;
    let convergence = converged - last_create;
    let convergence_ratio = convergence.as_secs_f64() / direct.as_secs_f64();
    let metrics = operator.metrics().await?;
    let requests = sum(&metrics, "infera_api_requests_total{");
    let busy = (converged - started).as_secs_f64();
    println!(
        "  operator: creates took {:.2?}; converged {convergence:.2?} after the last create, ratio {convergence_ratio:.2}x",
        last_create - started,
    );
    let operator_writes = writes(&metrics);
    let write_ratio = operator_writes as f64 / children as f64;
    println!(
        "  operator: {requests:.0} requests in {busy:.1}s from the first create ({:.0}/s), {operator_writes} writes ({write_ratio:.2}x the direct client's {children}), {} dry runs, {:.0} failed reconciles",
        requests / busy,
        dry_runs(&metrics),
        sum(&metrics, "infera_reconcile_errors_total{")
    );
    let by_request: Vec<String> = writes_and_dry_runs_by_request(&metrics)
        .iter()
        .map(|(request, count)| format!("{count} {request}"))
        .collect();
    println!("    by request: {}", by_request.join(", "));
    let peak_rss_mib = mib(operator.peak_rss_kib());
    println!("  operator peak RSS converging: {peak_rss_mib:.1} MiB");
    let (waited, backlog) = probe.await??;
    println!(
        "  a deployment changed while {backlog} others were being created or converging: reconciled {waited:.2?} after the change"
    );
    let status_ratio = plugin_vs_kubectl(ns.name(), size).await?;

    // Restart, as an upgrade does: a new process over the converged deployments, with the
    // shortened resync period for the soak that follows.
    operator.terminate().await?;
    let restarted_at = Instant::now();
    let resync_arg = format!("--resync-seconds={resync}");
    let args = ["--namespace", ns.name(), &resync_arg];
    let operator = Operator::start(identity, &args, "operator-bench-restarted").await?;
    let n = size as f64;
    loop {
        if operator.sample("infera_reconciles_total").await? >= n {
            break;
        }
        anyhow::ensure!(
            restarted_at.elapsed() < Duration::from_secs(900),
            "the restarted operator did not reconcile every deployment"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let all_reconciled = restarted_at.elapsed();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let restart_writes = operator.writes_or_dry_runs().await?;
    let cold_start_rss_mib = mib(operator.peak_rss_kib());
    println!(
        "  restart: every deployment reconciled {all_reconciled:.2?} after the restart, {restart_writes} writes or dry runs; peak RSS of the cold start {cold_start_rss_mib:.1} MiB",
    );

    // Soak of the restarted process: nothing changes; every resync reconciles every deployment again.
    let before = operator.writes_or_dry_runs().await?;
    let reconciles = operator.sample("infera_reconciles_total").await?;
    let mut samples = Vec::new();
    let soak_start = Instant::now();
    while soak_start.elapsed() < soak {
        tokio::time::sleep(Duration::from_secs(5)).await;
        if let Some(rss) = operator.rss_kib() {
            samples.push((
                soak_start.elapsed().as_secs_f64() / 60.0,
                rss as f64 / 1024.0,
            ));
        }
    }
    let metrics = operator.metrics().await?;
    let soak_writes = writes_or_dry_runs(&metrics) - before;
    println!(
        "  soak {soak:?}: {:.0} reconciles, {soak_writes} writes or dry runs, RSS {:.1}..{:.1} MiB, slope {:+.2} MiB/min",
        sample(&metrics, "infera_reconciles_total") - reconciles,
        samples.iter().map(|s| s.1).fold(f64::MAX, f64::min),
        samples.iter().map(|s| s.1).fold(0.0, f64::max),
        slope(&samples)
    );
    drop(operator);
    ns.cleanup_and_wait(Duration::from_secs(900)).await?;
    Ok(Figures {
        convergence_ratio,
        write_ratio,
        peak_rss_mib,
        cold_start_rss_mib,
        restart: all_reconciled,
        restart_writes,
        soak_writes,
        status_ratio,
    })
}

/// `kubectl infera status -A` against `kubectl get idep -A`, through the real kubectl, over the
/// converged deployments (median of three runs each), and the plugin's peak RSS (run directly, so
/// kubectl's own memory before its exec of the plugin is not counted).
async fn plugin_vs_kubectl(namespace: &str, size: usize) -> anyhow::Result<f64> {
    const RUNS: usize = 3;
    let mut medians = Vec::new();
    for args in [["infera", "status", "-A"], ["get", "idep", "-A"]] {
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            let run = kubectl(&args).await?.expect_code(0)?;
            times.push(started.elapsed());
            let rows = run.stdout.lines().filter(|l| l.contains(namespace)).count();
            anyhow::ensure!(
                rows == size,
                "kubectl {} printed {rows} of {size} rows",
                args.join(" ")
            );
        }
        times.sort();
        medians.push(times[RUNS / 2]);
    }
    let plugin = binary("kubectl-infera")?;
    let measured = tokio::process::Command::new("python3")
        .args(["-c", MAX_RSS_OF_CHILD])
        .arg(&plugin)
        .args(["status", "-A"])
        .output()
        .await?;
    anyhow::ensure!(
        measured.status.success(),
        "measuring the plugin's RSS failed: {}",
        String::from_utf8_lossy(&measured.stderr)
    );
    let kib: f64 = String::from_utf8_lossy(&measured.stderr)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .parse()?;
    println!(
        "  kubectl infera status -A {:.2?}, kubectl get idep -A {:.2?} (median of {RUNS}): ratio {:.2}; plugin peak RSS {:.1} MiB",
        medians[0],
        medians[1],
        medians[0].as_secs_f64() / medians[1].as_secs_f64(),
        kib / 1024.0
    );
    Ok(medians[0].as_secs_f64() / medians[1].as_secs_f64())
}

/// Runs `argv[1:]` with its stdout discarded and prints the child's peak RSS in KiB (Linux
/// `ru_maxrss`) on stderr.
const MAX_RSS_OF_CHILD: &str = "import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(code)";

fn mib(kib: Option<u64>) -> f64 {
    kib.unwrap_or_default() as f64 / 1024.0
}

/// Least-squares slope of `(minute, MiB)` samples, in MiB per minute.
fn slope(samples: &[(f64, f64)]) -> f64 {
    let n = samples.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = (
        samples.iter().map(|s| s.0).sum::<f64>() / n,
        samples.iter().map(|s| s.1).sum::<f64>() / n,
    );
    let cov: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 - my)).sum();
    let var: f64 = samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
    if var == 0.0 { 0.0 } else { cov / var }
}
