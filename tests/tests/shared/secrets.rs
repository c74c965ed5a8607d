//! No Secret value reaches an output. A Hugging Face token planted in the Secret a spec names
//! (`model.tokenSecretRef`) reaches the download Job only as a `secretKeyRef`, and neither the token
//! nor its base64, nor the managed NATS's password, appears in anything the plugin prints
//! (`deploy`, `render`, `status`, `status -o yaml`, `doctor --for`) or writes (the `report`
//! bundle, every file of it), the operator logs, or the API
//! holds of ours (the InferaDeployment and its status, the children, the Events): the operator
//! never reads Secrets, and this checks it. The control: the Secrets themselves, read back, hold
//! the values, so the search would find them.
//!
//! The managed NATS's credentials: created by the operator (running under the RBAC we ship, which
//! lets it create Secrets and nothing more), owned by the deployment, read by NATS and every
//! client by `secretKeyRef`, and kept as they are when the NATS StatefulSet is applied again.

use std::time::Duration;

use infera_e2e::{
    TestNamespace, admin, apply_yaml_in, eventually,
    k8s_openapi::{
        ByteString,
        api::{
            apps::v1::{Deployment, StatefulSet},
            batch::v1::Job,
            core::v1::Secret,
        },
    },
    kube::{
        Api,
        api::{ObjectMeta, Patch, PatchParams, PostParams},
    },
    operator::{Operator, install},
    plugin::kubectl,
    target_dir, unique_suffix,
};

