//! What a run sends, pure: its load, inference-perf's config for it, and the run's two objects —
//! a ConfigMap owned by the deployment (the load, the config and, once finished, the summary) and
//! the Job that runs inference-perf, owned by the ConfigMap.
//!
//! inference-perf 0.7.0 (kubernetes-sigs, Apache-2.0), as its package declares it:
//! `inference_perf/config/config.py` `Config` (api, data, load, report, storage, server,
//! tokenizer), `config/loadgen/config.py` (`constant` stages of `rate`/`duration`, `concurrent`
//! stages of `num_requests`/`concurrency_level`, `num_workers`), `config/common.py`
//! `Distribution` (`fixed`), `config/reportgen/config.py` (`percentiles`, `goodput.constraints`
//! in seconds), `main.py:434-439` (the summary printed between markers on stdout) and
//! `client/modelserver/openai_client.py:119-129` (the model taken from `/v1/models` when none is
//! named), `config/apis/config.py:67` and `openai_client.py:475-476` (`api.headers` sent with
//! every request; its aiohttp 3.14.5 lets a `Host` given there replace the URL's,
//! `aiohttp/client_reqrep.py:1284-1287`).

use std::collections::BTreeMap;

use infera_core::{
    InferaDeployment,
    naming::{LABEL_INSTANCE, LABEL_MANAGED_BY, LABEL_NAME, PLUGIN_MANAGER},
};
use kube::Resource;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The image the Job runs unless `--image` names another.
pub const IMAGE: &str = "quay.io/inference-perf/inference-perf:v0.7.0";
/// `app.kubernetes.io/name` of a run's ConfigMap and Job; with `app.kubernetes.io/instance` =
/// the deployment, what `bench list` selects. No `infera.amd.com/` label: the run is not part
/// of the graph (the operator, `status` and `logs` never see it).
pub const APP: &str = "infera-bench";
/// The ConfigMap's keys.
pub const LOAD_KEY: &str = "load.json";
pub const CONFIG_KEY: &str = "config.yaml";
pub const SUMMARY_KEY: &str = "summary.json";
/// The percentiles asked of inference-perf (its summary names them `median`, `p95`, `p99`).
pub const PERCENTILES: [u8; 3] = [50, 95, 99];
/// How long a finished Job (and its pod's log) stays, for `bench show` to collect.
const JOB_TTL_SECONDS: u32 = 86_400;
const CONFIG_DIR: &str = "/etc/inference-perf";
const SCRATCH: &str = "/tmp";

/// The load of one run, as the user asked for it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Load {
    /// Base URL of the server the requests go to.
    pub url: String,
    /// The `Host` they carry (a Gateway's route or listener matching hostnames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `sglang` or `vllm`: inference-perf's client of that server.
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// The first tokens of each prompt shared within its group; none: every prompt random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_prefix: Option<SharedPrefix>,
    pub shape: Shape,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_ttft_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_itl_seconds: Option<f64>,
    pub workers: u32,
}

/// Prompts in `groups`, `prompts_per_group` distinct ones each, whose first `tokens` are their
/// group's (inference-perf's `shared_prefix` dataset).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SharedPrefix {
    pub tokens: u32,
    pub groups: u32,
    pub prompts_per_group: u32,
}

impl Load {
    /// The lengths: `1024 tokens in (768 shared in 10 groups), 128 out`.
    pub fn lengths(&self) -> String {
        let shared = self.shared_prefix.map_or_else(String::new, |p| {
            format!(" ({} shared in {} groups)", p.tokens, p.groups)
        });
        format!(
            "{} tokens in{shared}, {} out",
            self.input_tokens, self.output_tokens
        )
    }

    /// Where it goes: `http://10.0.0.7:80 (Host: llm.example)`.
    pub fn destination(&self) -> String {
        match &self.host {
            Some(host) => format!("{} (Host: {host})", self.url),
            None => self.url.clone(),
        }
    }
}

/// How the requests are sent (`{"type": "rate", "rate": 2.0, "seconds": 60}`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Shape {
    /// `rate` requests per second for `seconds`.
    Rate { rate: f64, seconds: u64 },
    /// `requests` in all, `concurrency` in flight at once.
    Concurrency { concurrency: u32, requests: u32 },
}

impl Shape {
    /// `2/s for 1m`, `16 at once, 400 in all`.
    pub fn describe(&self) -> String {
        match self {
            Self::Rate { rate, seconds } => format!(
                "{rate}/s for {}",
                crate::duration::human(std::time::Duration::from_secs(*seconds))
            ),
            Self::Concurrency {
                concurrency,
                requests,
            } => format!("{concurrency} at once, {requests} in all"),
        }
    }

    /// How long sending takes when known (a rate's duration).
    pub fn seconds(&self) -> Option<u64> {
        match self {
            Self::Rate { seconds, .. } => Some(*seconds),
            Self::Concurrency { .. } => None,
        }
    }
}

