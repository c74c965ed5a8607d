# shellcheck shell=bash disable=SC2154  # sourced by up.sh and down.sh, which set DIR, BIN, NODE_BIN, ...
# Tier 3's real nodes (issue 27): containerd with runc and the CNI plugins, a kubelet per node, and
# one kube-proxy and one NetworkPolicy engine (kube-router) for the host. Everything lives under $DIR/node-N, on the bridge infera-t3 that up.sh
# creates (10.88.0.1/16 on the host, every pod's gateway; node N's pods get 10.88.N+1.0/24 addresses
# within the /16), and is named in $DIR so that
# down.sh removes exactly it: processes by pid file, containers through runc's root under $DIR,
# mounts under $DIR, the bridge, kube-proxy's and kube-router's rules, the nodes' cgroups.
#
# This machine's limits, and what answers them: cgroups are v1 (`failCgroupV1: false`); a process
# may not lower its oom_score_adj (containerd's `restrict_oom_score_adj`). Nodes join with the admin
# kubeconfig (a test cluster: no Node authorizer). Each node presents as an MI300X node: GPUs and
# RDMA NICs from a device plugin (fakedevices/), the product label, an MI300X host's memory (node_up).

REPO_ROOT="$(cd "$HERE/../.." && pwd)"
BRIDGE=infera-t3
# The host's address on the bridge: the API server listens there on tier 3 (pods reach it).
BRIDGE_ADDR=10.88.0.1
POD_CIDR=10.88.0.0/16
# The host memory each node reports (an MI300X node's; node_up).
NODE_MEMORY_GIB=1536

# The bridge (before the API server, which binds to it) and the kernel settings pods need.
bridge_up() {
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    echo "up.sh: the bridge $BRIDGE exists (a tier-3 cluster not stopped?): stop it with its down.sh, or ip link del $BRIDGE" >&2
    return 1
  fi
  # The kubelets add iptables chains of their own, and paths they, containerd's shims and libcni
  # do not let us move under $DIR: down.sh removes those that were not here before.
  iptables -S KUBE-KUBELET-CANARY >/dev/null 2>&1 || touch "$DIR/kubelet-chains"
  local p
  for p in /run/containerd /var/lib/cni /var/lib/kubelet /tmp/hostpath_pv; do
    [[ -e $p ]] || echo "$p" >>"$DIR/created-paths"
  done
  ip link add "$BRIDGE" type bridge
  echo "$BRIDGE" >"$DIR/bridge"
  ip addr add "$BRIDGE_ADDR/16" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  sysctl -qw net.ipv4.ip_forward=1
  # Services between pods on one bridge: kube-proxy's DNAT must see bridged traffic.
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
}

# The registry every node pulls from, on loopback (release/tools.sh's distribution and crane):
# each node's containerd takes it as the mirror of every registry (certs.d/_default), so an image
# referenced as ghcr.io/..., docker.io/... or rocm/infera:... is pulled from there when
# load-image.sh pushed it, and fails to pull as it would without internet otherwise.
registry_up() {
  local port=$1
  "$REPO_ROOT/release/tools.sh" cluster >/dev/null
  # shellcheck source=release/versions.sh
  source "$REPO_ROOT/release/versions.sh"
  cat >"$DIR/registry.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $DIR/registry}
  delete: {enabled: true}
http: {addr: 127.0.0.1:$port}
EOF
  start registry env OTEL_TRACES_EXPORTER=none "$RELEASE_BIN/registry" serve "$DIR/registry.yml"
  wait_until registry 20 "$RELEASE_BIN/crane" catalog "127.0.0.1:$port"
  echo "127.0.0.1:$port" >"$DIR/registry-address"
}

# CoreDNS on the bridge address, serving cluster.local from the API server (its kubernetes plugin)
# for the pods of every node (their kubelets' clusterDNS). A host process, as the control plane is.
dns_up() {
  cat >"$DIR/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 {
    bind $BRIDGE_ADDR
    errors
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $KUBECONFIG_FILE admin
        pods insecure
    }
    cache 5
}
.:53 {
    bind $BRIDGE_ADDR
    errors
}
EOF
  start coredns "$NODE_BIN/coredns" -conf "$DIR/Corefile" -dns.port 53
  wait_until coredns 30 python3 -c "import socket; socket.create_connection(('$BRIDGE_ADDR', 53), 1)"
}

