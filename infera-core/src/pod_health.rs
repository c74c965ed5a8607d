//! What a pod's status says about its health, read once: whether it is Ready, why it is not
//! scheduled (with the scheduler's message, classified), which containers wait and why, restarts.
//! The operator's status and every view of the plugin that explains pods read pods through this.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

/// A pod's health, from its status alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodHealth {
    /// The `Ready` condition is True and the pod is not being deleted.
    pub ready: bool,
    /// Containers whose status says ready, of all the pod's containers.
    pub ready_containers: usize,
    /// Containers in the pod's spec (init containers aside).
    pub containers: usize,
    /// Restarts of every container, summed.
    pub restarts: i32,
    /// Set while `PodScheduled` is False.
    pub not_scheduled: Option<NotScheduled>,
    /// Containers (init containers first) that wait with a reason.
    pub waiting: Vec<Waiting>,
    /// Every container is ready, a readiness gate is not: the kubelet's `Ready` reason
    /// `ReadinessGatesNotReady` (kubernetes 1.36 `pkg/kubelet/status/generate.go:123-167`). Worker
    /// pods wait there until the router has registered them (`naming::REGISTERED_CONDITION`).
    pub gates_pending: bool,
}

/// Why a pod has no node yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotScheduled {
    /// The condition's reason, e.g. `Unschedulable` or `SchedulingGated`.
    pub reason: String,
    /// The scheduler's message, e.g. `0/2 nodes are available: 2 Insufficient amd.com/gpu.`
    pub message: String,
    /// What the message means; `None` unless the reason is `Unschedulable`.
    pub cause: Option<SchedulingCause>,
}

/// What keeps the scheduler from placing a pod, from the filter plugins' messages
/// (kubernetes `pkg/scheduler/framework/plugins/*`: noderesources, volumebinding, nodeaffinity,
/// tainttoleration, nodeunschedulable, interpodaffinity, podtopologyspread).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedulingCause {
    /// No node has enough GPUs, CPU, memory, storage or pod slots (`Insufficient amd.com/gpu`,
    /// `Too many pods`).
    Capacity,
    /// A PersistentVolumeClaim is not bound, or no volume fits (`pod has unbound immediate
    /// PersistentVolumeClaims`).
    Volumes,
    /// Nodes exist but the pod may not go there: node selector or affinity, taints, cordoned
    /// nodes, pod (anti-)affinity, topology spread.
    Placement,
    /// Anything else.
    Other,
}

/// A container that is not running, or runs again after a failed run without being ready, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The container's name.
    pub container: String,
    /// The image it runs (or tries to pull).
    pub image: String,
    /// The kubelet's reason, e.g. `ImagePullBackOff`, `CrashLoopBackOff`, or
    /// [`Waiting::RESTARTED`].
    pub reason: String,
    /// The kubelet's message, often empty.
    pub message: String,
    /// Whether this needs a person.
    pub trouble: Trouble,
    /// How often the container restarted.
    pub restarts: i32,
    /// How the last run ended, when the container ran before.
    pub last_exit: Option<LastExit>,
}

/// How a container's last run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastExit {
    /// Its exit code.
    pub code: i32,
    /// The kubelet's reason, e.g. `Error`, `OOMKilled`.
    pub reason: String,
    /// The last line of its termination message (the tail of its log when it failed silently,
    /// as the pods we render ask for), at most [`LastExit::MESSAGE_CHARS`] characters; empty when
    /// there is none.
    pub message: String,
}

impl LastExit {
    /// The longest message kept: one line of a status or a condition.
    pub const MESSAGE_CHARS: usize = 300;

    /// `, last exit 2 (Error): <message>`, as `status` and the conditions append it.
    pub fn describe(&self) -> String {
        let mut out = format!(", last exit {} ({})", self.code, self.reason);
        if !self.message.is_empty() {
            out.push_str(": ");
            out.push_str(&self.message);
        }
        out
    }
}

/// The last non-empty line of a termination message, shortened to `max` characters (keeping its
/// end, where a Python traceback names the error).
fn last_line(message: &str, max: usize) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or_default();
    let chars = line.chars().count();
    if chars <= max {
        line.to_string()
    } else {
        let tail: String = line.chars().skip(chars - (max - 1)).collect();
        format!("…{tail}")
    }
}

/// The kinds of waiting that need a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    /// The image cannot be pulled.
    ImagePull,
    /// The container keeps exiting.
    CrashLoop,
    /// The container cannot be created or started (bad config, missing ConfigMap, ...).
    CannotStart,
    /// Waiting that resolves by itself, e.g. `ContainerCreating`.
    None,
}

/// The kubelet's reason for a pod whose containers are ready and a readiness gate is not.
const READINESS_GATES_NOT_READY: &str = "ReadinessGatesNotReady";

