use std::time::Duration;

use serde_json::json;

use super::{
    render::{self, Load, Shape, SharedPrefix},
    shape, shared_prefix,
    summary::{self, Figures, Percentiles},
};
use crate::{cli::BenchLoad, error::Error};

fn flags() -> BenchLoad {
    BenchLoad {
        input_tokens: 1024,
        output_tokens: 128,
        rate: None,
        duration: None,
        concurrency: None,
        requests: None,
        slo_ttft: None,
        slo_itl: None,
        model: None,
        tokenizer: None,
        shared_prefix: None,
        prefix_groups: None,
        prompts_per_group: None,
        target: None,
        url: None,
        workers: 1,
        image: None,
    }
}

fn load(shape: Shape) -> Load {
    Load {
        url: "http://demo-server.ml.svc.cluster.local:8000".into(),
        host: None,
        backend: "sglang".into(),
        model: None,
        tokenizer: None,
        input_tokens: 1024,
        output_tokens: 128,
        shared_prefix: None,
        shape,
        slo_ttft_seconds: None,
        slo_itl_seconds: None,
        workers: 1,
    }
}

#[test]
fn the_load_is_two_per_second_for_a_minute_unless_told() {
    assert_eq!(
        shape(&flags()).ok(),
        Some(Shape::Rate {
            rate: 2.0,
            seconds: 60
        })
    );
    let told = BenchLoad {
        rate: Some(8.5),
        duration: Some(Duration::from_millis(90_500)),
        ..flags()
    };
    // A part of a second is sent in full: inference-perf takes whole seconds.
    assert_eq!(
        shape(&told).ok(),
        Some(Shape::Rate {
            rate: 8.5,
            seconds: 91
        })
    );
    let concurrent = BenchLoad {
        concurrency: Some(16),
        ..flags()
    };
    assert_eq!(
        shape(&concurrent).ok(),
        Some(Shape::Concurrency {
            concurrency: 16,
            requests: 160
        })
    );
}

#[test]
fn a_shared_prefix_is_a_part_of_each_prompt_in_ten_groups_of_ten_unless_told() {
    assert_eq!(shared_prefix(&flags()).ok(), Some(None));
    let told = BenchLoad {
        shared_prefix: Some(768),
        ..flags()
    };
    let prefix = SharedPrefix {
        tokens: 768,
        groups: 10,
        prompts_per_group: 10,
    };
    assert_eq!(shared_prefix(&told).ok(), Some(Some(prefix)));
    let grouped = BenchLoad {
        prefix_groups: Some(4),
        prompts_per_group: Some(50),
        ..told
    };
    assert_eq!(
        shared_prefix(&grouped).ok(),
        Some(Some(SharedPrefix {
            groups: 4,
            prompts_per_group: 50,
            ..prefix
        }))
    );
    // The whole prompt cannot be the prefix: the flag is named with a length that works.
    let Err(Error::Usage(message)) = shared_prefix(&BenchLoad {
        shared_prefix: Some(1024),
        ..flags()
    }) else {
        panic!("a prefix as long as the prompt accepted");
    };
    assert_eq!(
        message,
        "--shared-prefix 1024 must be below --input-tokens 1024: each prompt is its group's prefix and a question of its own, e.g. --input-tokens 2048 --shared-prefix 1024"
    );
}

#[test]
fn a_rate_or_duration_that_cannot_be_sent_is_refused_naming_the_flag() {
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 100_001.0] {
        let Err(Error::Usage(message)) = shape(&BenchLoad {
            rate: Some(rate),
            ..flags()
        }) else {
            panic!("rate {rate} accepted");
        };
        assert!(message.starts_with(&format!("--rate {rate}:")), "{message}");
    }
    let Err(Error::Usage(message)) = shape(&BenchLoad {
        duration: Some(Duration::ZERO),
        ..flags()
    }) else {
        panic!("a zero duration accepted");
    };
    assert_eq!(
        message,
        "--duration must be at least 1s, e.g. --duration 60s"
    );
}