# A default StorageClass provisioned by the controller-manager's own hostPath provisioner (for
# tests; up.sh passes --enable-hostpath-provisioner on tier 3): a claim gets a directory under
# /tmp/hostpath_pv, shared by the nodes of this host, deleted with it.
#
# That provisioner makes each directory 0750, owned by root (kubernetes v1.36.3
# pkg/volume/hostpath/host_path.go:325), and hostPath volumes take no fsGroup, so a non-root pod
# (the operator's NATS and download Job run as 65532) could not write its claim. Block and CSI
# volumes take the pod's fsGroup, and rancher's local-path-provisioner creates its directories
# 0777: the loop below stands in for either, opening each new directory to its pod.
storage_up() {
  mkdir -p /tmp/hostpath_pv
  # "$DIR" on its command line marks the loop as this cluster's for down.sh.
  start hostpath-modes bash -c 'while sleep 0.5; do find /tmp/hostpath_pv -mindepth 1 -maxdepth 1 -type d ! -perm 0777 -exec chmod 0777 {} +; done' "$DIR"
  k apply --server-side --field-manager=infera-test-up -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: infera-hostpath
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
EOF
}

# The model hub (hub.py) on the bridge, as the Service default/hf-hub (port 80) so that pods name
# it as they would an internal Hub mirror: the stand-in images set HF_ENDPOINT to it
# (tests/upstream/image.sh). It serves one repository, Qwen/Qwen3-0.6B (the examples' model): the
# test tokenizer of tests/upstream/discovery.sh and a config.json, no weights.
hub_up() {
  local repo="$DIR/hub/Qwen/Qwen3-0.6B"
  "$REPO_ROOT/tests/upstream/setup.sh" >&2
  "$REPO_ROOT/tests/upstream/discovery.sh" tokenizer "$repo" >/dev/null 2>&1
  cat >"$repo/config.json" <<'EOF'
{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 16, "hidden_size": 64,
 "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
 "head_dim": 32, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
EOF
  start hub python3 "$HERE/hub.py" --root "$DIR/hub" --listen "$BRIDGE_ADDR:0" --port-file "$DIR/hub-port"
  wait_until hub 30 test -s "$DIR/hub-port"
  k apply --server-side --field-manager=infera-test-up -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: hf-hub, namespace: default}
spec:
  ports: [{name: http, port: 80, targetPort: $(cat "$DIR/hub-port")}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: hf-hub
  namespace: default
  labels: {kubernetes.io/service-name: hf-hub}
addressType: IPv4
ports: [{name: http, port: $(cat "$DIR/hub-port")}]
endpoints: [{addresses: ["$BRIDGE_ADDR"]}]
EOF
}

# node_up N PORT: containerd and a kubelet for node real-N, its kubelet API on PORT.
node_up() {
  local n=$1 port=$2 d="$DIR/node-$1"
  mkdir -p "$d"/{containerd,kubelet,cni/net.d,cni/data,runc,pod-logs,certs.d/_default}
  cat >"$d/certs.d/_default/hosts.toml" <<EOF
[host."http://$(cat "$DIR/registry-address")"]
  capabilities = ["pull", "resolve"]
EOF
  cat >"$d/containerd.toml" <<EOF
version = 3
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/containerd/containerd.sock"
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$d/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$NODE_BIN/cni"]
    conf_dir = "$d/cni/net.d"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "$d/certs.d"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "registry.k8s.io/pause:$PAUSE_VERSION"
EOF
  cat >"$d/cni/net.d/10-infera-t3.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "infera-t3-$n", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$d/cni/data",
            "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "10.88.$((n + 1)).2",
                         "rangeEnd": "10.88.$((n + 1)).254", "gateway": "$BRIDGE_ADDR"}]],
            "routes": [{"dst": "0.0.0.0/0", "gw": "$BRIDGE_ADDR"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  start "containerd-$n" env PATH="$NODE_BIN:$PATH" "$NODE_BIN/containerd" --config "$d/containerd.toml"
  wait_until "containerd-$n" 30 "$NODE_BIN/ctr" --address "$d/containerd/containerd.sock" version
  "$NODE_BIN/ctr" --address "$d/containerd/containerd.sock" -n k8s.io images import "$NODE_BIN/pause.tar" >/dev/null 2>&1

  # Its own cgroup root in every v1 hierarchy, so that two kubelets on one host keep apart.
  for h in /sys/fs/cgroup/*/; do
    [[ -d $h && $h != */unified/ ]] && mkdir -p "$h/infera-t3-$n"
  done
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /infera-t3-$n
containerRuntimeEndpoint: unix://$d/containerd/containerd.sock
podLogsDir: $d/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
address: $BRIDGE_ADDR
port: $port
readOnlyPort: 0
healthzPort: 0
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "100Mi"}
enforceNodeAllocatable: []
localStorageCapacityIsolation: false
clusterDomain: cluster.local
clusterDNS: [$BRIDGE_ADDR]
resolvConf: /etc/resolv.conf
EOF
  # What AMD's node labeller and device plugins leave on an MI300X node: eight GPUs, eight RDMA
  # NICs (fakedevices, through the kubelet's device-plugin API) and the product label. And the host
  # memory such a node has, so that the examples' 64Gi workers are admitted unchanged: the kubelet
  # reads MemTotal from a /proc/meminfo of $NODE_MEMORY_GIB GiB bound over the real one in its own
  # mount namespace. Its root dir is a shared mount, so the volumes it mounts there (tokens,
  # emptyDirs) reach containerd in the host's namespace. Nothing else is changed: the pods' memory
  # limits are real cgroup limits, above what this machine has.
  awk -v kib=$((NODE_MEMORY_GIB * 1024 * 1024)) '$1 == "MemTotal:" {$2 = kib} {print}' /proc/meminfo >"$d/meminfo"
  mount --bind "$d/kubelet" "$d/kubelet" && mount --make-shared "$d/kubelet"
  start "devices-$n" "$NODE_BIN/fakedevices" -registry "$d/kubelet/plugins_registry" \
    -resource amd.com/gpu=8 -resource rdma/hca=8
  # shellcheck disable=SC2016  # expanded by the inner shell
  start "kubelet-$n" unshare --mount --propagation unchanged sh -c 'mount --bind "$0" /proc/meminfo && exec "$@"' \
    "$d/meminfo" "$NODE_BIN/kubelet" --config="$d/kubelet.yaml" --kubeconfig="$KUBECONFIG_FILE" \
    --hostname-override="real-$n" --node-ip="$BRIDGE_ADDR" --root-dir="$d/kubelet" --cert-dir="$d/kubelet/pki" \
    --node-labels="infera.amd.com/test-node=real,amd.com/gpu.product-name=AMD_Instinct_MI300X_OAM"
}

