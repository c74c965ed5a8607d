//! Keeps a deployment's revision history in the cluster: one ControllerRevision (apps/v1) per
//! revision of its worker pods, owned by the InferaDeployment (garbage collection removes them with
//! it), carrying our labels and the revision hash, holding the spec that revision was created
//! from. Which to create, renumber or delete is [`infera_core::history`]'s; this module reads the
//! watch cache and sends the requests, and sends none when the history is as it should be.

use std::collections::BTreeSet;

use infera_core::{
    InferaDeployment,
    history::{self, Record, Stored},
    naming::{LABEL_DEPLOYMENT, LABEL_MANAGED_BY, LABEL_REVISION, OPERATOR_MANAGER},
};
use k8s_openapi::{api::apps::v1::ControllerRevision, apimachinery::pkg::runtime::RawExtension};
use kube::{
    Api, Resource, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

use crate::{Error, Result, context::Context, observe::Snapshot};

/// The revisions the history keeps whatever its limit, besides those pods still run (which
/// [`sync`] reads from the snapshot): the update revision and the current one.
pub struct Live<'a> {
    pub update: &'a str,
    pub current: Option<&'a str>,
}

/// Makes `update` the newest revision of `idep`'s history and prunes it to
/// `spec.revisionHistoryLimit` (`limit`).
pub async fn sync(
    ctx: &Context,
    idep: &InferaDeployment,
    snapshot: &Snapshot,
    live: Live<'_>,
    limit: i32,
) -> Result<()> {
    let name = idep.name_any();
    let namespace = idep
        .namespace()
        .ok_or_else(|| Error::NoNamespace { name: name.clone() })?;
    let api = Api::<ControllerRevision>::namespaced(ctx.client.clone(), &namespace);
    let stored: Vec<Stored> = snapshot
        .revisions
        .iter()
        .filter_map(|revision| {
            Some(Stored {
                name: revision.name_any(),
                hash: revision.labels().get(LABEL_REVISION)?.clone(),
                revision: revision.revision,
            })
        })
        .collect();
    match history::record(&name, &stored, live.update) {
        None => {}
        Some(Record::Create {
            name: object,
            revision,
        }) => create(&api, idep, &object, live.update, revision).await?,
        // `revision` is the one field of a ControllerRevision that may change after creation
        // (its `data` is immutable), so a rollback renumbers it with a merge patch of that field.
        Some(Record::Renumber {
            name: object,
            revision,
        }) => {
            let patch = json!({"revision": revision});
            let params = PatchParams {
                field_manager: Some(OPERATOR_MANAGER.into()),
                ..PatchParams::default()
            };
            match api.patch(&object, &params, &Patch::Merge(&patch)).await {
                Ok(_) => {}
                // Written by an operator before 0.1.1 with `data` the API server re-encodes
                // differently (see `history::to_go_json`), it can never be renumbered: replaced
                // by the same revision written as the server keeps it.
                Err(kube::Error::Api(status)) if status.code == 422 => {
                    let uid = snapshot
                        .revisions
                        .iter()
                        .find(|stored| stored.name_any() == object)
                        .and_then(|stored| stored.uid());
                    delete(&api, &object, uid).await?;
                    create(&api, idep, &object, live.update, revision).await?;
                }
                Err(source) => {
                    return Err(Error::History {
                        action: "renumber",
                        name: object,
                        source,
                    });
                }
            }
        }
    }
    let mut kept: BTreeSet<&str> = snapshot
        .pods
        .iter()
        .filter_map(|pod| pod.labels().get(LABEL_REVISION).map(String::as_str))
        .collect();
    kept.insert(live.update);
    kept.extend(live.current);
    for object in history::prune(&stored, &kept, limit) {
        // Only the ControllerRevision the cache showed, not one re-created under its name since.
        let uid = snapshot
            .revisions
            .iter()
            .find(|revision| revision.name_any() == object)
            .and_then(|revision| revision.uid());
        delete(&api, &object, uid).await?;
    }
    Ok(())
}

