#!/usr/bin/env bash
# Stops the processes tests/cluster/up.sh started from ${K8S_TEST_DIR:-/tmp/infera-cluster}, and only
# those: each pid file is checked against the process's command line (it must mention the state dir)
# before anything is signalled. The state dir itself (logs, etcd data, kubeconfig) is left in place.
set -uo pipefail
DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
[[ -d $DIR ]] || { echo "down.sh: no cluster state in $DIR" >&2; exit 0; }

ours() { # pid: alive and started by up.sh for this dir?
  [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "$DIR"
}
stopped=()
# Reverse start order: clients first, etcd last.
for c in infera-operator lws-controller kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
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
if ((${#stopped[@]})); then
  echo "down.sh: stopped ${stopped[*]} ($DIR)" >&2
else
  echo "down.sh: nothing was running from $DIR" >&2
fi
