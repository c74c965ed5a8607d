#!/usr/bin/env bash
# Starts a local Kubernetes control plane from the binaries build.sh caches (built first if missing).
#
#   tests/cluster/up.sh [--tier 1|2|3] [--no-policy-engine]    (default: tier 2)
#   eval "$(tests/cluster/up.sh)"         # progress goes to stderr; stdout is only the export line
#
# tier 1: etcd + kube-apiserver.
# tier 2: + kube-controller-manager, kube-scheduler, kwok with fake nodes gpu-node-0/1 (amd.com/gpu: 8),
#         a default StorageClass whose PVCs get Bound (kwok volume stages), the LeaderWorkerSet controller
#         behind its webhooks, and the Gateway API + InferencePool CRDs.
# tier 3: tier 2 with real nodes instead of kwok's: real-0 and real-1 run containers (containerd,
#         runc, CNI bridge infera-t3), kube-proxy, CoreDNS, a loopback registry that mirrors every
#         registry (load-image.sh pushes to it), hostPath volumes; the API server listens on the
#         bridge (10.88.0.1) so that pods reach it, and kube-router's firewall enforcing
#         NetworkPolicies (not with --no-policy-engine: `make demo`, which shows no policy, saves
#         its build). Needs root. See nodes.sh.
#
# State (PKI, kubeconfig, etcd data, logs, pid files) lives in ${K8S_TEST_DIR:-/tmp/infera-cluster}.
# The kubeconfig has contexts admin (system:masters), alice (client cert, group dev-team, no bindings)
# and bob (static token, group dev-team, no bindings). tests/cluster/down.sh stops it.
# The last line on stdout is `export KUBECONFIG=<path>`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR
source "$HERE/versions.sh"
BIN="$K8S_TEST_BIN"
DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
TIER=2
POLICY=1
while (($#)); do
  case "$1" in
    --tier) TIER="${2:?--tier needs 1, 2 or 3}"; shift 2 ;;
    --tier=*) TIER="${1#--tier=}"; shift ;;
    --no-policy-engine) POLICY=0; shift ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "up.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $TIER == 1 || $TIER == 2 || $TIER == 3 ]] || { echo "up.sh: --tier must be 1, 2 or 3" >&2; exit 2; }
if ((TIER == 3)) && [[ $(id -u) != 0 ]]; then
  echo "up.sh: tier 3 runs containers and needs root" >&2
  exit 2
fi
NODE_BIN="$K8S_NODE_BIN"
# shellcheck source-path=SCRIPTDIR
source "$HERE/nodes.sh"
log() { printf '==> %s\n' "$*" >&2; }
T0=$SECONDS

# --- binaries ----------------------------------------------------------------------------------
# Tier 3 runs Debian's runc, iptables and conntrack, which a machine with a warm cache may lack.
((TIER == 3)) && "$HERE/deps.sh" >&2
need=(etcd kube-apiserver kubectl)
((TIER >= 2)) && need+=(kube-controller-manager kube-scheduler lws-controller)
((TIER == 2)) && need+=(kwok)
((TIER == 3)) && need+=("${NODE_BIN#"$BIN/"}"/{pause.tar,coredns})
((TIER == 3 && POLICY)) && need+=("${NODE_BIN#"$BIN/"}/kube-router-$KUBE_ROUTER_VERSION")
for b in "${need[@]}"; do
  if [[ ! -e "$BIN/$b" ]] || { ((TIER >= 2)) && [[ ! -f "$BIN/share/gateway/.done" ]]; }; then
    log "binaries missing in $BIN: running build.sh (a cold build takes a while)"
    case $TIER in
      1) COMPONENTS="k8s etcd" "$HERE/build.sh" >&2 ;;
      2) "$HERE/build.sh" >&2 ;;
      3)
        components="k8s etcd lws crds krew node"
        ((POLICY)) && components+=" policy"
        COMPONENTS="$components" "$HERE/build.sh" >&2
        ;;
    esac
    break
  fi
done
# Tier 3's own sources (fakedevices/) rebuild when they change, whatever else is cached.
((TIER == 3)) && COMPONENTS=node "$HERE/build.sh" >&2

# --- state dir: stop a cluster already running from it, then start from scratch ------------------
if [[ -d $DIR ]]; then
  if compgen -G "$DIR/*.pid" >/dev/null; then
    log "a cluster from $DIR is running (or was not stopped): stopping it first"
    K8S_TEST_DIR="$DIR" "$HERE/down.sh" >&2
  fi
  if [[ -n "$(ls -A "$DIR")" && ! -f "$DIR/.infera-cluster" ]]; then
    echo "up.sh: $DIR exists, is not empty and was not made by up.sh; refusing to wipe it" >&2
    exit 1
  fi
  rm -rf "$DIR"
