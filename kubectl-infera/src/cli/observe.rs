//! The arguments of the commands that look at a running graph: `status`, `logs`, `report`,
//! `bench` and `dashboard`.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Subcommand, ValueEnum};

use super::Output;
use crate::duration::parse_duration;

pub(super) const DASHBOARD_EXAMPLES: &str = "Examples:
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

pub(super) const LOGS_EXAMPLES: &str = "\
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

pub(super) const BENCH_EXAMPLES: &str = "\
Examples:
  kubectl infera bench demo                          2 requests/s for 60 s, 1024 tokens in, 128 out
  kubectl infera bench demo --rate 8 --duration 5m --slo-ttft 500ms --slo-itl 50ms
  kubectl infera bench demo --concurrency 16 --requests 400 --input-tokens 4096
  kubectl infera bench demo --input-tokens 2048 --shared-prefix 1536   prompts sharing prefixes
  kubectl infera bench demo --target server          the router, though the deployment has GAIE
  kubectl infera bench list demo                     the runs kept, newest last
  kubectl infera bench compare demo-bench-20261207-101500 demo-bench-20261207-103000

The load is sent from a Job in the deployment's namespace (image inference-perf, kubernetes-sigs)
to its Gateway (with spec.gaie) or its server Service, streamed, so that time to first token and
between tokens are measured. Each run is a ConfigMap owned by the deployment: its load,
inference-perf's config and, once it has finished, inference-perf's summary. Needs create on
configmaps and jobs, get and watch on jobs, list on pods and get on pods/log in the namespace
(and get on the Gateway).
Exit codes: 0 measured · 1 the deployment or a run does not exist, or the Job failed (its log's
last lines are shown) · 2 flags that do not fit · 3 timed out (the run is kept: bench show RUN) ·
4 the target is not there yet (the server Service, the Gateway's address), or compare of a run
without figures.";

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
    /// Tokens at the start of each prompt that the other prompts of its group share (of
    /// --input-tokens): measures prefix caching and cache-aware routing.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub shared_prefix: Option<u32>,
    /// Groups of prompts, each with a prefix of its own [default: 10].
    #[arg(long, value_name = "N", requires = "shared_prefix", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub prefix_groups: Option<u32>,
    /// Distinct prompts in each group [default: 10].
    #[arg(long, value_name = "N", requires = "shared_prefix", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub prompts_per_group: Option<u32>,
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
