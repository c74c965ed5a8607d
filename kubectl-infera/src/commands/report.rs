//! `report NAME [-o FILE]`: a support bundle, one `.tar.gz` — the deployment (spec and status),
//! `status`'s view of it, its children and pods, the events about them, each container's log
//! (and the previous instance's), `doctor`'s report for its spec, the operator's Deployment and
//! log, and the cluster's version. What cannot be read is listed in the bundle's README and on
//! stderr; the bundle is written with the rest.
//!
//! Secret values never enter it: Secrets are read as metadata only (the plugin never receives
//! their data), and every `scheme://user:password@` in a log line is written with `***`.

mod bundle;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use futures::{StreamExt, stream};
use infera_core::{ChildKind, InferaDeployment, naming::LABEL_DEPLOYMENT};
use k8s_openapi::{
    api::{
        apps::v1::{ControllerRevision, Deployment},
        core::v1::{Event, Pod, Secret},
    },
    jiff::Timestamp,
};
use kube::{
    Api, ResourceExt,
    api::{DynamicObject, ListParams, LogParams},
};

use crate::{
    bundle as install, checks,
    cli::{ColorChoice, GlobalArgs, ReportArgs},
    client::{self, Kube},
    commands::{doctor, status},
    error::{Error, Result, chain, kube_message},
    pod_logs,
    printer::Printer,
    spec, view,
};
use bundle::Bundle;

pub async fn run(args: &ReportArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let kube = client::connect(global).await?;
    let namespace = kube.namespace.clone();
    let idep = view::deployment(&kube, &namespace, &args.name).await?;
    let now = Timestamp::now();
    let root = format!("infera-report-{namespace}-{}", args.name);
    let path = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!("{root}-{}.tar.gz", now.strftime("%Y%m%dT%H%M%SZ")))
    });
    printer.progress(&format!("collecting {namespace}/{}", args.name));
    let mut bundle = Bundle::new(root);
    collect(&kube, &idep, args.tail, global, &mut bundle).await;
    let problems = bundle.problems.clone();
    let bytes = bundle.finish(now)?;
    std::fs::write(&path, &bytes).map_err(|source| Error::WriteFile {
        path: path.clone(),
        source,
    })?;
    printer.clear_progress();
    for problem in &problems {
        printer.warn(&format!("not in the report: {problem}"));
    }
    printer.out(&format!(
        "wrote {} ({} KiB); Secret values are not in it",
        path.display(),
        bytes.len().div_ceil(1024)
    ));
    Ok(())
}

/// Everything the bundle holds, each part read on its own so that one refusal hides nothing else.
async fn collect(
    kube: &Kube,
    idep: &InferaDeployment,
    tail: i64,
    global: &GlobalArgs,
    bundle: &mut Bundle,
) {
    let namespace = kube.namespace.as_str();
    let name = idep.name_any();
    match kube.client.apiserver_version().await {
        Ok(version) => bundle.json("cluster/version.json", &version),
        Err(e) => bundle.problem("cluster/version.json", kube_message(e)),
    }
    bundle.yaml("deployment.yaml", &bare(idep.clone()));
    let selector = format!("{LABEL_DEPLOYMENT}={name}");
    let pods: Vec<Pod> = match api::<Pod>(kube, namespace)
        .list(&ListParams::default().labels(&selector))
        .await
    {
        Ok(list) => list.items.into_iter().map(bare).collect(),
        Err(e) => {
            bundle.problem("pods.yaml", kube_message(e));
            Vec::new()
        }
    };
    bundle.yaml("pods.yaml", &pods);
    let events = match api::<Event>(kube, namespace)
        .list(&ListParams::default())
        .await
    {
        Ok(list) => list.items,
        Err(e) => {
            bundle.problem("events.yaml", kube_message(e));
            Vec::new()
        }
    };
    let mut detail = view::detail(idep, &pods, &events, Timestamp::now());
    detail.gateway = view::gather_gateway(kube, idep).await;
    bundle.text(
        "status.txt",
        &status::detail_text(&Printer::new(ColorChoice::Never), &detail),
    );
    let mut names = vec![name.clone()];
    names.extend(pods.iter().map(ResourceExt::name_any));
    names.extend(children(kube, &selector, bundle).await);
    let mut about: Vec<Event> = events
        .into_iter()
        .filter(|e| {
            e.involved_object
                .name
                .as_ref()
                .is_some_and(|n| names.contains(n))
        })
        .map(bare)
        .collect();
    about.sort_by_key(|e| e.last_timestamp.clone().map(|t| t.0));
    bundle.yaml("events.yaml", &about);
    logs(kube, namespace, &pods, tail, "logs", bundle).await;
    doctor_report(idep, global, bundle).await;
    operator(kube, tail, bundle).await;
}

fn api<K>(kube: &Kube, namespace: &str) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    Api::namespaced(kube.client.clone(), namespace)
}

/// The object without its managed fields (noise to a reader; the field managers stay named in
/// the objects' own state).
fn bare<K: kube::Resource>(mut object: K) -> K {
    object.meta_mut().managed_fields = None;
    object
}

