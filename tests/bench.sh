#!/usr/bin/env bash
# The benchmarks (`make bench`), each failing when it misses a goal its page states: the fleet at
# scale (tests/benches/operator_apply.rs, docs/performance.md "Goals"), the Lockstep rollout against
# its slower pool alone (rollout_lockstep.rs, docs/rollouts.md: within 1.2×) and the SLO planner
# over its load trace (planner_trace.rs, docs/planner.md "Benchmark"). The cluster benchmarks run
# the operator and plugin of a release build of this machine (`cargo build --release`: the debug
# plugin parses JSON several times slower) on a tier-2 cluster of their own, brought up and down
# here. Not part of `make test`: the fleet alone takes tens of minutes at 5,000.
#
#   tests/bench.sh
#
# Environment: INFERA_BENCH_SIZES (default 1000; 1000,5000 for both sizes), and each benchmark's
# own (INFERA_BENCH_SOAK_SECONDS, INFERA_BENCH_ROUNDS, INFERA_BENCH_READY_DELAY: see their files);
# K8S_TEST_DIR (default /tmp/infera-bench). Exits non-zero if any benchmark failed or missed a goal.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CARGO="${CARGO:-cargo}"
export K8S_TEST_DIR="${K8S_TEST_DIR:-/tmp/infera-bench}"
export INFERA_BENCH_SIZES="${INFERA_BENCH_SIZES:-1000}"
log() { printf '==> %s\n' "$*" >&2; }

log "control-plane binaries (tests/cluster/build.sh)"
tests/cluster/build.sh >&2
# shellcheck source=tests/cluster/versions.sh
source tests/cluster/versions.sh
export PATH="$K8S_TEST_BIN:$PATH"
log "building the release's infera-operator and kubectl-infera for this machine, and the benchmarks"
"$CARGO" build --locked --release -p infera-operator -p kubectl-infera
"$CARGO" bench --locked -p infera-e2e --no-run
release="${CARGO_TARGET_DIR:-$ROOT/target}/release"
export INFERA_E2E_OPERATOR="$release/infera-operator" INFERA_E2E_PLUGIN="$release/kubectl-infera"

log "the SLO planner over its load trace (no cluster)"
failed=()
"$CARGO" bench --locked -p infera-e2e --bench planner_trace || failed+=(planner_trace)

log "starting a tier-2 cluster in $K8S_TEST_DIR"
up_out="$(tests/cluster/up.sh --tier 2)"
last="$(tail -n1 <<<"$up_out")"
[[ $last == "export KUBECONFIG="* ]] || { echo "bench.sh: unexpected up.sh output: $up_out" >&2; exit 1; }
eval "$last"
trap 'tests/cluster/down.sh >&2 || true' EXIT
for bench in rollout_lockstep operator_apply; do
  log "$bench"
  "$CARGO" bench --locked -p infera-e2e --bench "$bench" || failed+=("$bench")
done
if ((${#failed[@]})); then
  echo "bench.sh: failed or missed a goal: ${failed[*]}" >&2
  exit 1
fi
log "every benchmark met its goals"
