//! `--wait` of `deploy` and `scale`: follows a deployment until it is Ready at the generation
//! that was written, with one line of progress, and on timeout says what blocks it.

use std::time::Duration;

use futures::StreamExt;
use infera_core::{
    DOWNLOAD_FAILED, DOWNLOADING, InferaDeployment, InferaDeploymentStatus, MODEL_READY, READY,
    ReadyReason, State, condition::reconcile_failure,
};
use kube::Api;
use tokio::time::Instant;

use crate::{
    client::Kube,
    diagnose,
    duration::human,
    error::{Error, Result},
    printer::{Printer, Style},
    view, watch,
};

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
pub async fn ready(
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
