#!/usr/bin/env bash
# The end-to-end suite: builds the local control plane if needed (cached under ~/.cache), builds the
# binaries the tests spawn and the four test executables of infera-e2e (before the cluster starts:
# 2 cores), brings up a tier-2 cluster and runs there the tests of tests/tests/shared, one module at
# a time (each module's tests side by side), while the library's own tests and those of
# tests/tests/isolated (no shared cluster) run beside them; then brings up a tier-3 cluster (real
# nodes, root) for tests/tests/tier3, with the operator and NATS images of release/build.sh
# (target/image, target/nats-image; `make test` builds them first) and the stand-in for the
# rocm/infera images (tests/upstream/image.sh) in its registry. Clusters always come down. Exits
# non-zero if any test failed.
#
#   tests/run-e2e.sh [-- <extra libtest args, e.g. a test name filter>]
#
# Environment: CARGO (default cargo); E2E_TEST_THREADS (default 4; E2E_ISOLATED_THREADS, default 2,
# for the isolated tests beside them); K8S_TEST_DIR (default
# /tmp/infera-e2e, separate from `make cluster-up`'s /tmp/infera-cluster so a developer's cluster is
# left alone; tier 3 uses the same path with -t3; both are removed after a passing run);
# E2E_KEEP_CLUSTER=1 leaves the cluster running afterwards.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CARGO="${CARGO:-cargo}"
THREADS="${E2E_TEST_THREADS:-4}"
ISOLATED_THREADS="${E2E_ISOLATED_THREADS:-2}"
export K8S_TEST_DIR="${K8S_TEST_DIR:-/tmp/infera-e2e}"
extra=()
[[ ${1:-} == "--" ]] && { shift; extra=("$@"); }
log() { printf '==> %s\n' "$*" >&2; }
T0=$SECONDS

log "control-plane binaries (tests/cluster/build.sh)"
tests/cluster/build.sh >&2
# shellcheck source=tests/cluster/versions.sh
source tests/cluster/versions.sh
# shellcheck source=release/versions.sh
source release/versions.sh
# Tests that run kubectl get the one built with the control plane (same version as the server).
export PATH="$K8S_TEST_BIN:$PATH"

log "upstream Infera's parsers in venvs (tests/upstream/setup.sh; upstream_parsers.rs runs them)"
tests/upstream/setup.sh >&2
log "upstream Infera's Go operator (tests/upstream/operator.sh; upstream_differential.rs runs it)"
tests/upstream/operator.sh >&2
log "the stand-ins for the rocm/infera images (tests/upstream/image.sh; the tier-3 tests run them)"
standin_sglang="$(tests/upstream/image.sh sglang | tail -n1)"
standin_vllm="$(tests/upstream/image.sh vllm | tail -n1)"
log "inference-perf's image (tests/cluster/bench-image.sh; the tier-3 bench test runs it)"
bench_image="$(tests/cluster/bench-image.sh | tail -n1)"

