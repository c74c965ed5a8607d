//! Proof against upstream's own code, live discovery on tier 2 (issue 26; docs/upstream-proof.md):
//! our operator runs an SGLang graph (a server and one worker pool, no NATS); upstream Infera's
//! router (`python3 -m infera.server`) runs as a local process with exactly the server pod's
//! container argv and env, and upstream's SGLang wrapper registers as the worker pod
//! (`K8sRegistrationClient`), both authenticated only by a token of the discovery ServiceAccount
//! the pods run as, mounted where upstream reads it (`infera/common/k8s_client.py:24-27`). The
//! router's `GET /v1/workers` must list the worker; with `patch` on pods removed from the rendered
//! Role the registration must fail with 403.
//!
//! The identity: each upstream process runs in a private mount namespace (`unshare -m`, needs
//! root) where an overlay on `/run` (`/var/run` resolved) adds
//! `secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}`: a TokenRequest token for the
//! pod's ServiceAccount, the cluster's CA and the pod's namespace. The API server is
//! `KUBERNETES_SERVICE_HOST`/`_PORT`, from the kubeconfig's server URL, as the kubelet sets them.
//! Overridden, and only these: the router's `--host`/`--port` (loopback and a free port instead of
//! `0.0.0.0:8000`, as the process runs on this machine).

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use infera_core::{Child, render, validate, yaml};
use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    kube::{
        Api,
        api::{ListParams, Patch, PatchParams, PostParams},
        config::Kubeconfig,
    },
    kubeconfig_path, mint_token,
    operator::{Operator, install},
    target_dir,
};
use infera_e2e::{
    kubelet::{expand, expand_all},
    operator::{free_port, http_get},
};
use k8s_openapi::api::{
    authorization::v1::{ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
    core::v1::Pod,
    rbac::v1::Role,
};
use serde_json::{Value, json};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const NAME: &str = "disc";
const MODEL: &str = "Qwen/Qwen3-0.6B";
const TIMEOUT: Duration = Duration::from_secs(120);

/// In the private mount namespace: an overlay on `/run` whose upper layer (a tmpfs of the namespace)
/// holds `secrets/kubernetes.io/serviceaccount` copied from `$1/serviceaccount`; then the program.
const MOUNT_IDENTITY: &str = r#"
stage=$1; shift
run=$(readlink -f /var/run)
mkdir -p "$stage/layer"
mount -t tmpfs -o mode=0755 infera-e2e-identity "$stage/layer"
mkdir -p "$stage/layer/up/secrets/kubernetes.io" "$stage/layer/work"
cp -R "$stage/serviceaccount" "$stage/layer/up/secrets/kubernetes.io/serviceaccount"
mount -t overlay infera-e2e-identity -o "lowerdir=$run,upperdir=$stage/layer/up,workdir=$stage/layer/work" "$run"
exec "$@"
"#;

fn driver() -> PathBuf {
    Path::new(ROOT).join("tests/upstream/discovery.sh")
}

/// The spec: an SGLang graph with a server and one worker pool, without NATS, the router's
/// tokenizer a local directory.
fn spec(tokenizer: &Path) -> String {
    json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": NAME},
        "spec": {
            "backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "nats": {"deploy": false},
            "services": {
                "server": {"componentType": "server",
                           "args": ["--router-tokenizer-path", tokenizer.to_str().expect("utf-8 path")]},
                "decode": {"componentType": "worker", "replicas": 1, "resources": {"gpu": 1},
                           "args": ["--model-path", MODEL]},
            },
        },
    })
    .to_string()
}

