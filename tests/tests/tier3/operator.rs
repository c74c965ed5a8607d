//! Tier 3 (real nodes, tests/cluster/nodes.sh; issue 27): the operator `kubectl infera init`
//! installs runs in-cluster from its image, as a user's does. Its pods start on the real nodes
//! (containerd, runc), read their ServiceAccount token, reach the API server through the
//! `kubernetes` Service (kube-proxy), elect a leader and serve their probes; `doctor` sees the
//! Lease renewed; the seed is reconciled by it, with no local operator process; `/metrics` answers
//! through its Service; and a killed container is restarted by its kubelet and leads again. The
//! seed's NATS runs for real (the registry's stand-in for its default image, a volume from the
//! hostPath provisioner, its readiness probe against JetStream), CoreDNS answers for its Service,
//! and an engine image no registry here has reaches `status` with the kubelet's pull error.
//!
//! Runs only on a tier-3 cluster with the operator image loaded (tests/run-e2e.sh does both: the
//! image is release/build.sh's `target/image`, loaded by tests/cluster/load-image.sh).

use std::time::Duration;

use infera_core::{InferaDeployment, PodHealth};
use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::api::{coordination::v1::Lease, core::v1::Pod},
    kube::{Api, ResourceExt, api::ListParams},
    plugin::{doctor_check, kubectl},
};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
const SYSTEM: &str = "infera-system";
/// An engine image the cluster's registry does not have.
const MISSING_IMAGE: &str = "rocm/infera:sglang-v0.0.0-missing";

/// The cluster's state directory (up.sh's `K8S_TEST_DIR`), where each node's runc root is.
fn cluster_dir() -> String {
    std::env::var("K8S_TEST_DIR").unwrap_or_else(|_| "/tmp/infera-cluster".into())
}

/// The operator's pods, all Running and Ready on real nodes.
async fn ready_operator_pods(pods: &Api<Pod>) -> anyhow::Result<Vec<Pod>> {
    let list = pods
        .list(&ListParams::default().labels("app.kubernetes.io/name=infera-operator"))
        .await?;
    anyhow::ensure!(!list.items.is_empty(), "no operator pods");
    for pod in &list.items {
        let status = pod.status.clone().unwrap_or_default();
        let ready = PodHealth::of(pod).ready;
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        anyhow::ensure!(
            ready && node.starts_with("real-"),
            "{} on {node:?}: {:?}",
            pod.name_any(),
            status.container_statuses
        );
    }
    Ok(list.items)
}

/// The leader Lease's holder, once it is renewed.
async fn leader(leases: &Api<Lease>) -> anyhow::Result<String> {
    eventually(Duration::from_secs(60), || async {
        let lease = leases.get("infera-operator").await?;
        let spec = lease.spec.unwrap_or_default();
        spec.holder_identity
            .filter(|_| spec.renew_time.is_some())
            .ok_or_else(|| anyhow::anyhow!("no holder yet"))
    })
    .await
}

