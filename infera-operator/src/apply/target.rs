//! Where one deployment's children go: each child prepared, dry-run, written, handed over or
//! deleted, and what we remember of it kept up to date.

use std::collections::BTreeMap;

use infera_core::{
    Child, ChildKind, InferaDeployment,
    naming::{OPERATOR_MANAGER, REPLICAS_HANDOVER_MANAGER},
};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, DynamicObject, Patch, PatchParams, Preconditions},
    runtime::reflector::ObjectRef,
};
use serde_json::Value;

use super::{
    fields::{conflict_fields, only_handed_over, replicas_held},
    records::{Applies, Key, Problem, Record, adopt, must_apply, version},
};
use crate::{
    Error, Result,
    live::Live,
    observe::Snapshot,
    ownership::{APPLIED_HASH, hash, hex},
};

/// A child to send: its object with our hash annotation, and what we remember of it.
pub(super) struct Outgoing {
    pub(super) kind: ChildKind,
    pub(super) name: String,
    pub(super) body: Value,
    pub(super) hash: u64,
    pub(super) live_version: Option<String>,
    /// For a RoleBinding, the Role it binds.
    pub(super) role: Option<String>,
    /// A workload rendered without `replicas`, which an autoscaler owns.
    pub(super) autoscaled: bool,
    /// Its replicas go to the hand-over manager once the write creates it.
    pub(super) hand_over_at_creation: bool,
    /// Our record says its replicas were handed over.
    pub(super) handed_over: bool,
}

/// What [`Target::prepare`] found: nothing to send (and the problem our last apply met, if
/// any), or a child to send.
pub(super) enum Prepared {
    Unchanged(Option<Problem>),
    Send(Outgoing),
}

/// A strict server-side dry run, or the write itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    DryRun,
    Write,
}

/// Where one deployment's children go, and what we know of them.
pub(super) struct Target<'a> {
    pub(super) client: &'a Client,
    pub(super) applies: &'a Applies,
    pub(super) deployment: &'a ObjectRef<InferaDeployment>,
    pub(super) namespace: &'a str,
    pub(super) snapshot: &'a Snapshot,
    /// The floor of each rendered autoscaler, by the name of its target.
    pub(super) floors: BTreeMap<String, i32>,
}

/// The floor of each autoscaler among `children` (a HorizontalPodAutoscaler's `minReplicas`, a
/// ScaledObject's `minReplicaCount`), by the name of its target.
pub(super) fn floors(children: &[Child]) -> BTreeMap<String, i32> {
    children
        .iter()
        .filter_map(|child| match child {
            Child::HorizontalPodAutoscaler(hpa) => {
                let spec = hpa.spec.as_ref()?;
                Some((spec.scale_target_ref.name.clone(), spec.min_replicas?))
            }
            Child::ScaledObject(scaled) => Some((
                scaled.spec.scale_target_ref.name.clone(),
                scaled.spec.min_replica_count?,
            )),
            _ => None,
        })
        .collect()
}

/// Whether `body`, a rendered child of `kind`, is a workload rendered without `replicas`
/// because an autoscaler owns them.
pub(super) fn autoscaled(kind: ChildKind, body: &Value) -> bool {
    matches!(
        kind,
        ChildKind::Deployment | ChildKind::StatefulSet | ChildKind::LeaderWorkerSet
    ) && body["spec"].get("replicas").is_none()
}