/// inference-perf's config for `load`: prompts of exactly `input_tokens` — random, or with a
/// shared prefix (`config/datagen/config.py:48-74`: each group's system prompt, then a question of
/// the prompt's own; the prompts shuffled once and sent in turn,
/// `datagen/synthetic/shared_prefix_datagen.py:153-193,286-294`) — `output_tokens` generated each
/// (end of sequence ignored), streamed completions, the summary only, reports written to the pod's
/// scratch directory (the summary reaches us through the log).
pub fn config(load: &Load) -> Value {
    let fixed = |n: u32| json!({"type": "fixed", "min": n, "max": n, "mean": n, "std_dev": 0});
    let data = match load.shared_prefix {
        None => json!({"type": "random", "input_distribution": fixed(load.input_tokens),
            "output_distribution": fixed(load.output_tokens)}),
        Some(prefix) => json!({"type": "shared_prefix", "shared_prefix": {
            "num_groups": prefix.groups,
            "num_prompts_per_group": prefix.prompts_per_group,
            "system_prompt_len": prefix.tokens,
            "question_len": load.input_tokens.saturating_sub(prefix.tokens),
            "output_len": load.output_tokens,
        }}),
    };
    let stage = match load.shape {
        Shape::Rate { rate, seconds } => json!({"rate": rate, "duration": seconds}),
        Shape::Concurrency {
            concurrency,
            requests,
        } => json!({"num_requests": requests, "concurrency_level": concurrency}),
    };
    let kind = match load.shape {
        Shape::Rate { .. } => "constant",
        Shape::Concurrency { .. } => "concurrent",
    };
    let mut server = json!({"type": load.backend, "base_url": load.url, "ignore_eos": true});
    if let Some(model) = &load.model {
        server["model_name"] = json!(model);
    }
    let mut report = json!({
        "request_lifecycle": {"summary": true, "per_stage": false, "per_request": false, "percentiles": PERCENTILES},
    });
    let constraints: BTreeMap<&str, f64> = [
        ("ttft", load.slo_ttft_seconds),
        ("itl", load.slo_itl_seconds),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k, v?)))
    .collect();
    if !constraints.is_empty() {
        report["goodput"] = json!({"constraints": constraints});
    }
    let mut api = json!({"type": "completion", "streaming": true});
    if let Some(host) = &load.host {
        api["headers"] = json!({"Host": host});
    }
    let mut config = json!({
        "api": api,
        "data": data,
        "load": {"type": kind, "stages": [stage], "num_workers": load.workers},
        "server": server,
        "report": report,
        "storage": {"local_storage": {"path": format!("{SCRATCH}/reports")}},
    });
    if let Some(tokenizer) = &load.tokenizer {
        config["tokenizer"] = json!({"pretrained_model_name_or_path": tokenizer});
    }
    config
}

/// The labels of a run's objects.
pub fn labels(deployment: &str) -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        (LABEL_NAME, APP.to_string()),
        (LABEL_INSTANCE, deployment.to_string()),
        (LABEL_MANAGED_BY, PLUGIN_MANAGER.to_string()),
    ])
}

/// An ownerReference to `kind`/`name` with `uid`; never the controller (the operator controls
/// the deployment's children, and a run is not one of them).
fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid})
}

/// The run's ConfigMap: `data` is the load, the config and (once collected) the summary.
pub fn config_map(
    run: &str,
    namespace: &str,
    deployment: &str,
    deployment_uid: &str,
    data: &BTreeMap<String, String>,
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": run,
            "namespace": namespace,
            "labels": labels(deployment),
            "ownerReferences": [owner(&InferaDeployment::api_version(&()), "InferaDeployment", deployment, deployment_uid)],
        },
        "data": data,
    })
}

/// The Job that runs inference-perf once with the ConfigMap's config: no retry (a second run
/// would measure something else), the Pod Security `restricted` profile (a read-only root, the
/// scratch directory an emptyDir), and `HF_TOKEN` from the deployment's token Secret when it has
/// one, for a gated model's tokenizer.
pub fn job(
    run: &str,
    namespace: &str,
    deployment: &str,
    config_map_uid: &str,
    image: &str,
    token: Option<(&str, &str)>,
    deadline_seconds: u64,
) -> Value {
    let mut env = vec![
        json!({"name": "HOME", "value": SCRATCH}),
        json!({"name": "HF_HOME", "value": format!("{SCRATCH}/hf")}),
    ];
    if let Some((secret, key)) = token {
        env.push(json!({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}));
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": run,
            "namespace": namespace,
            "labels": labels(deployment),
            "ownerReferences": [owner("v1", "ConfigMap", run, config_map_uid)],
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline_seconds,
            "ttlSecondsAfterFinished": JOB_TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels(deployment)},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": false,
                    "securityContext": {
                        "runAsNonRoot": true,
                        "runAsUser": 1000,
                        "runAsGroup": 1000,
                        "fsGroup": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [{
                        "name": "inference-perf",
                        "image": image,
                        "command": ["inference-perf", "--config_file", format!("{CONFIG_DIR}/{CONFIG_KEY}")],
                        "env": env,
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [
                            {"name": "config", "mountPath": CONFIG_DIR, "readOnly": true},
                            {"name": "scratch", "mountPath": SCRATCH},
                        ],
                    }],
                    "volumes": [
                        {"name": "config", "configMap": {"name": run, "items": [{"key": CONFIG_KEY, "path": CONFIG_KEY}]}},
                        {"name": "scratch", "emptyDir": {}},
                    ],
                },
            },
        },
    })
}

/// A run's name: the deployment's, `-bench-` and the UTC time to the second
/// (`demo-bench-20261207-101500`), 63 characters at most (a Job's name is a label value).
pub fn run_name(deployment: &str, utc: &str) -> String {
    let suffix = format!("-bench-{utc}");
    let keep = 63usize.saturating_sub(suffix.len());
    let base = deployment
        .get(..keep.min(deployment.len()))
        .unwrap_or(deployment)
        .trim_end_matches('-');
    format!("{base}{suffix}")
}
