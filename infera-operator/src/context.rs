//! What every reconcile shares: the client, the watch caches, the memory of our applies, the
//! event recorder, metrics and failure counts.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use infera_core::InferaDeployment;
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{events::Reporter, reflector::ObjectRef},
};
use serde::Serialize;
use serde_json::json;

use crate::{
    Error, Result, apply::Applies, events::Recorder, metrics::Metrics, observe::Observed,
    unseen::UnseenStatuses,
};

/// What every reconcile shares.
pub struct Context {
    /// Sends applies, deletes, status writes and Events.
    pub client: Client,
    /// The watch caches reconcile reads instead of the API.
    pub observed: Observed,
    /// Our last apply of each child, so an unchanged child costs no request.
    pub applies: Applies,
    /// Our status writes the watch has not shown yet.
    pub unseen: UnseenStatuses,
    /// Publishes Events on InferaDeployments, where `kubectl describe` shows them.
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    /// How often an unchanged deployment is looked at again, to catch anything a watch missed.
    pub resync: Duration,
    /// Consecutive failed reconciles per deployment, for backing off.
    failures: Mutex<HashMap<ObjectRef<InferaDeployment>, u32>>,
}

impl Context {
    /// A context whose Events are published by `identity` (the pod name in a cluster).
    pub fn new(
        client: Client,
        observed: Observed,
        metrics: Arc<Metrics>,
        identity: String,
        resync: Duration,
    ) -> Self {
        let reporter = Reporter {
            controller: "infera-operator".into(),
            instance: Some(identity),
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            observed,
            applies: Applies::default(),
            unseen: UnseenStatuses::default(),
            metrics,
            resync,
            failures: Mutex::default(),
        }
    }

    /// Counts a failed reconcile of `deployment`; returns how many failed in a row.
    pub fn failed(&self, deployment: ObjectRef<InferaDeployment>) -> u32 {
        self.failures.lock().map_or(1, |mut failures| {
            let count = failures.entry(deployment).or_default();
            *count = count.saturating_add(1);
            *count
        })
    }

    /// How many reconciles of `deployment` failed in a row so far.
    pub fn failures(&self, deployment: &ObjectRef<InferaDeployment>) -> u32 {
        self.failures
            .lock()
            .map_or(0, |failures| failures.get(deployment).copied().unwrap_or(0))
    }

    /// Ends the run of failures of `deployment`.
    pub fn succeeded(&self, deployment: &ObjectRef<InferaDeployment>) {
        if let Ok(mut failures) = self.failures.lock() {
            failures.remove(deployment);
        }
    }

    /// Forgets a deployment that is deleted or being deleted: our applies of its children, its
    /// failures, a status its CRD refused and our status writes. Should it come back, it is
    /// applied afresh.
    pub fn forget(&self, deployment: &ObjectRef<InferaDeployment>) {
        self.applies.forget_deployment(deployment);
        self.unseen.forget(deployment);
        self.succeeded(deployment);
        self.metrics.set_crd_outdated(deployment, None);
    }

    /// Writes `status` (fields of the deployment's status) by server-side apply as `manager`,
    /// forcing when `force` — every status write goes through here. A CRD that does not declare a
    /// field it names refuses it ([`crate::undeclared_field`]): `/readyz` says so until a status
    /// of this deployment is written. Returns the deployment's resourceVersion after the write.
    pub async fn apply_status(
        &self,
        idep: &InferaDeployment,
        manager: &str,
        force: bool,
        status: impl Serialize,
    ) -> Result<Option<String>> {
        let name = idep.name_any();
        let namespace = idep
            .namespace()
            .ok_or_else(|| Error::NoNamespace { name: name.clone() })?;
        let patch = Patch::Apply(json!({
            "apiVersion": "infera.amd.com/v1alpha1",
            "kind": "InferaDeployment",
            "status": status,
        }));
        let params = PatchParams {
            force,
            ..PatchParams::apply(manager)
        };
        let written = Api::<InferaDeployment>::namespaced(self.client.clone(), &namespace)
            .patch_status(&name, &params, &patch)
            .await;
        let key = ObjectRef::from(idep);
        match written {
            Ok(written) => {
                self.metrics.set_crd_outdated(&key, None);
                Ok(written.metadata.resource_version)
            }
            Err(source) => match crate::undeclared_field(&source) {
                Some(field) => {
                    self.metrics.set_crd_outdated(&key, Some(field.clone()));
                    Err(Error::CrdOutdated {
                        name,
                        field,
                        source,
                    })
                }
                None => Err(Error::WriteStatus { name, source }),
            },
        }
    }
}