# kube-proxy for the host (one: iptables are the host's), once the nodes are there.
proxy_up() {
  start kube-proxy "$NODE_BIN/kube-proxy" --kubeconfig="$KUBECONFIG_FILE" --hostname-override=real-0 \
    --proxy-mode=iptables --cluster-cidr="$POD_CIDR" \
    --healthz-bind-address="127.0.0.1:$PROXY_HEALTH_PORT" --metrics-bind-address="127.0.0.1:$PROXY_METRICS_PORT" \
    --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0
  touch "$DIR/kube-proxy.started"
}

# The NetworkPolicy engine for the host (one: both nodes' pods sit on the host's bridge and
# iptables): kube-router's firewall controller alone, which enforces policies for the pods whose
# hostIP is the node's (both nodes report the bridge address), in the host's iptables and ipsets.
policy_up() {
  start kube-router "$NODE_BIN/kube-router-$KUBE_ROUTER_VERSION" --kubeconfig="$KUBECONFIG_FILE" \
    --hostname-override=real-0 --run-firewall=true --run-router=false --run-service-proxy=false \
    --enable-cni=false --service-cluster-ip-range=10.0.0.0/16 --health-port="$POLICY_HEALTH_PORT" \
    --metrics-port=0
  touch "$DIR/kube-router.started"
}

