//! `kubectl infera deploy`: from `-f FILE`, from flags, or from the wizard on a terminal (the
//! [`Source`] is chosen once).
//! Validates client-side first, applies with server-side apply as `kubectl-infera`, and with
//! `--wait` follows the deployment until Ready, explaining on timeout what blocks it.

use std::{collections::BTreeMap, time::Duration};

use futures::StreamExt;

use infera_core::{
    DOWNLOAD_FAILED, DOWNLOADING, InferaDeployment, InferaDeploymentStatus, MODEL_READY, READY,
    ReadyReason, State, condition::reconcile_failure,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::{
    Api,
    api::{ListParams, Patch},
};
use tokio::time::Instant;

use crate::{
    apply::{self, Outcome, conflict_or},
    checks,
    cli::{DeployArgs, DryRun, GlobalArgs, ManifestOutput, SpecFlags},
    client::{self, Kube},
    diagnose,
    duration::human,
    error::{Error, Result},
    plan,
    printer::{Printer, Style},
    spec::{self, Source},
    view, watch, wizard,
};

pub async fn run(args: &DeployArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let offline = args.dry_run == DryRun::Client;
    let (mut deployments, kube) = deployments(args, global, printer).await?;
    // Client-side validation, with infera-core's messages, before anything is sent.
    for idep in &deployments {
        spec::validate(idep)?;
    }
    // Valid, but each mutable tag may pull different bytes later: one warning per image.
    for idep in &deployments {
        for image in infera_core::validate::mutable_images(idep) {
            printer.warn(&spec::mutable_image_warning(&image));
        }
        if let Some(warning) = spec::gaie_off_warning(idep) {
            printer.warn(&warning);
        }
    }
    for idep in &mut deployments {
        clean(idep);
    }
    if let Some(path) = &args.save {
        let text = infera_core::yaml::to_yaml_stream(&deployments)
            .map_err(|e| Error::serialize("the spec", "YAML", e))?;
        std::fs::write(path, text).map_err(|source| Error::WriteFile {
            path: path.clone(),
            source,
        })?;
        printer.note(&format!("saved the spec to {}", path.display()));
    }
    if offline {
        print_objects(
            printer,
            &deployments,
            args.output.unwrap_or(ManifestOutput::Yaml),
        )?;
        return Ok(());
    }
    // The connection the wizard made, else the first and only one.
    let kube = match kube {
        Some(kube) => kube,
        None => client::connect(global).await?,
    };
    let server_dry_run = args.dry_run == DryRun::Server;
    for idep in &mut deployments {
        if idep.metadata.namespace.is_none() {
            idep.metadata.namespace = Some(kube.namespace.clone());
        }
    }
    // All or nothing: the API server checks every deployment of the file before one is written.
    if !server_dry_run {
        for idep in &deployments {
            apply_deployment(&kube, idep, true, args.force_conflicts).await?;
        }
    }
    let mut applied = Vec::new();
    for idep in &deployments {
        let (object, outcome) =
            apply_deployment(&kube, idep, server_dry_run, args.force_conflicts).await?;
        let suffix = if server_dry_run {
            " (server dry run)"
        } else {
            ""
        };
        if args.output.is_none() {
            printer.out(&format!(
                "inferadeployment.infera.amd.com/{} {outcome}{suffix}",
                object.metadata.name.as_deref().unwrap_or_default()
            ));
        }
        applied.push(object);
    }
    if let Some(output) = args.output {
        print_objects(printer, &applied, output)?;
    }
    if args.wait && !server_dry_run {
        for idep in &applied {
            wait_ready(&kube, idep, args.timeout, printer).await?;
        }
    } else if !server_dry_run
        && args.output.is_none()
        && let Some(idep) = applied.first()
    {
        let name = idep.metadata.name.as_deref().unwrap_or_default();
        let namespace = idep
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(&kube.namespace);
        printer.note(&format!(
            "follow it with `kubectl infera status {name} -n {namespace} --watch`"
        ));
    }
    Ok(())
}

/// The deployments of the [`Source`] the arguments choose, and the cluster connection if making
/// them needed one. The kubeconfig is read once per command: the wizard needs it before asking
/// (defaults from the nodes, the namespace to confirm), and `run` uses that connection; a file or
/// flags need it only once the spec is valid, and `--dry-run=client` not at all.
async fn deployments(
    args: &DeployArgs,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<(Vec<InferaDeployment>, Option<Kube>)> {
    let namespace = global.namespace.as_deref();
    let can_ask = printer.interactive() && !args.no_interactive;
    match Source::of(args.file.as_deref(), &args.spec, can_ask)? {
        Source::File(path) => Ok((spec::read(path, namespace)?, None)),
        Source::Flags(flags) => Ok((vec![plan::resolve(flags)?.to_deployment(namespace)], None)),
        Source::Wizard(flags) => {
            // With --dry-run=client, the cluster only suggests defaults.
            let kube = match client::connect(global).await {
                Ok(kube) => Some(kube),
                Err(_) if args.dry_run == DryRun::Client => None,
                Err(e) => return Err(e),
            };
            let idep = from_wizard(args, flags, global, kube.as_ref(), printer).await?;
            Ok((vec![idep], kube))
        }
    }
}

/// Drops what must not be applied (server-managed metadata and status).
fn clean(idep: &mut InferaDeployment) {
    idep.status = None;
    let m = &mut idep.metadata;
    m.resource_version = None;
    m.uid = None;
    m.managed_fields = None;
    m.creation_timestamp = None;
    m.generation = None;
}

fn print_objects(
    printer: &Printer,
    objects: &[InferaDeployment],
    output: ManifestOutput,
) -> Result<()> {
    match (output, objects) {
        (ManifestOutput::Json, [one]) => printer.json(one),
        (ManifestOutput::Json, many) => {
            printer.json(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": many}))
        }
        (ManifestOutput::Yaml, many) => {
            printer.out(
                &infera_core::yaml::to_yaml_stream(many)
                    .map_err(|e| Error::serialize("the InferaDeployments", "YAML", e))?,
            );
            Ok(())
        }
    }
}

/// The wizard source: asks for what the flags do not say, shows the InferaDeployment and the
/// same command without the wizard, and asks before applying it for real. `kube` is there
/// unless `--dry-run=client` could not connect.
async fn from_wizard(
    args: &DeployArgs,
    flags: &SpecFlags,
    global: &GlobalArgs,
    kube: Option<&Kube>,
    printer: &Printer,
) -> Result<InferaDeployment> {
    let hints = match kube {
        Some(kube) => cluster_hints(kube).await,
        None => wizard::ClusterHints::default(),
    };
    let plan = plan::resolve(&wizard::run(flags, &hints, &|line| printer.note(line))?)?;
    let idep = plan.to_deployment(global.namespace.as_deref());
    // The connection it is applied through, if it is (also with --dry-run=server): the
    // equivalent command names its namespace.
    let target = kube.filter(|_| args.dry_run != DryRun::Client);
    let namespace = target.map_or(global.namespace.as_deref(), |k| Some(&k.namespace));
    printer.note(&format!(
        "\n{}",
        printer.paint_err(Style::Bold, "The InferaDeployment:")
    ));
    printer.note(
        &infera_core::yaml::to_yaml(&idep)
            .map_err(|e| Error::serialize("the InferaDeployment", "YAML", e))?,
    );
    printer.note(&format!(
        "{}\n{}\n",
        printer.paint_err(Style::Bold, "The same without the wizard:"),
        plan.command_line(global, namespace)
    ));
    spec::validate(&idep)?;
    if let Some(kube) = target.filter(|_| args.dry_run == DryRun::None && !args.yes)
        && !wizard::confirm(&kube.context, &kube.namespace, &plan.name)?
    {
        return Err(Error::NotConfirmed);
    }
    Ok(idep)
}

/// Defaults for the wizard from one LIST of nodes and one of pods (for the GPUs in use);
/// nothing when the cluster cannot tell, no products when the pods cannot be read.
async fn cluster_hints(kube: &Kube) -> wizard::ClusterHints {
    let lookup = async {
        let nodes: Api<Node> = Api::all(kube.client.clone());
        let nodes = nodes.list(&ListParams::default()).await.ok()?.items;
        let pods: Api<Pod> = Api::all(kube.client.clone());
        let free_per_product = match pods.list(&ListParams::default()).await {
            Ok(pods) => checks::gpu::free_per_product(
                &checks::gpu::gpu_capacity(&nodes, &pods.items),
                plan::DEFAULT_GPU_TYPE,
            ),
            Err(_) => BTreeMap::new(),
        };
        let gpus: Vec<i32> = nodes
            .iter()
            .filter_map(|n| {
                n.status
                    .as_ref()?
                    .allocatable
                    .as_ref()?
                    .get(plan::DEFAULT_GPU_TYPE)?
                    .0
                    .parse()
                    .ok()
            })
            .filter(|g: &i32| *g > 0)
            .collect();
        let mut rdma_per_resource = BTreeMap::new();
        let allocatable = nodes
            .iter()
            .filter_map(|n| n.status.as_ref()?.allocatable.as_ref())
            .flatten();
        for (resource, quantity) in allocatable {
            let count = quantity.0.parse::<i64>().unwrap_or(0);
            if wizard::is_rdma_resource(resource) && count > 0 {
                *rdma_per_resource.entry(resource.clone()).or_insert(0) += count;
            }
        }
        Some(wizard::ClusterHints {
            gpus_per_node: gpus.iter().max().copied(),
            gpu_nodes: gpus.len(),
            free_per_product,
            rdma_per_resource,
        })
    };
    tokio::time::timeout(Duration::from_secs(5), lookup)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

async fn apply_deployment(
    kube: &Kube,
    idep: &InferaDeployment,
    dry_run: bool,
    force: bool,
) -> Result<(InferaDeployment, Outcome)> {
    let namespace = idep
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| kube.namespace.clone());
    let name = idep.metadata.name.clone().unwrap_or_default();
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &namespace);
    let display = format!("InferaDeployment {namespace}/{name}");
    let previous = match api.get_opt(&name).await {
        Ok(p) => p,
        Err(kube::Error::Api(s)) if s.code == 404 => {
            return Err(Error::NotInstalled { detail: s.message });
        }
        Err(e) => return Err(Error::kube(format!("reading {display}"), e)),
    };
    let applied = api
        .patch(&name, &apply::params(dry_run, force), &Patch::Apply(idep))
        .await
        .map_err(|e| conflict_or(&display, e))?;
    let outcome = apply::outcome(previous.as_ref().map(|p| &p.metadata), &applied.metadata);
    Ok((applied, outcome))
}

/// One line of progress: state and ready replicas per service.
pub fn progress_line(idep: &InferaDeployment) -> String {
    let status = idep.status.clone().unwrap_or_default();
    let state = status
        .state
        .map(|s| s.to_string())
        .unwrap_or_else(|| "Pending".into());
    let services: Vec<String> = status
        .services
        .iter()
        .map(|(name, s)| format!("{name} {}/{}", s.ready_replicas, s.desired_replicas))
        .collect();
    format!(
        "{}: {state}  {}",
        idep.metadata.name.as_deref().unwrap_or_default(),
        services.join("  ")
    )
}

/// The deployment `--wait` follows.
struct Waited {
    api: Api<InferaDeployment>,
    namespace: String,
    name: String,
    /// The generation our apply produced: older statuses do not count.
    generation: i64,
}

/// How following ended without an error.
enum Followed {
    Ready,
    /// The deadline passed; the last state seen, if any.
    TimedOut(Option<Box<InferaDeployment>>),
}

/// Follows the deployment until Ready at the generation of `applied`, explaining on timeout what
/// blocks it.
pub async fn wait_ready(
    kube: &Kube,
    applied: &InferaDeployment,
    timeout: Duration,
    printer: &Printer,
) -> Result<()> {
    let namespace = applied
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| kube.namespace.clone());
    let waited = Waited {
        api: Api::namespaced(kube.client.clone(), &namespace),
        name: applied.metadata.name.clone().unwrap_or_default(),
        generation: applied.metadata.generation.unwrap_or_default(),
        namespace,
    };
    let followed = follow(&waited, Instant::now() + timeout, printer).await;
    printer.clear_progress();
    let last = match followed? {
        Followed::Ready => return Ok(()),
        Followed::TimedOut(last) => last,
    };
    let why = not_ready_because(kube, &waited, last).await?;
    Err(Error::Timeout {
        after: human(timeout),
        why: format!("{}/{} is not Ready: {why}", waited.namespace, waited.name),
    })
}

/// One watch of this object (field selector metadata.name), reacting to each status change.
async fn follow(waited: &Waited, deadline: Instant, printer: &Printer) -> Result<Followed> {
    let object = format!("{}/{}", waited.namespace, waited.name);
    let mut changes = watch::object(
        waited.api.clone(),
        &waited.name,
        format!("InferaDeployment {object}"),
    )
    .boxed();
    let mut last_line = String::new();
    let mut last: Option<Box<InferaDeployment>> = None;
    // Once, if no operator has reported on our generation by then: say so and keep waiting.
    let mut unreported_at =
        Some(Instant::now() + Duration::from_secs(view::UNREPORTED_AFTER_SECONDS.unsigned_abs()));
    loop {
        let wake = unreported_at.map_or(deadline, |at| at.min(deadline));
        let next = match tokio::time::timeout_at(wake, changes.next()).await {
            Ok(next) => next,
            Err(_) if Instant::now() >= deadline => break,
            Err(_) => {
                unreported_at = None;
                let observed = last
                    .as_ref()
                    .and_then(|idep| idep.status.as_ref())
                    .and_then(|s| s.observed_generation);
                if observed.unwrap_or_default() < waited.generation {
                    printer.clear_progress();
                    printer.warn(&view::unreported_reason(
                        waited.generation,
                        view::UNREPORTED_AFTER_SECONDS,
                    ));
                }
                continue;
            }
        };
        let idep = match next {
            Some(Ok(Some(idep))) => idep,
            Some(Ok(None)) => return Err(Error::Deleted { object }),
            Some(Err(e)) => return Err(e),
            None => return Err(Error::WatchEnded { what: object }),
        };
        let status = idep.status.clone().unwrap_or_default();
        if let Some(c) = reconcile_failure(&status, Some(waited.generation)) {
            return Err(Error::ReconcileFailed {
                object,
                generation: waited.generation,
                message: c.message.clone(),
            });
        }
        if status.observed_generation.unwrap_or_default() >= waited.generation {
            if status.state == Some(State::Ready) {
                printer.clear_progress();
                let ready = printer.paint_err(Style::Good, "Ready:");
                printer.note(&format!("{ready} {}", progress_line(&idep)));
                return Ok(Followed::Ready);
            }
            let ready = status.conditions.iter().find(|c| c.type_ == READY);
            if let Some(c) = ready {
                let message = c.message.clone();
                match ReadyReason::parse(&c.reason) {
                    Some(ReadyReason::InvalidSpec) => {
                        return Err(Error::RejectedByOperator { object, message });
                    }
                    Some(ReadyReason::PodsRefused) => {
                        return Err(Error::PodsRefused { object, message });
                    }
                    _ => {}
                }
            }
            let failed = status
                .conditions
                .iter()
                .find(|c| c.type_ == MODEL_READY && c.reason == DOWNLOAD_FAILED);
            if let Some(c) = failed {
                return Err(Error::DownloadFailed {
                    object,
                    message: c.message.clone(),
                    fix: download_failed_fix(&waited.namespace, &status),
                });
            }
        }
        let line = progress_line(&idep);
        if line != last_line {
            printer.progress_or_line(&line);
            last_line = line;
        }
        last = Some(Box::new(idep));
    }
    Ok(Followed::TimedOut(last))
}

/// The download Jobs of a status (`status.models`), in a `kubectl` argument list.
fn download_jobs(status: &InferaDeploymentStatus) -> String {
    let jobs: Vec<String> = status
        .models
        .keys()
        .map(|job| format!("job/{job}"))
        .collect();
    jobs.join(" ")
}

/// What to do about a failed `hf://` download: read its logs, fix what it downloads, and delete
/// the Job, which the operator then creates again (the volume keeps the files already fetched).
fn download_failed_fix(namespace: &str, status: &InferaDeploymentStatus) -> String {
    let jobs = download_jobs(status);
    format!(
        "see why with `kubectl logs -n {namespace} {jobs}`; fix model.source (its repository or revision), model.tokenSecretRef for a gated model, or model.downloadImage (it needs the hf CLI), then retry with `kubectl delete -n {namespace} {jobs}` (the operator creates the Job again and the download resumes)"
    )
}

/// While an `hf://` download holds the GPU pools: which Jobs to follow (a download pod that
/// cannot start, e.g. on an unbound volume, is named with the pods).
fn downloading_hint(namespace: &str, status: &InferaDeploymentStatus) -> Option<String> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == MODEL_READY && c.reason == DOWNLOADING)?;
    Some(format!(
        "the GPU pools wait for the model download: follow it with `kubectl logs -n {namespace} -f {}`, or wait longer (--timeout); if its pod is Pending, check that model.cache.storageClassName provisions a volume with the access mode asked for",
        download_jobs(status)
    ))
}

