#!/usr/bin/env bash
# Installs the Debian packages the cluster scripts use, once. Idempotent and quiet when satisfied.
set -euo pipefail
need=()
command -v jq >/dev/null || need+=(jq)
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
[[ -x /usr/bin/time ]] || need+=(time)
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
# Tier 3's nodes (tests/cluster/nodes.sh): runc under containerd, iptables for kube-proxy, ipset
# for kube-router, and a
# static libc to build the pause image.
command -v runc >/dev/null || need+=(runc)
command -v iptables >/dev/null || need+=(iptables)
command -v conntrack >/dev/null || need+=(conntrack)
command -v ipset >/dev/null || need+=(ipset)
[[ -f /usr/lib/x86_64-linux-gnu/libc.a ]] || need+=(libc6-dev)
command -v go >/dev/null || { echo "error: Go is required (GOTOOLCHAIN=local, go >= 1.26)" >&2; exit 1; }
if ((${#need[@]})); then
  echo "==> installing Debian packages: ${need[*]}" >&2
  SUDO=(); [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
