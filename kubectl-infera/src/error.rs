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
//! | 5 | cluster unreachable, or kubeconfig/credentials unusable (a failing exec plugin, a 401) |
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
    /// Doctor's failing checks; the report on stdout already says which, so nothing more is
    /// printed.
    #[error("{failed} check(s) failed")]
    ChecksFailed { failed: usize },
    /// Output (or an object to send) that cannot be written as JSON or YAML.
    #[error("cannot write {what} as {format}")]
    Serialize {
        what: String,
        format: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The install bundle embedded in the binary is broken: a defect of the build, not of the
    /// cluster or the input.
    #[error("the embedded install bundle is broken: {file}: {problem}")]
    Bundle {
        file: String,
        problem: String,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A watch failed in a way the watcher does not recover from by retrying.
    #[error("watching {what}")]
    Watch {
        what: String,
        source: kube::runtime::watcher::Error,
    },
    /// A watch stopped although it should run until the command ends.
    #[error("watching {what}: the watch ended")]
    WatchEnded { what: String },
    /// The async runtime could not start (no threads, no timer).
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// More than one spec of a file is invalid; each says why.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    InvalidSpecs(Vec<Error>),
    /// The wizard could not ask (no terminal, a broken prompt).
    #[error("wizard: cannot ask")]
    Prompt(#[source] inquire::InquireError),
    /// The user answered no when asked to apply.
    #[error("not applied")]
    NotConfirmed,
    /// The cluster does not serve the InferaDeployment API.
    #[error(
        "the InferaDeployment API is not installed in this cluster ({detail}); run `kubectl infera init` first"
    )]
    NotInstalled { detail: String },
    /// The operator found the spec invalid (a rule admission cannot check).
    #[error("{object} was rejected by the operator: {message}")]
    RejectedByOperator { object: String, message: String },
    /// The operator failed to reconcile the generation the command waits for (its `Reconciled`
    /// condition): it keeps retrying, but waiting longer will not by itself change that.
    #[error(
        "{object}: the operator cannot reconcile generation {generation}: {message}; it retries with backoff: fix what the message names, or see `kubectl describe idep` and the operator's log"
    )]
    ReconcileFailed {
        object: String,
        generation: i64,
        message: String,
    },
    /// Another controller of InferaDeployments runs (upstream Infera's operator): `init` does not
    /// install a second one beside it.
    #[error("another controller reconciles InferaDeployments: {found}; {steps}")]
    OtherController { found: String, steps: String },
    /// The operator was installed by Helm: `init` and `uninstall` leave it to Helm.
    #[error(
        "the operator in {namespace} was installed by the Helm release {release} (namespace {release_namespace}); {what} it with Helm, not with kubectl infera: {command}"
    )]
    HelmManaged {
        namespace: String,
        release: String,
        release_namespace: String,
        what: &'static str,
        command: String,
    },
    /// The API server refuses the pods of a pool (Pod Security, a quota, a webhook): waiting does
    /// not change that, the namespace or the spec must.
    #[error("{object} cannot become Ready: {message}")]
    PodsRefused { object: String, message: String },
    /// An `hf://` download Job of the deployment failed while the command waited for it.
    #[error("{object} cannot become Ready: {message}; {fix}")]
    DownloadFailed {
        object: String,
        message: String,
        fix: String,
    },
    /// The object went away while the command waited for it.
    #[error("{object} was deleted while waiting for it to be Ready")]
    Deleted { object: String },
    /// `rollout history --revision` or `undo` named a revision the history lacks, or it has no
    /// earlier one.
    #[error("{object}: {source}")]
    NoRevision {
        object: String,
        source: infera_core::history::UndoError,
    },
    /// `scale` named pools the deployment does not have.
    #[error("{object} has no pool {}; its pools are {}", unknown.join(", "), pools.join(", "))]
    UnknownPools {
        object: String,
        unknown: Vec<String>,
        pools: Vec<String>,
    },
    /// A `bench` run's Job failed, or its result is lost.
    #[error("run {run} failed: {message}")]
    BenchFailed { run: String, message: String },
    #[error("interrupted")]
    Interrupted,
}