#[test]
fn inference_perf_is_asked_for_fixed_lengths_streamed_and_the_summary_only() {
    let mut told = load(Shape::Rate {
        rate: 2.0,
        seconds: 60,
    });
    told.slo_ttft_seconds = Some(0.5);
    told.slo_itl_seconds = Some(0.05);
    told.tokenizer = Some("Qwen/Qwen3-0.6B".into());
    assert_eq!(
        render::config(&told),
        json!({
            "api": {"type": "completion", "streaming": true},
            "data": {
                "type": "random",
                "input_distribution": {"type": "fixed", "min": 1024, "max": 1024, "mean": 1024, "std_dev": 0},
                "output_distribution": {"type": "fixed", "min": 128, "max": 128, "mean": 128, "std_dev": 0},
            },
            "load": {"type": "constant", "stages": [{"rate": 2.0, "duration": 60}], "num_workers": 1},
            "server": {"type": "sglang", "base_url": "http://demo-server.ml.svc.cluster.local:8000", "ignore_eos": true},
            "report": {
                "request_lifecycle": {"summary": true, "per_stage": false, "per_request": false, "percentiles": [50, 95, 99]},
                "goodput": {"constraints": {"itl": 0.05, "ttft": 0.5}},
            },
            "storage": {"local_storage": {"path": "/tmp/reports"}},
            "tokenizer": {"pretrained_model_name_or_path": "Qwen/Qwen3-0.6B"},
        })
    );
    let mut concurrent = load(Shape::Concurrency {
        concurrency: 16,
        requests: 400,
    });
    concurrent.model = Some("m".into());
    // A shared prefix: inference-perf's shared_prefix dataset, the question the rest of a prompt.
    concurrent.shared_prefix = Some(SharedPrefix {
        tokens: 768,
        groups: 4,
        prompts_per_group: 25,
    });
    assert_eq!(
        render::config(&concurrent)["data"],
        json!({"type": "shared_prefix", "shared_prefix": {"num_groups": 4, "num_prompts_per_group": 25,
            "system_prompt_len": 768, "question_len": 256, "output_len": 128}})
    );
    assert_eq!(
        concurrent.lengths(),
        "1024 tokens in (768 shared in 4 groups), 128 out"
    );
    // Through a Gateway whose route matches a hostname: every request carries it.
    concurrent.host = Some("llm.example".into());
    assert_eq!(
        render::config(&concurrent)["api"],
        json!({"type": "completion", "streaming": true, "headers": {"Host": "llm.example"}})
    );
    let config = render::config(&concurrent);
    assert_eq!(
        config["load"],
        json!({"type": "concurrent", "stages": [{"num_requests": 400, "concurrency_level": 16}], "num_workers": 1})
    );
    assert_eq!(config["server"]["model_name"], "m");
    assert!(config["report"].get("goodput").is_none(), "{config:#}");
    assert!(config.get("tokenizer").is_none(), "{config:#}");
}