#[tokio::test(flavor = "multi_thread")]
async fn a_planted_token_appears_in_no_output_of_the_plugin_or_the_operator() -> anyhow::Result<()>
{
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "secrets").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let operator = Operator::start_in(&identity, n).await?;

    let planted = format!("hf_planted{}", unique_suffix());
    let secrets: Api<Secret> = ns.api();
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("hf-token".into()),
            ..Default::default()
        },
        data: Some(
            [(
                "HF_TOKEN".to_string(),
                ByteString(planted.clone().into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    };
    secrets.create(&PostParams::default(), &secret).await?;
    let encoded = serde_json::to_value(&secret)?["data"]["HF_TOKEN"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    anyhow::ensure!(!encoded.is_empty() && encoded != planted);

    let spec = serde_json::json!({
        "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
        "metadata": {"name": "gated", "namespace": n},
        "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
            "model": {"source": "hf://Qwen/Qwen3-0.6B", "cache": {"size": "2Gi"},
                      "tokenSecretRef": {"name": "hf-token"}},
            "services": {
                "server": {"componentType": "server", "args": ["--router-tokenizer-path", "Qwen/Qwen3-0.6B"]},
                "worker": {"componentType": "worker", "resources": {"gpu": 1}, "args": ["--tp-size", "1"]}
            }}
    });
    let dir = target_dir().join("e2e-logs");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(format!("secrets-{n}.yaml"));
    std::fs::write(&file, serde_json::to_string_pretty(&spec)?)?;
    let file = file.display().to_string();

    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut run = async |args: &[&str]| -> anyhow::Result<()> {
        let out = kubectl(args).await?;
        outputs.push((args.join(" "), format!("{}{}", out.stdout, out.stderr)));
        Ok(())
    };
    run(&["infera", "deploy", "-f", &file, "-n", n]).await?;
    // The download Job exists and names the Secret: the token went as far as it should.
    let jobs: Api<Job> = ns.api();
    let job = eventually(Duration::from_secs(60), || async {
        jobs.list(&Default::default())
            .await?
            .items
            .pop()
            .ok_or_else(|| anyhow::anyhow!("no download Job yet"))
    })
    .await?;
    let job_json = serde_json::to_string(&job)?;
    anyhow::ensure!(
        job_json.contains("\"secretKeyRef\":{\"key\":\"HF_TOKEN\",\"name\":\"hf-token\"}"),
        "the Job reads the token from the Secret: {job_json}"
    );
    run(&["infera", "render", "-f", &file]).await?;
    run(&["infera", "status", "gated", "-n", n]).await?;
    run(&["infera", "status", "gated", "-n", n, "-o", "yaml"]).await?;
    run(&["infera", "doctor", "--for", &file, "-o", "json"]).await?;
    run(&["get", "events", "-n", n, "-o", "yaml"]).await?;
    run(&[
        "get",
        "idep,deploy,statefulset,job,svc,pvc",
        "-n",
        n,
        "-o",
        "yaml",
    ])
    .await?;
    run(&["describe", "idep", "gated", "-n", n]).await?;
    // The support bundle, every file of it: it lists the NATS Secret, by its metadata only.
    let bundle = dir.join(format!("report-{n}.tar.gz")).display().to_string();
    run(&["infera", "report", "gated", "-n", n, "-o", &bundle]).await?;
    let listed = tokio::process::Command::new("tar")
        .args(["-tzf", &bundle])
        .output()
        .await?;
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    for file in [
        "README.txt",
        "deployment.yaml",
        "status.txt",
        "pods.yaml",
        "events.yaml",
        "doctor.json",
        "cluster/version.json",
        "children/job-v1.yaml",
        "children/secret-v1.metadata.yaml",
    ] {
        let path = format!("infera-report-{n}-gated/{file}");
        anyhow::ensure!(listed.lines().any(|l| l == path), "no {path} in\n{listed}");
    }
    let contents = tokio::process::Command::new("tar")
        .args(["-xzOf", &bundle])
        .output()
        .await?;
    let contents = String::from_utf8_lossy(&contents.stdout).into_owned();
    anyhow::ensure!(
        contents.contains("name: gated-nats-auth"),
        "the bundle does not list the NATS Secret:\n{contents}"
    );
    outputs.push(("the report's files".into(), contents));
    outputs.push((
        "the operator's log".into(),
        std::fs::read_to_string(&operator.log)?,
    ));

    // The control: the same search finds the values where they are.
    let control = kubectl(&["get", "secret", "hf-token", "-n", n, "-o", "yaml"]).await?;
    anyhow::ensure!(control.stdout.contains(&encoded), "{}", control.stdout);
    let nats_password = nats_password(&secrets, "gated", None).await?;
    for (what, text) in &outputs {
        anyhow::ensure!(!text.is_empty(), "{what} printed nothing");
        anyhow::ensure!(
            !text.contains(&planted) && !text.contains(&encoded),
            "{what} shows the planted token:\n{text}"
        );
        anyhow::ensure!(
            !text.contains(&nats_password),
            "{what} shows the NATS password:\n{text}"
        );
    }
    ns.cleanup().await
}

/// The password of `deployment`'s managed NATS (after `rotation`), once the operator has made its
/// credentials.
async fn nats_password(
    secrets: &Api<Secret>,
    deployment: &str,
    rotation: Option<&str>,
) -> anyhow::Result<String> {
    let name = infera_core::naming::nats_credentials_name(deployment, rotation);
    let secret = eventually(Duration::from_secs(60), || async {
        secrets
            .get_opt(&name)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no Secret {name} yet"))
    })
    .await?;
    let data = secret.data.unwrap_or_default();
    let text = |key: &str| {
        data.get(key)
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
            .unwrap_or_default()
    };
    let password = text(infera_core::naming::NATS_PASSWORD_KEY);
    anyhow::ensure!(
        password.len() == 64,
        "a 256-bit password in hex: {password}"
    );
    let url = text(infera_core::naming::NATS_URL_KEY);
    anyhow::ensure!(
        url.starts_with(&format!("nats://infera:{password}@{deployment}-nats.")),
        "the clients' URL carries the credentials: {url}"
    );
    Ok(password)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_managed_nats_gets_credentials_the_operator_makes_once_and_never_reads()
-> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "nats-auth").await?;
    let n = ns.name();
    let identity = install(&admin).await?;
    let _operator = Operator::start_in(&identity, n).await?;
    let spec = |image: &str| {
        serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "auth", "namespace": n},
            "spec": {"backendFramework": "sglang", "image": "rocm/infera:sglang-v0.1.1",
                "nats": {"image": image},
                "services": {
                    "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
                    "worker": {"componentType": "worker", "resources": {"gpu": 1}}
                }}
        })
        .to_string()
    };
    apply_yaml_in(&admin, n, &spec("nats:2.11-alpine")).await?;
    let secrets: Api<Secret> = ns.api();
    let password = nats_password(&secrets, "auth", None).await?;
    let secret = secrets.get("auth-nats-auth").await?;
    let owner = secret.metadata.owner_references.clone().unwrap_or_default();
    anyhow::ensure!(
        owner.len() == 1 && owner[0].kind == "InferaDeployment" && owner[0].name == "auth",
        "owned by its deployment: {owner:?}"
    );

    // NATS takes the password, the router and the workers the URL, each by reference.
    let sets: Api<StatefulSet> = ns.api();
    let nats = serde_json::to_string(&sets.get("auth-nats").await?)?;
    anyhow::ensure!(
        nats.contains(r#""--user=infera","--pass=$(NATS_PASSWORD)""#)
            && nats.contains(r#"{"name":"NATS_PASSWORD","valueFrom":{"secretKeyRef":{"key":"password","name":"auth-nats-auth"}}}"#),
        "{nats}"
    );
    let deployments: Api<Deployment> = ns.api();
    for workload in ["auth-server", "auth-worker"] {
        let text = serde_json::to_string(&deployments.get(workload).await?)?;
        anyhow::ensure!(
            text.contains(r#"{"name":"NATS_SERVER","valueFrom":{"secretKeyRef":{"key":"url","name":"auth-nats-auth"}}}"#)
                && text.contains(r#""--nats-server","$(NATS_SERVER)""#)
                && !text.contains(&password),
            "{workload}: {text}"
        );
    }

    // A new NATS image applies the StatefulSet again: the credentials stay as they were.
    let before = secret.metadata.resource_version.clone();
    apply_yaml_in(&admin, n, &spec("nats:2.12-alpine")).await?;
    eventually(Duration::from_secs(60), || async {
        let nats = serde_json::to_string(&sets.get("auth-nats").await?)?;
        anyhow::ensure!(nats.contains("nats:2.12-alpine"), "not applied yet");
        Ok(())
    })
    .await?;
    let after = secrets.get("auth-nats-auth").await?;
    anyhow::ensure!(
        after.metadata.resource_version == before,
        "the credentials were not rewritten"
    );

    // A rotation: a new Secret with a new password, which NATS and its clients now read; the old
    // one is kept (a pod of the old revision that restarts reads it again) and goes with the
    // deployment.
    let ideps: Api<infera_core::InferaDeployment> = ns.api();
    ideps
        .patch(
            "auth",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"annotations":
                {infera_core::naming::NATS_ROTATION_ANNOTATION: "2"}}})),
        )
        .await?;
    let rotated = nats_password(&secrets, "auth", Some("2")).await?;
    anyhow::ensure!(rotated != password, "a new password");
    eventually(Duration::from_secs(60), || async {
        let nats = serde_json::to_string(&sets.get("auth-nats").await?)?;
        anyhow::ensure!(
            nats.contains(r#"{"name":"NATS_PASSWORD","valueFrom":{"secretKeyRef":{"key":"password","name":"auth-nats-auth-2"}}}"#),
            "{nats}"
        );
        for workload in ["auth-server", "auth-worker"] {
            let text = serde_json::to_string(&deployments.get(workload).await?)?;
            anyhow::ensure!(
                text.contains(r#"{"name":"NATS_SERVER","valueFrom":{"secretKeyRef":{"key":"url","name":"auth-nats-auth-2"}}}"#),
                "{workload}: {text}"
            );
        }
        Ok(())
    })
    .await?;
    anyhow::ensure!(
        secrets.get_opt("auth-nats-auth").await?.is_some(),
        "the old one is kept"
    );
    ns.cleanup().await
}
