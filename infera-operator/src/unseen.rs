//! Our status writes that the watch has not shown yet.
//!
//! A reconcile reads its InferaDeployment from the watch cache. One that starts right after the
//! previous reconcile of the same deployment wrote its status (a child's event queued meanwhile)
//! can read the deployment as it was before that write: it would compute the same status, find it
//! different from the cached one, write it again and publish the same transition a second time.
//! Over 300 new deployments that was 36 status writes and Events too many (benchmark
//! `operator_apply`). So the reconcile reads the deployment through [`UnseenStatuses::latest`],
//! which puts back the status we wrote while the cache is older than our write.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use infera_core::{InferaDeployment, InferaDeploymentStatus};
use kube::{Resource, runtime::reflector::ObjectRef};

/// Per deployment, our last status write until the watch shows it (or something newer).
#[derive(Default)]
pub struct UnseenStatuses(Mutex<HashMap<ObjectRef<InferaDeployment>, Unseen>>);

struct Unseen {
    /// Versions of the deployment older than our last write: the one it was computed on, and
    /// those our earlier writes, not seen yet either, made.
    older: Vec<String>,
    /// The version our last write made.
    newest: Option<String>,
    status: InferaDeploymentStatus,
}

/// At most this many older versions are remembered per deployment (each write the watch has not
/// shown adds one; the watch shows them within milliseconds).
const OLDER: usize = 8;

impl UnseenStatuses {
    /// `idep` with the status we last wrote when the cached `idep` is a version from before that
    /// write; as it is otherwise (the cache shows our write, or someone else's newer one, and the
    /// record is dropped).
    pub fn latest(&self, idep: Arc<InferaDeployment>) -> Arc<InferaDeployment> {
        let Ok(mut unseen) = self.0.lock() else {
            return idep;
        };
        let key = ObjectRef::from(idep.as_ref());
        let Some(record) = unseen.get(&key) else {
            return idep;
        };
        let version = idep.meta().resource_version.as_ref();
        if version.is_some_and(|v| record.newest.as_ref() != Some(v) && record.older.contains(v)) {
            let mut latest = (*idep).clone();
            latest.status = Some(record.status.clone());
            return Arc::new(latest);
        }
        unseen.remove(&key);
        idep
    }

    /// Records that `status` was written over `idep` (as [`latest`](Self::latest) gave it),
    /// making version `made`.
    pub fn wrote(
        &self,
        idep: &InferaDeployment,
        status: &InferaDeploymentStatus,
        made: Option<String>,
    ) {
        let Ok(mut unseen) = self.0.lock() else {
            return;
        };
        let record = unseen
            .entry(ObjectRef::from(idep))
            .or_insert_with(|| Unseen {
                older: Vec::new(),
                newest: None,
                status: status.clone(),
            });
        let before = idep.meta().resource_version.clone();
        for version in [before, record.newest.take()].into_iter().flatten() {
            if !record.older.contains(&version) {
                record.older.push(version);
            }
        }
        if record.older.len() > OLDER {
            record.older.drain(..record.older.len() - OLDER);
        }
        record.newest = made;
        record.status = status.clone();
    }

    /// Forgets a deployment that is gone.
    pub fn forget(&self, deployment: &ObjectRef<InferaDeployment>) {
        if let Ok(mut unseen) = self.0.lock() {
            unseen.remove(deployment);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use infera_core::State;

    fn at(version: &str, state: Option<State>) -> Arc<InferaDeployment> {
        let mut idep: InferaDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": "d", "namespace": "n", "resourceVersion": version},
            "spec": {"backendFramework": "sglang", "image": "i", "services": {}},
        }))
        .expect("a deployment");
        idep.status = state.map(|state| InferaDeploymentStatus {
            state: Some(state),
            ..Default::default()
        });
        Arc::new(idep)
    }

    fn state(idep: &InferaDeployment) -> Option<State> {
        idep.status.as_ref().and_then(|s| s.state)
    }

    fn ready() -> InferaDeploymentStatus {
        InferaDeploymentStatus {
            state: Some(State::Ready),
            ..Default::default()
        }
    }

    #[test]
    fn a_cache_older_than_our_write_reads_the_status_we_wrote() {
        let unseen = UnseenStatuses::default();
        let before = at("10", Some(State::Pending));
        assert_eq!(state(&unseen.latest(before.clone())), Some(State::Pending));
        unseen.wrote(&before, &ready(), Some("11".into()));
        assert_eq!(
            state(&unseen.latest(at("10", Some(State::Pending)))),
            Some(State::Ready)
        );
    }

    #[test]
    fn a_cache_that_shows_our_write_or_a_newer_version_is_read_as_it_is() {
        for seen in ["11", "12"] {
            let unseen = UnseenStatuses::default();
            unseen.wrote(&at("10", None), &ready(), Some("11".into()));
            let cached = at(seen, Some(State::Degraded));
            assert_eq!(state(&unseen.latest(cached)), Some(State::Degraded));
            // The record is gone: the old version is read as it is from now on.
            assert_eq!(state(&unseen.latest(at("10", None))), None);
        }
    }

    #[test]
    fn a_second_write_before_the_watch_showed_the_first_counts_both_versions_as_older() {
        let unseen = UnseenStatuses::default();
        let before = at("10", Some(State::Pending));
        unseen.wrote(&before, &ready(), Some("11".into()));
        let failed = InferaDeploymentStatus {
            state: Some(State::Failed),
            ..Default::default()
        };
        unseen.wrote(&unseen.latest(before), &failed, Some("12".into()));
        for older in ["10", "11"] {
            assert_eq!(state(&unseen.latest(at(older, None))), Some(State::Failed));
        }
        assert_eq!(state(&unseen.latest(at("12", None))), None);
    }

    #[test]
    fn a_forgotten_deployment_is_read_as_it_is() {
        let unseen = UnseenStatuses::default();
        let before = at("10", None);
        unseen.wrote(&before, &ready(), Some("11".into()));
        unseen.forget(&ObjectRef::from(before.as_ref()));
        assert_eq!(state(&unseen.latest(before)), None);
    }
}
