//! The tests that need no shared cluster: the release's artifacts, upstream's own parsers and
//! operator, and tests with a private control plane of their own (`PrivateCluster`).
//! `tests/run-e2e.sh` runs them beside the tests of `shared`.

mod monitoring_rules;
mod operator_crd_outdated;
mod operator_outage;
mod planner_replay;
mod plugin_bench_flags;
mod plugin_doctor_bare;
mod plugin_garbage_input;
mod release_binaries;
mod release_image;
mod release_notices;
mod upstream_differential;
mod upstream_parsers;
mod upstream_vllm_follower;
