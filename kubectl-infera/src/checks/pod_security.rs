//! INF601: for a `--for FILE` spec, whether the namespace's Pod Security admission admits every
//! pod the spec renders. The answer is the API server's own: each pod template goes through a
//! server-side dry run of a Pod (`dryRun=All`), which runs the PodSecurity admission plugin with
//! the namespace's `enforce` level and the cluster's defaults (see [`infera_core::pod_security`]).

use infera_core::pod_security::{ENFORCE_LABEL, refusal};

use super::{Check, Facts, check};

/// What doctor learnt from the namespace and the dry runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSecurityFacts {
    /// Whether the namespace exists (nothing is dry-run in one that does not).
    pub namespace_exists: bool,
    /// Its `enforce` label, when it has one.
    pub enforce: Option<String>,
    /// Each pod the spec renders, as `Kind name (role)`, with the dry run's error, if any.
    pub pods: Vec<(String, Option<String>)>,
}

/// INF601, only for a `--for` spec.
pub(super) fn check_admission(f: &Facts) -> Option<Check> {
    let spec = f.spec.as_ref()?;
    let c = check("INF601", "security", "pod-security");
    let facts = match f.pod_security.as_ref()? {
        Ok(facts) => facts,
        Err(e) => return Some(c.unreadable("dry-running the pods of the spec", e)),
    };
    let namespace = &spec.namespace;
    if !facts.namespace_exists {
        return Some(c.skip(format!(
            "namespace {namespace} does not exist yet: its Pod Security level is checked once it does"
        )));
    }
    let level = facts.enforce.as_deref().unwrap_or("the cluster's default");
    let (mut denied, mut other) = (Vec::new(), Vec::new());
    for (pod, error) in &facts.pods {
        let Some(error) = error else { continue };
        match refusal(error) {
            Some(verdict) => denied.push(format!("{pod}: {verdict}")),
            None => other.push(format!("{pod}: {error}")),
        }
    }
    // baseline admits the engines as the images run them, unless they add IPC_LOCK (RDMA) or
    // mount a host path (a `hostPath` model).
    let needs = if denied
        .iter()
        .any(|line| line.contains("IPC_LOCK") || line.contains("hostPath"))
    {
        "privileged"
    } else {
        "baseline"
    };
    Some(if !denied.is_empty() {
        c.fail(
            format!(
                "Pod Security ({ENFORCE_LABEL}={level}) on namespace {namespace} refuses {} of the {} pod(s) of {}",
                denied.len(),
                facts.pods.len(),
                spec.name
            ),
            format!(
                "the engines run the image as built and need `{needs}` (docs/security.md lists what each pod needs): deploy to a namespace that allows it, or label this one: kubectl label namespace {namespace} {ENFORCE_LABEL}={needs} --overwrite"
            ),
        )
        .details(denied)
    } else if !other.is_empty() {
        c.warn(
            format!("cannot check: dry runs of the pods of {} failed", spec.name),
            "run doctor as a user who may create pods in the namespace",
        )
        .details(other)
    } else {
        c.pass(format!(
            "Pod Security ({ENFORCE_LABEL}={level}) on namespace {namespace} admits the {} pod(s) of {}",
            facts.pods.len(),
            spec.name
        ))
    })
}