#[test]
fn the_job_runs_once_as_restricted_with_the_token_from_its_secret() {
    let job = render::job(
        "demo-bench-1",
        "ml",
        "demo",
        "uid-1",
        render::IMAGE,
        Some(("hf", "token")),
        660,
    );
    assert_eq!(
        job["metadata"]["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "demo-bench-1", "uid": "uid-1"}])
    );
    let spec = &job["spec"];
    assert_eq!(
        (
            spec["backoffLimit"].clone(),
            spec["activeDeadlineSeconds"].clone()
        ),
        (json!(0), json!(660))
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let container = &pod["containers"][0];
    assert_eq!(
        container["securityContext"],
        json!({"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}})
    );
    assert_eq!(
        container["command"],
        json!([
            "inference-perf",
            "--config_file",
            "/etc/inference-perf/config.yaml"
        ])
    );
    assert_eq!(
        container["env"][2],
        json!({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}})
    );
    // Not a child of the graph: no infera.amd.com/ label, so the operator, status and logs
    // never select it.
    let labels = job["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        labels.keys().all(|k| !k.starts_with("infera.amd.com/")),
        "{labels:?}"
    );
    assert_eq!(labels["app.kubernetes.io/name"], "infera-bench");
    assert_eq!(labels["app.kubernetes.io/instance"], "demo");
}

#[test]
fn the_load_is_kept_as_json_that_names_its_shape() {
    let kept = serde_json::to_value(load(Shape::Rate {
        rate: 2.0,
        seconds: 60,
    }))
    .unwrap_or_default();
    assert_eq!(
        kept["shape"],
        json!({"type": "rate", "rate": 2.0, "seconds": 60})
    );
    let back: Load = serde_json::from_value(kept).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        back.shape,
        Shape::Rate {
            rate: 2.0,
            seconds: 60
        }
    );
    let concurrent = serde_json::to_value(Shape::Concurrency {
        concurrency: 3,
        requests: 30,
    })
    .unwrap_or_default();
    assert_eq!(
        concurrent,
        json!({"type": "concurrency", "concurrency": 3, "requests": 30})
    );
}

#[test]
fn a_run_is_named_by_its_deployment_and_time_within_63_characters() {
    assert_eq!(
        render::run_name("demo", "20261207-101500"),
        "demo-bench-20261207-101500"
    );
    let long = "a".repeat(42);
    let name = render::run_name(&long, "20261207-101500");
    assert_eq!(name.len(), 63);
    assert!(name.ends_with("a-bench-20261207-101500"), "{name}");
    // A cut that would end in '-' drops it.
    let dashed = format!("{}-{}", "a".repeat(40), "b");
    assert_eq!(
        render::run_name(&dashed, "20261207-101500"),
        format!("{}-bench-20261207-101500", "a".repeat(40))
    );
}

#[test]
fn the_summary_is_read_between_inference_perfs_markers() {
    let log = "INFO config...\n=== START_SUMMARY ===\n{\"a\": 1}\n=== END_SUMMARY ===\n| table |\n";
    assert_eq!(summary::extract(log), Some("{\"a\": 1}"));
    assert_eq!(summary::extract("=== START_SUMMARY ===\n{\"a\""), None);
    assert_eq!(summary::extract("Traceback ..."), None);
}

/// The summary of a real run: inference-perf 0.7.0 in its tier-3 image against the stand-in
/// engine behind upstream's router (`tests/cluster/README.md`, the bench test), 2 requests/s for
/// 10 s, 64 tokens in and 16 out, targets TTFT 2 s and ITL 100 ms.
const REAL_SUMMARY: &str = include_str!("testdata/inference-perf-summary.json");

#[test]
fn the_figures_of_a_real_summary() {
    let value: serde_json::Value = serde_json::from_str(REAL_SUMMARY).unwrap_or_default();
    let figures = Figures::of(&value).unwrap_or_else(|e| panic!("{e}"));
    let at = |path: &str| value.pointer(path).and_then(serde_json::Value::as_f64);
    let percentiles = |name: &str| {
        Some(Percentiles {
            p50: at(&format!("/successes/latency/{name}/median"))?,
            p95: at(&format!("/successes/latency/{name}/p95"))?,
            p99: at(&format!("/successes/latency/{name}/p99"))?,
        })
    };
    assert!(figures.succeeded > 0 && figures.failed == 0, "{figures:?}");
    assert_eq!(figures.ttft_seconds, percentiles("time_to_first_token"));
    assert_eq!(figures.itl_seconds, percentiles("inter_token_latency"));
    assert_eq!(figures.e2e_seconds, percentiles("request_latency"));
    assert!(figures.ttft_seconds.is_some() && figures.itl_seconds.is_some());
    assert_eq!(
        Some(figures.output_tokens_per_second),
        at("/successes/throughput/output_tokens_per_sec")
    );
    assert_eq!(
        figures.goodput_percent,
        at("/successes/goodput_metrics/goodput_percentage")
    );
    assert!(figures.goodput_percent.is_some());
}

#[test]
fn a_summary_without_counts_is_refused_naming_what_is_missing() {
    assert_eq!(
        Figures::of(&json!({"failures": {"count": 0}})),
        Err("the summary has no /successes/count".into())
    );
}

#[test]
fn latencies_print_in_milliseconds_below_a_second() {
    assert_eq!(summary::seconds(Some(0.0123)), "12ms");
    assert_eq!(summary::seconds(Some(1.844)), "1.84s");
    assert_eq!(summary::seconds(None), "-");
}