fi
mkdir -p "$DIR"/{pki,logs}
mkdir -m 700 "$DIR/etcd"
touch "$DIR/.infera-cluster"
echo "$TIER" >"$DIR/tier"
PKI="$DIR/pki"
KUBECONFIG_FILE="$DIR/kubeconfig"

# Anything failing from here on stops what was started, keeps the logs, and says where they are.
on_exit() {
  local rc=$?
  if ((rc != 0)); then
    echo "up.sh: failed (exit $rc); logs are in $DIR/logs; stopping what was started" >&2
    K8S_TEST_DIR="$DIR" "$HERE/down.sh" >&2 || true
  fi
}
trap on_exit EXIT

k() { "$BIN/kubectl" --kubeconfig="$KUBECONFIG_FILE" --context=admin "$@"; }

# Free loopback ports, all picked in one go so they are distinct.
read -r ETCD_PORT PEER_PORT API_PORT KCM_PORT SCHED_PORT LWS_WH_PORT LWS_HEALTH_PORT KUBELET_0_PORT KUBELET_1_PORT PROXY_HEALTH_PORT PROXY_METRICS_PORT REGISTRY_PORT POLICY_HEALTH_PORT < <(python3 - <<'EOF'
import socket
socks = []
for _ in range(13):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)
# Where the API server listens: loopback, or on tier 3 the nodes' bridge (made now), so pods reach it.
API_ADDR=127.0.0.1
if ((TIER == 3)); then
  log "bridge $BRIDGE ($BRIDGE_ADDR) for the real nodes' pods"
  bridge_up
  API_ADDR="$BRIDGE_ADDR"
fi

cat >"$DIR/ports.env" <<EOF
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$PEER_PORT
API_PORT=$API_PORT
KCM_PORT=$KCM_PORT
SCHED_PORT=$SCHED_PORT
LWS_WEBHOOK_PORT=$LWS_WH_PORT
LWS_HEALTH_PORT=$LWS_HEALTH_PORT
API_ADDR=$API_ADDR
EOF

