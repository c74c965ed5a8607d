//! The command line: clap types only. Each subcommand's behaviour lives in `commands/<name>.rs`.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};

mod deploy;
mod observe;
mod values;

pub use deploy::{Backend, DeployArgs, Discovery, SpecFlags, Topology};
pub use observe::{
    BenchAction, BenchArgs, BenchLoad, BenchTarget, DashboardArgs, LogsArgs, ReportArgs, StatusArgs,
};

use crate::duration::parse_duration;
use observe::{BENCH_EXAMPLES, DASHBOARD_EXAMPLES, LOGS_EXAMPLES};
use values::pool_replicas;

const AFTER_HELP: &str = "\
Exit codes: 0 ok · 1 failed (invalid spec, API error, doctor found a failure) · 2 usage · 3 timed out · \
4 conflict or refused (field owned by another manager, version skew, objects still exist) · \
5 cluster unreachable or kubeconfig unusable · 130 interrupted.";

/// Install the Infera operator, deploy LLM inference graphs and see what they are doing.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-infera",
    bin_name = "kubectl infera",
    display_name = "kubectl infera",
    version,
    propagate_version = true,
    after_help = AFTER_HELP,
    max_term_width = 110
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// kubectl's global flags, accepted by every subcommand (before or after it).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Kubernetes flags")]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The kubeconfig cluster to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,
    /// The kubeconfig user to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,
    /// Namespace (default: the context's namespace, else `default`).
    #[arg(short = 'n', long, global = true, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Username to impersonate.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,
    /// Group to impersonate (repeatable).
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub as_group: Vec<String>,
    /// Timeout of a single API request, e.g. 30s or 1m; 0 means none.
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub request_timeout: Option<Duration>,
    /// Colour: auto (on a terminal unless NO_COLOR is set), always or never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Output flags")]
    pub color: ColorChoice,
    /// Log verbosity like kubectl's -v: 6 logs every API request to stderr.
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        value_name = "LEVEL",
        default_value_t = 0,
        hide_default_value = true,
        help_heading = "Output flags"
    )]
    pub verbosity: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// Output format of commands that show objects or results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Output {
    #[default]
    Table,
    Wide,
    Json,
    Yaml,
}

/// Output format of commands that only print manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ManifestOutput {
    #[default]
    Yaml,
    Json,
}

