//! Upstream Infera's own code as a test oracle (docs/upstream-proof.md): the processes a pod
//! template starts, and upstream's argument parsers run on them in the venvs of
//! `tests/upstream/setup.sh` (through `tests/upstream/check.sh`).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::kubelet::{expand, expand_all};

/// One process a container starts, as upstream's parsers take it.
pub struct Process {
    pub name: String,
    /// The parser that reads its argv (`server`, `gaie`, `sglang`, `vllm`), or why none does.
    pub program: Result<&'static str, String>,
    /// Set when the container has no command: `program` is then the one its component would run,
    /// so the report shows what the parser says of the args too.
    pub no_command: bool,
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// What upstream's parser made of a [`Process`].
pub struct Parsed {
    /// Why the process would not start (the parser's or the entry point's own message).
    pub error: Option<String>,
    /// Every option's value as the process would see it (defaults and environment included).
    pub options: Value,
}

/// Where a pod runs, for the values the kubelet and the LeaderWorkerSet controller fill in.
pub struct PodContext<'a> {
    pub workload: &'a str,
    pub namespace: &'a str,
    /// For a LeaderWorkerSet pod: its worker index and the group size.
    pub lws: Option<(u32, i64)>,
}

/// A pod template of a workload: `pod`, `leader` or `worker`; the template; for a
/// LeaderWorkerSet, the pod's worker index and the group size.
pub type Template<'a> = (&'static str, &'a Value, Option<(u32, i64)>);

/// The pod templates of a workload (Deployment, StatefulSet, LeaderWorkerSet: its leader's, the
/// worker template when it has none, and its workers').
pub fn templates(child: &Value) -> Vec<Template<'_>> {
    let spec = &child["spec"];
    match child["kind"].as_str() {
        Some("Deployment" | "StatefulSet") => vec![("pod", &spec["template"], None)],
        Some("LeaderWorkerSet") => {
            let lws = &spec["leaderWorkerTemplate"];
            let size = lws["size"].as_i64().unwrap_or(1);
            let worker = &lws["workerTemplate"];
            let leader = if lws["leaderTemplate"].is_null() {
                worker
            } else {
                &lws["leaderTemplate"]
            };
            let mut out = vec![("leader", leader, Some((0, size)))];
            if size > 1 {
                out.push(("worker", worker, Some((1, size))));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The environment the kubelet gives `container` before it expands the command line: its `env`
/// (downward-API fields and the LeaderWorkerSet controller's variables given sample values).
pub fn container_env(container: &Value, pod: &PodContext<'_>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let workload = pod.workload;
    if let Some((index, size)) = pod.lws {
        env.insert(
            "LWS_LEADER_ADDRESS".into(),
            format!("{workload}-0.{workload}.{}", pod.namespace),
        );
        env.insert("LWS_GROUP_SIZE".into(), size.to_string());
        env.insert("LWS_WORKER_INDEX".into(), index.to_string());
    }
    for var in container["env"].as_array().into_iter().flatten() {
        let key = var["name"].as_str().unwrap_or_default().to_string();
        let value = if let Some(v) = var["value"].as_str() {
            expand(v, &env)
        } else {
            match var["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
                Some("metadata.name") => format!("{workload}-0"),
                Some("metadata.namespace") => pod.namespace.to_string(),
                Some("status.podIP") => "10.0.0.7".into(),
                Some("status.hostIP") => "10.0.1.7".into(),
                _ => "sample".into(),
            }
        };
        env.insert(key, value);
    }
    env
}

/// The process `container` starts: `python3 [-X…] -m <module> <argv…>` names the parser; a
/// container without a command gets `guess`'s (the image's entry point would run its args).
pub fn process(
    name: String,
    container: &Value,
    pod: &PodContext<'_>,
    guess: &'static str,
) -> Process {
    let env = container_env(container, pod);
    let command = expand_all(&container["command"], &env);
    let args = expand_all(&container["args"], &env);
    // The interpreter's own options (single-dash, before `-m`) change nothing the parsers see.
    let module_at = command.iter().position(|word| word == "-m").map(|m| m + 1);
    let interpreter = command
        .first()
        .is_some_and(|program| program == "python3" || program == "python");
    let options_only = module_at.is_some_and(|at| {
        command[1..at - 1]
            .iter()
            .all(|option| option.starts_with('-') && !option.starts_with("--"))
    });
    let module = module_at
        .filter(|_| interpreter && options_only)
        .and_then(|at| command.get(at));
    let program = match (command.is_empty(), module.map(String::as_str)) {
        (true, _) => Ok(guess),
        (false, Some("infera.server")) => Ok("server"),
        (false, Some("infera.gaie")) => Ok("gaie"),
        (false, Some("infera.engine.sglang")) => Ok("sglang"),
        (false, Some("infera.engine.vllm")) => Ok("vllm"),
        (false, _) => Err(format!(
            "command {command:?} runs no Infera server or engine wrapper"
        )),
    };
    let skipped = module_at.map_or(command.len(), |at| at + 1);
    let mut argv: Vec<String> = command.iter().skip(skipped).cloned().collect();
    argv.extend(args);
    Process {
        name,
        program,
        no_command: command.is_empty(),
        argv,
        env,
    }
}

/// Runs upstream's parsers on every process that names one, by name. A process without a parser
/// or without a command is reported as failed, saying why.
pub fn parse<'a>(
    processes: impl IntoIterator<Item = &'a Process>,
) -> anyhow::Result<BTreeMap<String, Parsed>> {
    let processes: Vec<&Process> = processes.into_iter().collect();
    let input: Vec<Value> = processes
        .iter()
        .filter_map(|p| {
            let program = p.program.as_ref().ok()?;
            Some(json!({"name": p.name, "program": program, "argv": p.argv, "env": p.env}))
        })
        .collect();
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("upstream/check.sh");
    let mut child = Command::new(&check)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {}", check.display()))?;
    child
        .stdin
        .take()
        .context("check.sh's stdin")?
        .write_all(serde_json::to_string(&input)?.as_bytes())?;
    let output = child.wait_with_output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(3) {
        bail!("{stderr}");
    }
    let mut results = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let result: Value =
            serde_json::from_str(line).with_context(|| format!("{line}\n{stderr}"))?;
        let name = result["name"].as_str().unwrap_or_default().to_string();
        results.insert(
            name,
            Parsed {
                error: result["error"].as_str().map(str::to_string),
                options: result["parsed"].clone(),
            },
        );
    }
    if results.len() != input.len() {
        bail!(
            "the checker answered for {} of {} processes\n{stderr}",
            results.len(),
            input.len()
        );
    }
    for p in processes {
        if let Err(why) = &p.program {
            results.insert(
                p.name.clone(),
                Parsed {
                    error: Some(why.clone()),
                    options: Value::Null,
                },
            );
        } else if p.no_command
            && let Some(result) = results.get_mut(&p.name)
        {
            let parser = result.error.clone().unwrap_or_else(|| "accepted".into());
            result.error = Some(format!(
                "no command: the image's entrypoint would receive the args as a program; \
                 as {} they would be: {parser}",
                p.program.as_ref().map_or("?", |p| p)
            ));
        }
    }
    Ok(results)
}
