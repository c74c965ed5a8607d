#!/usr/bin/env bash
# Builds the local control plane (and a matching kubectl) from the Go module proxy at pinned versions
# and caches it outside the repository. Idempotent: a component whose binary is cached is skipped.
#
#   tests/cluster/build.sh          # everything tier 2 needs (+ krew for the plugin packaging test,
#                                   #   Prometheus and promql-eval for the monitoring tests)
#   COMPONENTS="k8s etcd" tests/cluster/build.sh   # tier 1 only
#   COMPONENTS=node tests/cluster/build.sh          # tier 3's node binaries
#   COMPONENTS=policy tests/cluster/build.sh        # tier 3's NetworkPolicy engine (kube-router)
#   COMPONENTS=adapter tests/cluster/build.sh       # prometheus-adapter (the planner's real-pod benchmark)
#
# Prints the cache directory on its last line as K8S_TEST_BIN=<dir>.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR
source "$HERE/versions.sh"
COMPONENTS="${COMPONENTS:-k8s etcd kwok lws crds krew promql}"
BIN="$K8S_TEST_BIN"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$BIN/share"
WORK="$(mktemp -d)"
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT

"$HERE/deps.sh"

want() { [[ " $COMPONENTS " == *" $1 "* ]]; }
have() { [[ -x "$BIN/$1" ]]; }
moddir() { (cd "$WORK" && go mod download -json "$1" | jq -r .Dir); }
# wrapped NAME MODULE VERSION PACKAGE OUTPUT: builds PACKAGE from a throw-away main module that requires
# MODULE@VERSION (with MODULE's own go line). Unlike `go install pkg@version` it never reads the
# proxy's version list (go install does, to look for deprecations, and the proxy here answers 403 for
# some modules, e.g. sigs.k8s.io/lws), and it resolves exactly the versions MODULE's go.mod pins.
wrapped() {
  local name=$1 mod=$2 ver=$3 pkg=$4 out=$5 gomod
  gomod="$(cd "$WORK" && go mod download -json "$mod@$ver" | jq -r .GoMod)"
  mkdir "$WORK/$name"
  (
    cd "$WORK/$name"
    printf 'module local.test/%s-bins\n\n%s\n\nrequire %s %s\n' "$name" "$(awk '$1=="go"{print; exit}' "$gomod")" "$mod" "$ver" >go.mod
    timed "$name" go build -mod=mod -trimpath -ldflags "-s -w" -o "$out.tmp" "$pkg"
  )
  mv "$out.tmp" "$out"
}
timed() { local name=$1; shift; /usr/bin/time -v -o "$BIN/build-$name.time" "$@"; }
log() { printf '==> %s\n' "$*" >&2; }

# --- Kubernetes: one wrapper module, every staging module replaced by its published v0.X.Y ------
# k8s_build NAME OUT-DIR COMMAND...: builds k8s.io/kubernetes/cmd/COMMAND... into OUT-DIR from that
# module (made once per run), versioned as the release would be.
k8s_build() {
  local name=$1 out=$2; shift 2
  if [[ ! -f "$WORK/k8s/go.mod" ]]; then
    local gomod staging
    gomod="$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)"
    staging="v0.${K8S_VERSION#v1.}"
    mkdir -p "$WORK/k8s"
    {
      echo "module local.test/k8s-bins"
      awk '$1=="go"{print; exit}' "$gomod"
      awk '$1=="godebug"{print; exit}' "$gomod"
      echo "require k8s.io/kubernetes $K8S_VERSION"
      echo "replace ("
      sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$gomod" |
        while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$staging"; done
      echo ")"
    } >"$WORK/k8s/go.mod"
  fi
  local minor="${K8S_VERSION#v1.}" ldflags="-s -w" p
  minor="${minor%%.*}"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ldflags+=" -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$WORK/k8s" && timed "$name" go build -trimpath -ldflags "$ldflags" -o "$out/" "${@/#/k8s.io/kubernetes/cmd/}")
}