/// Creates the ControllerRevision `object` of revision `hash` of `idep`, numbered `revision`,
/// holding its spec, with `data` in the bytes the API server keeps ([`history::to_go_json`]).
async fn create(
    api: &Api<ControllerRevision>,
    idep: &InferaDeployment,
    object: &str,
    hash: &str,
    revision: i64,
) -> Result<()> {
    let name = idep.name_any();
    let created = ControllerRevision {
        metadata: kube::api::ObjectMeta {
            name: Some(object.to_string()),
            namespace: idep.namespace(),
            labels: Some(
                [
                    (LABEL_MANAGED_BY, OPERATOR_MANAGER),
                    (LABEL_DEPLOYMENT, name.as_str()),
                    (LABEL_REVISION, hash),
                ]
                .into_iter()
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect(),
            ),
            owner_references: idep.controller_owner_ref(&()).map(|owner| vec![owner]),
            ..Default::default()
        },
        data: Some(RawExtension(history::data(&json!(idep.spec)))),
        revision,
    };
    let failed = |source| Error::History {
        action: "create",
        name: object.to_string(),
        source,
    };
    let body = history::to_go_json(&created).map_err(|source| Error::Encode {
        kind: "ControllerRevision".into(),
        name: object.to_string(),
        source,
    })?;
    let post = PostParams {
        field_manager: Some(OPERATOR_MANAGER.into()),
        ..PostParams::default()
    };
    let request = kube::core::Request::new(api.resource_url())
        .create(&post, body)
        .map_err(|source| failed(kube::Error::BuildRequest(source)))?;
    match api
        .clone()
        .into_client()
        .request::<ControllerRevision>(request)
        .await
    {
        Ok(_) => Ok(()),
        // Created by an earlier reconcile whose watch event has not arrived yet.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(source) => Err(failed(source)),
    }
}

