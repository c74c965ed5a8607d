#!/usr/bin/env bash
# Builds upstream Infera's Go operator (deploy/operator of the pinned snapshot, its modules from the
# Go module proxy at the versions its go.sum pins) for the differential test
# (tests/tests/isolated/upstream_differential.rs). The source is read in place through a copy in a temporary
# directory (the snapshot stays untouched, nothing enters this tree); the binary is cached under
# ~/.cache/infera-upstream/operator-<commit>-<go version>/manager. Idempotent, quiet when cached.
# Prints the binary's path on its last line.
set -euo pipefail
# shellcheck source=tests/upstream/env.sh
source "$(dirname "$0")/env.sh"
export GOTOOLCHAIN=local CGO_ENABLED=0
src="$INFERA_UPSTREAM_DIR/deploy/operator"
[[ -f $src/go.mod ]] || {
  echo "error: upstream's operator is not at $src (set INFERA_UPSTREAM_DIR)" >&2
  exit 1
}
out="${XDG_CACHE_HOME:-$HOME/.cache}/infera-upstream/operator-$UPSTREAM_COMMIT-$(go env GOVERSION)"
if [[ ! -x $out/manager ]]; then
  mkdir -p "$out"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cp -r "$src/." "$work/"
  chmod -R u+w "$work"
  printf '==> building upstream Infera %s operator (deploy/operator) into %s\n' "$UPSTREAM_COMMIT" "$out" >&2
  (cd "$work" && go build -mod=readonly -trimpath -ldflags "-s -w" -o "$out/manager.tmp" ./cmd)
  mv "$out/manager.tmp" "$out/manager"
fi
echo "$out/manager"
