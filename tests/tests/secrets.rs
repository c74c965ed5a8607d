//! No Secret value reaches an output. A Hugging Face token planted in the Secret a spec names
//! (`model.tokenSecretRef`) reaches the download Job only as a `secretKeyRef`, and neither the token
//! nor its base64 appears in anything the plugin prints (`deploy`, `render`, `status`, `status -o
//! yaml`, `doctor --for`), the operator logs, or the API holds of ours (the InferaDeployment and
//! its status, the children, the Events): the operator never reads Secrets, and this checks it.
//! The control: the Secret itself, read back, holds the value, so the search would find it.

use std::time::Duration;

use infera_e2e::{
    TestNamespace, admin, eventually,
    k8s_openapi::{ByteString, api::batch::v1::Job, api::core::v1::Secret},
    kube::{
        Api,
        api::{ObjectMeta, PostParams},
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
    outputs.push((
        "the operator's log".into(),
        std::fs::read_to_string(&operator.log)?,
    ));

    // The control: the same search finds the value where it is.
    let control = kubectl(&["get", "secret", "hf-token", "-n", n, "-o", "yaml"]).await?;
    anyhow::ensure!(control.stdout.contains(&encoded), "{}", control.stdout);
    for (what, text) in &outputs {
        anyhow::ensure!(!text.is_empty(), "{what} printed nothing");
        anyhow::ensure!(
            !text.contains(&planted) && !text.contains(&encoded),
            "{what} shows the planted token:\n{text}"
        );
    }
    ns.cleanup().await
}