/// Deletes the ControllerRevision `object`, only the one with `uid` when known (not one
/// re-created under its name since the cache saw it).
async fn delete(api: &Api<ControllerRevision>, object: &str, uid: Option<String>) -> Result<()> {
    let params = DeleteParams {
        preconditions: uid.map(|uid| kube::api::Preconditions {
            uid: Some(uid),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match api.delete(object, &params).await {
        Ok(_) => Ok(()),
        // Gone already, or another object under its name now (the precondition failed).
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(()),
        Err(source) => Err(Error::History {
            action: "delete",
            name: object.to_string(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::Value;

    use super::*;
    use crate::fixtures;

    fn idep() -> Value {
        json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "calm", "namespace": "demo", "uid": "calm-uid", "generation": 1},
            "spec": {"backendFramework": "sglang", "services": {}, "image": "registry.local/infera:<tag>&x"},
        })
    }

    /// A ControllerRevision of `calm`'s history, as the slim cache holds it.
    fn stored(hash: &str, revision: i64) -> ControllerRevision {
        serde_json::from_value(json!({
            "metadata": {
                "name": format!("calm-{hash}"), "namespace": "demo", "uid": format!("{hash}-uid"),
                "labels": {LABEL_MANAGED_BY: OPERATOR_MANAGER, LABEL_DEPLOYMENT: "calm", LABEL_REVISION: hash},
                "ownerReferences": [{"apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
                    "name": "calm", "uid": "calm-uid", "controller": true}],
            },
            "revision": revision,
        }))
        .expect("a ControllerRevision")
    }

    /// The requests one sync of `calm`'s history sends, with the cache holding `history` and a
    /// pod of revision `running`.
    async fn sync_with(
        history: &[(&str, i64)],
        running: &str,
        live: Live<'_>,
        limit: i32,
    ) -> Vec<fixtures::Sent> {
        sync_against(history, running, live, limit, false).await
    }

    /// As [`sync_with`], with the API server refusing renumbering when `refuse_renumber`.
    async fn sync_against(
        history: &[(&str, i64)],
        running: &str,
        live: Live<'_>,
        limit: i32,
        refuse_renumber: bool,
    ) -> Vec<fixtures::Sent> {
        let (ctx, mut caches, mut server) = fixtures::context(idep(), vec![]).await;
        server.refuse_renumber = refuse_renumber;
        for (hash, revision) in history {
            caches.apply_revision(stored(hash, *revision));
        }
        let idep: InferaDeployment = serde_json::from_value(idep()).expect("an InferaDeployment");
        let mut snapshot = ctx.observed.snapshot(&idep);
        let pod: Pod =
            serde_json::from_value(json!({"metadata": {"labels": {LABEL_REVISION: running}}}))
                .expect("a pod");
        snapshot.pods.push(pod.into());
        let (result, sent) = server
            .serve(sync(&ctx, &idep, &snapshot, live, limit))
            .await;
        assert!(result.is_ok(), "{result:?}");
        sent
    }

    #[tokio::test]
    async fn a_rollback_renumbers_and_the_oldest_revision_no_pod_runs_is_pruned() {
        let history = [("aaa", 1), ("bbb", 2), ("ccc", 3), ("ddd", 4)];
        // Back to bbb while pods still run ddd, with room for one revision besides the live ones.
        let live = Live {
            update: "bbb",
            current: Some("ddd"),
        };
        let sent = sync_with(&history, "ddd", live, 1).await;
        let lines: Vec<&str> = sent.iter().map(|s| s.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "PATCH /apis/apps/v1/namespaces/demo/controllerrevisions/calm-bbb?&fieldManager=infera-operator",
                "DELETE /apis/apps/v1/namespaces/demo/controllerrevisions/calm-aaa?",
            ]
        );
        assert_eq!(sent[0].body, json!({"revision": 5}));
        assert_eq!(sent[1].body, json!({"preconditions": {"uid": "aaa-uid"}}));
    }

    #[tokio::test]
    async fn a_history_as_it_should_be_costs_no_request() {
        let history = [("aaa", 1), ("bbb", 2)];
        let live = Live {
            update: "bbb",
            current: Some("bbb"),
        };
        assert!(sync_with(&history, "bbb", live, 10).await.is_empty());
    }
    #[tokio::test]
    async fn a_new_revision_is_created_with_data_as_the_api_server_re_encodes_it() {
        let live = Live {
            update: "ccc",
            current: Some("bbb"),
        };
        let sent = sync_with(&[("bbb", 2)], "bbb", live, 10).await;
        assert_eq!(
            sent[0].line,
            "POST /apis/apps/v1/namespaces/demo/controllerrevisions?&fieldManager=infera-operator"
        );
        assert_eq!(sent[0].body["revision"], json!(3));
        assert_eq!(
            sent[0].body["data"]["spec"]["image"],
            json!("registry.local/infera:<tag>&x")
        );
        assert!(
            sent[0]
                .text
                .contains(r#""image":"registry.local/infera:\u003ctag\u003e\u0026x""#),
            "{}",
            sent[0].text
        );
    }

    #[tokio::test]
    async fn a_revision_that_cannot_be_renumbered_is_replaced_by_one_that_can() {
        let live = Live {
            update: "bbb",
            current: Some("ccc"),
        };
        let sent = sync_against(&[("bbb", 2), ("ccc", 3)], "ccc", live, 10, true).await;
        let lines: Vec<&str> = sent.iter().map(|s| s.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "PATCH /apis/apps/v1/namespaces/demo/controllerrevisions/calm-bbb?&fieldManager=infera-operator",
                "DELETE /apis/apps/v1/namespaces/demo/controllerrevisions/calm-bbb?",
                "POST /apis/apps/v1/namespaces/demo/controllerrevisions?&fieldManager=infera-operator",
            ]
        );
        assert_eq!(sent[1].body, json!({"preconditions": {"uid": "bbb-uid"}}));
        assert_eq!(sent[2].body["metadata"]["name"], json!("calm-bbb"));
        assert_eq!(sent[2].body["revision"], json!(4));
        assert!(
            sent[2].text.contains(r"\u003ctag\u003e"),
            "{}",
            sent[2].text
        );
    }
}