/// The process a pod's (only) container runs, as the kubelet starts it: command + args with
/// `$(VAR)` expanded, and the container's env with downward-API fields read from the live pod.
struct Process {
    command: Vec<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

fn process_of(pod: &Pod) -> Process {
    let pod_json = serde_json::to_value(pod).expect("pod json");
    let containers = pod_json["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(
        containers.len(),
        1,
        "one container in {:?}",
        pod.metadata.name
    );
    let container = &containers[0];
    let mut env = BTreeMap::new();
    for var in container["env"].as_array().into_iter().flatten() {
        let key = var["name"].as_str().expect("env name").to_string();
        let value = if let Some(v) = var["value"].as_str() {
            expand(v, &env)
        } else if let Some(path) = var["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            let mut at = &pod_json;
            for part in path.split('.') {
                at = &at[part];
            }
            at.as_str()
                .unwrap_or_else(|| panic!("{key}: field {path} of the pod is not set"))
                .to_string()
        } else if var.get("valueFrom").is_none() {
            String::new()
        } else {
            panic!("{key}: only values and fieldRefs are resolved here: {var}")
        };
        env.insert(key, value);
    }
    let strings = |v: &Value| expand_all(v, &env);
    Process {
        command: strings(&container["command"]),
        args: strings(&container["args"]),
        env,
    }
}

/// The rendered pod template's container (our code, infera-core's validate + render) equals the live
/// pod's in what the process sees: command, args and env.
fn assert_rendered(children: &[Child], workload: &str, pod: &Pod) {
    let rendered = children
        .iter()
        .map(|c| serde_json::to_value(c).expect("json"))
        .find(|c| c["kind"] == "Deployment" && c["metadata"]["name"] == workload)
        .unwrap_or_else(|| panic!("no Deployment {workload} rendered"));
    let want = &rendered["spec"]["template"]["spec"]["containers"][0];
    let mut live = serde_json::to_value(pod).expect("pod json");
    let got = &mut live["spec"]["containers"][0];
    // The API server's default, not ours: `fieldRef.apiVersion: v1`.
    for var in got["env"].as_array_mut().into_iter().flatten() {
        if let Some(field) = var
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .and_then(Value::as_object_mut)
            && field.get("apiVersion") == Some(&json!("v1"))
        {
            field.remove("apiVersion");
        }
    }
    let got = &live["spec"]["containers"][0];
    for field in ["command", "args", "env"] {
        assert_eq!(
            got[field], want[field],
            "pod {:?}: {field} is not what infera-core renders",
            pod.metadata.name
        );
    }
}

/// A Running pod of the deployment's `service` with an IP.
async fn running_pod(pods: &Api<Pod>, service: &str) -> anyhow::Result<Pod> {
    let selector = format!("infera.amd.com/deployment={NAME},infera.amd.com/service={service}");
    eventually(TIMEOUT, || async {
        let list = pods.list(&ListParams::default().labels(&selector)).await?;
        list.items
            .into_iter()
            .find(|p| {
                let status = p.status.as_ref();
                status.and_then(|s| s.phase.as_deref()) == Some("Running")
                    && status.and_then(|s| s.pod_ip.as_deref()).is_some()
                    && p.metadata.deletion_timestamp.is_none()
            })
            .with_context(|| format!("no Running {service} pod with an IP yet"))
    })
    .await
}

/// The value after `flag` in `args`.
fn flag<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// Replaces the value after `flag`, which must be `was`.
fn override_flag(args: &mut [String], flag: &str, was: &str, now: &str) {
    let i = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("rendered args have no {flag}: {args:?}"));
    assert_eq!(args[i + 1], was, "rendered {flag}");
    args[i + 1] = now.to_string();
}

/// Standard base64 (the kubeconfig's `certificate-authority-data`).
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c:?}"),
        }
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        acc = (acc << 6) | value(c);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    out
}

/// The API server (host, port) and its CA (PEM) from the kubeconfig's `admin` context.
fn api_server() -> anyhow::Result<(String, String, Vec<u8>)> {
    let path = kubeconfig_path()?;
    let kc = Kubeconfig::read_from(&path)?;
    let ctx = kc
        .contexts
        .iter()
        .find(|c| c.name == "admin")
        .and_then(|c| c.context.as_ref())
        .context("no context admin")?;
    let cluster = kc
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.as_ref())
        .context("no cluster of context admin")?;
    let server = cluster.server.as_deref().context("no server URL")?;
    let authority = server
        .strip_prefix("https://")
        .context("server URL is not https")?
        .trim_end_matches('/');
    let (host, port) = authority
        .rsplit_once(':')
        .context("server URL has no port")?;
    let ca = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => base64_decode(data),
        (None, Some(file)) => std::fs::read(file)?,
        (None, None) => anyhow::bail!("the kubeconfig's cluster has no CA"),
    };
    Ok((host.to_string(), port.to_string(), ca))
}

/// A directory holding `serviceaccount/{token,ca.crt,namespace}`, for [`MOUNT_IDENTITY`].
fn identity_stage(dir: &Path, token: &str, ca: &[u8], namespace: &str) -> PathBuf {
    let sa = dir.join("serviceaccount");
    std::fs::create_dir_all(&sa).expect("stage dir");
    std::fs::write(sa.join("token"), token).expect("token");
    std::fs::write(sa.join("ca.crt"), ca).expect("ca.crt");
    std::fs::write(sa.join("namespace"), namespace).expect("namespace");
    dir.to_path_buf()
}

/// `driver() <args>` in a private mount namespace with the identity of `stage`, its environment
/// exactly `env` plus PATH and HOME (to find the venv).
fn in_cluster(
    stage: &Path,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "--", "sh", "-ec"])
        .arg(MOUNT_IDENTITY)
        .arg("sh")
        .arg(stage)
        .arg(driver())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(
            "HOME",
            std::env::var_os("HOME").unwrap_or_else(|| "/root".into()),
        )
        .envs(env)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// The test's directory (tokenizer, the identity's files), removed even when the test fails: it
