//! Server-side apply conflicts: which field manager owns which field, read from the API server's
//! 409 response. The operator reports them in a deployment's status, the plugin in its error; both
//! parse them here.

use std::fmt;

use kube::core::Status;

/// The cause type the API server gives each field of a server-side apply conflict.
const FIELD_MANAGER_CONFLICT: &str = "FieldManagerConflict";

/// One field another field manager owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldConflict {
    /// The manager that owns the field, e.g. `kubectl-edit`.
    pub manager: String,
    /// The field's path, e.g. `.spec.replicas`.
    pub field: String,
}

/// `.spec.replicas (owned by "kubectl-edit")`
impl fmt::Display for FieldConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (owned by {:?})", self.field, self.manager)
    }
}

/// The conflicting fields of a server-side apply's 409, in the order the API server lists them;
/// empty when `status` is not a field-manager conflict (e.g. an optimistic-concurrency 409).
///
/// Each cause reads `conflict with "kubectl-edit" using apps/v1` (the manager is Go-quoted, and
/// may be followed by ` using <apiVersion>`, ` at <time>` or ` with subresource "status"`).
pub fn parse(status: &Status) -> Vec<FieldConflict> {
    let Some(details) = &status.details else {
        return Vec::new();
    };
    details
        .causes
        .iter()
        .filter(|cause| {
            cause.reason == FIELD_MANAGER_CONFLICT || cause.message.starts_with("conflict with")
        })
        .map(|cause| FieldConflict {
            manager: manager(&cause.message).unwrap_or_else(|| cause.message.clone()),
            field: cause.field.clone(),
        })
        .collect()
}

/// The quoted manager of `conflict with "kubectl-edit" using apps/v1`, unescaped.
fn manager(message: &str) -> Option<String> {
    let quoted = message.strip_prefix("conflict with \"")?;
    let mut manager = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(manager),
            '\\' => manager.push(chars.next()?),
            c => manager.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 409 as the API server sends it for an apply that touches fields others own.
    fn conflict(causes: serde_json::Value) -> Status {
        let count = causes.as_array().map_or(0, Vec::len);
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure",
            "message": format!("Apply failed with {count} conflict(s): conflict with \"kubectl-edit\" using apps/v1: .spec.replicas"),
            "reason": "Conflict",
            "details": {"name": "demo-server", "group": "apps", "kind": "deployments", "causes": causes},
            "code": 409
        });
        serde_json::from_value(status).expect("a Status")
    }

    #[test]
    fn each_cause_names_its_manager_and_field() {
        let status = conflict(serde_json::json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-edit\" using apps/v1", "field": ".spec.replicas"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-scale\" using apps/v1", "field": ".metadata.labels.x"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"helm\"", "field": ".metadata.labels.y"},
        ]));
        let conflict = |manager: &str, field: &str| FieldConflict {
            manager: manager.into(),
            field: field.into(),
        };
        assert_eq!(
            parse(&status),
            [
                conflict("kubectl-edit", ".spec.replicas"),
                conflict("kubectl-scale", ".metadata.labels.x"),
                conflict("helm", ".metadata.labels.y"),
            ]
        );
    }

    #[test]
    fn a_manager_with_a_time_a_subresource_or_escaped_quotes_is_read_whole() {
        let status = conflict(serde_json::json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-edit\" using apps/v1 at 2025-01-02T03:04:05Z", "field": ".spec.replicas"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"kube-controller-manager\" with subresource \"scale\" using apps/v1", "field": ".spec.replicas"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"odd \\\"name\\\"\" using v1", "field": ".data.x"},
        ]));
        let managers: Vec<String> = parse(&status).into_iter().map(|c| c.manager).collect();
        assert_eq!(
            managers,
            ["kubectl-edit", "kube-controller-manager", "odd \"name\""]
        );
    }

    #[test]
    fn an_unreadable_message_is_kept_as_the_manager() {
        let status = conflict(serde_json::json!([
            {"reason": "FieldManagerConflict", "message": "conflict with someone", "field": ".spec.replicas"},
        ]));
        assert_eq!(
            parse(&status),
            [FieldConflict {
                manager: "conflict with someone".into(),
                field: ".spec.replicas".into()
            }]
        );
    }

    #[test]
    fn a_409_without_field_manager_causes_has_no_conflicts() {
        let status = conflict(serde_json::json!([
            {"reason": "FieldValueInvalid", "message": "must be positive", "field": "spec.replicas"},
        ]));
        assert_eq!(parse(&status), []);
        let optimistic: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "the object has been modified; please apply your changes to the latest version and try again",
        }))
        .expect("a Status");
        assert_eq!(parse(&optimistic), []);
    }

    #[test]
    fn a_conflict_reads_as_field_and_owner() {
        let conflict = FieldConflict {
            manager: "kubectl-edit".into(),
            field: ".spec.replicas".into(),
        };
        assert_eq!(
            conflict.to_string(),
            r#".spec.replicas (owned by "kubectl-edit")"#
        );
    }
}
