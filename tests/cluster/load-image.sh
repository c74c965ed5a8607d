#!/usr/bin/env bash
# Imports an image into every node of the running tier-3 cluster (${K8S_TEST_DIR:-/tmp/infera-cluster}),
# as if it had been pulled: the nodes have no registry to pull from.
#
#   tests/cluster/load-image.sh OCI-LAYOUT-DIR|IMAGE.tar [BASE-NAME]
#
# An OCI layout (release/build.sh's target/image) is named BASE-NAME:<its ref.name annotation> and
# BASE-NAME@<digest> (ctr images import --base-name --digests); a tar made by tests/cluster/oci.py
# carries its own name.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR
source "$HERE/versions.sh"
DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
src="${1:?usage: load-image.sh OCI-LAYOUT-DIR|IMAGE.tar [BASE-NAME]}"
base=()
[[ -n ${2:-} ]] && base=(--base-name "$2" --digests)
[[ $(cat "$DIR/tier" 2>/dev/null) == 3 ]] || { echo "load-image.sh: no tier-3 cluster in $DIR" >&2; exit 1; }
tar="$src"
if [[ -d $src ]]; then
  tar="$(mktemp)"
  trap 'rm -f "$tar"' EXIT
  tar -C "$src" -cf "$tar" .
fi
for sock in "$DIR"/node-*/containerd/containerd.sock; do
  if ! out="$("$K8S_NODE_BIN/ctr" --address "$sock" -n k8s.io images import "${base[@]}" "$tar" 2>&1)"; then
    echo "load-image.sh: importing $src into ${sock%/containerd/*} failed: $out" >&2
    exit 1
  fi
done
