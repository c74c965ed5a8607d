#!/usr/bin/env bash
# Stops the processes tests/cluster/up.sh started from ${K8S_TEST_DIR:-/tmp/infera-cluster}, and only
# those: each pid file is checked against the process's command line (it must mention the state dir)
# before anything is signalled. Tier 3's nodes also leave no container, mount, bridge, iptables
# rule or cgroup of theirs behind (nodes.sh). The state dir itself (logs, etcd data, kubeconfig) is
# left in place.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR
source "$HERE/versions.sh"
NODE_BIN="$K8S_NODE_BIN"
# shellcheck source-path=SCRIPTDIR
source "$HERE/nodes.sh"
DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
[[ -d $DIR ]] || { echo "down.sh: no cluster state in $DIR" >&2; exit 0; }

ours() { # pid: alive and started by up.sh for this dir?
  [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "$DIR"
}
stopped=()
# Reverse start order: clients first, etcd last; a node's containers go after its kubelet and
# before its containerd.
for c in infera-operator kube-router kube-proxy kubelet-1 kubelet-0 devices-1 devices-0 containers containerd-1 containerd-0 \
  hub hostpath-modes coredns registry lws-controller kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  [[ $c == containers ]] && { node_containers_down; continue; }
  f="$DIR/$c.pid"
  [[ -f $f ]] || continue
  pid="$(cat "$f")"
  if [[ $pid =~ ^[0-9]+$ ]] && ours "$pid"; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do ours "$pid" || break; sleep 0.1; done
    if ours "$pid"; then
      echo "down.sh: $c (pid $pid) did not stop in 10s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null
      for _ in $(seq 20); do ours "$pid" || break; sleep 0.1; done
    fi
    stopped+=("$c")
  fi
  rm -f "$f"
done
nodes_down
if ((${#stopped[@]})); then
  echo "down.sh: stopped ${stopped[*]} ($DIR)" >&2
else
  echo "down.sh: nothing was running from $DIR" >&2
fi
