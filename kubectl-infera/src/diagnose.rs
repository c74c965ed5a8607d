//! Why is it not ready yet? Pure explanations from pods and warning events, used when `--wait`
//! gives up (and while it waits): unschedulable pods with the scheduler's message, image pull
//! errors, crash loops, and the most recent warning events.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Event, Pod};

/// At most this many reasons are reported.
const MAX_REASONS: usize = 6;

/// Reasons the pods are not ready, most specific first, deduplicated.
pub fn reasons(pods: &[Pod], events: &[Event]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |line: String, out: &mut Vec<String>| {
        if seen.insert(line.clone()) {
            out.push(line);
        }
    };
    for pod in pods {
        let name = pod.metadata.name.as_deref().unwrap_or("?");
        let Some(status) = &pod.status else { continue };
        for condition in status.conditions.iter().flatten() {
            if condition.type_ == "PodScheduled"
                && condition.status == "False"
                && condition.reason.as_deref() == Some("Unschedulable")
            {
                let message = condition.message.as_deref().unwrap_or("no node fits");
                push(format!("pod {name} is unschedulable: {message}"), &mut out);
            }
        }
        let containers = status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(status.container_statuses.iter().flatten());
        for container in containers {
            let waiting = container.state.as_ref().and_then(|s| s.waiting.as_ref());
            let reason = waiting
                .and_then(|w| w.reason.as_deref())
                .unwrap_or_default();
            let message = waiting
                .and_then(|w| w.message.as_deref())
                .unwrap_or_default();
            match reason {
                "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName" | "ErrImageNeverPull" => {
                    push(
                        format!(
                            "pod {name}: cannot pull image {} ({reason}){}",
                            container.image,
                            suffix(message)
                        ),
                        &mut out,
                    )
                }
                "CrashLoopBackOff" => {
                    let last = container
                        .last_state
                        .as_ref()
                        .and_then(|s| s.terminated.as_ref())
                        .map(|t| {
                            format!(
                                ", last exit code {} ({})",
                                t.exit_code,
                                t.reason.as_deref().unwrap_or("Error")
                            )
                        })
                        .unwrap_or_default();
                    push(
                        format!(
                            "pod {name}: container {} is crash-looping ({} restarts{last}); see `kubectl logs {name} -c {} --previous`",
                            container.name, container.restart_count, container.name
                        ),
                        &mut out,
                    );
                }
                "CreateContainerConfigError" | "CreateContainerError" | "RunContainerError" => {
                    push(
                        format!(
                            "pod {name}: container {} cannot start ({reason}){}",
                            container.name,
                            suffix(message)
                        ),
                        &mut out,
                    );
                }
                _ => {}
            }
        }
    }
    let mut warnings: Vec<&Event> = events
        .iter()
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
                "pod demo-decode-y: container engine is crash-looping (7 restarts, last exit code 137 (OOMKilled)); see `kubectl logs demo-decode-y -c engine --previous`",
            ]
        );
    }

    #[test]
    fn summary_lists_reasons_or_falls_back() {
        assert_eq!(summary(&[], "no pods yet"), "no pods yet");
        assert_eq!(summary(&["a".into(), "b".into()], ""), "\n  - a\n  - b");
    }
}