/// Each line two spaces in, for lists inside a message.
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
            // The server refused the credentials: they are unusable.
            Self::Api { code: 401, .. } => Exit::Unreachable,
            Self::ReadFile { .. }
            | Self::WriteFile { .. }
            | Self::Yaml { .. }
            | Self::Invalid { .. } => Exit::Failed,
            Self::Api { .. }
            | Self::ChecksFailed { .. }
            | Self::Serialize { .. }
            | Self::Bundle { .. }
            | Self::Watch { .. }
            | Self::WatchEnded { .. }
            | Self::Runtime(_)
            | Self::InvalidSpecs(_)
            | Self::Prompt(_)
            | Self::NotConfirmed
            | Self::NotInstalled { .. }
            | Self::RejectedByOperator { .. }
            | Self::PodsRefused { .. }
            | Self::ReconcileFailed { .. }
            | Self::DownloadFailed { .. }
            | Self::UnknownPools { .. }
            | Self::NoRevision { .. }
            | Self::BenchFailed { .. }
            | Self::Deleted { .. } => Exit::Failed,
            Self::Kubeconfig(_) | Self::Unreachable { .. } => Exit::Unreachable,
            Self::Conflict { .. }
            | Self::Refused(_)
            | Self::OtherController { .. }
            | Self::HelmManaged { .. } => Exit::Conflict,
            Self::Timeout { .. } => Exit::Timeout,
            Self::Interrupted => Exit::Interrupted,
        }
    }

    /// Whether the command already told the user (on stdout), so `main` prints nothing more.
    pub fn already_reported(&self) -> bool {
        matches!(self, Self::ChecksFailed { .. })
    }

    /// Wraps a serializer's error with what was being written.
    pub fn serialize(
        what: impl Into<String>,
        format: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Serialize {
            what: what.into(),
            format,
            source: Box::new(source),
        }
    }

    /// `what` does not exist (exit 1, as a 404), with where to find the ones that do.
    pub fn not_found(what: String, lister: &str) -> Self {
        Self::Api {
            action: what,
            message: format!("not found; `{lister}` lists them all"),
            code: 404,
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
                message: format!("authentication failed: {}", chain(&e)),
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

/// A kube error as a user reads it in a note: the API server's message (`forbidden: …` for a
/// 403), else the error and its causes.
pub fn kube_message(error: kube::Error) -> String {
    match Error::kube(String::new(), error) {
        Error::Api { message, .. } | Error::Unreachable { message, .. } => message,
        other => chain(&other),
    }
}

/// The exec credential plugin's command of the user in use, for [`chain`]: kube-rs reports a
/// failing plugin with a debug dump of the whole command, environment included, so the error
/// names the command from here instead (the client remembers it when it loads the kubeconfig).
static EXEC_COMMAND: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Remembers the user's exec credential plugin command, for [`chain`].
pub fn remember_exec_command(command: &str) {
    let _ = EXEC_COMMAND.set(command.to_string());
}

/// The exec credential plugin's command, when the user in use has one.
pub fn exec_command() -> Option<&'static str> {
    EXEC_COMMAND.get().map(String::as_str)
}

/// An error with its sources, `a: b: c`. A failing exec credential plugin anywhere in the chain
/// is the whole message, told as kubectl tells it ([`exec_failure`]): kube-rs's own text for it
/// is a debug dump of the command with every environment variable of the kubeconfig's `exec`
/// section, which hold secrets.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut level = Some(error);
    while let Some(e) = level {
        let command = exec_command().unwrap_or("of the kubeconfig's exec section");
        if let Some(message) = e
            .downcast_ref::<kube::client::AuthError>()
            .and_then(|e| exec_failure(e, command))
        {
            return message;
        }
        level = e.source();
    }
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

/// A failing exec credential plugin as kubectl (client-go 0.36,
/// `plugin/pkg/client/auth/exec/exec.go`, `wrapCmdRunErrorLocked`) says it: `getting credentials:
/// exec: executable CMD failed with exit code N`, then what the plugin wrote on stderr (kubectl
/// shows it as the plugin writes it). Never the plugin's environment or stdout.
fn exec_failure(error: &kube::client::AuthError, command: &str) -> Option<String> {
    use kube::client::AuthError;
    match error {
        AuthError::AuthExecRun { out, .. } => {
            let status = match out.status.code() {
                Some(code) => format!("failed with exit code {code}"),
                None => format!("failed: {}", out.status),
            };
            let stderr = String::from_utf8_lossy(&out.stderr);
            let said = indent(stderr.trim_end());
            let said = if said.trim().is_empty() {
                String::new()
            } else {
                format!(", writing on stderr:\n{said}")
            };
            Some(format!(
                "getting credentials: exec: executable {command} {status}{said}"
            ))
        }
        AuthError::AuthExecStart(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
            "getting credentials: exec: executable {command} not found"
        )),
        _ => None,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use infera_core::FieldError;

    #[test]
    fn exit_codes_follow_the_contract() {
        assert_eq!(Error::Usage("x".into()).exit() as u8, 2);
        assert_eq!(Error::NotConfirmed.exit() as u8, 1);
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
        let unauthorized = |code| Error::Api {
            action: "listing".into(),
            message: "Unauthorized".into(),
            code,
        };
        assert_eq!(unauthorized(401).exit() as u8, 5);
        assert_eq!(unauthorized(403).exit() as u8, 1);
        assert_eq!(Error::Interrupted.exit() as u8, 130);
        assert_eq!(Error::ChecksFailed { failed: 2 }.exit() as u8, 1);
        assert_eq!(Error::WatchEnded { what: "x".into() }.exit() as u8, 1);
        let serialize = Error::serialize("x", "JSON", std::fmt::Error);
        assert_eq!(serialize.exit() as u8, 1);
        let invalid = Error::Invalid {
            name: "d".into(),
            errors: ValidationErrors(vec![]),
        };
        assert_eq!(invalid.exit() as u8, 1);
    }

    #[test]
    fn typed_errors_say_what_failed_and_why() {
        let watch = Error::Watch {
            what: "pods of team-a/demo".into(),
            source: kube::runtime::watcher::Error::NoResourceVersion,
        };
        assert_eq!(
            chain(&watch),
            format!(
                "watching pods of team-a/demo: {}",
                kube::runtime::watcher::Error::NoResourceVersion
            )
        );
        let serialize = Error::serialize("the output", "JSON", std::fmt::Error);
        assert_eq!(
            chain(&serialize),
            "cannot write the output as JSON: an error occurred when formatting an argument"
        );
        assert!(Error::ChecksFailed { failed: 1 }.already_reported());
        assert!(!serialize.already_reported());
    }

    /// A real failed run of a plugin whose kubeconfig `env` holds a secret.
    fn failed_plugin() -> std::io::Result<kube::client::AuthError> {
        let mut command = std::process::Command::new("sh");
        command
            .args([
                "-c",
                "echo 'token expired' >&2; echo '{\"partial\": \"creds\"}'; exit 3",
            ])
            .env("CLIENT_SECRET", "hunter2");
        let out = command.output()?;
        Ok(kube::client::AuthError::AuthExecRun {
            cmd: format!("{command:?}"),
            out: Box::new(out),
        })
    }

    #[test]
    fn a_failing_exec_plugin_is_told_like_kubectl_without_its_environment() -> std::io::Result<()> {
        let error = failed_plugin()?;
        assert!(
            error.to_string().contains("hunter2"),
            "kube-rs's own text leaks"
        );
        assert_eq!(
            exec_failure(&error, "get-token").as_deref(),
            Some(
                "getting credentials: exec: executable get-token failed with exit code 3, writing on stderr:\n  token expired"
            )
        );
        let message = chain(&kube::Error::Auth(failed_plugin()?));
        assert!(
            message.starts_with("getting credentials: exec: executable "),
            "{message}"
        );
        assert!(
            !message.contains("hunter2") && !message.contains("partial"),
            "{message}"
        );
        let unreachable = Error::kube("reading the server version", kube::Error::Auth(error));
        assert!(!chain(&unreachable).contains("hunter2"));
        assert_eq!(unreachable.exit(), Exit::Unreachable);
        let missing = kube::client::AuthError::AuthExecStart(std::io::ErrorKind::NotFound.into());
        assert_eq!(
            exec_failure(&missing, "get-token").as_deref(),
            Some("getting credentials: exec: executable get-token not found")
        );
        Ok(())
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
