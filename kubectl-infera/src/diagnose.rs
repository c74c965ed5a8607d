//! Why is it not ready yet? Pure explanations from pods and warning events, used when `--wait`
//! gives up (and while it waits) and by `status NAME`: unschedulable pods with the scheduler's
//! message, image pull errors, crash loops, and the most recent warning events. Pods are read
//! through [`PodHealth`], as the operator reads them.

use std::collections::BTreeSet;

use infera_core::{
    PodHealth,
    pod_health::{LastExit, Trouble, Waiting},
};
use k8s_openapi::api::core::v1::{Event, Pod};

/// At most this many reasons are reported.
const MAX_REASONS: usize = 6;

/// Reasons the pods are not ready, most specific first, deduplicated: pods first (scheduling,
/// then containers), then warning events, newest first.
pub fn reasons<'a>(pods: &[Pod], events: impl IntoIterator<Item = &'a Event>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |line: String, out: &mut Vec<String>| {
        if seen.insert(line.clone()) {
            out.push(line);
        }
    };
    for pod in pods {
        for line in pod_reasons(pod) {
            push(line, &mut out);
        }
    }
    let mut warnings: Vec<&Event> = events
        .into_iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .collect();
    warnings.sort_by_key(|e| std::cmp::Reverse(event_time(e)));
    for event in warnings {
        let object = &event.involved_object;
        let line = format!(
            "{} {}: {}: {}",
            object.kind.as_deref().unwrap_or("object"),
            object.name.as_deref().unwrap_or("?"),
            event.reason.as_deref().unwrap_or("Warning"),
            event.message.as_deref().unwrap_or_default().trim()
        );
        // The scheduler's event repeats the pod condition: keep one of them.
        if event.reason.as_deref() == Some("FailedScheduling")
            && out.iter().any(|l| {
                l.contains(object.name.as_deref().unwrap_or("?")) && l.contains("unschedulable")
            })
        {
            continue;
        }
        push(line, &mut out);
    }
    out.truncate(MAX_REASONS);
    out
}

/// What one pod's health says needs a person: the scheduler's verdict (with what it means), then
/// each container that cannot pull, crash-loops or cannot start.
fn pod_reasons(pod: &Pod) -> Vec<String> {
    let name = pod.metadata.name.as_deref().unwrap_or("?");
    let health = PodHealth::of(pod);
    let mut out = Vec::new();
    if let Some((cause, message)) = health.unschedulable() {
        let message = if message.is_empty() {
            "no node fits"
        } else {
            message
        };
        out.push(format!("pod {name} is {}: {message}", cause.describe()));
    }
    out.extend(
        health
            .waiting
            .iter()
            .filter_map(|w| container_reason(name, w)),
    );
    out
}

/// One waiting container's trouble as a sentence; `None` for waiting that resolves by itself.
fn container_reason(pod: &str, w: &Waiting) -> Option<String> {
    let (container, reason) = (&w.container, &w.reason);
    Some(match w.trouble {
        Trouble::ImagePull => format!(
            "pod {pod}: cannot pull image {} ({reason}){}",
            w.image,
            suffix(&w.message)
        ),
        Trouble::CrashLoop => {
            let last = w
                .last_exit
                .as_ref()
                .map(LastExit::describe)
                .unwrap_or_default();
            format!(
                "pod {pod}: container {container} is crash-looping ({} restarts{last}); see `kubectl logs {pod} -c {container} --previous`",
                w.restarts
            )
        }
        Trouble::CannotStart => format!(
            "pod {pod}: container {container} cannot start ({reason}){}",
            suffix(&w.message)
        ),
        Trouble::None => return None,
    })
}

/// `: message`, or nothing for an empty message.
fn suffix(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// When an event last happened (seconds since the epoch), for sorting.
pub fn event_time(event: &Event) -> i64 {
    event
        .last_timestamp
        .as_ref()
        .map(|t| t.0.as_second())
        .or_else(|| event.event_time.as_ref().map(|t| t.0.as_second()))
        .or_else(|| {
            event
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.as_second())
        })
        .unwrap_or_default()
}

/// One paragraph for an error message.
pub fn summary(reasons: &[String], fallback: &str) -> String {
    if reasons.is_empty() {
        fallback.to_string()
    } else {
        reasons.iter().map(|r| format!("\n  - {r}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).unwrap_or_default()
    }

    #[test]
    fn explains_unschedulable_pull_errors_and_crash_loops() {
        let pods = [
            pod(
                serde_json::json!({"metadata": {"name": "demo-prefill-abc"}, "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": "0/2 nodes are available: 2 Insufficient amd.com/gpu."}]}}),
            ),
            pod(
                serde_json::json!({"metadata": {"name": "demo-server-x"}, "status": {"containerStatuses": [
                {"name": "server", "image": "rocm/infera:nope", "imageID": "", "ready": false, "restartCount": 0,
                 "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}]}}),
            ),
            pod(
                serde_json::json!({"metadata": {"name": "demo-decode-y"}, "status": {"containerStatuses": [
                {"name": "engine", "image": "i", "imageID": "", "ready": false, "restartCount": 7,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                 "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}}),
            ),
        ];
        let events: Vec<Event> = vec![
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "e1"}, "type": "Warning", "reason": "FailedScheduling",
                "message": "0/2 nodes are available: 2 Insufficient amd.com/gpu.",
                "involvedObject": {"kind": "Pod", "name": "demo-prefill-abc"}
            }))
            .unwrap_or_default(),
        ];
        assert_eq!(
            reasons(&pods, &events),
            [
                "pod demo-prefill-abc is unschedulable: 0/2 nodes are available: 2 Insufficient amd.com/gpu.",
                "pod demo-server-x: cannot pull image rocm/infera:nope (ImagePullBackOff): Back-off pulling image",
                "pod demo-decode-y: container engine is crash-looping (7 restarts, last exit 137 (OOMKilled)); see `kubectl logs demo-decode-y -c engine --previous`",
            ]
        );
    }

    #[test]
    fn unschedulable_pods_say_what_the_scheduler_means() {
        let pending = |name: &str, message: &str| {
            pod(
                serde_json::json!({"metadata": {"name": name}, "status": {"conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]}}),
            )
        };
        let gated = pod(
            serde_json::json!({"metadata": {"name": "gated"}, "status": {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}}),
        );
        let pods = [
            pending(
                "nats-0",
                "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            ),
            pending(
                "worker-0",
                "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
            ),
            gated,
        ];
        assert_eq!(
            reasons(&pods, &[]),
            [
                "pod nats-0 is unschedulable (waiting for its volumes): 0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
                "pod worker-0 is unschedulable (no node matches its placement rules): 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
            ]
        );
    }

    #[test]
    fn summary_lists_reasons_or_falls_back() {
        assert_eq!(summary(&[], "no pods yet"), "no pods yet");
        assert_eq!(summary(&["a".into(), "b".into()], ""), "\n  - a\n  - b");
    }
}