/// `name`'s A record from the pods' resolver (the kubelets' clusterDNS: CoreDNS on the bridge).
fn resolve(name: &str) -> anyhow::Result<String> {
    // A one-question DNS query over UDP (RFC 1035 4.1), answered by the first A record.
    let script = r#"
import socket, struct, sys
name = sys.argv[1]
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(q, ("10.88.0.1", 53)); r = s.recv(512)
def skip(i):  # past a name: labels up to the root, or a compression pointer
    while r[i] and r[i] < 0xC0:
        i += r[i] + 1
    return i + (2 if r[i] else 1)
ancount = struct.unpack(">H", r[6:8])[0]
i = len(q)
for _ in range(ancount):
    i = skip(i)
    typ, _, _, rdlen = struct.unpack(">HHIH", r[i:i + 10]); i += 10
    if typ == 1:
        print(socket.inet_ntoa(r[i:i + 4])); break
    i += rdlen
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script, name])
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[tokio::test]
async fn tier3_the_operator_from_init_runs_in_cluster_and_reconciles() -> anyhow::Result<()> {
    let admin = admin().await?;
    kubectl(&["infera", "init", "--wait", "--timeout", "3m"])
        .await?
        .expect_code(0)?;
    let pods: Api<Pod> = Api::namespaced(admin.clone(), SYSTEM);
    let leases: Api<Lease> = Api::namespaced(admin.clone(), SYSTEM);
    eventually(Duration::from_secs(120), || ready_operator_pods(&pods)).await?;
    let holder = leader(&leases).await?;

    // doctor tells a reconciling operator from an available one.
    let inf103 = doctor_check(&[], "INF103").await?;
    anyhow::ensure!(
        inf103["severity"] == "pass"
            && inf103["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("reconciling (leader {holder}"))),
        "{inf103}"
    );

    // The seed, reconciled by the in-cluster operator alone, with an engine image no registry here
    // has (the stand-in is pushed as the seed's own).
    let ns = TestNamespace::new(&admin, "t3-op").await?;
    let seed = std::fs::read_to_string(format!("{EXAMPLES}/pd.yaml"))?
        .replace("rocm/infera:sglang-v0.1.1", MISSING_IMAGE);
    let seed_file = infera_e2e::target_dir()
        .join("e2e-logs")
        .join("t3-seed.yaml");
    std::fs::create_dir_all(seed_file.parent().unwrap_or(&seed_file))?;
    std::fs::write(&seed_file, seed)?;
    let seed = seed_file.display().to_string();
    kubectl(&["infera", "deploy", "-f", &seed, "-n", ns.name()])
        .await?
        .expect_code(0)?;
    let ideps: Api<InferaDeployment> = ns.api();
    eventually(Duration::from_secs(60), || async {
        let idep = ideps.get("demo").await?;
        let status = idep.status.unwrap_or_default();
        anyhow::ensure!(
            status.observed_generation == idep.metadata.generation
                && status.services.contains_key("decode"),
            "status {status:?}"
        );
        Ok(())
    })
    .await?;

    // NATS: the release's NATS image, by the digest the released operator pins
    // (target/nats-image/reference.txt), pulled from the cluster's registry and Ready on its real
    // probe.
    let pinned =
        std::fs::read_to_string(infera_e2e::release::nats_image_dir()?.join("reference.txt"))?;
    let ns_pods: Api<Pod> = ns.api();
    eventually(Duration::from_secs(120), || async {
        let pod = ns_pods.get("demo-nats-0").await?;
        let image = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone());
        anyhow::ensure!(
            image.as_deref() == Some(pinned.trim()),
            "demo-nats-0 runs {image:?}, the release pins {pinned}"
        );
        anyhow::ensure!(PodHealth::of(&pod).ready, "demo-nats-0: {:?}", pod.status);
        Ok(())
    })
    .await?;
    // CoreDNS, as the pods' resolver: the NATS client Service's name.
    let service = format!("demo-nats.{}.svc.cluster.local", ns.name());
    let answer = resolve(&service)?;
    let cluster_ip =
        infera_e2e::kube::Api::<infera_e2e::k8s_openapi::api::core::v1::Service>::namespaced(
            admin.clone(),
            ns.name(),
        )
        .get("demo-nats")
        .await?
        .spec
        .and_then(|s| s.cluster_ip)
        .unwrap_or_default();
    anyhow::ensure!(
        answer == cluster_ip,
        "{service} is {answer:?}, not {cluster_ip}"
    );
    // The kubelet's pull error reaches `status`.
    eventually(Duration::from_secs(60), || async {
        let status = kubectl(&["infera", "status", "demo", "-n", ns.name()]).await?;
        anyhow::ensure!(
            status.stdout.contains(MISSING_IMAGE)
                && (status.stdout.contains("ErrImagePull")
                    || status.stdout.contains("ImagePullBackOff")),
            "{}",
            status.stdout
        );
        Ok(())
    })
    .await?;

    // /metrics through the operator's Service (the API server's service proxy to a pod IP).
    let metrics = kubectl(&[
        "get",
        "--raw",
        "/api/v1/namespaces/infera-system/services/http:infera-operator-metrics:http/proxy/metrics",
    ])
    .await?;
    anyhow::ensure!(
        metrics.code == 0 && metrics.stdout.contains("infera_leader"),
        "{}{}",
        metrics.stdout,
        metrics.stderr
    );

    // The leader's container killed on its node: its kubelet restarts it, and a replica leads.
    let leader_pod = pods.get(&holder).await?;
    let node = leader_pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    let container = leader_pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .and_then(|c| c.container_id.clone())
        .unwrap_or_default();
    let id = container.trim_start_matches("containerd://");
    let root = format!(
        "{}/node-{}/runc/k8s.io",
        cluster_dir(),
        node.trim_start_matches("real-")
    );
    let killed = std::process::Command::new("runc")
        .args(["--root", &root, "kill", id, "KILL"])
        .status()?;
    anyhow::ensure!(killed.success(), "runc kill {id} in {root}");
    eventually(Duration::from_secs(90), || async {
        let pod = pods.get(&holder).await?;
        let restarts = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|c| c.first())
            .map_or(0, |c| c.restart_count);
        anyhow::ensure!(restarts >= 1, "{holder}: {restarts} restarts");
        Ok(())
    })
    .await?;
    eventually(Duration::from_secs(120), || ready_operator_pods(&pods)).await?;
    leader(&leases).await?;
    ns.cleanup().await
}
