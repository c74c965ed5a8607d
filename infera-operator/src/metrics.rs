//! Prometheus metrics, and the readiness flag `/readyz` reports.

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::Instant,
};

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

use crate::Error;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub error: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerbLabels {
    pub verb: String,
}

/// Every metric the operator exports.
pub struct Metrics {
    registry: Registry,
    reconciles: Counter,
    failures: Family<ErrorLabels, Counter>,
    duration: Histogram,
    requests: Family<VerbLabels, Counter>,
    leader: Gauge,
    ready: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("infera");
        let reconciles = Counter::default();
        let failures = Family::<ErrorLabels, Counter>::default();
        let duration = Histogram::new([
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
        ]);
        let requests = Family::<VerbLabels, Counter>::default();
        let leader = Gauge::default();
        registry.register("reconciles", "Reconciles started", reconciles.clone());
        registry.register(
            "reconcile_errors",
            "Reconciles that failed, by error",
            failures.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Time per reconcile",
            duration.clone(),
        );
        registry.register(
            "api_requests",
            "Requests sent to the Kubernetes API, by HTTP verb",
            requests.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica holds the leader Lease",
            leader.clone(),
        );
        Self {
            registry,
            reconciles,
            failures,
            duration,
            requests,
            leader,
            ready: AtomicBool::new(false),
        }
    }
}

/// Observes a reconcile's duration when dropped.
pub struct ReconcileTimer<'a> {
    histogram: &'a Histogram,
    start: Instant,
}

impl Drop for ReconcileTimer<'_> {
    fn drop(&mut self) {
        self.histogram.observe(self.start.elapsed().as_secs_f64());
    }
}

impl Metrics {
    pub fn reconcile_timer(&self) -> ReconcileTimer<'_> {
        self.reconciles.inc();
        ReconcileTimer {
            histogram: &self.duration,
            start: Instant::now(),
        }
    }

    pub fn reconcile_failure(&self, error: &Error) {
        self.failures
            .get_or_create(&ErrorLabels {
                error: error.metric_label(),
            })
            .inc();
    }

    pub fn api_request(&self, verb: &str) {
        self.requests
            .get_or_create(&VerbLabels {
                verb: verb.to_string(),
            })
            .inc();
    }

    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }

    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
