#!/usr/bin/env bash
# `make demo`: the main job end to end on the local tier-2 control plane. Installs the bundle with
# `kubectl infera init`, runs the operator locally as its own ServiceAccount, deploys the seed's PD
# example and follows its status until Ready, then adds a fake MI300X node with RDMA NICs and
# deploys the README's worked example (examples/pd-mi300x.yaml: GPU product, RDMA, a downloaded
# model) the same way. Leaves the cluster (and the operator) running and ends with
# `export KUBECONFIG=...`; `make cluster-down` stops everything.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CARGO="${CARGO:-cargo}"
export K8S_TEST_DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
DIR="$K8S_TEST_DIR"
step() { printf '\n\033[1m==> %s\033[0m\n' "$*" >&2; }

step "building the control plane (cached) and Infera"
tests/cluster/build.sh >&2
source tests/cluster/versions.sh
"$CARGO" build --locked -p infera-operator -p kubectl-infera >&2
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$TARGET/debug:$K8S_TEST_BIN:$PATH"

step "starting a tier-2 cluster in $DIR"
eval "$(tests/cluster/up.sh --tier 2 | tail -n1)"

step "kubectl infera init --wait"
kubectl infera init --wait --timeout 2m

step "running the operator locally as system:serviceaccount:infera-system:infera-operator"
token="$(kubectl create token infera-operator -n infera-system --duration=24h)"
server="$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$DIR/operator-ca.crt"
cat >"$DIR/operator.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$server", certificate-authority: "$DIR/operator-ca.crt"}}]
users: [{name: infera-operator, user: {token: "$token"}}]
contexts: [{name: infera-operator, context: {cluster: local, user: infera-operator}}]
current-context: infera-operator
KUBECONFIG
# Run from the state dir, so tests/cluster/down.sh recognises and stops it.
mkdir -p "$DIR/bin" && cp "$TARGET/debug/infera-operator" "$DIR/bin/infera-operator"
if [[ -f $DIR/infera-operator.pid ]] && kill -0 "$(cat "$DIR/infera-operator.pid")" 2>/dev/null; then
  kill "$(cat "$DIR/infera-operator.pid")"
fi
KUBECONFIG="$DIR/operator.kubeconfig" nohup "$DIR/bin/infera-operator" --http-addr=127.0.0.1:18080 \
  >"$DIR/logs/infera-operator.log" 2>&1 &
echo $! >"$DIR/infera-operator.pid"
echo "operator log: $DIR/logs/infera-operator.log, metrics: http://127.0.0.1:18080/metrics" >&2

step "kubectl infera deploy -f examples/pd.yaml --wait"
kubectl create namespace demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl infera deploy -n demo -f examples/pd.yaml --wait --timeout 3m

step "kubectl infera status -n demo demo"
kubectl infera status -n demo demo

# A kwok node as AMD's node labeller and the GPU and RDMA device plugins would leave it: the
# product label (ROCm/k8s-device-plugin's k8s-node-labeller), GPUs and RDMA NICs allocatable.
step "a fake MI300X node with 8 GPUs and 8 RDMA NICs"
kubectl apply -f - >/dev/null <<'NODE'
apiVersion: v1
kind: Node
metadata:
  name: mi300x-node-0
  annotations: {kwok.x-k8s.io/node: fake}
  labels:
    kubernetes.io/hostname: mi300x-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM
spec: {providerID: kwok://mi300x-node-0}
status:
  capacity: {cpu: "96", memory: 1Ti, pods: "110", amd.com/gpu: "8", rdma/hca: "8"}
  allocatable: {cpu: "96", memory: 1Ti, pods: "110", amd.com/gpu: "8", rdma/hca: "8"}
NODE
kubectl wait --for=condition=Ready node/mi300x-node-0 --timeout=60s >/dev/null

step "kubectl infera deploy -f examples/pd-mi300x.yaml --wait (downloads the model first)"
kubectl infera deploy -n demo -f examples/pd-mi300x.yaml --wait --timeout 4m
kubectl infera status -n demo mi300x
step "kubectl get idep -n demo"
kubectl get idep -n demo
echo
echo "export KUBECONFIG=$KUBECONFIG"
