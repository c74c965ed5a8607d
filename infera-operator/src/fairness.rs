//! Fairness in front of kube-runtime's queue: a deployment the operator has reconciled before and
//! that a user changed must not wait behind a burst of thousands of new ones.
//!
//! kube-runtime's scheduler runs its entries in the order they became due, so every trigger that
//! reaches it queues behind all the earlier ones. The gate below holds back the deployments this
//! process has not reconciled yet (a burst of creates, or every deployment on a cold start) and lets
//! at most `window` of them into the scheduler at a time, releasing the next one as each finishes.
//! Everything else passes at once: a change to a deployment reconciled before (its
//! `observedGeneration` is behind its `generation`), and any trigger of a deployment already
//! reconciled or in flight. So a change waits behind at most `window` entries, not the whole burst.

use std::collections::{HashSet, VecDeque};

use futures::{Stream, StreamExt, future::Either, stream};
use infera_core::InferaDeployment;
use kube::runtime::{
    reflector::{ObjectRef, Store},
    watcher,
};

type Key = ObjectRef<InferaDeployment>;

/// A reconcile that ended, as the controller reports it.
pub enum Ended {
    /// Reconciled, with any result.
    Reconciled(Key),
    /// A trigger found the deployment deleted.
    Gone(Key),
}

/// Which deployments go to the scheduler now and which wait their turn. Pure: the stream adaptor
/// [`gate`] feeds it. It holds names only; the deployments themselves stay in the reflector's store.
pub struct Lanes {
    window: usize,
    /// Reconciled at least once by this process.
    reconciled: HashSet<Key>,
    /// Let in for their first reconcile, not finished yet.
    admitted: HashSet<Key>,
    /// Waiting for a first reconcile, oldest first; an entry no longer in `queued` is skipped.
    waiting: VecDeque<Key>,
    queued: HashSet<Key>,
}

impl Lanes {
    pub fn new(window: usize) -> Self {
        Self {
            window: window.max(1),
            reconciled: HashSet::new(),
            admitted: HashSet::new(),
            waiting: VecDeque::new(),
            queued: HashSet::new(),
        }
    }

    /// The watch delivered `idep`: whether it goes to the scheduler now (else it waits its turn).
    pub fn arrived(&mut self, idep: &InferaDeployment) -> bool {
        let key = ObjectRef::from(idep);
        if self.reconciled.contains(&key) || self.admitted.contains(&key) {
            return true;
        }
        // A change to a deployment reconciled before goes first, even out of the line.
        let changed = changed_since_reconciled(idep);
        if changed {
            self.queued.remove(&key);
        }
        if self.queued.contains(&key) {
            return false;
        }
        if changed || self.admitted.len() < self.window {
            self.admitted.insert(key);
            return true;
        }
        self.waiting.push_back(key.clone());
        self.queued.insert(key);
        false
    }

    /// A reconcile ended: the deployments let in to take its place, oldest first.
    pub fn ended(&mut self, ended: Ended) -> Vec<Key> {
        match ended {
            Ended::Reconciled(key) => {
                self.admitted.remove(&key);
                self.reconciled.insert(key);
            }
            Ended::Gone(key) => {
                self.admitted.remove(&key);
                self.reconciled.remove(&key);
            }
        }
        let mut released = Vec::new();
        while self.admitted.len() < self.window {
            let Some(key) = self.waiting.pop_front() else {
                break;
            };
            if self.queued.remove(&key) {
                self.admitted.insert(key.clone());
                released.push(key);
            }
        }
        released
    }
}

/// A deployment some reconcile (of this or an earlier operator) reported on, changed since.
fn changed_since_reconciled(idep: &InferaDeployment) -> bool {
    let observed = idep.status.as_ref().and_then(|s| s.observed_generation);
    observed.is_some() && observed != idep.metadata.generation
}

