use clap::Parser;

use super::*;
use crate::cli::{Cli, Command};

/// What a `kubectl infera deploy …` line parses to: its global flags and spec flags.
fn parse(line: &str) -> (GlobalArgs, SpecFlags) {
    let words: Vec<String> = line
        .replace("\\\n", " ")
        .split_whitespace()
        .skip(1) // "kubectl"
        .map(|w| w.trim_matches('\'').to_string())
        .collect();
    let mut argv = vec!["kubectl-infera".to_string()];
    argv.extend(words.into_iter().skip(1)); // "infera"
    match Cli::try_parse_from(argv) {
        Ok(Cli {
            global,
            command: Command::Deploy(args),
        }) => (global, args.spec),
        other => panic!("not a deploy command line: {other:?}"),
    }
}

fn pd_flags() -> SpecFlags {
    SpecFlags {
        name: Some("demo".into()),
        backend: Some(Backend::Sglang),
        model: Some("Qwen/Qwen3-0.6B".into()),
        topology: Some(Topology::Pd),
        transfer_backend: Some("mori".into()),
        ib_device: Some("rdma0".into()),
        memory: Some("64Gi".into()),
        shared_memory: Some("32Gi".into()),
        nats_storage: Some("4Gi".into()),
        startup_timeout: Some("2h".into()),
        ..Default::default()
    }
}

#[test]
fn missing_flags_are_listed() {
    assert_eq!(
        missing(&SpecFlags::default()),
        ["--name", "--backend sglang|vllm", "--model"]
    );
    let flags = SpecFlags {
        discovery: Some(Discovery::Etcd),
        ..pd_flags()
    };
    assert_eq!(
        Plan::from_flags(&flags),
        Err(vec!["--etcd-endpoint (with --discovery etcd)"])
    );
}

#[test]
fn pd_flags_make_a_valid_spec_like_the_seed_example() {
    let plan = Plan::from_flags(&pd_flags()).unwrap_or_else(|m| panic!("{m:?}"));
    let idep = plan.to_deployment(Some("team-a"));
    assert!(
        infera_core::validate(&idep).is_ok(),
        "{:?}",
        infera_core::validate(&idep).err()
    );
    insta::assert_snapshot!(
        "pd_spec",
        infera_core::yaml::to_yaml(&idep).unwrap_or_default()
    );
}

#[test]
fn multinode_flags_add_pipeline_parallelism_and_validate() {
    let flags = SpecFlags {
        name: Some("big".into()),
        backend: Some(Backend::Vllm),
        model: Some("meta-llama/Llama-3.1-405B-Instruct".into()),
        topology: Some(Topology::Multinode),
        gpus: Some(8),
        nodes: Some(2),
        replicas: Some(2),
        ..Default::default()
    };
    let idep = Plan::from_flags(&flags)
        .unwrap_or_else(|m| panic!("{m:?}"))
        .to_deployment(None);
    assert!(
        infera_core::validate(&idep).is_ok(),
        "{:?}",
        infera_core::validate(&idep).err()
    );
    let worker = &idep.spec.services["worker"];
    assert_eq!(worker.number_of_nodes, Some(2));
    assert_eq!(
        worker.args,
        [
            "--model",
            "meta-llama/Llama-3.1-405B-Instruct",
            "--tensor-parallel-size",
            "8",
            "--pipeline-parallel-size",
            "2"
        ]
    );
}

/// `--rdma-resource` and `--rdma-network` become `spec.network.rdma`, which then carries the
/// `--ib-device` instead of the workers' args.
#[test]
fn rdma_flags_make_the_network_and_carry_the_ib_device() {
    let flags = SpecFlags {
        rdma_resource: Some("rdma/hca".into()),
        rdma_networks: vec!["rdma-net".into(), "infra/roce".into()],
        gpu_product: Some("MI300X".into()),
        ..pd_flags()
    };
    let idep = Plan::from_flags(&flags)
        .unwrap_or_else(|m| panic!("{m:?}"))
        .to_deployment(None);
    let valid = infera_core::validate(&idep).unwrap_or_else(|e| panic!("{e}"));
    let rdma = idep.spec.network.and_then(|n| n.rdma);
    assert_eq!(
        rdma,
        Some(RdmaSpec {
            resource_name: "rdma/hca".into(),
            networks: vec!["rdma-net".into(), "infra/roce".into()],
            device: Some("rdma0".into()),
            ..Default::default()
        })
    );
    for worker in &valid.workers {
        assert!(
            !worker
                .pod
                .args
                .iter()
                .any(|a| a == "--disaggregation-ib-device")
        );
        assert_eq!(worker.gpu_product.as_deref(), Some("MI300X"));
    }
    let networks_alone = SpecFlags {
        rdma_networks: vec!["rdma-net".into()],
        ..pd_flags()
    };
    assert_eq!(
        Plan::from_flags(&networks_alone),
        Err(vec!["--rdma-resource (with --rdma-network)"])
    );
}