impl PodHealth {
    /// Reads a pod's status.
    pub fn of(pod: &Pod) -> PodHealth {
        let status = pod.status.as_ref();
        let conditions = status
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default();
        let condition = |type_: &str| conditions.iter().find(|c| c.type_ == type_);
        let statuses: Vec<&ContainerStatus> = status
            .into_iter()
            .flat_map(|s| {
                s.init_container_statuses
                    .iter()
                    .flatten()
                    .chain(s.container_statuses.iter().flatten())
            })
            .collect();
        let main: Vec<&ContainerStatus> = status
            .and_then(|s| s.container_statuses.as_ref())
            .into_iter()
            .flatten()
            .collect();
        PodHealth {
            ready: pod.metadata.deletion_timestamp.is_none()
                && condition("Ready").is_some_and(|c| c.status == "True"),
            ready_containers: main.iter().filter(|c| c.ready).count(),
            containers: pod.spec.as_ref().map_or(main.len(), |s| s.containers.len()),
            restarts: main.iter().map(|c| c.restart_count).sum(),
            not_scheduled: condition("PodScheduled")
                .filter(|c| c.status == "False")
                .map(|c| {
                    let reason = c.reason.clone().unwrap_or_default();
                    let message = c.message.clone().unwrap_or_default();
                    let cause = (reason == "Unschedulable").then(|| SchedulingCause::of(&message));
                    NotScheduled {
                        reason,
                        message,
                        cause,
                    }
                }),
            waiting: statuses.into_iter().filter_map(Waiting::of).collect(),
            gates_pending: condition("Ready").is_some_and(|c| {
                c.status != "True" && c.reason.as_deref() == Some(READINESS_GATES_NOT_READY)
            }),
        }
    }

    /// The one word that best says why the pod is not running or not ready: the first waiting
    /// reason, else why it is not scheduled, else a readiness gate; empty when none applies.
    pub fn reason(&self) -> &str {
        self.waiting
            .first()
            .map(|w| w.reason.as_str())
            .or_else(|| self.not_scheduled.as_ref().map(|n| n.reason.as_str()))
            .or(self.gates_pending.then_some(READINESS_GATES_NOT_READY))
            .unwrap_or_default()
    }

    /// The scheduler's verdict when it found no node for the pod.
    pub fn unschedulable(&self) -> Option<(SchedulingCause, &str)> {
        let n = self.not_scheduled.as_ref()?;
        Some((n.cause?, n.message.as_str()))
    }

    /// Whether a container of the pod is in `CrashLoopBackOff`.
    pub fn crash_looping(&self) -> bool {
        self.waiting.iter().any(|w| w.trouble == Trouble::CrashLoop)
    }
}

impl SchedulingCause {
    /// Classifies a scheduler message. Volumes come first: a pod whose claim is unbound fails the
    /// scheduler's pre-filter, so nothing else was checked. Capacity comes before placement: when
    /// some nodes lack GPUs and the rest are excluded, adding capacity is what helps.
    pub fn of(message: &str) -> SchedulingCause {
        const VOLUMES: [&str; 6] = [
            "unbound immediate PersistentVolumeClaims",
            "didn't find available persistent volumes",
            "PersistentVolume's node affinity",
            "persistentvolumeclaim",
            "pvc(s) bound to non-existent pv(s)",
            "free storage",
        ];
        const CAPACITY: [&str; 2] = ["Insufficient ", "Too many pods"];
        const PLACEMENT: [&str; 7] = [
            "node affinity/selector",
            "taint",
            "were unschedulable",
            "pod affinity rules",
            "anti-affinity rules",
            "topology spread constraints",
            "requested node name",
        ];
        let has = |needles: &[&str]| needles.iter().any(|n| message.contains(n));
        if has(&VOLUMES) {
            Self::Volumes
        } else if has(&CAPACITY) {
            Self::Capacity
        } else if has(&PLACEMENT) {
            Self::Placement
        } else {
            Self::Other
        }
    }

    /// What the cause means, for a status message: `1 pod <this>: <scheduler message>`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Capacity => "unschedulable",
            Self::Volumes => "unschedulable (waiting for its volumes)",
            Self::Placement => "unschedulable (no node matches its placement rules)",
            Self::Other => "unschedulable",
        }
    }
}

impl Waiting {
    /// The reason given to a container that runs again after a failed run and is not ready yet:
    /// a crash loop between two back-offs, when the kubelet reports it `Running`. (Right after a
    /// failed run, before the back-off, the kubelet's `terminated` reason is given, e.g. `Error`.)
    pub const RESTARTED: &str = "Restarted";

