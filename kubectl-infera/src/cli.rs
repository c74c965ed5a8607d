//! The command line: clap types only. Each subcommand's behaviour lives in `commands/<name>.rs`.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};

mod values;

use crate::duration::parse_duration;
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

const DASHBOARD_EXAMPLES: &str = "Examples:
  # Import into Grafana (Dashboards > New > Import), or provision it from a ConfigMap
  kubectl infera dashboard demo > demo.json
  # Offline, from the spec
  kubectl infera dashboard -f examples/pd.yaml";

#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// The InferaDeployment.
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub name: Option<String>,
    /// Its spec instead (YAML or JSON, one InferaDeployment; `-` reads stdin): no cluster needed.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: Option<PathBuf>,
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

/// Topology of a flags-only or wizard deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Topology {
    /// One pool of mixed workers (prefill and decode on the same GPUs).
    Aggregated,
    /// Disaggregated prefill and decode pools.
    Pd,
    /// Mixed workers spanning several nodes per replica (LeaderWorkerSet).
    Multinode,
}

#[derive(Debug, Args)]
pub struct DeployArgs {
    /// An InferaDeployment YAML file (`-` reads stdin). Without it, the spec comes from flags, or
    /// from the wizard on a terminal.
    #[arg(short = 'f', long = "filename", value_name = "FILE", conflicts_with_all = ["name", "backend", "model", "topology"])]
    pub file: Option<PathBuf>,
    /// client: print the spec, contact no cluster; server: let the API server check it.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "client", default_value = "none")]
    pub dry_run: DryRun,
    /// Print the resulting InferaDeployment (yaml or json) instead of a summary.
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<ManifestOutput>,
    /// Also write the spec to FILE (as YAML).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Wait until the deployment is Ready; on timeout, explain what blocks it.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits.
    #[arg(long, value_parser = parse_duration, default_value = "10m")]
    pub timeout: Duration,
    /// Take ownership of fields another field manager owns.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Never start the wizard, even on a terminal.
    #[arg(long)]
    pub no_interactive: bool,
    /// Apply without asking for confirmation at the end of the wizard.
    #[arg(short = 'y', long)]
    pub yes: bool,
    #[command(flatten)]
    pub spec: SpecFlags,
}