/// holds a ServiceAccount token.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Whether the discovery ServiceAccount may patch pods in the namespace, per the API server.
async fn may_patch_pods(
    admin: &infera_e2e::kube::Client,
    namespace: &str,
    sa: &str,
) -> anyhow::Result<bool> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{namespace}:{sa}")),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(namespace.into()),
                verb: Some("patch".into()),
                resource: Some("pods".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(admin.clone());
    let answer = api.create(&PostParams::default(), &review).await?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

#[tokio::test(flavor = "multi_thread")]
async fn upstream_router_lists_a_worker_registered_with_the_rendered_discovery_identity()
-> anyhow::Result<()> {
    let started = Instant::now();
    // The identity trick needs a private mount namespace: say so rather than skip.
    let probe = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "--", "true"])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "this test runs upstream's processes in a private mount namespace (unshare -m) to give \
             them the discovery ServiceAccount's token at /var/run/secrets/kubernetes.io/serviceaccount, \
             as in a pod; unshare was refused (run the suite as root, or with CAP_SYS_ADMIN): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => {
            panic!("this test needs unshare(1) (util-linux) for a private mount namespace: {e}")
        }
    }

    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "upstream-disc").await?;
    let n = ns.name().to_string();
    let work = WorkDir(std::env::temp_dir().join(format!("infera-e2e-{n}")));
    std::fs::create_dir_all(&work.0)?;
    let work = &work.0;
    let logs = target_dir().join("e2e-logs");
    std::fs::create_dir_all(&logs)?;

    // A local tokenizer for the router (no model hub here), made and loaded back in the venv.
    let tokenizer = work.join("tokenizer");
    let made = tokio::process::Command::new(driver())
        .arg("tokenizer")
        .arg(&tokenizer)
        .output()
        .await?;
    assert!(
        made.status.success(),
        "making the tokenizer: {}",
        String::from_utf8_lossy(&made.stderr)
    );

    // Our operator runs the spec; our code renders the same spec here, to compare with the pods.
    let spec = spec(&tokenizer);
    let mut idep = yaml::parse_deployments(&spec)?.remove(0);
    idep.metadata.namespace = Some(n.clone());
    let children = render(&validate(&idep).map_err(|e| anyhow::anyhow!("{e}"))?);
    let identity = install(&admin).await?;
    let operator = Operator::start_in(&identity, &n).await?;
    apply_yaml_in(&admin, &n, &spec).await?;
    let pods: Api<Pod> = ns.api();
    let server_pod = running_pod(&pods, "server").await?;
    let worker_pod = running_pod(&pods, "decode").await?;
    eprintln!("pods Running after {:.1}s", started.elapsed().as_secs_f64());
    assert_rendered(&children, &format!("{NAME}-server"), &server_pod);
    assert_rendered(&children, &format!("{NAME}-decode"), &worker_pod);
    let roles: Api<Role> = ns.api();
    let role_name = format!("{NAME}-discovery");
    eventually(TIMEOUT, || roles.get(&role_name)).await?;

    // Both pods run as the discovery ServiceAccount; the processes get a token of it.
    let sa = server_pod
        .spec
        .as_ref()
        .and_then(|s| s.service_account_name.clone())
        .context("server pod has no ServiceAccount")?;
    assert_eq!(sa, role_name, "the server pod's ServiceAccount");
    assert_eq!(
        worker_pod
            .spec
            .as_ref()
            .and_then(|s| s.service_account_name.as_deref()),
        Some(sa.as_str()),
        "the worker pod's ServiceAccount"
    );
    // The operator applies the RoleBinding with the Role; the authorizer follows them.
    eventually(TIMEOUT, || async {
        anyhow::ensure!(
            may_patch_pods(&admin, &n, &sa).await?,
            "the rendered Role does not (yet) let {sa} patch pods"
        );
        Ok(())
    })
    .await?;
    let token = mint_token(&admin, &n, &sa, Duration::from_secs(3600)).await?;
    let (host, port, ca) = api_server()?;
    let stage = identity_stage(&work.join("identity"), &token, &ca, &n);
    let kubelet_env = |pod: &Pod, process: &Process| {
        let mut env = process.env.clone();
        env.insert("KUBERNETES_SERVICE_HOST".into(), host.clone());
        env.insert("KUBERNETES_SERVICE_PORT".into(), port.clone());
        env.insert(
            "HOSTNAME".into(),
            pod.metadata.name.clone().unwrap_or_default(),
        );
        env
    };

    // Upstream's router with the server container's argv and env; --host/--port to loopback.
    let server = process_of(&server_pod);
    assert_eq!(server.command, ["python3", "-m", "infera.server"]);
    let mut router_args = server.args.clone();
    let router_port = free_port()?;
    override_flag(&mut router_args, "--host", "0.0.0.0", "127.0.0.1");
    override_flag(&mut router_args, "--port", "8000", &router_port.to_string());
    let router_log = logs.join(format!("upstream-router-{n}.log"));
    let log = std::fs::File::create(&router_log)?;
    eprintln!(
        "upstream router on 127.0.0.1:{router_port}, log {}",
        router_log.display()
    );
    let mut router = in_cluster(
        &stage,
        &[vec!["router".to_string()], router_args].concat(),
        &kubelet_env(&server_pod, &server),
    )
    .stdout(Stdio::from(log.try_clone()?))
    .stderr(Stdio::from(log))
    .spawn()
    .context("spawning upstream's router")?;
    eventually(Duration::from_secs(60), async || {
        if let Some(status) = router.try_wait()? {
            anyhow::bail!(
                "upstream's router exited with {status}:\n{}",
                tail(&router_log)
            );
        }
        let (code, body) = http_get(router_port, "/v1/workers").await?;
        anyhow::ensure!(code == 200, "GET /v1/workers: {code} {body}");
        Ok(())
    })
    .await?;

    eprintln!(
        "router serving after {:.1}s",
        started.elapsed().as_secs_f64()
    );

    // Upstream's registration as the worker pod: its argv and env.
    let worker = process_of(&worker_pod);
    assert_eq!(worker.command, ["python3", "-m", "infera.engine.sglang"]);
    let worker_env = kubelet_env(&worker_pod, &worker);
    let register = || {
        let mut cmd = in_cluster(
            &stage,
            &[vec!["register".to_string()], worker.args.clone()].concat(),
            &worker_env,
        );
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    };
    let out = tokio::time::timeout(TIMEOUT, register().output()).await??;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "upstream's registration failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let registered: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .with_context(|| format!("registration's output: {stdout}"))?;
    let pod_ip = worker_pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .context("worker pod IP")?;
    let worker_port = flag(&worker.args, "--port").context("worker --port")?;
    let worker_id = format!("{pod_ip}:{worker_port}");
    assert_eq!(registered["worker_id"], worker_id.as_str(), "{registered}");
    eprintln!(
        "registered after {:.1}s: {registered}",
        started.elapsed().as_secs_f64()
    );

    // The router lists it: it watched the pod's annotation with the discovery identity.
    let listed = eventually(Duration::from_secs(60), async || {
        let (code, body) = http_get(router_port, "/v1/workers").await?;
        anyhow::ensure!(code == 200, "GET /v1/workers: {code} {body}");
        let body: Value = serde_json::from_str(&body)?;
        body["workers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|w| w["worker_id"] == worker_id.as_str())
            .cloned()
            .with_context(|| format!("{worker_id} not in GET /v1/workers: {body}"))
    })
    .await?;
    eprintln!("GET /v1/workers lists: {listed}");
    assert_eq!(listed["url"], format!("http://{worker_id}").as_str());
    assert_eq!(listed["model_name"], MODEL);
    assert_eq!(listed["engine"], "sglang");
    assert_eq!(listed["disagg_mode"], "mixed");

    // The negative: without `patch` on pods the same registration is refused. The operator is
    // stopped first, else it would restore the Role it renders.
    operator.terminate().await?;
    let role = roles.get(&role_name).await?;
    let mut rules = role.rules.clone().unwrap_or_default();
    let mut removed = false;
    for rule in &mut rules {
        if rule.resources.as_deref() == Some(&["pods".to_string()][..]) {
            let before = rule.verbs.len();
            rule.verbs.retain(|v| v != "patch");
            removed |= rule.verbs.len() < before;
        }
    }
    assert!(removed, "the rendered Role grants patch on pods: {rules:?}");
    roles
        .patch(
            &role_name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"rules": rules})),
        )
        .await?;
    // Deterministic: the authorizer has seen the change before the worker tries.
    eventually(Duration::from_secs(30), || async {
        anyhow::ensure!(!may_patch_pods(&admin, &n, &sa).await?, "still allowed");
        Ok(())
    })
    .await?;
    let out = tokio::time::timeout(TIMEOUT, register().output()).await??;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "registration without patch must fail (exit 1):\n{stderr}"
    );
    let refusal: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("registration refused:") || l.starts_with("API server answered:"))
        .collect();
    assert!(
        refusal.iter().any(|l| l.contains("403 Forbidden")) && stderr.contains("\"Forbidden\""),
        "the refusal is a 403 Forbidden from the API server:\n{stderr}"
    );
    eprintln!("without patch: {}", refusal.join("\n  "));

    router.kill().await?;
    ns.cleanup().await?;
    eprintln!(
        "upstream_discovery: {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
