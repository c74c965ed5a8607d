//! `services.X.health`: the overrides of how an engine container is probed and stopped. What
//! each field defaults to is the engine's contract, which the renderer holds; here each field is
//! checked against the schema's limits and parsed.

use super::rules::startup_out_of_range;
use super::{
    DEFAULT_DRAIN_SECONDS, Errors, Health, Liveness,
    limits::{MAX_DRAIN_SECONDS, MAX_PROBE_PATH_LENGTH, MAX_PROBE_TIMEOUT, MAX_STARTUP_SECONDS},
    syntax::{check_duration, check_max_length, check_range},
};
use crate::types::HealthSpec;

/// `livenessPath` that turns the liveness probe off.
pub(crate) const NO_LIVENESS: &str = "none";

/// The settings of `health` at `path` (`spec.services.<name>.health`), or the defaults.
pub(super) fn settings(errors: &mut Errors, path: &str, health: Option<&HealthSpec>) -> Health {
    let Some(health) = health else {
        return Health::default();
    };
    let startup_timeout = health
        .startup_timeout
        .as_deref()
        .and_then(|value| startup_timeout(errors, &format!("{path}.startupTimeout"), value));
    let readiness_path = health.readiness_path.as_ref().filter(|value| {
        probe_path(
            errors,
            &format!("{path}.readinessPath"),
            value,
            "is not an HTTP path; start it with / and leave out spaces, e.g. /health",
        )
    });
    let liveness = health.liveness_path.as_deref().and_then(|value| {
        if value == NO_LIVENESS {
            return Some(Liveness::Off);
        }
        probe_path(
            errors,
            &format!("{path}.livenessPath"),
            value,
            "is neither an HTTP path nor none; start it with / and leave out spaces, e.g. /ping, or write none for no liveness probe",
        )
        .then(|| Liveness::Path(value.to_string()))
    });
    let timeout_seconds = health.timeout_seconds.filter(|&value| {
        check_range(
            errors,
            &format!("{path}.timeoutSeconds"),
            value,
            1..=MAX_PROBE_TIMEOUT,
            "must be at least 1; set how many seconds one probe request may take",
        )
    });
    let drain_seconds = health
        .drain_seconds
        .filter(|&value| {
            check_range(
                errors,
                &format!("{path}.drainSeconds"),
                value,
                0..=MAX_DRAIN_SECONDS,
                "must be 0 or more; set how many seconds a stopping pod may finish its requests",
            )
        })
        .unwrap_or(DEFAULT_DRAIN_SECONDS);
    Health {
        startup_timeout,
        readiness_path: readiness_path.cloned(),
        liveness,
        timeout_seconds,
        drain_seconds,
    }
}

/// Seconds of a startup timeout within 1s to 24h, or `None` after reporting why not.
fn startup_timeout(errors: &mut Errors, path: &str, value: &str) -> Option<i32> {
    check_duration(
        errors,
        path,
        value,
        1..=MAX_STARTUP_SECONDS,
        &startup_out_of_range(),
    )
}

/// True when `value` has the form of [`super::limits::PROBE_PATH_PATTERN`] and fits its length
/// limit; otherwise reports it at `path`, with `not_a_path` when the form is wrong.
fn probe_path(errors: &mut Errors, path: &str, value: &str, not_a_path: &str) -> bool {
    let form_ok = value.starts_with('/') && value.bytes().all(|b| b.is_ascii_graphic());
    if !form_ok {
        errors.push(path, format!("{value:?} {not_a_path}"));
    }
    let length_ok = value.chars().count() <= MAX_PROBE_PATH_LENGTH;
    check_max_length(errors, path, value, MAX_PROBE_PATH_LENGTH);
    form_ok && length_ok
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{super::found, *};

    fn parsed(health: Value) -> (Health, Vec<String>) {
        let health: HealthSpec = serde_json::from_value(health).expect("a health spec");
        let mut settings = Health::default();
        let errors = found(|e| settings = super::settings(e, "h", Some(&health)));
        (settings, errors)
    }

    #[test]
    fn no_health_is_every_default() {
        let mut errors = Errors::default();
        assert_eq!(settings(&mut errors, "h", None), Health::default());
        assert_eq!(Health::default().drain_seconds, DEFAULT_DRAIN_SECONDS);
    }

    #[test]
    fn every_field_is_parsed() {
        let (health, errors) = parsed(json!({
            "startupTimeout": "2h", "readinessPath": "/v1/models", "livenessPath": "none",
            "timeoutSeconds": 30, "drainSeconds": 0,
        }));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            health,
            Health {
                startup_timeout: Some(7200),
                readiness_path: Some("/v1/models".into()),
                liveness: Some(Liveness::Off),
                timeout_seconds: Some(30),
                drain_seconds: 0,
            }
        );
        let (health, _) = parsed(json!({"livenessPath": "/ping?x=1"}));
        assert_eq!(health.liveness, Some(Liveness::Path("/ping?x=1".into())));
    }

    #[test]
    fn startup_timeouts_are_1s_to_24h() {
        let range = "h.startupTimeout: must be from 1s to 24h; set how long a cold start may take, e.g. 30m or 2h";
        assert_eq!(parsed(json!({"startupTimeout": "0s"})).1, [range]);
        assert_eq!(parsed(json!({"startupTimeout": "25h"})).1, [range]);
        assert_eq!(parsed(json!({"startupTimeout": "999999h"})).1, [range]);
        assert_eq!(
            parsed(json!({"startupTimeout": "30 min"})).1,
            [
                r#"h.startupTimeout: "30 min" is not a duration; write a whole number of seconds, minutes or hours such as 90s, 30m or 2h"#
            ]
        );
        assert_eq!(
            parsed(json!({"startupTimeout": "1000000s"})).1,
            ["h.startupTimeout: must be at most 7 characters (now 8); shorten it"]
        );
    }

    #[test]
    fn paths_start_with_a_slash_and_have_no_spaces() {
        assert_eq!(
            parsed(json!({"readinessPath": "health", "livenessPath": "/a b"})).1,
            [
                r#"h.readinessPath: "health" is not an HTTP path; start it with / and leave out spaces, e.g. /health"#,
                r#"h.livenessPath: "/a b" is neither an HTTP path nor none; start it with / and leave out spaces, e.g. /ping, or write none for no liveness probe"#,
            ]
        );
        assert_eq!(
            parsed(json!({"readinessPath": format!("/{}", "x".repeat(256))})).1,
            ["h.readinessPath: must be at most 256 characters (now 257); shorten it"]
        );
        assert_eq!(
            parsed(json!({"readinessPath": "none"})).1,
            [
                r#"h.readinessPath: "none" is not an HTTP path; start it with / and leave out spaces, e.g. /health"#
            ]
        );
    }

    #[test]
    fn timeouts_and_drains_are_within_their_limits() {
        assert_eq!(
            parsed(json!({"timeoutSeconds": 0, "drainSeconds": -1})).1,
            [
                "h.timeoutSeconds: must be at least 1; set how many seconds one probe request may take",
                "h.drainSeconds: must be 0 or more; set how many seconds a stopping pod may finish its requests",
            ]
        );
        assert_eq!(
            parsed(json!({"timeoutSeconds": 301, "drainSeconds": 3601})).1,
            [
                "h.timeoutSeconds: must be at most 300 (now 301); lower it",
                "h.drainSeconds: must be at most 3600 (now 3601); lower it",
            ]
        );
    }
}
