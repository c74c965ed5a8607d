//! The tests on the shared cluster of `tests/run-e2e.sh` (tier 1 or 2: `$KUBECONFIG`). Each
//! module assumes the cluster's GPUs and cluster-scoped objects are its own tests' alone: run one
//! module at a time (its tests side by side), as `tests/run-e2e.sh` does, or filter by module:
//! `cargo test -p infera-e2e --test shared -- operator_lockstep::`.

// The seed and the merge patches infera-core's validation tests use, so the layers are tested with
// the same specs.
#[path = "../../../infera-core/tests/common/mod.rs"]
mod common;

mod bench_runs;
mod cluster_smoke;
mod crd_admission;
mod engine_health;
mod helm;
mod layers_agree;
mod operator;
mod operator_all_or_nothing;
mod operator_amd;
mod operator_conformance;
mod operator_day2;
mod operator_faults;
mod operator_fleet;
mod operator_gaie;
mod operator_history;
mod operator_keda;
mod operator_lockstep;
mod operator_missing_dependency;
mod operator_monitoring;
mod operator_planner_prometheus;
mod plugin_all_or_nothing;
mod plugin_bench;
mod plugin_faults;
mod plugin_flow;
mod plugin_gaie;
mod plugin_krew;
mod plugin_kubeconfigs;
mod plugin_load_prometheus;
mod plugin_take_over;
mod plugin_uninstall;
mod pod_overrides;
mod pod_security;
mod revision_bytes;
mod secrets;
mod upstream_discovery;
