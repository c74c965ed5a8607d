#!/usr/bin/env bash
# Builds tier 3's stand-in for the rocm/infera images (issue 27; tests/cluster/README.md) and prints
# the path of the image (an OCI layout in a tar, for tests/cluster/load-image.sh) on its last line:
#   - Debian bookworm (debootstrap minbase, with python3 3.11, the images' Python minor version);
#   - upstream Infera's runtime dependencies and its `gaie` extra, from its pyproject.toml, at the
#     versions the parser venvs of setup.sh run (their `pip freeze` as constraints), as cp311 wheels;
#   - upstream's `infera` package from the pinned snapshot (into the cached image, never the tree),
#     with the one module it imports and leaves out, infera.kvd.client, as discovery.py supplies it;
#   - the images' entry point name, infera-inject-host-ionic (deploy/docker/Dockerfile.sglang),
#     which here only runs its arguments: the RDMA host injection has nothing to inject;
#   - a tiny tokenizer at /opt/infera/tokenizer (discovery.py's) for --router-tokenizer-path.
# No engine yet: the router and the Endpoint Picker run; the engine wrappers stop at `import sglang`
# / `import vllm`. Cached under ~/.cache/infera-upstream; quiet when ready. Needs root (debootstrap).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/upstream/env.sh
source "$HERE/env.sh"
log() { printf '==> %s\n' "$*" >&2; }

key="$(cat "$HERE/image.sh" "$HERE/../cluster/oci.py" "$INFERA_UPSTREAM_DIR/pyproject.toml" | sha256sum | cut -c1-10)"
out="${XDG_CACHE_HOME:-$HOME/.cache}/infera-upstream/standin-infera$UPSTREAM_COMMIT-$key.tar"
[[ -f $out ]] && { echo "$out"; exit 0; }
"$HERE/setup.sh"
command -v debootstrap >/dev/null || {
  SUDO=(); [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}
T0=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
log "stand-in image: Debian bookworm (debootstrap)"
debootstrap --variant=minbase --include=python3,ca-certificates bookworm "$root" \
  http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

log "stand-in image: upstream Infera's dependencies"
"$UPSTREAM_VENV_ROOT/sglang/venv/bin/python" -m pip freeze >"$work/constraints.txt"
"$PYTHON" - "$INFERA_UPSTREAM_DIR/pyproject.toml" >"$work/requirements.txt" <<'EOF'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["gaie"]))
EOF
"$UPSTREAM_VENV_ROOT/sglang/venv/bin/python" -m pip --disable-pip-version-check --no-input -q install --target "$root/opt/infera/deps" \
  --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -c "$work/constraints.txt" -r "$work/requirements.txt"
mkdir -p "$root/opt/infera/src"
cp -a "$INFERA_UPSTREAM_DIR/infera" "$root/opt/infera/src/infera"
# infera.kvd.client, which infera/server/app.py:19 imports and the snapshot leaves out (its README:
# "Not here: kvd/"): as discovery.py supplies it, every use raises (only /v1/prefetch with a kvd
# socket uses it, which our render never configures).
mkdir -p "$root/opt/infera/src/infera/kvd"
touch "$root/opt/infera/src/infera/kvd/__init__.py"
cat >"$root/opt/infera/src/infera/kvd/client.py" <<'EOF'
"""Stand-in for infera.kvd.client, absent from the pinned snapshot (tests/upstream/image.sh)."""


class KvdConnectionError(Exception):
    pass


class KvdClient:
    def __init__(self, *args, **kwargs):
        raise KvdConnectionError("infera.kvd is not in the pinned upstream snapshot")
EOF
# A tiny tokenizer for --router-tokenizer-path (there is no model hub here): /opt/infera/tokenizer.
"$HERE/discovery.sh" tokenizer "$root/opt/infera/tokenizer" 2>/dev/null
cat >"$root/usr/local/bin/infera-inject-host-ionic" <<'EOF'
#!/bin/sh
# Stand-in for the rocm/infera images' entry point: nothing to inject, run the command.
exec "$@"
EOF
chmod 755 "$root/usr/local/bin/infera-inject-host-ionic"

log "stand-in image: layer"
python3 "$HERE/../cluster/oci.py" --out "$out.tmp" --name "rocm/infera:standin" \
  --entrypoint /usr/local/bin/infera-inject-host-ionic --cmd /bin/bash \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env PYTHONPATH=/opt/infera/src:/opt/infera/deps --rootfs "$root"
rm -f "${out%/*}"/standin-*.tar # earlier keys
mv "$out.tmp" "$out"
log "stand-in image built in $((SECONDS - T0))s ($(du -h "$out" | cut -f1))"
echo "$out"
