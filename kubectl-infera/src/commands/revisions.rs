//! `kubectl infera rollout history|undo NAME`: the revision history the operator keeps as
//! ControllerRevisions owned by the InferaDeployment (one per revision of the worker pods, each
//! holding the spec it was created from; see `infera_core::history`).
//!
//! `undo` sends the spec of the earlier revision, with today's replicas, autoscaling and rollout
//! settings kept, as one JSON merge patch of only the fields that differ, as field manager
//! [`ROLLOUT_MANAGER`] and guarded by the resourceVersion read (read again and decided anew when
//! the operator wrote the status in between). Like `kubectl rollout undo` of a
//! Deployment (an update of the pod template), it is an update, not a server-side apply: it takes
//! ownership of exactly the fields it changes and leaves every other field with whoever set it.
//! A server-side apply under a manager of its own would need `--force-conflicts` to change any
//! field `deploy` or `kubectl apply` set; under their manager, a partial apply would drop the rest
//! of what they own. The consequence is stated in the README: after an undo, re-applying the
//! manifest the undo moved away from rolls forward again, and a server-side `kubectl apply`
//! reports the fields the undo changed as owned by `kubectl-infera-rollout` until it is run with
//! `--force-conflicts` — the honest signal that the cluster no longer matches the manifest.

use infera_core::{
    InferaDeployment,
    history::{self, UndoError},
    naming::{
        LABEL_DEPLOYMENT, LABEL_MANAGED_BY, LABEL_REVISION, OPERATOR_MANAGER, ROLLOUT_MANAGER,
    },
};
use k8s_openapi::{api::apps::v1::ControllerRevision, jiff::Timestamp};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams},
};
use serde_json::{Value, json};

use crate::{
    cli::{GlobalArgs, Output},
    client, duration,
    error::{Error, Result},
    printer::{self, Cell, Printer, Style},
    view,
};

/// The deployment and its history, oldest revision first.
struct History {
    idep: InferaDeployment,
    revisions: Vec<ControllerRevision>,
    object: String,
}

impl History {
    /// Reads `name` and the ControllerRevisions it owns (one LIST, by our labels).
    async fn read(kube: &client::Kube, name: &str) -> Result<Self> {
        let object = format!("InferaDeployment {}/{name}", kube.namespace);
        let idep = view::deployment(kube, &kube.namespace, name).await?;
        let revisions: Api<ControllerRevision> =
            Api::namespaced(kube.client.clone(), &kube.namespace);
        let selector = format!("{LABEL_MANAGED_BY}={OPERATOR_MANAGER},{LABEL_DEPLOYMENT}={name}");
        let uid = idep.uid();
        let mut revisions: Vec<ControllerRevision> = revisions
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| Error::kube(format!("listing the revisions of {object}"), e))?
            .items
            .into_iter()
            .filter(|revision| {
                revision
                    .owner_references()
                    .iter()
                    .any(|owner| owner.controller == Some(true) && Some(&owner.uid) == uid.as_ref())
            })
            .collect();
        revisions.sort_by_key(|revision| revision.revision);
        Ok(Self {
            idep,
            revisions,
            object,
        })
    }

    fn numbers(&self) -> Vec<i64> {
        self.revisions.iter().map(|r| r.revision).collect()
    }

    /// Revision `to`, or without it the one before the newest; or why there is none.
    fn revision(&self, to: Option<i64>) -> Result<&ControllerRevision> {
        let missing = |source| Error::NoRevision {
            object: self.object.clone(),
            source,
        };
        let number = history::undo_target(&self.numbers(), to).map_err(missing)?;
        self.revisions
            .iter()
            .find(|r| r.revision == number)
            .ok_or_else(|| {
                missing(UndoError::NotFound {
                    revision: number,
                    have: String::new(),
                })
            })
    }
}

/// The revision hash a ControllerRevision records.
fn hash(revision: &ControllerRevision) -> &str {
    revision
        .labels()
        .get(LABEL_REVISION)
        .map_or("", String::as_str)
}

/// The spec a ControllerRevision holds (`data.spec`).
fn spec(revision: &ControllerRevision) -> &Value {
    revision
        .data
        .as_ref()
        .map_or(&Value::Null, |data| &data.0["spec"])
}

/// A row of `rollout history`.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    revision: i64,
    hash: String,
    change: String,
    age: String,
    /// `current` (every pool runs it), `rolling out` (the update revision), or empty.
    state: &'static str,
}

fn rows(history: &History, now: Timestamp) -> Vec<Row> {
    let status = history.idep.status.as_ref();
    let current = status.and_then(|s| s.current_revision.as_deref());
    let update = status.and_then(|s| s.update_revision.as_deref());
    let mut previous: Option<&Value> = None;
    history
        .revisions
        .iter()
        .map(|revision| {
            let this = spec(revision);
            let change = history::changes(previous, this, revision.revision);
            previous = Some(this);
            let age = revision.metadata.creation_timestamp.as_ref().map_or_else(
                || "<unknown>".to_string(),
                |created| duration::age(now.duration_since(created.0).as_secs()),
            );
            let hash = hash(revision);
            let state = if Some(hash) == current {
                "current"
            } else if Some(hash) == update {
                "rolling out"
            } else {
                ""
            };
            Row {
                revision: revision.revision,
                hash: hash.to_string(),
                change,
                age,
                state,
            }
        })
        .collect()
}