/// Why the deployment is not Ready, from its last state (read once if the watch never delivered
/// it), its condition, and what its pods and warning events say.
async fn not_ready_because(
    kube: &Kube,
    waited: &Waited,
    last: Option<Box<InferaDeployment>>,
) -> Result<String> {
    let (namespace, name, generation) = (&waited.namespace, &waited.name, waited.generation);
    let idep = match last {
        Some(idep) => *idep,
        None => waited
            .api
            .get(name)
            .await
            .map_err(|e| Error::kube(format!("reading {namespace}/{name}"), e))?,
    };
    let status = idep.status.clone().unwrap_or_default();
    let current = status.observed_generation.unwrap_or_default() >= generation;
    let (pods, events) = view::pods_and_events(kube, namespace, name).await?;
    let detail = view::detail(&idep, &pods, &events, k8s_openapi::jiff::Timestamp::now());
    let ready = status.conditions.iter().find(|c| c.type_ == READY);
    let mut why = match (&status.state, ready) {
        (None, _) => {
            "the operator has not reported any status: is it running? (`kubectl infera doctor`)"
                .to_string()
        }
        (Some(state), Some(c)) => format!("state {state}, {}: {}", c.reason, c.message),
        (Some(state), None) => format!("state {state}"),
    };
    if !current && status.state.is_some() {
        why.push_str(&format!(
            " (status is for generation {}, not {generation})",
            status.observed_generation.unwrap_or_default()
        ));
    }
    if pods.is_empty() && status.state.is_some() {
        why.push_str("; no pods exist yet");
    }
    if let Some(hint) = downloading_hint(namespace, &status) {
        why.push_str(&format!("; {hint}"));
    }
    why.push_str(&diagnose::summary(&detail.blocking, ""));
    Ok(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(reason: &str) -> InferaDeploymentStatus {
        serde_json::from_value(serde_json::json!({
            "conditions": [{"type": MODEL_READY, "status": "False", "reason": reason, "message": "m",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "models": {"demo-model": {"source": "hf://Qwen/Qwen3-0.6B"}},
        }))
        .expect("a status")
    }

    /// A failed download names its Job in the commands that show why and retry it.
    #[test]
    fn a_failed_download_is_explained_with_its_job_and_the_fix() {
        assert_eq!(
            download_failed_fix("team-a", &status(DOWNLOAD_FAILED)),
            "see why with `kubectl logs -n team-a job/demo-model`; fix model.source (its repository or revision), model.tokenSecretRef for a gated model, or model.downloadImage (it needs the hf CLI), then retry with `kubectl delete -n team-a job/demo-model` (the operator creates the Job again and the download resumes)"
        );
    }

    /// A download still running says which Job to follow; without one, nothing is added.
    #[test]
    fn a_running_download_says_which_job_to_follow() {
        let hint = downloading_hint("team-a", &status(DOWNLOADING)).unwrap_or_default();
        assert!(
            hint.starts_with("the GPU pools wait for the model download: follow it with `kubectl logs -n team-a -f job/demo-model`"),
            "{hint}"
        );
        assert_eq!(downloading_hint("team-a", &status(DOWNLOAD_FAILED)), None);
        assert_eq!(
            downloading_hint("team-a", &InferaDeploymentStatus::default()),
            None
        );
    }
}
