#!/usr/bin/env bash
# Pushes an image to the running tier-3 cluster's registry (${K8S_TEST_DIR:-/tmp/infera-cluster}),
# which every node's containerd takes as the mirror of every registry (nodes.sh): a pod that names
# one of the REFs then pulls it, as it would from the real registry.
#
#   tests/cluster/load-image.sh OCI-LAYOUT-DIR|IMAGE.tar REF...
#   e.g. load-image.sh target/image ghcr.io/amd/infera/operator:0.1.0
#
# A REF is stored as the nodes ask for it: its registry host dropped, Docker Hub's one-word names
# under library/ (nats:2.11-alpine -> library/nats:2.11-alpine). A digest reference to what was
# pushed resolves too. IMAGE.tar is an OCI layout in a tar (tests/cluster/oci.py's).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DIR="${K8S_TEST_DIR:-/tmp/infera-cluster}"
src="${1:?usage: load-image.sh OCI-LAYOUT-DIR|IMAGE.tar REF...}"
shift
(($#)) || { echo "load-image.sh: name at least one REF" >&2; exit 2; }
[[ -f $DIR/registry-address ]] || { echo "load-image.sh: no tier-3 cluster (registry) in $DIR" >&2; exit 1; }
registry="$(cat "$DIR/registry-address")"
# shellcheck source=release/versions.sh
source "$HERE/../../release/versions.sh"

layout="$src"
if [[ -f $src ]]; then
  layout="$(mktemp -d)"
  trap 'rm -rf "$layout"' EXIT
  tar -C "$layout" -xf "$src"
fi
for ref in "$@"; do
  path="${ref%@*}"
  first="${path%%/*}"
  if [[ $path == */* && ($first == *.* || $first == *:* || $first == localhost) ]]; then
    path="${path#*/}"
  elif [[ $path != */* ]]; then
    path="library/$path"
  fi
  [[ ${path##*/} == *:* ]] || path+=":latest"
  if ! out="$("$RELEASE_BIN/crane" push "$layout" "$registry/$path" 2>&1)"; then
    echo "load-image.sh: pushing $src as $ref failed: $out" >&2
    exit 1
  fi
done