/// `--dry-run` like kubectl's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    /// Print what would be sent; contact no cluster.
    Client,
    /// Send the request with dryRun=All: admission and validation run, nothing is stored.
    Server,
    /// Do it for real (the default).
    None,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install or upgrade the operator: CRD, namespace, RBAC, Deployment, metrics Service.
    Init(InitArgs),
    /// Remove exactly what `init` installed.
    Uninstall(UninstallArgs),
    /// Check that the cluster can run Infera (and, with --for, a given spec).
    Doctor(DoctorArgs),
    /// Create or update an InferaDeployment (from a file, flags, or an interactive wizard).
    Deploy(Box<DeployArgs>),
    /// Show InferaDeployments: a list, or one in detail.
    Status(StatusArgs),
    /// Set the replicas of pools: `scale NAME decode=4 prefill=2`.
    Scale(ScaleArgs),
    /// Follow, pause or resume the rollout of a deployment's worker pools.
    Rollout(RolloutArgs),
    /// Print the logs of a deployment's pods together, each line prefixed by pool/pod.
    #[command(after_help = LOGS_EXAMPLES)]
    Logs(LogsArgs),
    /// Write a support bundle of a deployment (.tar.gz): spec, status, children, pods, events,
    /// logs, doctor, the operator; no Secret value.
    Report(ReportArgs),
    /// Print every object the operator would create for a spec (offline).
    Render(RenderArgs),
    /// Explain what the SLO planner (`spec.planner`) recommends and why, with its last decisions.
    Planner(PlannerArgs),
    /// Print a Grafana dashboard of a deployment's metrics (with `spec.monitoring`).
    #[command(after_help = DASHBOARD_EXAMPLES)]
    Dashboard(DashboardArgs),
    /// Measure a deployment: an in-cluster inference-perf Job sends load to its server and the
    /// latencies, throughput and goodput are printed and kept; list and compare runs.
    #[command(after_help = BENCH_EXAMPLES, args_conflicts_with_subcommands = true)]
    Bench(Box<BenchArgs>),
    /// Show the plugin, CRD and operator versions.
    Version(VersionArgs),
    /// Print a shell completion script (or install the kubectl completion shim).
    Completion(CompletionArgs),
    /// Dynamic completion protocol used by kubectl_complete-infera.
    #[command(name = "__complete", hide = true)]
    Complete(CompleteArgs),
    /// Regenerate crds/ and completions/ in a repository checkout.
    #[command(name = "__generate", hide = true)]
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The InferaDeployment YAML (or JSON); `-` reads stdin.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = ManifestOutput::Yaml)]
    pub output: ManifestOutput,
}

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Only the plugin's version; contact no cluster.
    #[arg(long)]
    pub client: bool,
    /// Output format (table, json or yaml).
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// Shell to print the completion script for.
    #[arg(value_enum, required_unless_present = "install_shim")]
    pub shell: Option<Shell>,
    /// Write the `kubectl_complete-infera` shim into DIR (default: Krew's bin directory:
    /// $KREW_ROOT/bin, else where `kubectl-krew` is on PATH, else ~/.krew/bin), so
    /// `kubectl infera <TAB>` completes.
    #[arg(long = "install-shim", value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    pub install_shim: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The words typed so far (after `kubectl infera`), the last one being completed.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Root of the repository checkout.
    pub root: PathBuf,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// client: print the bundle without contacting a cluster; server: let the API server check it.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "client", default_value = "none")]
    pub dry_run: DryRun,
    /// With --dry-run=client: output format of the bundle.
    #[arg(short = 'o', long, value_enum, default_value_t = ManifestOutput::Yaml)]
    pub output: ManifestOutput,
    /// Wait until the operator Deployment is available.
    #[arg(long)]
    pub wait: bool,
    /// How long to wait for the CRD and (with --wait) the operator.
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    pub timeout: Duration,
    /// Take ownership of fields another field manager owns (kubectl's --force-conflicts).
    #[arg(long)]
    pub force_conflicts: bool,
    /// Allow installing an older version over a newer one.
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Take over from another controller of InferaDeployments (upstream Infera's operator):
    /// scale it to 0, take the CRD's fields, and let our operator take the fields it owned in
    /// the children of existing InferaDeployments. Without it, init refuses to install beside one.
    #[arg(long)]
    pub take_over: bool,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Uninstall even though InferaDeployments exist (deleting the CRD deletes them and their children).
    #[arg(long)]
    pub force: bool,
    /// client: list what would be deleted; server: send deletes with dryRun=All.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "client", default_value = "none")]
    pub dry_run: DryRun,
    /// Wait until the namespace and the CRD are gone.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits.
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Pre-install checks only (before `init`): skip the Infera CRD and operator checks.
    #[arg(long)]
    pub pre: bool,
    /// Also check whether this spec fits the cluster's free GPUs now, pool by pool, and, with
    /// `gaie`, its Gateway, listener and a server-side dry run of its route and pool.
    #[arg(long = "for", value_name = "FILE")]
    pub for_file: Option<PathBuf>,
    /// Output format (table, json or yaml).
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct ScaleArgs {
    /// The InferaDeployment.
    pub name: String,
    /// Pools and their new replicas (groups, for multi-node pools), e.g. `decode=4 prefill=2`.
    #[arg(required = true, value_name = "POOL=REPLICAS", value_parser = pool_replicas)]
    pub pools: Vec<(String, i32)>,
    /// client: read the deployment and print the change, write nothing; server: send it with
    /// dryRun=All.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "client", default_value = "none")]
    pub dry_run: DryRun,
    /// Wait until the deployment is Ready with the new replicas; on timeout, explain what blocks it.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits.
    #[arg(long, value_parser = parse_duration, default_value = "10m")]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct RolloutArgs {
    #[command(subcommand)]
    pub action: RolloutAction,
}

#[derive(Debug, Subcommand)]
pub enum RolloutAction {
    /// Hold the worker pools at the revision they run (`spec.rollout.paused: true`).
    Pause {
        /// The InferaDeployment.
        name: String,
    },
    /// Let the worker pools roll out to the spec's revision again.
    Resume {
        /// The InferaDeployment.
        name: String,
    },
    /// Follow the rollout until it is complete (exit 0), or past its progressDeadlineSeconds
    /// (exit 3, with what blocks it); a line per change of the Progressing condition.
    Status {
        /// The InferaDeployment.
        name: String,
        /// Give up after this long (exit 3); default: follow until complete or past the deadline.
        #[arg(long, value_parser = parse_duration)]
        timeout: Option<Duration>,
    },
    /// List the revisions of the worker pods kept in the cluster: what changed in each, its age,
    /// which is current; with --revision, one revision's spec.
    History {
        /// The InferaDeployment.
        name: String,
        /// Show this revision's spec.
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        revision: Option<i64>,
        /// Output format (table, json or yaml; json and yaml print the ControllerRevisions).
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// Return to an earlier revision (default: the one before the newest): re-applies its spec,
    /// keeping today's replicas, autoscaling and rollout settings; it rolls out like any change.
    Undo {
        /// The InferaDeployment.
        name: String,
        /// The revision to return to (see `rollout history`).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        to_revision: Option<i64>,
    },
}

#[derive(Debug, Args)]
pub struct PlannerArgs {
    #[command(subcommand)]
    pub action: PlannerAction,
}

#[derive(Debug, Subcommand)]
pub enum PlannerAction {
    /// The latencies the planner last saw against their targets, each pool's load, learned
    /// capacity and recommended replicas with the reason, and the last decisions.
    Explain {
        /// The InferaDeployment.
        name: String,
        /// Output format (table, json or yaml).
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
}
