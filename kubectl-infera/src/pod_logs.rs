//! Pods' logs as `logs` and `report` read them, pure: which containers a pod has to read, where a
//! line comes from (its prefix), the API server's timestamp in front of it, the tails of many
//! containers merged into one timeline, passwords in URLs hidden, and the operator's lines about
//! one deployment.

use std::borrow::Cow;

use infera_core::naming::{LABEL_DEPLOYMENT, LABEL_SERVICE, LWS_LABEL_WORKER_INDEX};
use k8s_openapi::{
    api::core::v1::{ContainerStatus, Pod},
    jiff::Timestamp,
};
use kube::ResourceExt;

/// Where a log line comes from: one container of one pod.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    /// The pool (the spec's service name, or `nats`, `epp`, `model`), or `operator`.
    pub pool: String,
    pub pod: String,
    /// The container, named only when the pod has more than one.
    pub container: Option<String>,
    /// The rank in a multi-node group (the LeaderWorkerSet's worker index).
    pub rank: Option<String>,
}

impl Source {
    /// `[pool/pod]`, `[pool/pod/container]`, `[pool/pod rank 1]`.
    pub fn prefix(&self) -> String {
        let mut prefix = format!("[{}/{}", self.pool, self.pod);
        if let Some(container) = &self.container {
            prefix.push('/');
            prefix.push_str(container);
        }
        if let Some(rank) = &self.rank {
            prefix.push_str(" rank ");
            prefix.push_str(rank);
        }
        prefix.push(']');
        prefix
    }
}

/// One container of a pod, as `logs` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub source: Source,
    /// The container's name in the pod (for the log request).
    pub name: String,
    /// Has it started (running, or terminated): is there a log to read?
    pub started: bool,
    /// Why not, when it has not: the waiting reason (`ContainerCreating`, `ImagePullBackOff`…).
    pub waiting: Option<String>,
    /// Restarts so far: a new instance is a new log.
    pub restarts: i32,
}

/// The containers of a pod whose logs `logs` reads: its init containers that have started, then
/// its containers. `pool` names the pods that carry no pool label (the operator's).
pub fn containers(pod: &Pod, pool: Option<&str>) -> Vec<Container> {
    let labels = pod.labels();
    let pool = labels
        .get(LABEL_SERVICE)
        .map(String::as_str)
        .or(pool)
        .unwrap_or("-")
        .to_string();
    let rank = labels.get(LWS_LABEL_WORKER_INDEX).cloned();
    let status = pod.status.as_ref();
    let statuses = |init: bool| -> &[ContainerStatus] {
        let list = status.and_then(|s| {
            if init {
                s.init_container_statuses.as_ref()
            } else {
                s.container_statuses.as_ref()
            }
        });
        list.map(Vec::as_slice).unwrap_or_default()
    };
    let spec = pod.spec.as_ref();
    let names = |init: bool| -> Vec<String> {
        let list = spec.and_then(|s| {
            if init {
                s.init_containers.as_ref()
            } else {
                Some(&s.containers)
            }
        });
        list.into_iter().flatten().map(|c| c.name.clone()).collect()
    };
    let mut found = Vec::new();
    for init in [true, false] {
        for name in names(init) {
            let status = statuses(init).iter().find(|s| s.name == name);
            let state = status.and_then(|s| s.state.as_ref());
            let started = state.is_some_and(|s| s.running.is_some() || s.terminated.is_some());
            if init && !started {
                continue;
            }
            let waiting = state
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.clone());
            found.push((
                name,
                started,
                waiting,
                status.map_or(0, |s| s.restart_count),
            ));
        }
    }
    let named = found.len() > 1;
    found
        .into_iter()
        .map(|(name, started, waiting, restarts)| Container {
            source: Source {
                pool: pool.clone(),
                pod: pod.name_any(),
                container: named.then(|| name.clone()),
                rank: rank.clone(),
            },
            name,
            started,
            waiting,
            restarts,
        })
        .collect()
}