/// The watch's deployments, re-ordered by [`Lanes`]; `ended` says when reconciles end, `store`
/// (the controller's) holds the newest version of each. Watch errors pass through.
pub fn gate(
    deployments: impl Stream<Item = Result<InferaDeployment, watcher::Error>> + Send + 'static,
    ended: impl Stream<Item = Ended> + Send + 'static,
    store: Store<InferaDeployment>,
    window: usize,
) -> impl Stream<Item = Result<InferaDeployment, watcher::Error>> + Send + 'static {
    let input = stream::select(deployments.map(Either::Left), ended.map(Either::Right));
    input
        .scan(Lanes::new(window), move |lanes, input| {
            let mut out = Vec::new();
            match input {
                Either::Left(Ok(idep)) if lanes.arrived(&idep) => out.push(Ok(idep)),
                Either::Left(Ok(_)) => {}
                Either::Left(Err(error)) => out.push(Err(error)),
                Either::Right(ended) => {
                    let mut released = VecDeque::from(lanes.ended(ended));
                    while let Some(key) = released.pop_front() {
                        match store.get(&key) {
                            Some(idep) => out.push(Ok(idep.as_ref().clone())),
                            // Deleted while waiting: its turn passes to the next.
                            None => released.extend(lanes.ended(Ended::Gone(key))),
                        }
                    }
                }
            }
            std::future::ready(Some(stream::iter(out)))
        })
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idep(name: &str, generation: i64, observed: Option<i64>) -> InferaDeployment {
        let mut idep: InferaDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "infera.amd.com/v1alpha1", "kind": "InferaDeployment",
            "metadata": {"name": name, "namespace": "ns", "generation": generation},
            "spec": {"backendFramework": "sglang", "image": "i", "services": {}},
        }))
        .expect("a deployment");
        if let Some(observed) = observed {
            idep.status = Some(infera_core::InferaDeploymentStatus {
                observed_generation: Some(observed),
                ..Default::default()
            });
        }
        idep
    }

    fn key(name: &str) -> Key {
        ObjectRef::new(name).within("ns")
    }

    fn finished(name: &str) -> Ended {
        Ended::Reconciled(key(name))
    }

    #[test]
    fn a_burst_is_let_in_window_by_window_in_arrival_order() {
        let mut lanes = Lanes::new(2);
        let let_in: Vec<bool> = ["a", "b", "c", "d"]
            .iter()
            .map(|name| lanes.arrived(&idep(name, 1, None)))
            .collect();
        assert_eq!(let_in, [true, true, false, false]);
        assert_eq!(lanes.ended(finished("b")), [key("c")]);
        assert_eq!(lanes.ended(finished("a")), [key("d")]);
        assert_eq!(lanes.ended(finished("c")), []);
    }

    #[test]
    fn a_change_to_a_reconciled_deployment_jumps_the_backlog() {
        let mut lanes = Lanes::new(1);
        for name in ["a", "b", "c"] {
            lanes.arrived(&idep(name, 1, None));
        }
        // Reconciled by an earlier operator, changed since: straight to the scheduler.
        assert!(lanes.arrived(&idep("old", 3, Some(2))));
        // Reconciled by this process, triggered again (its own status write, a child, a change).
        lanes.ended(finished("old"));
        assert_eq!(lanes.ended(finished("a")), [key("b")]);
        assert!(lanes.arrived(&idep("a", 2, Some(1))));
        assert!(lanes.arrived(&idep("a", 2, Some(2))));
    }

    #[test]
    fn a_waiting_deployment_is_let_in_once() {
        let mut lanes = Lanes::new(1);
        lanes.arrived(&idep("a", 1, None));
        assert!(!lanes.arrived(&idep("b", 1, None)));
        assert!(!lanes.arrived(&idep("b", 2, None)));
        assert_eq!(lanes.ended(finished("a")), [key("b")]);
        // Admitted and in flight: its next triggers pass.
        assert!(lanes.arrived(&idep("b", 3, None)));
        assert_eq!(lanes.ended(finished("b")), []);
    }

    #[test]
    fn a_deployment_changed_while_waiting_leaves_the_line() {
        let mut lanes = Lanes::new(1);
        for name in ["a", "b", "c"] {
            lanes.arrived(&idep(name, 4, Some(4)));
        }
        assert!(lanes.arrived(&idep("c", 5, Some(4))));
        assert_eq!(lanes.ended(finished("a")), []);
        assert_eq!(lanes.ended(finished("c")), [key("b")]);
    }

    #[test]
    fn unchanged_deployments_on_a_cold_start_wait_their_turn_too() {
        let mut lanes = Lanes::new(1);
        assert!(lanes.arrived(&idep("a", 4, Some(4))));
        assert!(!lanes.arrived(&idep("b", 4, Some(4))));
        assert_eq!(lanes.ended(finished("a")), [key("b")]);
    }

    #[test]
    fn a_deleted_deployment_gives_up_its_turn() {
        let mut lanes = Lanes::new(1);
        lanes.arrived(&idep("a", 1, None));
        lanes.arrived(&idep("b", 1, None));
        lanes.arrived(&idep("c", 1, None));
        assert_eq!(lanes.ended(Ended::Gone(key("a"))), [key("b")]);
        assert_eq!(lanes.ended(Ended::Gone(key("b"))), [key("c")]);
    }
}
