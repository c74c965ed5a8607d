//! The generated CRD on a real kube-apiserver: the seed's example (and a KEDA pool, and optional
//! enums sent as null) is accepted, CEL rules
//! reject what they can express with the same wording as infera-core, and `kubectl get idep`
//! prints the documented columns.

use crate::common::{merge, seed};
use infera_e2e::{TestNamespace, admin, kube::api::PostParams, operator::install};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn cel_rules_reject_bad_specs_at_admission_with_infera_core_wording() -> anyhow::Result<()> {
    let admin = admin().await?;
    install(&admin).await?;
    let ns = TestNamespace::new(&admin, "crd").await?;
    let (api, dry_run) = infera_e2e::admission_dry_run(&admin, ns.name());
    api.create(&dry_run, &serde_json::from_value(seed())?)
        .await?;
    // An optional enum sent as null reads as left out: the CRD lists no null among its values
    // (kubectl explain shows none) and the API server prunes the null before validating.
    let mut nulls = seed();
    nulls["spec"]["discoveryBackend"] = Value::Null;
    nulls["spec"]["rollout"] = json!({"strategy": null});
    let stored = api
        .create(&dry_run, &serde_json::from_value(nulls)?)
        .await?;
    let spec = &stored.data["spec"];
    anyhow::ensure!(
        spec.get("discoveryBackend").is_none() && spec["rollout"].get("strategy").is_none(),
        "the nulls were kept: {spec}"
    );

    let autoscale = |autoscaling: Value| json!({"spec": {"services": {"decode": {"replicas": null, "autoscaling": autoscaling}}}});
    let metric = json!({"type": "Pods", "pods": {
        "metric": {"name": "sglang_num_queue_reqs"},
        "target": {"type": "AverageValue", "averageValue": "4"},
    }});
    let trigger = json!({"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}});
    // A KEDA pool is admitted.
    let mut keda = seed();
    merge(
        &mut keda,
        autoscale(json!({"provider": "keda", "maxReplicas": 4, "triggers": [trigger.clone()]})),
    );
    api.create(&dry_run, &serde_json::from_value(keda)?).await?;
    // No server behind an Inference Gateway is admitted (upstream's serverless GAIE example).
    let mut serverless = seed();
    merge(
        &mut serverless,
        json!({"spec": {"services": {"server": null}, "gaie": {"enabled": true,
            "gatewayName": "inference-gateway", "tokenizerPath": "Qwen/Qwen3-0.6B"}}}),
    );
    api.create(&dry_run, &serde_json::from_value(serverless)?)
        .await?;

    // Restricted egress with the most rules and peers the schema allows is admitted (within
    // the CEL cost budget).
    let mut egress = seed();
    let peer = json!({"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}});
    let rule = json!({"to": vec![peer; 16], "ports": vec![json!({"port": 443}); 16]});
    merge(
        &mut egress,
        json!({"spec": {"networkPolicy": {"egress": {"restrict": true, "allow": vec![rule; 16]}}}}),
    );
    api.create(&dry_run, &serde_json::from_value(egress)?)
        .await?;

    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "no server",
            json!({"spec": {"services": {"server": null}}}),
            "spec.services: exactly one service must have componentType: server",
        ),
        (
            "no worker",
            json!({"spec": {"services": {"prefill": null, "decode": null}}}),
            "spec.services: at least one service must have componentType: worker",
        ),
        (
            "prefill without decode",
            json!({"spec": {"services": {"decode": null}}}),
            "spec.services: prefill pools need decode pools",
        ),
        (
            "server with a GPU",
            json!({"spec": {"services": {"server": {"resources": {"gpu": 1}}}}}),
            "resources.gpu: the server runs no model and gets no GPU",
        ),
        (
            "server with a role",
            json!({"spec": {"services": {"server": {"role": "decode"}}}}),
            "role: only workers have a role",
        ),
        (
            "server on two nodes",
            json!({"spec": {"services": {"server": {"numberOfNodes": 2}}}}),
            "numberOfNodes: the server runs on one node",
        ),
        (
            "server without a tokenizer",
            json!({"spec": {"services": {"server": {"args": ["--router-policy", "kv-aware"]}}}}),
            "args: the router needs the workers' tokenizer",
        ),
        (
            "worker without GPU",
            json!({"spec": {"services": {"decode": {"resources": {"gpu": 0}}}}}),
            "resources.gpu: a worker needs at least one GPU per pod",
        ),
        (
            "etcd without endpoint",
            json!({"spec": {"discoveryBackend": "etcd"}}),
            "spec.etcdEndpoint: set it exactly when discoveryBackend is etcd",
        ),
        (
            "injected flag",
            json!({"spec": {"services": {"decode": {"args": ["--port=1"]}}}}),
            "args: sets a flag the operator injects",
        ),
        (
            "reserved name",
            json!({"spec": {"services": {"nats": {"componentType": "worker", "resources": {"gpu": 1}}}}}),
            "reserved for objects the operator creates",
        ),
        (
            "bad service name",
            json!({"spec": {"services": {"Bad_Name": {"componentType": "worker", "resources": {"gpu": 1}}}}}),
            "service names must be DNS labels",
        ),
        (
            "names too long",
            json!({"metadata": {"name": "a-deployment-name-of-31-chars-x"}, "spec": {"services": {"decode-pool-number-one": {"componentType": "worker", "role": "decode", "resources": {"gpu": 1}}}}}),
            "must be at most 46 characters",
        ),
        (
            "deployment name not a DNS label",
            json!({"metadata": {"name": "demo.x"}}),
            "metadata.name: must be a DNS label (lowercase",
        ),
        (
            "deployment name too long",
            json!({"metadata": {"name": "a-deployment-name-that-is-longer-than-42-chars"}}),
            "metadata.name: must be a DNS label of at most 42 characters",
        ),
        (
            "nats url and deploy",
            json!({"spec": {"nats": {"url": "nats://x:4222"}}}),
            "spec.nats.url: is only used when deploy is false; remove it or set deploy: false",
        ),
        (
            "metricsFrom peer with no selector",
            json!({"spec": {"networkPolicy": {"metricsFrom": [{}]}}}),
            "spec.networkPolicy.metricsFrom: every entry names a podSelector and/or a namespaceSelector, or an ipBlock alone; fix the entry",
        ),
        (
            "metricsFrom ipBlock beside a selector",
            json!({"spec": {"networkPolicy": {"metricsFrom": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}}}),
            "spec.networkPolicy.metricsFrom: every entry names a podSelector and/or a namespaceSelector, or an ipBlock alone; fix the entry",
        ),
        (
            "egress allow while egress is open",
            json!({"spec": {"networkPolicy": {"egress": {"allow": [{"ports": [{"port": 443}]}]}}}}),
            "spec.networkPolicy.egress.allow: has no effect while egress is open; set spec.networkPolicy.egress.restrict: true, or remove allow",
        ),
        (
            "egress allow with the policies off",
            json!({"spec": {"networkPolicy": {"enabled": false, "egress": {"allow": [{"ports": [{"port": 443}]}]}}}}),
            "spec.networkPolicy.egress.allow: has no effect while egress is open; set spec.networkPolicy.egress.restrict: true, or remove allow",
        ),
        (
            "egress allow peer with no selector",
            json!({"spec": {"networkPolicy": {"egress": {"restrict": true, "allow": [{"to": [{}]}]}}}}),
            "spec.networkPolicy.egress.allow: every entry names a podSelector and/or a namespaceSelector, or an ipBlock alone; fix the entry",
        ),
        (
            "egress restricted with the policies off",
            json!({"spec": {"networkPolicy": {"enabled": false, "egress": {"restrict": true}}}}),
            "spec.networkPolicy.egress.restrict: restricted egress is a NetworkPolicy, and enabled: false renders none; remove enabled: false, or egress",
        ),
        (
            "scrape interval out of range",
            json!({"spec": {"monitoring": {"interval": "2h"}}}),
            "interval: must be from 1s to 1h; set how often Prometheus scrapes each pod, e.g. 15s or 1m",
        ),
        (
            "monitoring labels of ours",
            json!({"spec": {"monitoring": {"labels": {"infera.amd.com/deployment": "x"}}}}),
            "labels: app.kubernetes.io/name, instance, component, managed-by and every infera.amd.com/ label are the operator's",
        ),
        (
            "nats url twice",
            json!({"spec": {"nats": {"url": "nats://x:4222", "deploy": false, "urlSecretRef": {"name": "nats-url"}}}}),
            "spec.nats.urlSecretRef: names the URL that url names too; keep one",
        ),
        (
            "nats urlSecretRef and deploy",
            json!({"spec": {"nats": {"deploy": true, "urlSecretRef": {"name": "nats-url"}}}}),
            "spec.nats.urlSecretRef: is only used when deploy is false; remove it or set deploy: false",
        ),
        (
            "nats urlSecretRef with a managed NATS's setting",
            json!({"spec": {"nats": {"deploy": null, "storageSize": null, "urlSecretRef": {"name": "nats-url"}, "image": "nats:2.12"}}}),
            "spec.nats.image: is only used when the operator deploys NATS",
        ),
        (
            "requireDigest with a tag",
            json!({"spec": {"imagePolicy": {"requireDigest": true}}}),
            "spec.image: must be pinned by digest because imagePolicy.requireDigest is true; pin it by digest, e.g. rocm/infera@sha256:<64 hex>; find it with `crane digest IMAGE` or your registry",
        ),
        (
            "keda without triggers",
            autoscale(json!({"provider": "keda", "maxReplicas": 4})),
            "triggers: provider: keda needs at least one trigger",
        ),
        (
            "keda with metrics",
            autoscale(
                json!({"provider": "keda", "maxReplicas": 4, "metrics": [metric.clone()], "triggers": [trigger.clone()]}),
            ),
            "metrics: are the HorizontalPodAutoscaler's; with provider: keda",
        ),
        (
            "triggers without keda",
            autoscale(
                json!({"maxReplicas": 4, "metrics": [metric.clone()], "triggers": [trigger.clone()]}),
            ),
            "triggers: are KEDA's; set provider: keda",
        ),
        (
            "hpa without metrics",
            autoscale(json!({"maxReplicas": 4})),
            "metrics: needs at least one metric",
        ),
        (
            "unknown backend",
            json!({"spec": {"backendFramework": "tgi"}}),
            "Unsupported value: \"tgi\"",
        ),
    ];
    for (what, patch, expected) in cases {
        let mut spec = seed();
        merge(&mut spec, patch);
        match api.create(&dry_run, &serde_json::from_value(spec)?).await {
            Ok(_) => anyhow::bail!("{what}: accepted"),
            Err(infera_e2e::kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{what}: {}", status.message);
                assert!(
                    status.message.contains(expected),
                    "{what}: expected {expected:?} in {:?}",
                    status.message
                );
            }
            Err(other) => return Err(other.into()),
        }
    }

    let mut created = seed();
    created["metadata"]["namespace"] = json!(ns.name());
    api.create(&PostParams::default(), &serde_json::from_value(created)?)
        .await?;
    let output = std::process::Command::new("kubectl")
        .args(["get", "idep", "-n", ns.name(), "-o", "wide"])
        .env("KUBECONFIG", infera_e2e::kubeconfig_path()?)
        .output()?;
    let table = String::from_utf8_lossy(&output.stdout);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME", "BACKEND", "STATE", "SERVICES", "AGE", "REASON", "ENDPOINT", "REVISION"
        ],
        "{table}"
    );
    ns.cleanup().await
}
