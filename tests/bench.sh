#!/usr/bin/env bash
# The benchmarks (`make bench`), each failing when it misses a goal its page states: the fleet at
# scale (tests/benches/operator_apply.rs, docs/performance.md "Goals"), the Lockstep rollout against
# its slower pool alone (rollout_lockstep.rs, docs/rollouts.md: within 1.2×) and the SLO planner
# over its load trace (planner_trace.rs, a simulation, and planner_pods.rs, on real pods against
# fixed provisioning and an HPA: docs/planner.md "Benchmark"). The cluster benchmarks run the
# operator and plugin as released for this machine (`release/build.sh --local`: static, the
# operator allocating with jemalloc, as the goals were measured) on a tier-2 cluster of their own,
# brought up and down here, then planner_pods on a tier-3 one (root: real nodes; the operator
# image, NATS and the sglang stand-in in its registry). Not part of `make test`: the fleet alone
# takes tens of minutes at 5,000.
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
COMPONENTS=adapter tests/cluster/build.sh >&2
# shellcheck source=tests/cluster/versions.sh
source tests/cluster/versions.sh
export PATH="$K8S_TEST_BIN:$PATH"
log "the release for this machine (release/build.sh --local) and the benchmarks"
release/build.sh --local >&2
log "the sglang stand-in for the rocm/infera image (tests/upstream/image.sh)"
standin_sglang="$(tests/upstream/image.sh sglang | tail -n1)"
"$CARGO" bench --locked -p infera-e2e --no-run
# The binaries as released (static, the operator with jemalloc: the goals are theirs), out of the
# Krew archive and the image layout, which belong to this tree's inputs even when build.sh reused
# them from its cache.
# shellcheck source=release/versions.sh
source release/versions.sh
bin="${CARGO_TARGET_DIR:-$ROOT/target}/bench-bin"
rm -rf "$bin" && mkdir -p "$bin"
platform="linux_$(host_arch)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
tar -xzf "target/krew/kubectl-infera_${version}_$platform.tar.gz" -C "$bin" kubectl-infera
python3 - "$bin" "$(host_arch)" <<'PY'
import json, sys, tarfile
out, arch = sys.argv[1:]
def blob(digest):
    return "target/image/blobs/" + digest.replace(":", "/")
index = json.load(open("target/image/index.json"))
platforms = json.load(open(blob(index["manifests"][0]["digest"])))["manifests"]
image = next(m for m in platforms if m["platform"]["architecture"] == arch)
layer = json.load(open(blob(image["digest"])))["layers"][0]["digest"]
with tarfile.open(blob(layer)) as t:
    t.extract("infera-operator", out)
PY
export INFERA_E2E_OPERATOR="$bin/infera-operator" INFERA_E2E_PLUGIN="$bin/kubectl-infera"

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
tests/cluster/down.sh >&2 || true

export K8S_TEST_DIR="$K8S_TEST_DIR-t3"
log "starting a tier-3 cluster in $K8S_TEST_DIR"
up_out="$(tests/cluster/up.sh --tier 3)"
eval "$(tail -n1 <<<"$up_out")"
tests/cluster/load-image.sh target/image ghcr.io/amd/infera/operator:0.1.0
tests/cluster/load-image.sh target/nats-image "$NATS_IMAGE_REPO:${NATS_SERVER_VERSION#v}"
tests/cluster/load-image.sh "$standin_sglang" rocm/infera:sglang-v0.1.1
log "planner_pods"
"$CARGO" bench --locked -p infera-e2e --bench planner_pods || failed+=(planner_pods)
if ((${#failed[@]})); then
  echo "bench.sh: failed or missed a goal: ${failed[*]}" >&2
  exit 1
fi
log "every benchmark met its goals"