    fn of(status: &ContainerStatus) -> Option<Waiting> {
        let state = status.state.as_ref()?;
        // The run that ended last: the current state right after an exit, else the last state.
        let last_exit = state
            .terminated
            .as_ref()
            .or_else(|| status.last_state.as_ref()?.terminated.as_ref())
            .map(|t| LastExit {
                code: t.exit_code,
                reason: t.reason.clone().unwrap_or_else(|| "Error".into()),
                message: last_line(
                    t.message.as_deref().unwrap_or_default(),
                    LastExit::MESSAGE_CHARS,
                ),
            });
        let (reason, message, trouble) = match &state.waiting {
            Some(waiting) => {
                let reason = waiting.reason.clone()?;
                let trouble = match reason.as_str() {
                    "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName"
                    | "ErrImageNeverPull" => Trouble::ImagePull,
                    "CrashLoopBackOff" => Trouble::CrashLoop,
                    "CreateContainerConfigError" | "CreateContainerError" | "RunContainerError" => {
                        Trouble::CannotStart
                    }
                    _ => Trouble::None,
                };
                (reason, waiting.message.clone().unwrap_or_default(), trouble)
            }
            // Exited with an error again, before the kubelet's back-off: the same loop. (A first
            // exit is not a loop yet, nor the end of a container that is never restarted.)
            None if state.terminated.is_some() && status.restart_count > 0 => {
                let exit = last_exit.as_ref().filter(|e| e.code != 0)?;
                (exit.reason.clone(), String::new(), Trouble::CrashLoop)
            }
            None if state.running.is_some()
                && !status.ready
                && status.restart_count > 0
                && last_exit.as_ref().is_some_and(|e| e.code != 0) =>
            {
                (Self::RESTARTED.into(), String::new(), Trouble::CrashLoop)
            }
            None => return None,
        };
        Some(Waiting {
            container: status.name.clone(),
            image: status.image.clone(),
            message,
            reason,
            trouble,
            restarts: status.restart_count,
            last_exit,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).unwrap_or_default()
    }

    #[test]
    fn ready_pod() {
        let health = PodHealth::of(&pod(json!({
            "spec": {"containers": [{"name": "engine"}, {"name": "infera-frontend"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
                "containerStatuses": [
                    {"name": "engine", "image": "i", "imageID": "", "ready": true, "restartCount": 2},
                    {"name": "infera-frontend", "image": "i", "imageID": "", "ready": false, "restartCount": 1}
                ]
            }
        })));
        assert_eq!(
            health,
            PodHealth {
                ready: true,
                ready_containers: 1,
                containers: 2,
                restarts: 3,
                not_scheduled: None,
                waiting: vec![],
                gates_pending: false,
            }
        );
        assert_eq!(health.reason(), "");
    }

    #[test]
    fn a_pod_whose_readiness_gate_is_pending_says_so() {
        let health = PodHealth::of(&pod(json!({
            "spec": {"containers": [{"name": "engine"}],
                "readinessGates": [{"conditionType": "infera.amd.com/registered"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady"}],
                "containerStatuses": [
                    {"name": "engine", "image": "i", "imageID": "", "ready": true, "restartCount": 0}
                ]
            }
        })));
        assert!(!health.ready);
        assert_eq!(health.ready_containers, 1);
        assert_eq!(health.reason(), "ReadinessGatesNotReady");
    }

    #[test]
    fn terminating_pod_is_not_ready() {
        let health = PodHealth::of(&pod(json!({
            "metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        })));
        assert!(!health.ready);
    }

    #[test]
    fn unschedulable_pod() {
        let message = "0/2 nodes are available: 2 Insufficient amd.com/gpu.";
        let health = PodHealth::of(&pod(json!({
            "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]}
        })));
        assert_eq!(
            health.unschedulable(),
            Some((SchedulingCause::Capacity, message))
        );
        assert_eq!(health.reason(), "Unschedulable");
    }

    #[test]
    fn gated_pod_is_not_unschedulable() {
        let health = PodHealth::of(&pod(json!({
            "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}
        })));
        assert_eq!(health.unschedulable(), None);
        assert_eq!(health.reason(), "SchedulingGated");
    }

    #[test]
    fn scheduler_messages() {
        let cases = [
            (
                "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
                SchedulingCause::Volumes,
            ),
            (
                "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.",
                SchedulingCause::Volumes,
            ),
            (
                "0/2 nodes are available: 1 Insufficient amd.com/gpu, 1 node(s) didn't match Pod's node affinity/selector.",
                SchedulingCause::Capacity,
            ),
            (
                "0/1 nodes are available: 1 Too many pods.",
                SchedulingCause::Capacity,
            ),
            (
                "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
                SchedulingCause::Placement,
            ),
            (
                "0/1 nodes are available: 1 node(s) had untolerated taint(s).",
                SchedulingCause::Placement,
            ),
            (
                "0/1 nodes are available: 1 node(s) were unschedulable.",
                SchedulingCause::Placement,
            ),
            ("something new", SchedulingCause::Other),
        ];
        for (message, cause) in cases {
            assert_eq!(SchedulingCause::of(message), cause, "{message}");
        }
    }

    #[test]
    fn waiting_containers() {
        let health = PodHealth::of(&pod(json!({
            "status": {
                "initContainerStatuses": [
                    {"name": "init", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
                     "state": {"waiting": {"reason": "PodInitializing"}}}
                ],
                "containerStatuses": [
                    {"name": "engine", "image": "rocm/x", "imageID": "", "ready": false, "restartCount": 4,
                     "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
                     "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}},
                    {"name": "infera-frontend", "image": "bad", "imageID": "", "ready": false, "restartCount": 0,
                     "state": {"waiting": {"reason": "ImagePullBackOff"}}}
                ]
            }
        })));
        let summary: Vec<(&str, &str, Trouble)> = health
            .waiting
            .iter()
            .map(|w| (w.container.as_str(), w.reason.as_str(), w.trouble))
            .collect();
        assert_eq!(
            summary,
            [
                ("init", "PodInitializing", Trouble::None),
                ("engine", "CrashLoopBackOff", Trouble::CrashLoop),
                ("infera-frontend", "ImagePullBackOff", Trouble::ImagePull),
            ]
        );
        assert_eq!(
            health.waiting[1].last_exit,
            Some(LastExit {
                code: 137,
                reason: "OOMKilled".into(),
                message: String::new()
            })
        );
        assert_eq!(health.waiting[1].restarts, 4);
        assert!(health.crash_looping());
        assert_eq!(health.reason(), "PodInitializing");
        assert_eq!(health.restarts, 4);
    }

    #[test]
    fn last_exit_keeps_the_last_line_of_the_log_tail() {
        let tail = "Traceback (most recent call last):\n  File \"x.py\", line 1\nsglang serve: error: unrecognized arguments: --bogus\n\n";
        assert_eq!(
            last_line(tail, LastExit::MESSAGE_CHARS),
            "sglang serve: error: unrecognized arguments: --bogus"
        );
        assert_eq!(last_line("", 10), "");
        assert_eq!(last_line("0123456789abcdef", 6), "…bcdef");
        let exit = LastExit {
            code: 2,
            reason: "Error".into(),
            message: "boom".into(),
        };
        assert_eq!(exit.describe(), ", last exit 2 (Error): boom");
        let silent = LastExit {
            message: String::new(),
            ..exit
        };
        assert_eq!(silent.describe(), ", last exit 2 (Error)");
    }

    #[test]
    fn a_container_running_again_after_a_failed_run_is_in_its_crash_loop() {
        let health = PodHealth::of(&pod(json!({
            "spec": {"containers": [{"name": "engine"}]},
            "status": {"containerStatuses": [
                {"name": "engine", "image": "i", "imageID": "", "ready": false, "restartCount": 2,
                 "state": {"running": {}},
                 "lastState": {"terminated": {"exitCode": 2, "reason": "Error",
                                              "message": "usage: ...\nerror: unrecognized arguments: --x\n"}}}
            ]}
        })));
        assert_eq!(health.reason(), Waiting::RESTARTED);
        assert!(health.crash_looping());
        assert_eq!(
            health.waiting[0].last_exit.as_ref().map(LastExit::describe),
            Some(", last exit 2 (Error): error: unrecognized arguments: --x".into())
        );
        // Just exited with an error: the run that ended is the one to quote.
        let health = PodHealth::of(&pod(json!({
            "status": {"containerStatuses": [
                {"name": "engine", "image": "i", "imageID": "", "ready": false, "restartCount": 1,
                 "state": {"terminated": {"exitCode": 1, "reason": "Error", "message": "RuntimeError: died\n"}},
                 "lastState": {"terminated": {"exitCode": 2, "message": "older"}}}
            ]}
        })));
        assert_eq!(health.reason(), "Error");
        assert_eq!(
            health.waiting[0].last_exit.as_ref().map(LastExit::describe),
            Some(", last exit 1 (Error): RuntimeError: died".into())
        );
        // Running again after a clean exit, or ready again: nothing to report.
        for (ready, code) in [(false, 0), (true, 2)] {
            let health = PodHealth::of(&pod(json!({
                "status": {"containerStatuses": [
                    {"name": "engine", "image": "i", "imageID": "", "ready": ready, "restartCount": 1,
                     "state": {"running": {}}, "lastState": {"terminated": {"exitCode": code}}}
                ]}
            })));
            assert!(health.waiting.is_empty(), "ready {ready}, exit {code}");
        }
    }
}
