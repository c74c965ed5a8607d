//! Pod Security admission as the API server words it: the namespace label that sets the level it
//! enforces, and what a refusal says (k8s.io/pod-security-admission `admission/admission.go`,
//! `violates PodSecurity %q: %s`), which reaches us in a dry run's error (`doctor`) and in a
//! Deployment's `ReplicaFailure` condition (the operator).

/// The namespace label that sets the level Pod Security enforces
/// (kubernetes.io/docs/concepts/security/pod-security-admission).
pub const ENFORCE_LABEL: &str = "pod-security.kubernetes.io/enforce";

/// What a Pod Security refusal says, before the level.
const REFUSAL: &str = "violates PodSecurity";

/// A Pod Security refusal in `message`, from its verdict on (`violates PodSecurity
/// "restricted:latest": …`): the API's `pods "…" is forbidden: ` before it names a pod the
/// reader never made.
pub fn refusal(message: &str) -> Option<&str> {
    message.find(REFUSAL).map(|at| &message[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_reads_from_its_verdict_on() {
        let message = r#"pods "demo-decode-5d9f-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true"#;
        assert_eq!(
            refusal(message),
            Some(r#"violates PodSecurity "restricted:latest": runAsNonRoot != true"#)
        );
        assert_eq!(refusal("exceeded quota: gpus"), None);
    }
}
