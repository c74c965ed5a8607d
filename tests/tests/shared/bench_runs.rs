//! `kubectl infera bench` on the tier-2 cluster (kwok pods run no process, so no run finishes
//! here, and kwok's pods keep no log; tier 3's `bench.rs` measures for real): a run is a ConfigMap owned by the deployment and
//! a Job owned by the ConfigMap, written all or nothing; the Job's pod is admitted by a namespace
//! that enforces Pod Security `restricted`; the run's config sends to the server Service; `list`
//! and `show` report it as not finished and `compare` refuses a run without figures; deleting the
//! deployment takes its runs with it; the operator never touches them.

use std::time::Duration;

use infera_core::InferaDeployment;
use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::api::{
        batch::v1::Job,
        core::v1::{ConfigMap, Pod, Service},
    },
    kube::{
        Api, ResourceExt,
        api::{DeleteParams, ListParams},
    },
    operator::{Operator, install},
    plugin::kubectl,
    target_dir,
};

const SPEC: &str = r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: measured}
spec:
  backendFramework: vllm
  image: rocm/infera:vllm-v0.1.1
  services:
    server: {componentType: server, args: [--router-tokenizer-path, m]}
    worker: {componentType: worker, resources: {gpu: 1}}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_run_is_a_config_map_of_the_deployment_and_a_restricted_job_reported_until_it_ends()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "bench").await?;
    let n = ns.name();
    ns.enforce("restricted").await?;
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    let file = target_dir().join("e2e-logs").join(format!("{n}.yaml"));
    std::fs::write(&file, SPEC)?;
    kubectl(&[
        "infera",
        "deploy",
        "-f",
        &file.display().to_string(),
        "-n",
        n,
    ])
    .await?
    .expect_code(0)?;
    let services: Api<Service> = ns.api();
    eventually(Duration::from_secs(60), || async {
        services.get("measured-server").await
    })
    .await?;

    // Nothing is written for a deployment that does not exist.
    let missing = kubectl(&["infera", "bench", "absent", "-n", n, "--no-wait"]).await?;
    anyhow::ensure!(
        missing.code == 1
            && missing.stderr.contains("InferaDeployment")
            && missing.stderr.contains("not found"),
        "exit {}: {}",
        missing.code,
        missing.stderr
    );

    let started = kubectl(&[
        "infera",
        "bench",
        "measured",
        "-n",
        n,
        "--no-wait",
        "--rate",
        "1",
        "--duration",
        "5s",
        "--slo-ttft",
        "500ms",
    ])
    .await?
    .expect_code(0)?;
    let maps: Api<ConfigMap> = ns.api();
    let runs = maps
        .list(&ListParams::default().labels("app.kubernetes.io/name=infera-bench"))
        .await?
        .items;
    anyhow::ensure!(runs.len() == 1, "one run: {runs:?}");
    let run = runs[0].name_any();
    anyhow::ensure!(
        started.stderr.contains(&format!("run {run}:")),
        "{}",
        started.stderr
    );
    let idep: InferaDeployment = ns.api().get("measured").await?;
    let owners = runs[0].owner_references();
    anyhow::ensure!(
        owners.len() == 1
            && owners[0].kind == "InferaDeployment"
            && Some(&owners[0].uid) == idep.metadata.uid.as_ref(),
        "{owners:?}"
    );
    let data = runs[0].data.clone().unwrap_or_default();
    let config = data.get("config.yaml").cloned().unwrap_or_default();
    anyhow::ensure!(
        config.contains(&format!(
            "base_url: http://measured-server.{n}.svc.cluster.local:8000"
        )) && config.contains("ttft: 0.5")
            && config.contains("duration: 5"),
        "{config}"
    );
    anyhow::ensure!(!data.contains_key("summary.json"), "{data:?}");

    // The Job is the ConfigMap's; its pod passes `restricted` (the namespace enforces it).
    let jobs: Api<Job> = ns.api();
    let job = jobs.get(&run).await?;
    anyhow::ensure!(
        job.owner_references()
            .iter()
            .any(|o| o.kind == "ConfigMap" && Some(&o.uid) == runs[0].metadata.uid.as_ref()),
        "{:?}",
        job.metadata.owner_references
    );
    let pods: Api<Pod> = ns.api();
    let selector = format!("batch.kubernetes.io/job-name={run}");
    eventually(Duration::from_secs(60), || async {
        let found = pods
            .list(&ListParams::default().labels(&selector))
            .await?
            .items;
        anyhow::ensure!(!found.is_empty(), "no pod of Job {run} yet");
        anyhow::Ok(())
    })
    .await?;

    let shown = kubectl(&["infera", "bench", "show", &run, "-n", n, "-o", "json"])
        .await?
        .expect_code(0)?;
    let view: serde_json::Value = serde_json::from_str(&shown.stdout)?;
    // kwok ends a Job's pod as Completed within seconds, and has no log to give: the run is
    // reported as finished without figures, saying why.
    let unread = view["state"] == "Succeeded"
        && view["message"].as_str().is_some_and(|m| {
            m.starts_with("the Job completed; the log of pod") && m.contains("cannot be read")
        });
    anyhow::ensure!(
        (view["state"] == "Pending" || view["state"] == "Running" || unread)
            && view["figures"].is_null()
            && view["load"]["shape"]
                == serde_json::json!({"type": "rate", "rate": 1.0, "seconds": 5})
            && view["deployment"] == "measured",
        "{view:#}"
    );
    let listed = kubectl(&["infera", "bench", "list", "measured", "-n", n])
        .await?
        .expect_code(0)?;
    anyhow::ensure!(
        listed.stdout.starts_with("RUN ")
            && listed.stdout.contains(&run)
            && listed.stdout.contains("1/s for 5s"),
        "{}",
        listed.stdout
    );
    let compared = kubectl(&["infera", "bench", "compare", &run, &run, "-n", n]).await?;
    anyhow::ensure!(
        compared.code == 4
            && compared
                .stderr
                .contains(&format!("run {run} has no figures")),
        "exit {}: {}",
        compared.code,
        compared.stderr
    );

    // The operator leaves the run alone; deleting the deployment takes the run and its Job.
    let api: Api<InferaDeployment> = ns.api();
    api.delete("measured", &DeleteParams::foreground()).await?;
    eventually(Duration::from_secs(90), || async {
        let left = (maps.get_opt(&run).await?, jobs.get_opt(&run).await?);
        anyhow::ensure!(matches!(left, (None, None)), "still there: {left:?}");
        anyhow::Ok(())
    })
    .await?;
    ns.cleanup().await
}