/// `--model hf://…` becomes `spec.model` (with a cache) instead of the engine's model flag, and
/// the router's tokenizer is the repository.
#[test]
fn an_hf_model_flag_becomes_spec_model() {
    let flags = SpecFlags {
        model: Some("hf://Qwen/Qwen3-0.6B@main".into()),
        ..pd_flags()
    };
    let idep = Plan::from_flags(&flags)
        .unwrap_or_else(|m| panic!("{m:?}"))
        .to_deployment(None);
    let valid = infera_core::validate(&idep).unwrap_or_else(|e| panic!("{e}"));
    let model = idep.spec.model.clone().unwrap_or_default();
    assert_eq!(
        (model.source.as_str(), model.cache.map(|c| c.size.0)),
        ("hf://Qwen/Qwen3-0.6B@main", Some("100Gi".to_string()))
    );
    assert!(
        valid
            .workers
            .iter()
            .all(|w| !w.pod.args.contains(&"--model-path".to_string()))
    );
    assert_eq!(
        idep.spec.services["server"].args,
        [
            "--router-policy",
            "kv-aware",
            "--router-tokenizer-path",
            "Qwen/Qwen3-0.6B"
        ]
    );
}

#[test]
fn command_line_round_trips_through_the_parser() {
    for flags in [
        pd_flags(),
        SpecFlags {
            rdma_resource: Some("rdma/hca".into()),
            rdma_networks: vec!["rdma-net".into(), "infra/roce".into()],
            ..pd_flags()
        },
        SpecFlags {
            name: Some("agg".into()),
            backend: Some(Backend::Vllm),
            model: Some("org/model".into()),
            nats: Some(false),
            discovery: Some(Discovery::Etcd),
            etcd_endpoint: Some("http://etcd:2379".into()),
            gpu_product: Some("MI300X".into()),
            ..Default::default()
        },
    ] {
        let plan = Plan::from_flags(&flags).unwrap_or_else(|m| panic!("{m:?}"));
        let line = plan.command_line(&GlobalArgs::default(), None);
        let again = Plan::from_flags(&parse(&line).1).unwrap_or_else(|m| panic!("{m:?}"));
        assert_eq!(again, plan, "{line}");
    }
    let plan = Plan::from_flags(&pd_flags()).unwrap_or_else(|m| panic!("{m:?}"));
    let global = GlobalArgs {
        context: Some("kind-infera".into()),
        ..Default::default()
    };
    insta::assert_snapshot!(
        "pd_command_line",
        plan.command_line(&global, Some("team-a"))
    );
}

/// A new user ran the wizard's "same without the wizard" command and it deployed into the
/// context's default namespace instead of the one the wizard had confirmed.
#[test]
fn command_line_deploys_where_the_wizard_did() {
    let plan = Plan::from_flags(&pd_flags()).unwrap_or_else(|m| panic!("{m:?}"));
    let global = GlobalArgs {
        kubeconfig: Some("/tmp/kubeconfig".into()),
        context: Some("prod".into()),
        ..Default::default()
    };
    let line = plan.command_line(&global, Some("team-a"));
    let (parsed, _) = parse(&line);
    assert_eq!(parsed.kubeconfig, global.kubeconfig, "{line}");
    assert_eq!(parsed.context.as_deref(), Some("prod"), "{line}");
    assert_eq!(parsed.namespace.as_deref(), Some("team-a"));
    // Nothing given and nothing confirmed (--dry-run=client): no global flags.
    let line = plan.command_line(&GlobalArgs::default(), None);
    assert!(
        line.starts_with("kubectl infera deploy \\\n    --name demo"),
        "{line}"
    );
    assert_eq!(parse(&line).0.namespace, None);
}

#[test]
fn memory_and_shared_memory_default_per_gpu_of_the_pod() {
    let plan = |gpus, memory: Option<&str>| {
        let flags = SpecFlags {
            gpus,
            memory: memory.map(String::from),
            ..pd_flags()
        };
        let flags = SpecFlags {
            shared_memory: None,
            ..flags
        };
        let plan = Plan::from_flags(&flags).unwrap_or_else(|m| panic!("{m:?}"));
        (plan.memory, plan.shared_memory)
    };
    assert_eq!(plan(None, None), ("64Gi".to_string(), "32Gi".to_string()));
    assert_eq!(
        plan(Some(8), None),
        ("512Gi".to_string(), "256Gi".to_string())
    );
    assert_eq!(
        plan(Some(8), Some("1Ti")),
        ("1Ti".to_string(), "256Gi".to_string())
    );
}
