#!/usr/bin/env bash
# The end-to-end suite: builds the local control plane if needed (cached under ~/.cache), builds the
# binaries the tests spawn and the test binaries (before the cluster starts: 2 cores), brings up a
# tier-2 cluster, runs `cargo test -p infera-e2e` but the tier-3 tests, and always brings the cluster
# down; then the same on a tier-3 cluster (real nodes, root) for the tests named `tier3_*`, with the
# operator and NATS images of release/build.sh (target/image, target/nats-image; `make test` builds
# them first) and the stand-in
# for the rocm/infera images (tests/upstream/image.sh) in its registry. Exits non-zero if either
# run failed.
#
#   tests/run-e2e.sh [-- <extra libtest args, e.g. a test name filter>]
#
# Environment: CARGO (default cargo); E2E_TEST_THREADS (default 4); K8S_TEST_DIR (default
# /tmp/infera-e2e, separate from `make cluster-up`'s /tmp/infera-cluster so a developer's cluster is
# left alone); E2E_KEEP_CLUSTER=1 leaves the cluster running afterwards.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CARGO="${CARGO:-cargo}"
THREADS="${E2E_TEST_THREADS:-4}"
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

log "building infera-operator, kubectl-infera and the e2e tests"
"$CARGO" build --locked -p infera-operator -p kubectl-infera
"$CARGO" test --locked -p infera-e2e --no-run

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
  if [[ ${E2E_KEEP_CLUSTER:-} == 1 ]]; then
    echo "run-e2e.sh: cluster left running (E2E_KEEP_CLUSTER=1): export KUBECONFIG=$KUBECONFIG; stop it with K8S_TEST_DIR=$K8S_TEST_DIR tests/cluster/down.sh" >&2
  else
    tests/cluster/down.sh || true
  fi
  log "e2e finished in $((SECONDS - T0))s (exit $rc)"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

log "running the e2e suite ($THREADS test threads)"
# --no-fail-fast: a failing test binary does not hide the results of the ones after it.
rc=0
"$CARGO" test --locked --no-fail-fast -p infera-e2e -- --test-threads="$THREADS" --skip tier3_ "${extra[@]}" || rc=$?
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
log "running the tier-3 tests"
"$CARGO" test --locked --no-fail-fast -p infera-e2e -- --test-threads="$THREADS" tier3_ --skip tier3_helm_ "${extra[@]}" || rc=$?
log "the Helm install on tier 3, alone (it replaces the operator init installed)"
"$CARGO" test --locked --no-fail-fast -p infera-e2e --test helm -- tier3_helm_ "${extra[@]}" || rc=$?
log "tier 3 took $((SECONDS - T3))s"
exit "$rc"
