# shellcheck shell=bash disable=SC2034  # sourced: the variables are used by the scripts
# Pinned versions of the local control plane (sourced by the scripts in this folder).
# Changing one changes the cache directory, so a stale build is never reused.
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.14
KWOK_VERSION=v0.8.0
LWS_VERSION=v0.9.0            # v0.10.0 is not served by the module proxy here
GATEWAY_API_VERSION=v1.6.3
GAIE_VERSION=v1.3.0
PROMETHEUS_OPERATOR_VERSION=v0.85.0  # the PodMonitor and PrometheusRule CRDs of spec.monitoring (tests only)
PROMETHEUS_MODULE_VERSION=v0.305.0   # Prometheus v3.5.0, the one that operator deploys by default (pkg/operator/defaults.go:42,92): its PromQL engine evaluates our rules, its server answers status --prometheus
PROMETHEUS_ADAPTER_VERSION=v0.12.0 # the custom-metrics API an HPA reads the engines' queue through (tier-3 planner benchmark only)
KREW_VERSION=v0.4.3
# Tier 3 (nodes that run containers; tests/cluster/build.sh COMPONENTS=node)
CONTAINERD_VERSION=v2.4.2
CNI_PLUGINS_VERSION=v1.10.0
COREDNS_VERSION=v1.15.0
KUBE_ROUTER_VERSION=v2.1.0      # tier 3's NetworkPolicy engine; the one release the module proxy serves here
PAUSE_VERSION=3.10.1          # the nodes' sandbox image tag (tests/cluster/nodes.sh)
K8S_TEST_BIN="${K8S_TEST_BIN:-$HOME/.cache/infera-test-bins/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-lws-$LWS_VERSION}"
# Tier 3's node binaries (kubelet, kube-proxy, containerd and its shim, ctr, CNI plugins).
K8S_NODE_BIN="$K8S_TEST_BIN/node-containerd-$CONTAINERD_VERSION-cni-$CNI_PLUGINS_VERSION-pause-$PAUSE_VERSION"