/// The deployment's children by kind (those of its label), its ControllerRevisions, and its
/// Secrets as metadata only; returns their names.
async fn children(kube: &Kube, selector: &str, bundle: &mut Bundle) -> Vec<String> {
    let namespace = kube.namespace.as_str();
    let params = ListParams::default().labels(selector);
    let mut names = Vec::new();
    for kind in ChildKind::ALL {
        let resource = kind.api_resource();
        let api: Api<DynamicObject> =
            Api::namespaced_with(kube.client.clone(), namespace, &resource);
        let file = format!(
            "children/{}-{}.yaml",
            resource.kind.to_lowercase(),
            resource.version
        );
        match api.list(&params).await {
            Ok(list) if list.items.is_empty() => {}
            Ok(list) => {
                names.extend(list.items.iter().map(ResourceExt::name_any));
                let items: Vec<DynamicObject> = list.items.into_iter().map(bare).collect();
                bundle.yaml(&file, &items);
            }
            // A kind the cluster does not serve (KEDA, GAIE, LeaderWorkerSet not installed).
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => bundle.problem(&file, kube_message(e)),
        }
    }
    match api::<ControllerRevision>(kube, namespace)
        .list(&params)
        .await
    {
        Ok(list) => {
            let items: Vec<ControllerRevision> = list.items.into_iter().map(bare).collect();
            bundle.yaml("children/controllerrevision-v1.yaml", &items);
        }
        Err(e) => bundle.problem("children/controllerrevision-v1.yaml", kube_message(e)),
    }
    match api::<Secret>(kube, namespace).list_metadata(&params).await {
        Ok(list) => {
            names.extend(list.items.iter().map(ResourceExt::name_any));
            let items: Vec<_> = list.items.into_iter().map(bare).collect();
            bundle.yaml("children/secret-v1.metadata.yaml", &items);
        }
        Err(e) => bundle.problem("children/secret-v1.metadata.yaml", kube_message(e)),
    }
    names
}

/// The last `tail` lines of each container of `pods`, and of its previous instance when it
/// restarted, under `dir/POD/CONTAINER[.previous].log`, eight reads at a time.
async fn logs(
    kube: &Kube,
    namespace: &str,
    pods: &[Pod],
    tail: i64,
    dir: &str,
    bundle: &mut Bundle,
) {
    let mut reads = Vec::new();
    for pod in pods {
        for container in pod_logs::containers(pod, Some("operator")) {
            let mut instances = Vec::new();
            if container.started {
                instances.push(false);
            }
            if container.restarts > 0 {
                instances.push(true);
            }
            for previous in instances {
                let file = format!(
                    "{dir}/{}/{}{}.log",
                    container.source.pod,
                    container.name,
                    if previous { ".previous" } else { "" }
                );
                let params = LogParams {
                    container: Some(container.name.clone()),
                    previous,
                    tail_lines: Some(tail),
                    timestamps: true,
                    ..LogParams::default()
                };
                let api = api::<Pod>(kube, namespace);
                let pod = container.source.pod.clone();
                reads.push(async move { (file, api.logs(&pod, &params).await) });
            }
        }
    }
    let read: Vec<_> = stream::iter(reads).buffered(8).collect().await;
    for (file, result) in read {
        match result {
            Ok(text) => {
                let lines: Vec<_> = text.lines().map(pod_logs::redact).collect();
                bundle.text(&file, &lines.join("\n"));
            }
            Err(e) => bundle.problem(&file, kube_message(e)),
        }
    }
}

/// `doctor --for` the deployment's spec, as JSON.
async fn doctor_report(idep: &InferaDeployment, global: &GlobalArgs, bundle: &mut Bundle) {
    let mut target = InferaDeployment::new(&idep.name_any(), idep.spec.clone());
    target.metadata.namespace = idep.namespace();
    let target = match spec::validate(&target) {
        Ok(valid) => Some((target, valid)),
        Err(e) => {
            bundle.problem("doctor.json (the spec's own checks)", chain(&e));
            None
        }
    };
    match doctor::facts(target, false, global).await {
        Ok(facts) => bundle.json("doctor.json", &doctor::report(checks::evaluate(&facts))),
        Err(e) => bundle.problem("doctor.json", chain(&e)),
    }
}

/// The operator's Deployment and its pods' logs.
async fn operator(kube: &Kube, tail: i64, bundle: &mut Bundle) {
    let deployments: Api<Deployment> = Api::namespaced(kube.client.clone(), install::NAMESPACE);
    match deployments.get_opt(install::OPERATOR).await {
        Ok(Some(deployment)) => bundle.yaml("operator/deployment.yaml", &bare(deployment)),
        Ok(None) => bundle.text(
            "operator/deployment.yaml",
            &format!(
                "# no Deployment {}/{}: the operator is not installed by `kubectl infera init`\n",
                install::NAMESPACE,
                install::OPERATOR
            ),
        ),
        Err(e) => bundle.problem("operator/deployment.yaml", kube_message(e)),
    }
    let params = ListParams::default().labels(install::OPERATOR_PODS);
    match api::<Pod>(kube, install::NAMESPACE).list(&params).await {
        Ok(list) => {
            let pods: Vec<Pod> = list.items.into_iter().map(bare).collect();
            bundle.yaml("operator/pods.yaml", &pods);
            logs(
                kube,
                install::NAMESPACE,
                &pods,
                tail,
                "operator/logs",
                bundle,
            )
            .await;
        }
        Err(e) => bundle.problem("operator/pods.yaml", kube_message(e)),
    }
}
