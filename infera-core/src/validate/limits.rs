//! The CRD schema's limits (`maxLength`, `maxItems`, `maxProperties`, `maximum`, `pattern`).
//! [`crate::types`] writes these constants into the schema and the rule groups check them, so a
//! spec the API server would refuse for a size is refused by [`super::validate`] first, with a
//! field path and a fix. Minimums (non-empty strings, `replicas` ≥ 0, `numberOfNodes` ≥ 1, a
//! worker's `gpu` ≥ 1) come with the rules' own messages.

/// Most services in one deployment (`spec.services`).
pub const MAX_SERVICES: usize = 32;
/// Fewest services: one server and one worker pool (the topology rules say which is missing).
pub const MIN_SERVICES: usize = 2;
/// Most engine arguments of one service.
pub const MAX_ARGS: usize = 128;
/// Longest engine argument.
pub const MAX_ARG_LENGTH: usize = 2048;
/// Longest image reference or URL (`image`, `etcdEndpoint`, `nats.url`, `gaie.eppImage`).
pub const MAX_REFERENCE_LENGTH: usize = 512;
/// Most containers, and most init containers, in a `podTemplate`.
pub const MAX_OVERLAY_CONTAINERS: usize = 16;
/// Most labels, and most volumes, in a `podTemplate` (the CEL rules walk them: a bound keeps
/// their cost within the API server's budget).
pub const MAX_OVERLAY_ENTRIES: usize = 64;
/// Most replicas (groups, for multi-node pools) of one service.
pub const MAX_REPLICAS: i32 = 1000;
/// Shortest `planner.intervalSeconds`: engines' metrics are read once per interval, and a
/// window much shorter than a few requests says little.
pub const MIN_PLANNER_INTERVAL_SECONDS: i32 = 5;
/// Longest `planner.intervalSeconds`.
pub const MAX_PLANNER_INTERVAL_SECONDS: i32 = 3600;
/// Longest `planner.cooldownSeconds`: a day.
pub const MAX_PLANNER_COOLDOWN_SECONDS: i32 = 24 * 60 * 60;
/// Longest latency target (`planner.slo`), in milliseconds: ten minutes.
pub const MAX_SLO_MILLISECONDS: i32 = 600_000;
/// Most decisions `status.planner` keeps.
pub const MAX_PLANNER_DECISIONS: usize = 10;
/// Most `autoscaling.metrics` entries of a service.
pub const MAX_METRICS: usize = 8;
/// Most `autoscaling.triggers` entries of a service.
pub const MAX_TRIGGERS: usize = 8;
/// Most `metadata` entries of one KEDA trigger.
pub const MAX_TRIGGER_METADATA: usize = 32;
/// Longest KEDA trigger `type` or `name`.
pub const MAX_TRIGGER_TYPE_LENGTH: usize = 63;
/// Most nodes per replica of a multi-node pool.
pub const MAX_NODES: i32 = 64;
/// Most GPUs per pod.
pub const MAX_GPUS: i32 = 64;
/// `health.startupTimeout`: a whole number (at most six digits) of seconds, minutes or hours.
/// Six digits keep every such duration within CEL's range, so the range rule never overflows.
pub const DURATION_PATTERN: &str = "^[0-9]{1,6}[smh]$";
/// The form of an HTTP(S) URL (`planner.prometheus`): a scheme and no space.
pub const HTTP_URL_PATTERN: &str = "^https?://[^ ]+$";
/// Longest `health.startupTimeout` (six digits and a unit).
pub const MAX_DURATION_LENGTH: usize = 7;
/// Longest startup budget, in seconds (24h).
pub const MAX_STARTUP_SECONDS: i32 = 24 * 60 * 60;
/// Longest `monitoring.interval`, in seconds.
pub const MAX_SCRAPE_INTERVAL_SECONDS: i32 = 60 * 60;
/// An HTTP path a probe calls (`health.readinessPath`): `/`, then printable ASCII without spaces.
pub const PROBE_PATH_PATTERN: &str = "^/[!-~]*$";
/// `health.livenessPath`: such a path, or `none` for no liveness probe.
pub const LIVENESS_PATH_PATTERN: &str = "^(none|/[!-~]*)$";
/// Longest probe path.
pub const MAX_PROBE_PATH_LENGTH: usize = 256;
/// Longest probe timeout, in seconds (`health.timeoutSeconds`).
pub const MAX_PROBE_TIMEOUT: i32 = 300;
/// Longest `spec.rollout.progressDeadlineSeconds`: a day.
pub const MAX_PROGRESS_DEADLINE_SECONDS: i32 = 24 * 60 * 60;
/// Most earlier revisions kept (`spec.revisionHistoryLimit`): each is a ControllerRevision
/// holding a whole spec, so the bound keeps one deployment's history within a few megabytes.
pub const MAX_REVISION_HISTORY_LIMIT: i32 = 100;
/// Longest drain, in seconds (`health.drainSeconds`).
pub const MAX_DRAIN_SECONDS: i32 = 3600;
/// An extended resource name, `prefix/name` (`resources.gpuType`); `is_resource_name` checks it.
pub const RESOURCE_NAME_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";

/// A GPU product (`resources.gpuProduct`): a label value's characters.
pub const GPU_PRODUCT_PATTERN: &str = "^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";
/// Longest GPU product: its longest label value, `AMD_Instinct_<product>_OAM`, is at most a
/// label value's 63 characters.
pub const MAX_GPU_PRODUCT_LENGTH: usize = 63 - "AMD_Instinct_".len() - "_OAM".len();

/// Most Multus networks of one pool (`network.rdma.networks`).
pub const MAX_RDMA_NETWORKS: usize = 16;
/// A NetworkAttachmentDefinition reference: `name` or `namespace/name` (DNS labels and a
/// subdomain, as Multus's annotation takes them).
pub const NETWORK_NAME_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/// Longest NetworkAttachmentDefinition reference: a namespace, `/` and a name.
pub const MAX_NETWORK_NAME_LENGTH: usize = 63 + 1 + 253;
/// IB device names, comma-separated (`rdma0`, `mlx5_0,mlx5_1`).
pub const IB_DEVICE_PATTERN: &str = "^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$";
/// Longest `network.rdma.device`.
pub const MAX_IB_DEVICE_LENGTH: usize = 256;

/// `gaie.hostnames[]`: a DNS subdomain, or `*.` and one (Gateway API's `Hostname`,
/// sigs.k8s.io/gateway-api `apis/v1/shared_types.go`).
pub const HOSTNAME_PATTERN: &str =
    r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/// Most `gaie.hostnames` (an HTTPRoute's `hostnames` holds at most 16).
pub const MAX_HOSTNAMES: usize = 16;
/// `spec.networkPolicy.metricsFrom` entries.
pub const MAX_METRICS_FROM: usize = 16;
/// `spec.networkPolicy.egress.allow` rules, and the peers and ports of each.
pub const MAX_EGRESS_RULES: usize = 16;

/// `model.source`: `pvc://CLAIM[/SUBPATH]`, `hostPath:///PATH` or `hf://ORG/NAME[@REVISION]`.
pub const MODEL_SOURCE_PATTERN: &str = r"^(pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/]+)*|hostPath:///[!-~]*|hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*(@[-A-Za-z0-9_./]+)?)$";
/// `model.mountPath`: an absolute path of printable characters, not `:` (a volume mount path).
pub const MOUNT_PATH_PATTERN: &str = "^/[!-9;-~]*$";
