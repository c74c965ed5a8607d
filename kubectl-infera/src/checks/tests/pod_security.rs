use super::{by_id, healthy, spec};
use crate::checks::{Severity, evaluate, pod_security::PodSecurityFacts};

/// The checks of the MI300X example with these Pod Security facts.
fn inf601(facts: Result<PodSecurityFacts, String>) -> crate::checks::Check {
    let mut f = healthy();
    f.spec = Some(spec("pd-mi300x.yaml"));
    f.pod_security = Some(facts);
    by_id(&evaluate(&f), "INF601").clone()
}

fn refusal(what: &str) -> Option<String> {
    Some(format!(
        "forbidden: pods \"x-dry-run\" is forbidden: violates PodSecurity \"restricted:latest\": {what}"
    ))
}

#[test]
fn refusals_are_named_from_the_verdict_on_with_the_level_the_engines_need() {
    let facts = |decode: Option<String>| PodSecurityFacts {
        namespace_exists: true,
        enforce: Some("restricted".into()),
        pods: vec![
            ("StatefulSet mi300x-nats (pod)".into(), None),
            ("Deployment mi300x-decode (pod)".into(), decode),
        ],
    };
    let c = inf601(Ok(facts(refusal("runAsNonRoot != true"))));
    assert_eq!(c.severity, Severity::Fail);
    assert_eq!(
        c.message,
        "Pod Security (pod-security.kubernetes.io/enforce=restricted) on namespace default refuses 1 of the 2 pod(s) of mi300x"
    );
    assert_eq!(
        c.details,
        [
            "Deployment mi300x-decode (pod): violates PodSecurity \"restricted:latest\": runAsNonRoot != true"
        ]
    );
    assert!(
        c.hint
            .as_deref()
            .is_some_and(|h| h.contains("=baseline --overwrite"))
    );

    let c = inf601(Ok(facts(refusal(
        "container \"engine\" must not include \"IPC_LOCK\"",
    ))));
    assert!(
        c.hint
            .as_deref()
            .is_some_and(|h| h.contains("=privileged --overwrite"))
    );

    let c = inf601(Ok(facts(Some(
        "forbidden: User \"bob\" cannot create pods".into(),
    ))));
    assert_eq!(c.severity, Severity::Warn);
    assert_eq!(
        c.details,
        ["Deployment mi300x-decode (pod): forbidden: User \"bob\" cannot create pods"]
    );

    let c = inf601(Ok(facts(None)));
    assert_eq!(c.severity, Severity::Pass);
}

#[test]
fn a_namespace_not_created_yet_is_skipped_and_an_unreadable_one_warns() {
    assert_eq!(
        inf601(Ok(PodSecurityFacts::default())).severity,
        Severity::Skip
    );
    let c = inf601(Err("forbidden: cannot get namespaces".into()));
    assert_eq!(c.severity, Severity::Warn);
    assert!(
        c.message.contains("forbidden: cannot get namespaces"),
        "{}",
        c.message
    );
}
