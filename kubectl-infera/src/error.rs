//! Every way a command can fail, and the exit code each maps to. The contract (also in the README
//! and in `--help`) is the same in every output mode:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success (`doctor`: no failing check; warnings allowed) |
//! | 1 | failed: invalid spec or input file, API error, a failing `doctor` check |
//! | 2 | usage: bad flags, or missing flags where no terminal allows a prompt |
//! | 3 | timed out (`--wait`) |
//! | 4 | conflict or refused: a field owned by another manager, the version-skew guard, `uninstall` while deployments exist |
//! | 5 | cluster unreachable, or kubeconfig/credentials unusable |
//! | 130 | interrupted |

use std::{path::PathBuf, process::ExitCode};

use infera_core::{ValidationErrors, conflict::FieldConflict};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    Ok = 0,
    Failed = 1,
    Usage = 2,
    Timeout = 3,
    Conflict = 4,
    Unreachable = 5,
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Flags that do not make sense together, or are missing.
    #[error("{0}")]
    Usage(String),
    #[error("cannot read {}: {source}", path.display())]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    WriteFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not YAML, or not an InferaDeployment.
    #[error("{}: {source}", path.display())]
    Yaml {
        path: PathBuf,
        source: infera_core::yaml::YamlError,
    },
    /// The spec breaks rules; every broken rule is listed.
    #[error("{name}: the spec is invalid ({} error{}):\n{}", errors.0.len(), if errors.0.len() == 1 { "" } else { "s" }, indent(&errors.to_string()))]
    Invalid {
        name: String,
        errors: ValidationErrors,
    },
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    #[error("cannot reach the cluster ({context}): {message}")]
    Unreachable { context: String, message: String },
    /// An API call failed.
    #[error("{action}: {message}")]
    Api {
        action: String,
        message: String,
        code: u16,
    },
    /// Server-side apply found fields owned by another field manager.
    #[error("{object}: {} field(s) are owned by another field manager:\n{}\nnothing was forced; re-run with --force-conflicts to take them over", conflicts.len(), conflicts.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n"))]
    Conflict {
        object: String,
        conflicts: Vec<FieldConflict>,
    },
    /// The command will not do something without being told to.
    #[error("{0}")]
    Refused(String),
    #[error("timed out after {after}: {why}")]
    Timeout { after: String, why: String },
    /// A command's own failure (e.g. doctor checks failed), already reported on stdout.
    #[error("{0}")]
    Failed(String),
    #[error("interrupted")]
    Interrupted,
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Self::Usage(_) => Exit::Usage,
            Self::ReadFile { .. }
            | Self::WriteFile { .. }
            | Self::Yaml { .. }
            | Self::Invalid { .. } => Exit::Failed,
            Self::Api { .. } | Self::Failed(_) => Exit::Failed,
            Self::Kubeconfig(_) | Self::Unreachable { .. } => Exit::Unreachable,
            Self::Conflict { .. } | Self::Refused(_) => Exit::Conflict,
            Self::Timeout { .. } => Exit::Timeout,
            Self::Interrupted => Exit::Interrupted,
        }
    }

    /// Wraps a kube error with what we were doing. Transport failures become [`Error::Unreachable`].
    pub fn kube(action: impl Into<String>, error: kube::Error) -> Self {
        let action = action.into();
        match error {
            kube::Error::Api(status) => {
                let code = status.code;
                let mut message = status.message.clone();
                if code == 403 {
                    message = format!("forbidden: {message}");
                }
                Self::Api {
                    action,
                    message,
                    code,
                }
            }
            kube::Error::Auth(e) => Self::Unreachable {
                context: action,
                message: format!("authentication failed: {e}"),
            },
            other @ (kube::Error::HyperError(_)
            | kube::Error::Service(_)
            | kube::Error::HttpError(_)) => Self::Unreachable {
                context: action,
                message: chain(&other),
            },
            other => Self::Api {
                action,
                message: chain(&other),
                code: 0,
            },
        }
    }
}

/// An error with its sources, `a: b: c`.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        source = e.source();
    }
    parts.join(": ")
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use infera_core::FieldError;

    #[test]
    fn exit_codes_follow_the_contract() {
        assert_eq!(Error::Usage("x".into()).exit() as u8, 2);
        assert_eq!(Error::Failed("x".into()).exit() as u8, 1);
        assert_eq!(
            Error::Timeout {
                after: "1s".into(),
                why: "x".into()
            }
            .exit() as u8,
            3
        );
        assert_eq!(Error::Refused("x".into()).exit() as u8, 4);
        assert_eq!(
            Error::Conflict {
                object: "x".into(),
                conflicts: vec![]
            }
            .exit() as u8,
            4
        );
        assert_eq!(Error::Kubeconfig("x".into()).exit() as u8, 5);
        assert_eq!(Error::Interrupted.exit() as u8, 130);
        let invalid = Error::Invalid {
            name: "d".into(),
            errors: ValidationErrors(vec![]),
        };
        assert_eq!(invalid.exit() as u8, 1);
    }

    #[test]
    fn invalid_lists_every_error_with_its_path() {
        let errors = ValidationErrors(vec![
            FieldError {
                path: "spec.services".into(),
                message: "add a worker pool".into(),
            },
            FieldError {
                path: "spec.etcdEndpoint".into(),
                message: "is required".into(),
            },
        ]);
        let e = Error::Invalid {
            name: "demo".into(),
            errors,
        };
        assert_eq!(
            e.to_string(),
            "demo: the spec is invalid (2 errors):\n  spec.services: add a worker pool\n  spec.etcdEndpoint: is required"
        );
    }

    #[test]
    fn conflicts_name_manager_and_field() {
        let e = Error::Conflict {
            object: "Deployment infera-system/infera-operator".into(),
            conflicts: vec![FieldConflict {
                manager: "kubectl-edit".into(),
                field: ".spec.replicas".into(),
            }],
        };
        assert_eq!(
            e.to_string(),
            "Deployment infera-system/infera-operator: 1 field(s) are owned by another field manager:\n  .spec.replicas (owned by \"kubectl-edit\")\nnothing was forced; re-run with --force-conflicts to take them over"
        );
    }
}
