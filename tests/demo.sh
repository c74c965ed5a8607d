#!/usr/bin/env bash
# `make demo` (as root): the main job end to end on a local tier-3 cluster, whose two nodes run
# containers and present as MI300X nodes (tests/cluster/README.md). `kubectl infera init --wait`
# installs the operator, which runs in-cluster from the image `make release` builds (for this
# machine's arch only: `release/build.sh --local`), and it runs NATS from the release's NATS image;
# the cluster enforces no NetworkPolicies (`up.sh --no-policy-engine`: the tier-3 tests run
# kube-router; doctor says when nothing enforces them); the seed's PD
# example and the README's MI300X worked example (its model downloaded by `hf download` from the
# cluster's model hub) run on the stand-in for rocm/infera (tests/upstream/README.md: upstream's
# router and wrappers, a stand-in engine); `status` shows each Ready; one completion goes through
# the seed's server Service, router -> prefill + decode, and its answer is printed. Leaves the
# cluster running and ends with the stand-in's reference and `export KUBECONFIG=...`;
# `make cluster-down` stops everything.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
export K8S_TEST_DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
T0=$SECONDS
step() { printf '\n\033[1m==> %s\033[0m (at %ds)\n' "$*" "$((SECONDS - T0))" >&2; }
[[ $(id -u) -eq 0 ]] || { echo "make demo runs real nodes (containerd, kubelets): run it as root" >&2; exit 1; }

step "building the control plane and nodes, the release for this machine, the stand-in image (all cached)"
tests/cluster/deps.sh
# The stand-in image is mostly downloads (PyPI, Debian) and the builds mostly CPU: on a cold
# machine they overlap (the Debian packages are in first, so no two apt-gets meet).
mkdir -p target
standin_log="$ROOT/target/demo-standin.log"
tests/upstream/image.sh sglang >"$standin_log" 2>&1 &
standin_pid=$!
trap 'kill "$standin_pid" 2>/dev/null || true' EXIT
# What tier 3 runs: no kwok (tier 2's fake nodes), no NetworkPolicy engine (the demo shows none).
COMPONENTS="k8s etcd lws crds node" tests/cluster/build.sh >&2
source tests/cluster/versions.sh
# This platform's Krew archive and the operator and NATS images for this arch, built as `make
# release` builds them (each index lists one arch, so its digest is not the release's; the binaries
# pin these); the plugin is used from the archive, as `kubectl krew install` would place it.
release/build.sh --local >&2
source release/versions.sh
wait "$standin_pid" || { cat "$standin_log" >&2; echo "the stand-in image failed: $standin_log" >&2; exit 1; }
standin="$(tail -n1 "$standin_log")"
plugin_dir="$ROOT/target/demo-bin"
mkdir -p "$plugin_dir"
tar -xzf target/krew/kubectl-infera_*_"linux_$(host_arch)".tar.gz -C "$plugin_dir" kubectl-infera
export PATH="$plugin_dir:$K8S_TEST_BIN:$PATH"

step "starting a tier-3 cluster in $K8S_TEST_DIR"
eval "$(tests/cluster/up.sh --tier 3 --no-policy-engine | tail -n1)"
tests/cluster/load-image.sh target/image ghcr.io/amd/infera/operator:0.1.0
tests/cluster/load-image.sh target/nats-image "$NATS_IMAGE_REPO:${NATS_SERVER_VERSION#v}"
STANDIN_REF=rocm/infera:sglang-v0.1.1
tests/cluster/load-image.sh "$standin" "$STANDIN_REF"

step "kubectl infera init --wait (the operator runs in-cluster)"
kubectl infera init --wait --timeout 5m

step "kubectl infera deploy -f examples/pd.yaml --wait"
kubectl create namespace demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl infera deploy -n demo -f examples/pd.yaml --wait --timeout 5m
kubectl infera status -n demo demo

step "kubectl infera deploy -f examples/pd-mi300x.yaml --wait (downloads the model first)"
kubectl infera deploy -n demo -f examples/pd-mi300x.yaml --wait --timeout 5m
kubectl infera status -n demo mi300x

step "one completion through the server's Service (router -> prefill + decode)"
request="$K8S_TEST_DIR/demo-request.json"
echo '{"model": "Qwen/Qwen3-0.6B", "messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 8}' >"$request"
uri=/api/v1/namespaces/demo/services/http:demo-server:8000/proxy/v1/chat/completions
# Workers are Ready once registered with the router (docs/rollouts.md); the Service's endpoints
# may take a moment more to list the server.
for i in $(seq 60); do
  if answer="$(kubectl create --raw "$uri" -f "$request" 2>&1)"; then break; fi
  ((i < 60)) || { echo "no answer: $answer" >&2; exit 1; }
  sleep 2
done
python3 -c 'import json, sys; print(json.loads(sys.argv[1])["choices"][0]["message"]["content"])' "$answer"

step "done in $((SECONDS - T0))s"
echo "export INFERA_STANDIN_IMAGE=$STANDIN_REF"
echo "export KUBECONFIG=$KUBECONFIG"