/// The wizard's choices as flags (the wizard prints the equivalent command line).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Spec flags (instead of -f)")]
pub struct SpecFlags {
    /// Name of the InferaDeployment.
    #[arg(long)]
    pub name: Option<String>,
    /// Inference engine.
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Model the workers serve: an id or path the engine resolves, or a volume the operator mounts:
    /// hf://ORG/NAME[@REVISION] (downloaded first into a 100Gi volume), pvc://CLAIM[/SUBPATH], hostPath:///PATH.
    #[arg(long)]
    pub model: Option<String>,
    /// Tokenizer the router loads (`--router-tokenizer-path`): a Hugging Face id or a path in the
    /// server's image [default: the model's id; required with a pvc:// or hostPath:// model].
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Topology: aggregated, pd (prefill/decode) or multinode.
    #[arg(long, value_enum)]
    pub topology: Option<Topology>,
    /// Container image (default: rocm/infera:<backend>-v<version>).
    #[arg(long)]
    pub image: Option<String>,
    /// Worker replicas (aggregated/multinode) [default: 1].
    #[arg(long)]
    pub replicas: Option<i32>,
    /// Prefill replicas (pd) [default: 1].
    #[arg(long)]
    pub prefill_replicas: Option<i32>,
    /// Decode replicas (pd) [default: 1].
    #[arg(long)]
    pub decode_replicas: Option<i32>,
    /// Server (router) replicas [default: 1].
    #[arg(long)]
    pub server_replicas: Option<i32>,
    /// GPUs per worker pod [default: 1].
    #[arg(long)]
    pub gpus: Option<i32>,
    /// GPU resource name [default: amd.com/gpu].
    #[arg(long)]
    pub gpu_type: Option<String>,
    /// GPU product the workers must run on, e.g. MI300X (never another product; see `kubectl infera doctor`).
    #[arg(long)]
    pub gpu_product: Option<String>,
    /// Nodes per replica (multinode) [default: 2].
    #[arg(long)]
    pub nodes: Option<i32>,
    /// Tensor-parallel size [default: GPUs per pod]; with several nodes, pipeline parallelism covers the rest.
    #[arg(long)]
    pub tp: Option<i32>,
    /// KV transfer backend for pd (e.g. mori, nixl, mooncake).
    #[arg(long)]
    pub transfer_backend: Option<String>,
    /// RDMA device for the KV transfer (pd; with --rdma-resource it becomes spec.network.rdma.device).
    #[arg(long)]
    pub ib_device: Option<String>,
    /// Extended resource of the RDMA NICs the prefill, decode and multi-node pods request, e.g. rdma/hca.
    #[arg(long)]
    pub rdma_resource: Option<String>,
    /// Multus NetworkAttachmentDefinition the RDMA pods attach (repeatable; needs --rdma-resource).
    #[arg(long = "rdma-network", value_name = "NAME")]
    pub rdma_networks: Vec<String>,
    /// Router policy of the server (e.g. kv-aware, round-robin, cache-aware).
    #[arg(long)]
    pub router_policy: Option<String>,
    /// Deploy a managed NATS JetStream for KV events [default: true].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub nats: Option<bool>,
    /// Size of the NATS JetStream volume.
    #[arg(long)]
    pub nats_storage: Option<String>,
    /// Discovery backend.
    #[arg(long, value_enum)]
    pub discovery: Option<Discovery>,
    /// etcd URL (with --discovery etcd).
    #[arg(long)]
    pub etcd_endpoint: Option<String>,
    /// Memory per worker pod [default: 64Gi per GPU of the pod].
    #[arg(long)]
    pub memory: Option<String>,
    /// Size of the memory-backed /dev/shm per worker pod [default: 32Gi per GPU of the pod].
    #[arg(long)]
    pub shared_memory: Option<String>,
    /// How long a worker's cold start (model download and load) may take, e.g. 30m or 2h [default: 1h].
    #[arg(long)]
    pub startup_timeout: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Sglang,
    Vllm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Discovery {
    Kubernetes,
    Etcd,
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

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Show one deployment in detail.
    pub name: Option<String>,
    /// List deployments in every namespace.
    #[arg(short = 'A', long, conflicts_with = "name")]
    pub all_namespaces: bool,
    /// Keep watching: redraw on a terminal, append a line per change otherwise (NDJSON with -o json).
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// With NAME: the pools' live load from each router and engine pod's /metrics, read through
    /// the API server (get on pods/proxy): requests in flight, running and waiting, KV-cache
    /// usage; `--load=10s` samples twice 10 s apart and adds tokens and requests per second and
    /// latency p50/p95 (end to end, time to first token, between tokens) over that window. With
    /// --watch, read every WINDOW (10s when none is given), the rates over the time between reads.
    #[arg(long, value_name = "WINDOW", num_args = 0..=1, require_equals = true, default_missing_value = "0s", value_parser = parse_duration, requires = "name")]
    pub load: Option<Duration>,
    /// With NAME: --load's figures from this Prometheus (e.g. http://localhost:9090 through
    /// `kubectl port-forward`) instead of the pods: the series the graph's PodMonitor collects
    /// (spec.monitoring), rates and latencies over --load's window, 1m when it gives none. With
    /// --watch, asked again every WINDOW (10s when none is given).
    #[arg(long, value_name = "URL", requires = "name")]
    pub prometheus: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

const LOGS_EXAMPLES: &str = "\
Examples:
  kubectl infera logs demo                     the last 10 lines of every container, as one timeline
  kubectl infera logs demo decode prefill -f   follow two pools, through rollouts and scaling
  kubectl infera logs demo --since 15m --operator
  kubectl infera logs group worker --rank 1    rank 1 of a multi-node pool
  kubectl infera logs demo -p                  the instance before the last restart

Passwords in URLs are shown as ***. Needs get and list (and, with -f, watch) on pods and get on
pods/log in the namespace, and the same in infera-system for --operator.
Exit codes: 0 every log read · 1 the deployment or a pool does not exist, or a log could not be
read (each says why on stderr) · 2 a rank the pools do not have · 130 interrupted (-f ends so).";

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The InferaDeployment.
    pub name: String,
    /// Only these pools: the spec's service names, or nats, epp and model for the parts the
    /// operator adds.
    #[arg(value_name = "POOL")]
    pub pools: Vec<String>,
    /// Keep printing lines as they come; pods that start later (a rollout, a scale, a restart)
    /// join from their first line.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Only lines newer than this, e.g. 30s, 15m or 2h (then every line since, unless --tail).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub since: Option<Duration>,
    /// Lines from the end of each container's log; -1 for all [default: 10, or all with --since].
    #[arg(long, allow_negative_numbers = true, value_name = "LINES")]
    pub tail: Option<i64>,
    /// The log of each container's previous instance (before its last restart).
    #[arg(short = 'p', long, conflicts_with = "follow")]
    pub previous: bool,
    /// Only this rank of the multi-node pools (0 is the leader).
    #[arg(long, value_name = "N")]
    pub rank: Option<u32>,
    /// Show the time the API server recorded in front of each line.
    #[arg(long)]
    pub timestamps: bool,
    /// Also the operator's log lines about this deployment.
    #[arg(long)]
    pub operator: bool,
    /// Logs read at once; with -f, the most that are followed from the start.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_log_requests: usize,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The InferaDeployment.
    pub name: String,
    /// The file to write [default: infera-report-NAMESPACE-NAME-<UTC time>.tar.gz].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Lines from the end of each container's log, and of its previous instance.
    #[arg(long, default_value_t = 2000, value_name = "LINES", value_parser = clap::value_parser!(i64).range(1..))]
    pub tail: i64,
}

const BENCH_EXAMPLES: &str = "\
Examples:
  kubectl infera bench demo                          2 requests/s for 60 s, 1024 tokens in, 128 out
  kubectl infera bench demo --rate 8 --duration 5m --slo-ttft 500ms --slo-itl 50ms
  kubectl infera bench demo --concurrency 16 --requests 400 --input-tokens 4096
  kubectl infera bench list demo                     the runs kept, newest last
  kubectl infera bench compare demo-bench-20261207-101500 demo-bench-20261207-103000

The load is sent from a Job in the deployment's namespace (image inference-perf, kubernetes-sigs)
to its server Service, streamed, so that time to first token and between tokens are measured.
Each run is a ConfigMap owned by the deployment: its load, inference-perf's config and, once it
has finished, inference-perf's summary. Needs create on configmaps and jobs, get and watch on
jobs, list on pods and get on pods/log in the namespace.
Exit codes: 0 measured · 1 the deployment or a run does not exist, or the Job failed (its log's
last lines are shown) · 2 flags that do not fit · 3 timed out (the run is kept: bench show RUN).";

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub action: Option<BenchAction>,
    /// The InferaDeployment to measure.
    pub name: Option<String>,
    #[command(flatten)]
    pub load: BenchLoad,
    /// Create the run and return; `bench show RUN` collects its result later.
    #[arg(long)]
    pub no_wait: bool,
    /// How long the run may take (the Job's deadline) and the command waits [default: its
    /// duration plus 10m, for the image and the tokenizer].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,
    /// Output format (table, json or yaml).
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// What load a run sends.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Load flags")]
pub struct BenchLoad {
    /// Tokens of each prompt.
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub input_tokens: u32,
    /// Tokens generated for each prompt (end of sequence ignored).
    #[arg(long, default_value_t = 128, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub output_tokens: u32,
    /// Requests per second, sent at a constant rate for --duration [default: 2].
    #[arg(long, value_name = "PER_SECOND", conflicts_with_all = ["concurrency", "requests"])]
    pub rate: Option<f64>,
    /// How long to send at --rate.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", conflicts_with_all = ["concurrency", "requests"])]
    pub duration: Option<Duration>,
    /// Requests in flight at once, instead of a rate (with --requests).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: Option<u32>,
    /// Requests sent in all at --concurrency [default: 10 per request in flight].
    #[arg(long, value_name = "N", requires = "concurrency", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub requests: Option<u32>,
    /// Time-to-first-token target: goodput counts the requests that meet every target given.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_ttft: Option<Duration>,
    /// Inter-token-latency target.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_itl: Option<Duration>,
    /// The model name sent [default: the first the server lists at /v1/models].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Hugging Face id or path of the tokenizer that counts tokens [default: the model's].
    #[arg(long, value_name = "NAME")]
    pub tokenizer: Option<String>,
    /// Where the load goes: the Gateway in front of a GAIE deployment, or the server Service
    /// [default: gateway with spec.gaie, else server].
    #[arg(long, value_enum, value_name = "TARGET", conflicts_with = "url")]
    pub target: Option<BenchTarget>,
    /// Where to send the load instead, a base URL.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// inference-perf worker processes (each keeps up to 100 requests in flight).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
    /// The inference-perf image [default: quay.io/inference-perf/inference-perf:v0.7.0].
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
}

/// What `bench` sends to without `--url`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchTarget {
    /// The Gateway of `spec.gaie` (its address and listener port; the route's Host).
    Gateway,
    /// The server Service (upstream's router).
    Server,
}

#[derive(Debug, Subcommand)]
pub enum BenchAction {
    /// The runs kept for a deployment (or every deployment of the namespace), oldest first.
    List {
        /// The InferaDeployment.
        name: Option<String>,
        /// Output format (table, json or yaml).
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// One run: its load and, once finished, its figures (collected from the Job if not yet).
    Show {
        /// The run (a name `bench list` prints).
        run: String,
        /// Output format (table, json or yaml).
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// Two runs side by side, with the change from the first to the second.
    Compare {
        /// The run compared against.
        before: String,
        /// The run compared with it.
        after: String,
        /// Output format (table, json or yaml).
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
}