# kubectl too: a client matching the server (the machine's kubectl, if any, may be far older).
k8s_missing=()
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do have "$b" || k8s_missing+=("$b"); done
if want k8s && ((${#k8s_missing[@]})); then
  log "building ${k8s_missing[*]} $K8S_VERSION"
  k8s_time=k8s; ((${#k8s_missing[@]} == 4)) || k8s_time="k8s-$(IFS=-; echo "${k8s_missing[*]}")"
  k8s_build "$k8s_time" "$BIN" "${k8s_missing[@]}"
fi

# --- etcd: the server module has replaces, so build it from a wrapper that requires it ----------
if want etcd && ! have etcd; then
  log "building etcd $ETCD_VERSION"
  mkdir "$WORK/etcd"
  (
    cd "$WORK/etcd"
    go mod init local.test/etcd-bins >/dev/null 2>&1
    go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
    timed etcd go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
  )
fi

# --- kwok, plus the stage files kwok needs (only kwokctl injects them by default) ----------------
if want kwok && ! have kwok; then
  log "building kwok $KWOK_VERSION"
  GOBIN="$WORK/gobin" timed kwok go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv "$WORK/gobin/kwok" "$BIN/kwok.tmp"
  src="$(moddir "sigs.k8s.io/kwok@$KWOK_VERSION")/kustomize/stage"
  rm -rf "$BIN/share/kwok-stages"; mkdir -p "$BIN/share/kwok-stages"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml \
    volume/fast/pvc-provision.yaml volume/fast/pv-bind.yaml volume/fast/pv-delete.yaml \
    volume/fast/pvc-delete.yaml volume/fast/storage-class.yaml; do
    cp "$src/$f" "$BIN/share/kwok-stages/"
  done
  mv "$BIN/kwok.tmp" "$BIN/kwok"
fi

# --- LeaderWorkerSet controller, CRDs and webhook manifests -----------------------------------
if want lws && ! have lws-controller; then
  log "building lws $LWS_VERSION"
  src="$(moddir "sigs.k8s.io/lws@$LWS_VERSION")/config"
  rm -rf "$BIN/share/lws"; mkdir -p "$BIN/share/lws/crds"
  cp "$src"/crd/bases/*.yaml "$BIN/share/lws/crds/"
  cp "$src/webhook/manifests.yaml" "$BIN/share/lws/webhook-manifests.yaml"
  wrapped lws sigs.k8s.io/lws "$LWS_VERSION" sigs.k8s.io/lws/cmd "$BIN/lws-controller"
fi

# --- Gateway API + Inference Extension CRDs (no controllers: we only need the APIs) -------------
if want crds && [[ ! -f "$BIN/share/gateway/.done" ]]; then
  log "fetching Gateway API $GATEWAY_API_VERSION and Inference Extension $GAIE_VERSION CRDs"
  rm -rf "$BIN/share/gateway"; mkdir -p "$BIN/share/gateway"
  gw="$(moddir "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION")/config/crd/standard"
  cp "$gw"/gateway.networking.k8s.io_{gatewayclasses,gateways,httproutes,referencegrants,grpcroutes}.yaml "$BIN/share/gateway/"
  gaie="$(moddir "sigs.k8s.io/gateway-api-inference-extension@$GAIE_VERSION")/config/crd/bases"
  cp "$gaie"/inference.networking.k8s.io_inferencepools.yaml "$BIN/share/gateway/"
  touch "$BIN/share/gateway/.done"
fi

# --- The pre-1.0 InferencePool CRD (v1alpha2): not installed by up.sh; a test installs it -------
promop="$BIN/share/prometheus-operator"
if want crds && [[ "$(cat "$promop/.done" 2>/dev/null)" != "$PROMETHEUS_OPERATOR_VERSION podmonitors prometheusrules" ]]; then
  # The PodMonitor and PrometheusRule CRDs of `spec.monitoring`
  # (tests/tests/shared/operator_monitoring.rs installs them).
  log "fetching the Prometheus Operator $PROMETHEUS_OPERATOR_VERSION PodMonitor and PrometheusRule CRDs"
  rm -rf "$promop"; mkdir -p "$promop"
  for plural in podmonitors prometheusrules; do
    cp "$(moddir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")/example/prometheus-operator-crd/monitoring.coreos.com_$plural.yaml" "$promop/"
  done
  echo "$PROMETHEUS_OPERATOR_VERSION podmonitors prometheusrules" >"$promop/.done"
fi

# --- promql-eval: Prometheus's PromQL engine running promqltest scripts (tests/promql) ----------
promql_eval="$BIN/promql-eval-$PROMETHEUS_MODULE_VERSION-$(sha256sum "$HERE/../promql/eval_test.go" | cut -c1-12)"
if want promql && [[ ! -x "$promql_eval" ]]; then
  log "building promql-eval on Prometheus $PROMETHEUS_MODULE_VERSION's engine"
  gomod="$(cd "$WORK" && go mod download -json "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION" | jq -r .GoMod)"
  mkdir "$WORK/promql"
  cp "$HERE/../promql/eval_test.go" "$WORK/promql/"
  (
    cd "$WORK/promql"
    printf 'module local.test/promql-eval\n\n%s\n\nrequire github.com/prometheus/prometheus %s\n' "$(awk '$1=="go"{print; exit}' "$gomod")" "$PROMETHEUS_MODULE_VERSION" >go.mod
    timed promql-eval go test -c -trimpath -ldflags "-s -w" -o "$promql_eval.tmp" .
  )
  mv "$promql_eval.tmp" "$promql_eval"
fi
# The tests run $BIN/promql-eval: the build of this checkout's eval_test.go.
if want promql; then ln -sfn "$(basename "$promql_eval")" "$BIN/promql-eval"; fi

if want crds && [[ ! -f "$BIN/share/gaie-v1alpha2/.done" ]]; then
  rm -rf "$BIN/share/gaie-v1alpha2"; mkdir -p "$BIN/share/gaie-v1alpha2"
  gaie="$(moddir "sigs.k8s.io/gateway-api-inference-extension@$GAIE_VERSION")/config/crd/bases"
  cp "$gaie"/inference.networking.x-k8s.io_inferencepools.yaml "$BIN/share/gaie-v1alpha2/"
  touch "$BIN/share/gaie-v1alpha2/.done"
fi

# --- krew, to prove the plugin archive installs with the real tool -----------------------------
if want krew && ! have krew; then
  log "building krew $KREW_VERSION"
  GOBIN="$WORK/gobin" timed krew go install -trimpath -ldflags "-s -w" "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION"
  mv "$WORK/gobin/krew" "$BIN/krew"
fi

# --- Prometheus itself (the same module): the server `status --prometheus` queries in the tests ---
prometheus="$BIN/prometheus-$PROMETHEUS_MODULE_VERSION"
if want promql && [[ ! -x "$prometheus" ]]; then
  log "building Prometheus $PROMETHEUS_MODULE_VERSION"
  wrapped prometheus github.com/prometheus/prometheus "$PROMETHEUS_MODULE_VERSION" \
    github.com/prometheus/prometheus/cmd/prometheus "$prometheus"
fi
if want promql; then ln -sfn "$(basename "$prometheus")" "$BIN/prometheus"; fi

# --- prometheus-adapter: the custom-metrics API over Prometheus, so that an HPA scales a pool on the
# engines' queue (the planner's real-pod benchmark compares against it: tests/benches/planner_pods.rs)
adapter="$BIN/prometheus-adapter-$PROMETHEUS_ADAPTER_VERSION"
if want adapter && [[ ! -x "$adapter" ]]; then
  log "building prometheus-adapter $PROMETHEUS_ADAPTER_VERSION"
  wrapped adapter sigs.k8s.io/prometheus-adapter "$PROMETHEUS_ADAPTER_VERSION" \
    sigs.k8s.io/prometheus-adapter/cmd/adapter "$adapter"
fi
if want adapter; then ln -sfn "$(basename "$adapter")" "$BIN/prometheus-adapter"; fi

# --- Tier 3 nodes: kubelet and kube-proxy (same wrapper as the control plane), containerd, CNI --
NODE="$K8S_NODE_BIN"
if want node; then
  mkdir -p "$NODE/cni"
  node_missing=()
  for b in kubelet kube-proxy; do [[ -x "$NODE/$b" ]] || node_missing+=("$b"); done
  if ((${#node_missing[@]})); then
    log "building ${node_missing[*]} $K8S_VERSION"
    k8s_build node-k8s "$NODE" "${node_missing[@]}"
  fi
  if [[ ! -x "$NODE/containerd" ]]; then
    log "building containerd $CONTAINERD_VERSION"
    mod=github.com/containerd/containerd/v2
    for p in cmd/containerd-shim-runc-v2 cmd/ctr cmd/containerd; do
      rm -rf "$WORK/containerd"
      (export GOFLAGS="-mod=mod -tags=no_btrfs,no_devmapper,no_zfs"; wrapped containerd "$mod" "$CONTAINERD_VERSION" "$mod/$p" "$NODE/${p#cmd/}")
    done
  fi
  if [[ ! -f "$NODE/pause.tar" ]]; then
    # The pod sandbox image the nodes' containerd names: pause.c of the Kubernetes module, static.
    log "building the pause image"
    src="$(moddir "k8s.io/kubernetes@$K8S_VERSION")/build/pause/linux/pause.c"
    gcc -Os -static -DVERSION="$PAUSE_VERSION" -o "$WORK/pause" "$src"
    python3 "$HERE/oci.py" --out "$NODE/pause.tar.tmp" --name "registry.k8s.io/pause:$PAUSE_VERSION" \
      --entrypoint /pause "$WORK/pause:/pause"
    mv "$NODE/pause.tar.tmp" "$NODE/pause.tar"
  fi
  if [[ ! -x "$NODE/coredns" ]]; then
    # CoreDNS with the plugins tier 3's Corefile uses (nodes.sh, dns_up), from its coremain.
    log "building coredns $COREDNS_VERSION"
    mkdir -p "$WORK/coredns"
    gomod="$(cd "$WORK" && go mod download -json "github.com/coredns/coredns@$COREDNS_VERSION" | jq -r .GoMod)"
    (
      cd "$WORK/coredns"
      printf 'module local.test/coredns-bins\n\n%s\n\nrequire github.com/coredns/coredns %s\n' \
        "$(awk '$1=="go"{print; exit}' "$gomod")" "$COREDNS_VERSION" >go.mod
      cat >main.go <<'GO'
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func main() { coremain.Run() }
GO
      go mod tidy >/dev/null 2>&1
      timed coredns go build -trimpath -ldflags "-s -w" -o "$NODE/coredns.tmp" .
    )
    mv "$NODE/coredns.tmp" "$NODE/coredns"
  fi
  fakedevices_sum="$(sha256sum <"$HERE/fakedevices/main.go" | cut -c1-16)"
  if [[ "$(cat "$NODE/fakedevices.sum" 2>/dev/null)" != "$fakedevices_sum" ]]; then
    # Tier 3's device plugin (fakedevices/main.go), against the kubelet's API module of K8S_VERSION.
    log "building fakedevices"
    rm -rf "$WORK/fakedevices" && mkdir -p "$WORK/fakedevices"
    cp "$HERE/fakedevices/main.go" "$WORK/fakedevices/"
    (
      cd "$WORK/fakedevices"
      printf 'module local.test/fakedevices\n\ngo 1.25\n\nrequire k8s.io/kubelet v0%s\n' "${K8S_VERSION#v1}" >go.mod
      GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1
      timed fakedevices go build -trimpath -ldflags "-s -w" -o "$NODE/fakedevices" .
    )
    echo "$fakedevices_sum" >"$NODE/fakedevices.sum"
  fi
  if [[ ! -x "$NODE/cni/portmap" ]]; then
    log "building CNI plugins $CNI_PLUGINS_VERSION"
    mod=github.com/containernetworking/plugins
    for p in plugins/main/bridge plugins/main/loopback plugins/ipam/host-local plugins/meta/portmap; do
      rm -rf "$WORK/cni"
      wrapped cni "$mod" "$CNI_PLUGINS_VERSION" "$mod/$p" "$NODE/cni/${p##*/}"
    done
  fi
fi

# --- Tier 3's NetworkPolicy engine -----------------------------------------------------------------
if want policy && [[ ! -x "$NODE/kube-router-$KUBE_ROUTER_VERSION" ]]; then
  # The NetworkPolicy engine of tier 3 (its firewall controller only; nodes.sh, policy_up):
  # iptables and ipsets, which this kernel has (kube-network-policies needs nft's queue, which
  # it lacks).
  log "building kube-router $KUBE_ROUTER_VERSION"
  rm -rf "$WORK/kube-router"
  wrapped kube-router github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION" \
    github.com/cloudnativelabs/kube-router/v2/cmd/kube-router "$NODE/kube-router-$KUBE_ROUTER_VERSION"
fi

chmod -R u+w "$BIN/share"
echo "K8S_TEST_BIN=$BIN"