log "building infera-operator, kubectl-infera and the e2e tests"
"$CARGO" build --locked -p infera-operator -p kubectl-infera
# The test executables by target name: infera_e2e (the library's unit tests), shared, isolated, tier3.
declare -A exe
while read -r name path; do exe[$name]=$path; done < <(
  "$CARGO" test --locked -p infera-e2e --no-run --message-format=json-render-diagnostics |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')
for name in infera_e2e shared isolated tier3; do
  [[ -n ${exe[$name]:-} ]] || { echo "run-e2e.sh: cargo built no test executable $name" >&2; exit 1; }
done
# Runs a test executable as cargo would (from the package's directory).
run_tests() { (cd tests && "$@"); }
# Stops a process and everything it started.
# shellcheck disable=SC2317  # run by finish
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

log "starting a tier-2 cluster in $K8S_TEST_DIR"
up_out="$(tests/cluster/up.sh --tier 2)"
last="$(tail -n1 <<<"$up_out")"
[[ $last == "export KUBECONFIG="* ]] || { echo "run-e2e.sh: unexpected up.sh output: $up_out" >&2; exit 1; }
eval "$last"

# shellcheck disable=SC2317  # run by the EXIT trap
finish() {
  local rc=$?
  if ((rc != 0)); then
    echo "run-e2e.sh: failed (exit $rc); last lines of the cluster's logs ($K8S_TEST_DIR/logs):" >&2
    for f in "$K8S_TEST_DIR"/logs/*.log; do
      [[ -f $f ]] || continue
      echo "--- $(basename "$f")" >&2
      tail -n 15 "$f" >&2
    done
    local logs="${CARGO_TARGET_DIR:-$ROOT/target}/e2e-logs"
    [[ -d $logs ]] && echo "logs of processes the tests spawned: $logs" >&2
  fi
  [[ -z ${isolated_pid:-} ]] || kill_tree "$isolated_pid"
  if [[ ${E2E_KEEP_CLUSTER:-} == 1 ]]; then
    echo "run-e2e.sh: cluster left running (E2E_KEEP_CLUSTER=1): export KUBECONFIG=$KUBECONFIG; stop it with K8S_TEST_DIR=$K8S_TEST_DIR tests/cluster/down.sh" >&2
  else
    tests/cluster/down.sh || true
    # A passing run leaves no state behind (tier 3's image stores hold gigabytes); a failing one
    # keeps it for its logs. --one-file-system: down.sh unmounted the nodes' mounts, and should one
    # remain, what it shows is not ours to delete.
    ((rc != 0)) || rm -rf --one-file-system "${K8S_TEST_DIR%-t3}" "${K8S_TEST_DIR%-t3}-t3"
  fi
  log "e2e finished in $((SECONDS - T0))s (exit $rc)"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

log "the library's and the isolated tests beside the shared ones ($ISOLATED_THREADS test threads; their output follows theirs)"
isolated_log="$(mktemp)"
(
  irc=0
  run_tests "${exe[infera_e2e]}" "${extra[@]}" || irc=$?
  run_tests "${exe[isolated]}" --test-threads="$ISOLATED_THREADS" "${extra[@]}" || irc=$?
  exit "$irc"
) >"$isolated_log" 2>&1 &
isolated_pid=$!

log "the shared cluster's tests, one module at a time ($THREADS test threads)"
rc=0
mapfile -t names < <(run_tests "${exe[shared]}" --list --format terse "${extra[@]}" | sed -n 's/: test$//p')
# Without a filter, an empty list is a broken executable, not a pass.
((${#names[@]} || ${#extra[@]})) || { echo "run-e2e.sh: ${exe[shared]} lists no tests" >&2; exit 1; }
mapfile -t modules < <(printf '%s\n' "${names[@]}" | sed -n 's/::.*//p' | uniq)
for module in "${modules[@]}"; do
  mapfile -t these < <(printf '%s\n' "${names[@]}" | grep "^$module::")
  run_tests "${exe[shared]}" --exact --test-threads="$THREADS" "${these[@]}" || rc=$?
done
wait "$isolated_pid" || rc=$?
isolated_pid=
cat "$isolated_log"
rm -f "$isolated_log"
[[ ${E2E_KEEP_CLUSTER:-} == 1 ]] || tests/cluster/down.sh || true

T3=$SECONDS
export K8S_TEST_DIR="$K8S_TEST_DIR-t3"
image="$ROOT/target/image"
[[ -f $image/index.json ]] || { echo "run-e2e.sh: the operator image is missing ($image): run make release (make test does)" >&2; exit 1; }
log "starting a tier-3 cluster in $K8S_TEST_DIR"
up_out="$(tests/cluster/up.sh --tier 3)"
eval "$(tail -n1 <<<"$up_out")"
tests/cluster/load-image.sh "$image" ghcr.io/amd/infera/operator:0.1.0
tests/cluster/load-image.sh "$ROOT/target/nats-image" "$NATS_IMAGE_REPO:${NATS_SERVER_VERSION#v}"
tests/cluster/load-image.sh "$standin_sglang" rocm/infera:sglang-v0.1.1
tests/cluster/load-image.sh "$standin_vllm" rocm/infera:vllm-v0.1.1
tests/cluster/load-image.sh "$bench_image" quay.io/inference-perf/inference-perf:v0.7.0
log "running the tier-3 tests"
run_tests "${exe[tier3]}" --test-threads="$THREADS" --skip tier3_helm_ --skip tier3_the_planner_ --skip tier3_bench_ \
  --skip tier3_a_lockstep_ "${extra[@]}" || rc=$?
# A rollout that loses no request is a promise about the graph, not about a CPU the other tests
# saturate: beside them, the routers answered 503 to 318 of 356 requests for minutes of the
# rollout (upstream's PD dispatch fails closed while a side is empty, infera/server/scaling.py:
# 276-280) in the CI of 7154b99; alone, with the same images, it lost none (119 s).
log "the Lockstep rollout under requests on tier 3, alone"
run_tests "${exe[tier3]}" tier3_a_lockstep_ "${extra[@]}" || rc=$?
# Its load (senders of long completions for a minute or two) would slow the others' own load
# checks on two cores, and their traffic would blur its latencies.
log "the SLO planner on tier 3, alone"
run_tests "${exe[tier3]}" tier3_the_planner_ "${extra[@]}" || rc=$?
# The figures of a bench run are latencies: on a CPU the other tests saturate, the router's relay
# falls behind and delivers chunks together (an ITL p50 of 0.8 ms, CI of 7914448).
log "kubectl infera bench on tier 3, alone"
run_tests "${exe[tier3]}" tier3_bench_ "${extra[@]}" || rc=$?
log "the Helm install on tier 3, alone (it replaces the operator init installed)"
run_tests "${exe[tier3]}" tier3_helm_ "${extra[@]}" || rc=$?
log "tier 3 took $((SECONDS - T3))s"
exit "$rc"