# kube-router's rules and sets, once it is stopped: its chains in the filter table (KUBE-ROUTER-*,
# KUBE-POD-FW-*, KUBE-NWPLCY-*), the jumps into them, and its ipsets (KUBE-SRC-*, KUBE-DST-*).
# Its own --cleanup-config (v2.1.0) leaves the netpol chains in place, then crashes cleaning up
# the service proxy it never ran.
policy_rules_down() {
  local ours='^KUBE-(ROUTER|POD-FW|NWPLCY)-' chains chain n set
  chains="$(iptables -S | awk -v re="$ours" '$1 == "-N" && $2 ~ re {print $2}')"
  for chain in $chains; do iptables -F "$chain"; done
  for chain in INPUT FORWARD OUTPUT; do
    for n in $(iptables -L "$chain" -n --line-numbers | awk -v re="$ours" '$2 ~ re {print $1}' | sort -rn); do
      iptables -D "$chain" "$n"
    done
  done
  for chain in $chains; do iptables -X "$chain"; done
  for set in $(ipset list -n 2>/dev/null | grep -E '^KUBE-(SRC|DST)-'); do ipset destroy "$set"; done
}

# The nodes' containers, through runc's root under each node (down.sh, once the kubelets are
# stopped and before containerd is), then the shims that ran them.
node_containers_down() {
  local d c
  for d in "$DIR"/node-*/; do
    [[ -d $d/runc/k8s.io ]] || continue
    for c in $(runc --root "$d/runc/k8s.io" list -q 2>/dev/null); do
      runc --root "$d/runc/k8s.io" delete -f "$c" >/dev/null 2>&1 || true
    done
    pkill -KILL -f "containerd-shim-runc-v2 .*${d%/}" 2>/dev/null || true
  done
}

# What down.sh removes last, once every process is gone: the nodes' cgroups, mounts under $DIR,
# the bridge and kube-proxy's rules. Each step touches only what lives under $DIR or is named in it.
nodes_down() {
  local d n h p
  for d in "$DIR"/node-*/; do
    [[ -d $d ]] || continue
    n="${d%/}"; n="${n##*-}"
    for h in /sys/fs/cgroup/*/infera-t3-"$n"; do
      [[ -d $h ]] && find "$h" -depth -type d -exec rmdir {} + 2>/dev/null
    done
  done
  if [[ -d $DIR ]]; then
    awk -v dir="$DIR" 'index($2, dir) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do
      umount -l "$m" 2>/dev/null || true
    done
  fi
  if [[ -f $DIR/bridge ]]; then
    ip link del "$(cat "$DIR/bridge")" 2>/dev/null || true
    rm -f "$DIR/bridge"
  fi
  if [[ -f $DIR/kubelet-chains ]]; then
    local ipt table chain
    for ipt in iptables ip6tables; do
      for table in filter nat mangle; do
        for chain in INPUT OUTPUT; do
          while "$ipt" -t "$table" -D "$chain" -j KUBE-FIREWALL 2>/dev/null; do :; done
        done
        for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
          "$ipt" -t "$table" -F "$chain" 2>/dev/null && "$ipt" -t "$table" -X "$chain" 2>/dev/null
        done
      done
    done
    rm -f "$DIR/kubelet-chains"
  fi
  if [[ -f $DIR/created-paths ]]; then
    while read -r p; do rm -rf "$p"; done <"$DIR/created-paths"
    rm -f "$DIR/created-paths"
  fi
  if [[ -f $DIR/kube-router.started ]]; then
    policy_rules_down
    rm -f "$DIR/kube-router.started"
  fi
  if [[ -f $DIR/kube-proxy.started ]]; then
    "$NODE_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
    rm -f "$DIR/kube-proxy.started"
  fi
}