impl Target<'_> {
    fn api(&self, kind: ChildKind) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), self.namespace, &kind.api_resource())
    }

    fn key(&self, kind: ChildKind, name: &str) -> Key {
        (self.deployment.clone(), kind, name.to_string())
    }

    /// `child` to send, unless [`must_apply`] says our last apply of it still stands.
    pub(super) async fn prepare(&self, child: &Child) -> Result<Prepared> {
        let (kind, name) = (child.kind(), child.name().to_string());
        let mut body = serde_json::to_value(child).map_err(|source| Error::Encode {
            kind: kind.api_resource().kind,
            name: name.clone(),
            source,
        })?;
        let hash = hash(&body);
        let key = self.key(kind, &name);
        let live = self.snapshot.children.get(&(kind, name.clone()));
        let autoscaled = autoscaled(kind, &body);
        let live_version = live.and_then(|o| version(o, autoscaled));
        let last = match self.applies.get(&key) {
            Some(last) => Some(last),
            // After a restart: what the previous operator applied, if it still stands.
            None => live
                .and_then(|live| adopt(live, hash, &body, autoscaled))
                .inspect(|adopted| self.applies.put(key.clone(), adopted.clone())),
        };
        // Nobody but us holds the replicas of a workload we let go of: hand them over, at their
        // live value before our apply releases them, or at the autoscaler's floor right after
        // our apply creates the workload (see `send`). Our record says when we did, until the
        // watch shows it.
        let handed_over = last.as_ref().is_some_and(|last| last.handed_over);
        let needs_hand_over =
            autoscaled && !handed_over && !live.is_some_and(|live| replicas_held(live));
        let skip = !must_apply(last.as_ref(), hash, live_version.as_deref());
        if needs_hand_over && let Some(live) = live {
            let replicas = live.state().and_then(|state| state.replicas).unwrap_or(1);
            self.hand_over(kind, &name, replicas).await?;
            if let Some(last) = last.as_ref().filter(|_| skip) {
                let record = Record {
                    handed_over: true,
                    ..last.clone()
                };
                self.applies.put(key.clone(), record);
            }
        }
        if skip {
            return Ok(Prepared::Unchanged(last.and_then(|last| last.problem)));
        }
        body["metadata"]["annotations"][APPLIED_HASH] = Value::String(hex(hash));
        let role = match child {
            Child::RoleBinding(binding) => Some(binding.role_ref.name.clone()),
            _ => None,
        };
        Ok(Prepared::Send(Outgoing {
            kind,
            name,
            body,
            hash,
            live_version,
            role,
            autoscaled,
            hand_over_at_creation: needs_hand_over && live.is_none(),
            handed_over,
        }))
    }

    /// Whether a dry run can judge `send`: not a binding of a Role that does not exist yet, which
    /// the API server refuses until the Role is written. Such a binding is written last, after
    /// everything else of the change, checked only by its write (its Role is checked, by a dry
    /// run or its own write).
    pub(super) fn can_dry_run(&self, send: &Outgoing) -> bool {
        send.role.as_ref().is_none_or(|role| {
            self.snapshot
                .children
                .contains_key(&(ChildKind::Role, role.clone()))
        })
    }

    /// Server-side applies `send` (strict field validation), as a dry run or for real; a conflict
    /// or a refusal is returned as a [`Problem`], other failures as errors, to be retried.
    pub(super) async fn send(&self, send: &Outgoing, mode: Mode) -> Result<Option<Problem>> {
        let (kind, name) = (send.kind, &send.name);
        let kind_name = kind.api_resource().kind;
        let key = self.key(kind, name);
        let mut params = PatchParams::apply(OPERATOR_MANAGER).validation_strict();
        if mode == Mode::DryRun {
            params = params.dry_run();
        }
        let api = self.api(kind);
        let sent = match api.patch(name, &params, &Patch::Apply(&send.body)).await {
            // Only our own hand-over manager holds what we set: the replicas of a workload whose
            // autoscaling was removed, which nobody scaled since. Ours to take back.
            Err(kube::Error::Api(status)) if status.code == 409 && only_handed_over(&status) => {
                api.patch(name, &params.force(), &Patch::Apply(&send.body))
                    .await
            }
            sent => sent,
        };
        match sent {
            Ok(mut object) => {
                if mode == Mode::Write {
                    if send.hand_over_at_creation {
                        let floor = self.floors.get(name).copied().unwrap_or(1);
                        object = self.hand_over(kind, name, floor.into()).await?;
                    }
                    // Versioned the way the watch stores it (see `version`).
                    let object = Live::from(object);
                    let record = Record {
                        hash: send.hash,
                        version: version(&object, send.autoscaled).unwrap_or_default(),
                        problem: None,
                        handed_over: send.autoscaled,
                    };
                    self.applies.put(key, record);
                }
                Ok(None)
            }
            // A conflict or a refusal is reported; throttling and server errors are retried.
            Err(kube::Error::Api(status))
                if (400..500).contains(&status.code) && status.code != 429 =>
            {
                let name = &send.name;
                if status.code != 409 {
                    // A refusal (quota, webhook) can be lifted without the child changing: it is
                    // not remembered, so the next reconcile tries again.
                    let line = format!("{kind_name} {name}: {}", status.message);
                    return Ok(Some(Problem::Rejected(line)));
                }
                let line = format!("{kind_name} {name}: {}", conflict_fields(&status));
                let problem = Problem::Conflict(line);
                if let Some(version) = &send.live_version {
                    let record = Record {
                        hash: send.hash,
                        version: version.clone(),
                        problem: Some(problem.clone()),
                        handed_over: send.handed_over,
                    };
                    self.applies.put(key, record);
                }
                Ok(Some(problem))
            }
            Err(source) => Err(Error::Apply {
                kind: kind_name,
                name: send.name.clone(),
                source,
            }),
        }
    }

    /// Sets `spec.replicas` of a workload to `replicas` under [`REPLICAS_HANDOVER_MANAGER`], which
    /// holds nothing else: the field stays when our own apply lets go of it, and the autoscaler or
    /// `kubectl scale` (updates through the scale subresource) take it from that manager without
    /// a conflict. Returns the object as it is afterwards.
    async fn hand_over(&self, kind: ChildKind, name: &str, replicas: i64) -> Result<DynamicObject> {
        let resource = kind.api_resource();
        let body = serde_json::json!({
            "apiVersion": resource.api_version,
            "kind": resource.kind,
            "metadata": {"name": name},
            "spec": {"replicas": replicas},
        });
        let params = PatchParams::apply(REPLICAS_HANDOVER_MANAGER);
        self.api(kind)
            .patch(name, &params, &Patch::Apply(&body))
            .await
            .map_err(|source| Error::Apply {
                kind: resource.kind,
                name: name.to_string(),
                source,
            })
    }

    /// Deletes a child that is no longer rendered.
    pub(super) async fn delete(&self, kind: ChildKind, object: &Live) -> Result<()> {
        let name = object.name_any();
        // The uid precondition guarantees we delete exactly the object we judged ours.
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: object.uid(),
                resource_version: None,
            }),
            propagation_policy: Some(kube::api::PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match self.api(kind).delete(&name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
            Err(source) => {
                return Err(Error::Delete {
                    kind: kind.api_resource().kind,
                    name,
                    source,
                });
            }
        }
        self.applies.forget(&self.key(kind, &name));
        Ok(())
    }
}