/// Splits the timestamp the API server puts in front of each line (`timestamps=true`, RFC 3339
/// with nanoseconds) off the line: `(time, text)`; no time when the line has none.
pub fn split_timestamp(line: &str) -> (Option<Timestamp>, &str) {
    let (first, rest) = line.split_once(' ').unwrap_or((line, ""));
    match first.parse::<Timestamp>() {
        Ok(time) => (Some(time), rest),
        Err(_) => (None, line),
    }
}

/// A line of a container's log, with the index of its [`Source`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub time: Option<Timestamp>,
    pub source: usize,
    /// The line as the API server sent it (with its timestamp, when asked for).
    pub raw: String,
}

/// One timeline from the tails of many containers: by time, each container's lines in their own
/// order (a line without a time keeps the time of the line before it).
pub fn merge(tails: Vec<Vec<Line>>) -> Vec<Line> {
    let mut all: Vec<(Timestamp, Line)> = Vec::new();
    for tail in tails {
        let mut last = Timestamp::MIN;
        for line in tail {
            last = line.time.unwrap_or(last);
            all.push((last, line));
        }
    }
    all.sort_by_key(|(time, _)| *time);
    all.into_iter().map(|(_, line)| line).collect()
}

/// The line with the password of every `scheme://user:password@host` in it shown as `***`:
/// upstream's router logs the NATS URL it connects to, credentials included.
pub fn redact(line: &str) -> Cow<'_, str> {
    if !line.contains("://") {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || "/?#\"'<>,;[]()".contains(c))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        let userinfo = authority
            .rfind('@')
            .and_then(|at| Some((authority[..at].find(':')?, at)));
        match userinfo {
            Some((colon, at)) if colon + 1 < at => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(line)
    }
}

/// Fields of the operator's JSON lines that [`operator_line`] does not repeat.
const OPERATOR_SHOWN: [&str; 8] = [
    "timestamp",
    "level",
    "message",
    "target",
    "namespace",
    "deployment",
    "span",
    "spans",
];

/// The operator's log line (without the API server's timestamp) when it is about the deployment
/// `namespace/name`, as shown: a JSON line (the operator's default `--log-format json`) by its
/// `namespace` and `deployment` fields, as `LEVEL message key=value…` on one line; a text line by the
/// `namespace=… deployment=…` in it, as it is. `None` for lines about anything else.
pub fn operator_line(line: &str, namespace: &str, name: &str) -> Option<String> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(line)
    else {
        let words: Vec<&str> = line.split_whitespace().collect();
        let about = words.contains(&format!("namespace={namespace}").as_str())
            && words.contains(&format!("deployment={name}").as_str());
        return about.then(|| line.to_string());
    };
    let text = |key: &str| fields.get(key).and_then(serde_json::Value::as_str);
    if text("namespace") != Some(namespace) || text("deployment") != Some(name) {
        return None;
    }
    let mut shown = format!(
        "{} {}",
        text("level").unwrap_or("?"),
        text("message").unwrap_or_default()
    );
    for (key, value) in &fields {
        if OPERATOR_SHOWN.contains(&key.as_str()) {
            continue;
        }
        let value = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        shown.push_str(&format!(" {key}={value}"));
    }
    // One line as the operator wrote one: a message of several lines (a state's, one per pool)
    // keeps its lines, separated by `; `, behind the one prefix.
    Some(shown.replace('\n', "; "))
}

/// The label selector of the graph's pods: the deployment's, then only the named pools, then only
/// one rank of the multi-node pools.
pub fn selector(name: &str, pools: &[String], rank: Option<u32>) -> String {
    let mut selector = format!("{LABEL_DEPLOYMENT}={name}");
    if !pools.is_empty() {
        selector.push_str(&format!(",{LABEL_SERVICE} in ({})", pools.join(",")));
    }
    if let Some(rank) = rank {
        selector.push_str(&format!(",{LWS_LABEL_WORKER_INDEX}={rank}"));
    }
    selector
}

#[cfg(test)]
mod tests;