/// `rollout history NAME [--revision N] [-o json|yaml]`.
pub async fn history(
    name: &str,
    revision: Option<i64>,
    output: Output,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<()> {
    let kube = client::connect(global).await?;
    let history = History::read(&kube, name).await?;
    let shown: Vec<ControllerRevision> = match revision {
        Some(number) => vec![history.revision(Some(number))?.clone()],
        None => history.revisions.clone(),
    };
    let shown: Vec<ControllerRevision> = shown
        .into_iter()
        .map(|mut revision| {
            revision.managed_fields_mut().clear();
            revision
        })
        .collect();
    let document = || match shown.as_slice() {
        [one] if revision.is_some() => json!(one),
        all => json!({"apiVersion": "v1", "kind": "List", "items": all, "metadata": {}}),
    };
    match output {
        Output::Json => return printer.json(&document()),
        Output::Yaml => return printer.yaml(&document()),
        Output::Table | Output::Wide => {}
    }
    let rows = rows(&history, Timestamp::now());
    if let Some(number) = revision {
        let row = rows.iter().find(|row| row.revision == number);
        let spec = shown.first().map(spec).unwrap_or(&Value::Null);
        let yaml = infera_core::yaml::to_yaml(&json!({ "spec": spec }))
            .map_err(|e| Error::serialize("the revision's spec", "YAML", e))?;
        if let Some(row) = row {
            let state = if row.state.is_empty() {
                String::new()
            } else {
                format!(", {}", row.state)
            };
            printer.out(&format!(
                "{} revision {number} ({}{state}), created {} ago\nchange: {}\n{}",
                history.object,
                row.hash,
                row.age,
                row.change,
                yaml.trim_end()
            ));
        }
        return Ok(());
    }
    if rows.is_empty() {
        printer.note(&format!(
            "{} has no revisions yet: the operator records one when it first renders the worker pods",
            history.object
        ));
        return Ok(());
    }
    let cells: Vec<Vec<Cell>> = rows
        .into_iter()
        .map(|row| {
            let style = match row.state {
                "current" => Some(Style::Good),
                "rolling out" => Some(Style::Warn),
                _ => None,
            };
            vec![
                Cell::from(row.revision.to_string()),
                Cell::from(row.hash),
                Cell::from(row.change),
                Cell::from(row.age),
                Cell::styled(row.state, style),
            ]
        })
        .collect();
    let headers = ["REVISION", "HASH", "CHANGE", "AGE", "CURRENT"];
    printer.out(printer::table(printer, 0, &headers, &cells).trim_end());
    Ok(())
}

/// `rollout undo NAME [--to-revision N]`.
pub async fn undo(
    name: &str,
    to_revision: Option<i64>,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<()> {
    let kube = client::connect(global).await?;
    let outcome = client::retry_on_conflict(|| roll_back(&kube, name, to_revision)).await?;
    printer.out(&format!("inferadeployment.infera.amd.com/{name} {outcome}"));
    Ok(())
}

/// One read-decide-write of `undo`: what it did, or the stale write that makes it read again.
async fn roll_back(kube: &client::Kube, name: &str, to_revision: Option<i64>) -> Result<String> {
    let history = History::read(kube, name).await?;
    let target = history.revision(to_revision)?;
    let number = target.revision;
    let update = history
        .idep
        .status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref());
    if update == Some(hash(target)) {
        return Ok(format!(
            "skipped rollback: it already runs revision {number} ({})",
            hash(target)
        ));
    }
    let live = serde_json::to_value(&history.idep.spec)
        .map_err(|e| Error::serialize("the spec", "JSON", e))?;
    let restored = history::restore(&live, spec(target));
    let patch = json!({
        "metadata": {"resourceVersion": history.idep.metadata.resource_version},
        "spec": history::merge_patch(&live, &restored),
    });
    let params = PatchParams {
        field_manager: Some(ROLLOUT_MANAGER.into()),
        ..PatchParams::default()
    };
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &kube.namespace);
    api.patch(name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("rolling back {}", history.object), e))?;
    Ok(format!(
        "rolled back to revision {number} ({})",
        hash(target)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revision(hash: &str, number: i64, image: &str, created: &str) -> ControllerRevision {
        serde_json::from_value(json!({
            "metadata": {
                "name": format!("demo-{hash}"),
                "labels": {LABEL_REVISION: hash},
                "creationTimestamp": created,
            },
            "data": {"spec": {"image": image, "services": {"decode": {"replicas": number}}}},
            "revision": number,
        }))
        .expect("a ControllerRevision")
    }

    #[test]
    fn rows_say_what_changed_from_the_revision_before_and_which_is_current() {
        let idep: InferaDeployment = serde_json::from_value(json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "demo"},
            "spec": {"backendFramework": "sglang", "services": {}},
            "status": {"observedGeneration": 1, "currentRevision": "bbb", "updateRevision": "ccc"},
        }))
        .expect("an InferaDeployment");
        let history = History {
            idep,
            revisions: vec![
                revision("bbb", 2, "a:2", "2026-01-01T00:00:00Z"),
                revision("ccc", 3, "a:1", "2026-01-01T00:59:00Z"),
            ],
            object: "InferaDeployment team/demo".into(),
        };
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().expect("a time");
        assert_eq!(
            rows(&history, now),
            [
                Row {
                    revision: 2,
                    hash: "bbb".into(),
                    change: "-".into(),
                    age: "60m".into(),
                    state: "current",
                },
                Row {
                    revision: 3,
                    hash: "ccc".into(),
                    change: "image: a:2 → a:1".into(),
                    age: "60s".into(),
                    state: "rolling out",
                },
            ]
        );
        assert_eq!(
            history.revision(Some(1)).map(|r| r.revision).map_err(|e| e.to_string()),
            Err("InferaDeployment team/demo: revision 1 is not in the history, which has revisions 2, 3; see `kubectl infera rollout history`".into())
        );
        assert_eq!(history.revision(None).map(|r| r.revision).ok(), Some(2));
    }
}