# start NAME CMD...: runs in its own session (so an interrupted caller doesn't take it down),
# output in logs/NAME.log, pid in NAME.pid (down.sh stops exactly these).
start() {
  local n=$1; shift
  setsid "$@" </dev/null >"$DIR/logs/$n.log" 2>&1 &
  echo $! >"$DIR/$n.pid"
}
# wait_until NAME SECONDS CMD...: polls CMD every 0.5 s; fails early if NAME's process died.
wait_until() {
  local n=$1 t=$2 i; shift 2
  for ((i = 0; i < t * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    if ! kill -0 "$(cat "$DIR/$n.pid")" 2>/dev/null; then
      echo "up.sh: $n exited; last lines of $DIR/logs/$n.log:" >&2; tail -30 "$DIR/logs/$n.log" >&2; return 1
    fi
    sleep 0.5
  done
  echo "up.sh: timed out after ${t}s waiting for $n ($*); last lines of $DIR/logs/$n.log:" >&2
  tail -30 "$DIR/logs/$n.log" >&2
  return 1
}

# --- PKI ------------------------------------------------------------------------------------------
log "PKI"
cat >"$PKI/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = infera-test-ca
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:127.0.0.1, IP:10.0.0.1, IP:10.88.0.1
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
EOF
(
  cd "$PKI"
  openssl req -x509 -new -nodes -newkey rsa:2048 -keyout ca.key -out ca.crt -days 3650 \
    -config openssl.cnf -extensions v3_ca 2>/dev/null
  sign() { # name subject extension-section
    openssl req -new -nodes -newkey rsa:2048 -keyout "$1.key" -out "$1.csr" -subj "$2" -config openssl.cnf 2>/dev/null
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3650 \
      -extfile openssl.cnf -extensions "$3" 2>/dev/null
    rm -f "$1.csr"
  }
  sign apiserver "/CN=kube-apiserver" server
  sign webhook "/CN=local-webhook" server # for LWS, and for the operator's own webhooks in tests
  sign admin "/O=system:masters/CN=infera-test-admin" client
  sign alice "/O=dev-team/CN=alice" client
  sign front-proxy "/CN=front-proxy-client" client # the aggregation layer's client (tier 3)
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  chmod 600 ./*.key
)
BOB_TOKEN="bob-$(openssl rand -hex 16)"
printf '%s,bob,uid-bob,"dev-team"\n' "$BOB_TOKEN" >"$DIR/tokens.csv"
chmod 600 "$DIR/tokens.csv"

b64() { base64 -w0 "$1"; }
umask 077
cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: infera-test
  cluster:
    server: https://${API_ADDR}:${API_PORT}
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(b64 "$PKI/admin.crt")
    client-key-data: $(b64 "$PKI/admin.key")
- name: alice
  user:
    client-certificate-data: $(b64 "$PKI/alice.crt")
    client-key-data: $(b64 "$PKI/alice.key")
- name: bob
  user:
    token: ${BOB_TOKEN}
contexts:
- name: admin
  context: {cluster: infera-test, user: admin}
- name: alice
  context: {cluster: infera-test, user: alice, namespace: default}
- name: bob
  context: {cluster: infera-test, user: bob, namespace: default}
current-context: admin
EOF
umask 022

# --- etcd -----------------------------------------------------------------------------------------
log "etcd $ETCD_VERSION on 127.0.0.1:$ETCD_PORT"
# etcd reads every ETCD_* environment variable as a flag: unset any the caller has.
unset_etcd=()
while read -r v; do [[ -n $v ]] && unset_etcd+=(-u "$v"); done < <(compgen -e | grep '^ETCD_' || true)
start etcd env "${unset_etcd[@]}" "$BIN/etcd" --name=infera-test \
  --data-dir="$DIR/etcd" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$PEER_PORT" \
  --initial-cluster="infera-test=http://127.0.0.1:$PEER_PORT" \
  --unsafe-no-fsync --auto-compaction-retention=1 --quota-backend-bytes=$((4 * 1024 * 1024 * 1024)) \
  --log-level=warn
wait_until etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

# --- kube-apiserver ---------------------------------------------------------------------------------
log "kube-apiserver $K8S_VERSION on https://$API_ADDR:$API_PORT"
# Tier 1 has no controller-manager to create the "default" ServiceAccount pods would need. Tier 3's
# kubelets are reached by address (their node names resolve nowhere), with the admin's certificate.
EXTRA=()
((TIER == 1)) && EXTRA=(--disable-admission-plugins=ServiceAccount)
# Tier 3 also serves the aggregation layer as kubeadm sets it up (front-proxy client, request
# headers), routed to an APIService's endpoints: the planner's benchmark registers
# prometheus-adapter's custom.metrics.k8s.io, which an HPA reads.
((TIER == 3)) && EXTRA=(--kubelet-preferred-address-types=InternalIP
  --kubelet-client-certificate="$PKI/admin.crt" --kubelet-client-key="$PKI/admin.key"
  --requestheader-client-ca-file="$PKI/ca.crt" --requestheader-allowed-names=front-proxy-client
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group
  --requestheader-extra-headers-prefix=X-Remote-Extra-
  --proxy-client-cert-file="$PKI/front-proxy.crt" --proxy-client-key-file="$PKI/front-proxy.key"
  --enable-aggregator-routing=true)
start kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address="$API_ADDR" --secure-port="$API_PORT" \
  --advertise-address="$API_ADDR" --endpoint-reconciler-type="$( ((TIER == 3)) && echo lease || echo none)" \
  --cert-dir="$PKI" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/ca.crt" --token-auth-file="$DIR/tokens.csv" \
  --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-cluster-ip-range=10.0.0.0/16 --allow-privileged=true --profiling=false \
  "${EXTRA[@]}"
wait_until kube-apiserver 120 curl -fsS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
  "https://$API_ADDR:$API_PORT/readyz"

if ((TIER >= 2)); then
  # --- kube-controller-manager + kube-scheduler ----------------------------------------------------
  log "kube-controller-manager, kube-scheduler"
  # Tier 3's volumes: the controller-manager's hostPath provisioner (nodes.sh, storage_up).
  KCM_EXTRA=()
  ((TIER == 3)) && KCM_EXTRA=(--enable-hostpath-provisioner)
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KUBECONFIG_FILE" --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
    --root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --use-service-account-credentials=false --profiling=false "${KCM_EXTRA[@]}"
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KUBECONFIG_FILE" --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --leader-elect=false --profiling=false

  # CRDs and the StorageClass go in while those start, so the garbage collector and the quota
  # controller discover the CRDs on their first pass.
  log "CRDs: LeaderWorkerSet, Gateway API, InferencePool; StorageClass"
  k apply --server-side --field-manager=infera-test-up -f "$BIN/share/lws/crds/" -f "$BIN/share/gateway/" >/dev/null
  if ((TIER == 3)); then
    storage_up
  else
    k apply --server-side --field-manager=infera-test-up -f "$BIN/share/kwok-stages/storage-class.yaml" >/dev/null
  fi
  k wait --for=condition=Established crd --all --timeout=60s >/dev/null

  wait_until kube-controller-manager 60 curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz"
  wait_until kube-scheduler 60 curl -fsSk "https://127.0.0.1:$SCHED_PORT/healthz"
  wait_until kube-controller-manager 60 k -n default get serviceaccount default
fi

if ((TIER == 2)); then
  # --- kwok + fake GPU nodes -------------------------------------------------------------------------
  log "kwok $KWOK_VERSION + nodes gpu-node-0, gpu-node-1 (amd.com/gpu: 8 each)"
  S="$BIN/share/kwok-stages"
  # kwok's fast pod-ready stage, with the delay its general stages read from an annotation
  # (kwok v0.8 kustomize/stage/pod/general/pod-ready.yaml: durationFrom
  # `.metadata.annotations["pod-ready.stage.kwok.x-k8s.io/delay"]`), so a test can make a
  # rollout observable; without the annotation a pod is Ready at once, as before.
  {
    sed -n '1,/^spec:$/p' "$S/pod-ready.yaml"
    cat <<'EOF'
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["pod-ready.stage.kwok.x-k8s.io/delay"]'
EOF
    sed '1,/^spec:$/d' "$S/pod-ready.yaml"
  } >"$DIR/pod-ready.yaml"
  stages="$S/node-initialize.yaml,$S/node-heartbeat-with-lease.yaml,$DIR/pod-ready.yaml,$S/pod-complete.yaml"
  stages+=",$S/pod-delete.yaml,$S/pvc-provision.yaml,$S/pv-bind.yaml,$S/pvc-delete.yaml,$S/pv-delete.yaml"
  start kwok "$BIN/kwok" --kubeconfig="$KUBECONFIG_FILE" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds=40 --cidr=10.244.0.0/16 --node-ip=10.243.0.1 \
    --config="$stages"
  for i in 0 1; do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: gpu-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok, amd.com/gpu.present: "true", topology.kubernetes.io/zone: zone-a}
spec: {providerID: "kwok://gpu-node-$i"}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", amd.com/gpu: "8"}
  capacity:    {cpu: "64", memory: 512Gi, pods: "110", amd.com/gpu: "8"}
EOF
  done | k create -f - >/dev/null
  wait_until kwok 60 k wait --for=condition=Ready node/gpu-node-0 node/gpu-node-1 --timeout=2s
fi

if ((TIER >= 2)); then
  # --- LeaderWorkerSet controller behind its (rewritten) webhooks -----------------------------------
  log "lws-controller $LWS_VERSION, webhooks on https://127.0.0.1:$LWS_WH_PORT"
  mkdir -p "$DIR/lws-certs"
  cp "$PKI/webhook.crt" "$DIR/lws-certs/tls.crt"
  cp "$PKI/webhook.key" "$DIR/lws-certs/tls.key"
  cat >"$DIR/lws-config.yaml" <<EOF
apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {host: 127.0.0.1, port: $LWS_WH_PORT, certDir: $DIR/lws-certs}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$LWS_HEALTH_PORT"}
EOF
  start lws-controller env KUBECONFIG="$KUBECONFIG_FILE" "$BIN/lws-controller" --config="$DIR/lws-config.yaml" \
    --zap-log-level=info
  python3 "$HERE/lws-webhooks.py" "$BIN/share/lws/webhook-manifests.yaml" "$LWS_WH_PORT" "$PKI/ca.crt" |
    k apply --server-side --field-manager=infera-test-up -f - >/dev/null
  wait_until lws-controller 60 curl -fsS -o /dev/null "http://127.0.0.1:$LWS_HEALTH_PORT/readyz"
  # The webhooks are reachable once a server-side dry run of an LWS goes through them.
  cat >"$DIR/lws-probe.yaml" <<'EOF'
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: probe, namespace: default}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 1
    workerTemplate:
      spec:
        containers: [{name: c, image: example.invalid/probe:0}]
EOF
  wait_until lws-controller 60 k create --dry-run=server -f "$DIR/lws-probe.yaml"
fi

if ((TIER == 3)); then
  # --- real nodes --------------------------------------------------------------------------------
  log "registry on 127.0.0.1:$REGISTRY_PORT (every registry's mirror), CoreDNS on $BRIDGE_ADDR:53, model hub as default/hf-hub"
  registry_up "$REGISTRY_PORT"
  dns_up
  hub_up
  log "nodes real-0, real-1 (containerd $CONTAINERD_VERSION, runc, kubelet), kube-proxy"
  node_up 0 "$KUBELET_0_PORT"
  node_up 1 "$KUBELET_1_PORT"
  wait_until kubelet-0 90 k wait --for=condition=Ready node/real-0 node/real-1 --timeout=2s
  proxy_up
  wait_until kube-proxy 60 curl -fsS "http://127.0.0.1:$PROXY_HEALTH_PORT/healthz"
  if ((POLICY)); then
    log "kube-router $KUBE_ROUTER_VERSION (NetworkPolicies)"
    policy_up
    wait_until kube-router 60 curl -fsS "http://127.0.0.1:$POLICY_HEALTH_PORT/healthz"
  fi
fi

trap - EXIT
log "tier $TIER up in $((SECONDS - T0))s: contexts admin, alice, bob in $KUBECONFIG_FILE; stop with tests/cluster/down.sh"
echo "export KUBECONFIG=$KUBECONFIG_FILE"
