//! The tests on a tier-3 cluster (real nodes, the operator and the stand-in images in its
//! registry): every test's name starts with `tier3_`, as `tests/run-e2e.sh` selects them.

mod bench;
mod helm;
mod operator;
mod planner;
mod standin;
