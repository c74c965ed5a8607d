//! A multi-node vLLM rank above 0 under upstream's own wrapper (issue 26; docs/upstream-contract.md,
//! multi-node vLLM): the rendered follower's command line and environment, run by
//! `python3 -m infera.engine.vllm` from the snapshot (tests/upstream/vllm_follower.sh), spawn vLLM
//! `--headless`, and the wrapper keeps supervising that engine, which serves no `/health`, instead
//! of giving up after its ready timeout. The engine beneath it is a stand-in
//! (tests/upstream/fake_vllm) that serves nothing, as a headless vLLM does; the wrapper is real.
//! No cluster; it needs the venvs of `tests/upstream/setup.sh` and fails, saying so, without them.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use infera_core::{render, validate, yaml};
use infera_e2e::upstream::{PodContext, Process, process, templates};
use serde_json::{Value, json};

const SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: tp16, namespace: llm}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server:
      componentType: server
      args: [--router-tokenizer-path, Qwen/Qwen3-0.6B]
    worker:
      componentType: worker
      numberOfNodes: 2
      resources: {gpu: 8}
      args: [--model, Qwen/Qwen3-0.6B, --tensor-parallel-size, "16"]
"#;

/// The engine container of the LeaderWorkerSet's rank-1 template, as the kubelet would start it.
fn follower() -> Process {
    let idep = yaml::parse_deployments(SPEC)
        .expect("the spec parses")
        .remove(0);
    let valid = validate(&idep).expect("the spec validates");
    let lws = render(&valid)
        .into_iter()
        .map(|child| serde_json::to_value(&child).expect("json"))
        .find(|child| child["kind"] == "LeaderWorkerSet")
        .expect("a LeaderWorkerSet");
    let workload = lws["metadata"]["name"]
        .as_str()
        .expect("a name")
        .to_string();
    let (_, template, rank) = templates(&lws)
        .into_iter()
        .find(|(which, _, _)| *which == "worker")
        .expect("a worker template");
    let engine = template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "engine")
        .expect("an engine container");
    let pod = PodContext {
        workload: &workload,
        namespace: "llm",
        lws: rank,
    };
    let follower = process("rank 1".into(), engine, &pod, "vllm");
    assert_eq!(follower.program, Ok("vllm"), "{:?}", follower.argv);
    follower
}

/// Upstream's wrapper running one process, and the fake engines it spawned (recorded by them).
struct Wrapper {
    child: Child,
    record: PathBuf,
}

impl Wrapper {
    fn start(process: &Process, name: &str) -> Self {
        let record = std::env::temp_dir().join(format!(
            "infera-vllm-follower-{}-{name}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&record);
        let mut env = process.env.clone();
        env.insert("FAKE_VLLM_RECORD".into(), record.display().to_string());
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/upstream/vllm_follower.sh");
        // Its own process group, as PID 1 of a container: on a failed start the wrapper kills its
        // whole group (infera/engine/vllm/__main__.py:126-139).
        let mut child = Command::new(script)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tests/upstream/vllm_follower.sh starts");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(
                json!({"argv": process.argv, "env": env})
                    .to_string()
                    .as_bytes(),
            )
            .expect("the request is written");
        Self { child, record }
    }

    /// The engines spawned so far: pid and argv.
    fn engines(&self) -> Vec<(u32, Vec<String>)> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).expect("a record");
                let pid = v["pid"].as_u64().and_then(|p| u32::try_from(p).ok());
                let argv = serde_json::from_value(v["argv"].clone()).expect("argv");
                (pid.expect("a pid"), argv)
            })
            .collect()
    }

    /// Waits up to `limit` for the wrapper to exit: its exit code and its log, or `None` while it
    /// still runs.
    fn exited_within(&mut self, limit: Duration) -> Option<(Option<i32>, String)> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                let mut log = String::new();
                if let Some(mut stderr) = self.child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut log);
                }
                return Some((status.code(), log));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        None
    }

    fn kill_engines(&self) {
        for (pid, _) in self.engines() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Wrapper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.kill_engines();
        let _ = std::fs::remove_file(&self.record);
    }
}

fn has(argv: &[String], flag: &str, value: &str) -> bool {
    argv.windows(2).any(|w| w[0] == flag && w[1] == value)
}

/// The rendered rank 1 starts vLLM headless at its rank and leader, outlives the wrapper's wait
/// for `/health` (its rendered `INFERA_ENGINE_READY_TIMEOUT`), and exits when its engine dies,
/// so the LeaderWorkerSet recreates the group.
#[test]
fn upstreams_wrapper_supervises_the_rendered_headless_follower_and_exits_with_its_engine() {
    let follower = follower();
    let mut wrapper = Wrapper::start(&follower, "rendered");
    // Spawned once the wrapper has parsed its flags (its import of vLLM's parser takes seconds);
    // then it keeps waiting on the engine rather than giving up.
    let deadline = Instant::now() + Duration::from_secs(120);
    while wrapper.engines().is_empty() && Instant::now() < deadline {
        if let Some((code, log)) = wrapper.exited_within(Duration::from_millis(500)) {
            panic!("the wrapper exited ({code:?}) before spawning its engine:\n{log}");
        }
    }
    assert!(
        wrapper.exited_within(Duration::from_secs(10)).is_none(),
        "the wrapper exited while its headless engine ran"
    );
    let engines = wrapper.engines();
    let [(_, argv)] = engines.as_slice() else {
        panic!("one engine spawned: {engines:?}");
    };
    assert_eq!(argv.first().map(String::as_str), Some("serve"), "{argv:?}");
    assert!(argv.iter().any(|a| a == "--headless"), "{argv:?}");
    assert!(has(argv, "--node-rank", "1"), "{argv:?}");
    assert!(has(argv, "--nnodes", "2"), "{argv:?}");
    assert!(
        has(argv, "--master-addr", "tp16-worker-0.tp16-worker.llm"),
        "{argv:?}"
    );
    wrapper.kill_engines();
    let (code, log) = wrapper
        .exited_within(Duration::from_secs(60))
        .expect("the wrapper exits once its engine has died");
    assert_ne!(code, Some(0), "{log}");
    assert!(log.contains("vllm subprocess exited"), "{log}");
}

/// Without the rendered timeout the same follower is given up on: upstream's wrapper exits when
/// its engine has served no `/health` for `INFERA_ENGINE_READY_TIMEOUT` seconds (1800 by
/// default; 3 here), which is why a headless rank needs it out of reach.
#[test]
fn upstreams_wrapper_gives_up_on_a_headless_follower_after_its_ready_timeout() {
    let mut follower = follower();
    let rendered = follower
        .env
        .insert("INFERA_ENGINE_READY_TIMEOUT".into(), "3".into());
    assert_eq!(rendered.as_deref(), Some("315360000"));
    let mut wrapper = Wrapper::start(&follower, "timeout");
    let (code, log) = wrapper
        .exited_within(Duration::from_secs(120))
        .expect("the wrapper gives up");
    assert_ne!(code, Some(0), "{log}");
    assert!(log.contains("vLLM not ready after 3"), "{log}");
}
