#!/usr/bin/env bash
# Builds tier 3's stand-in for a rocm/infera image (issue 27; tests/upstream/README.md) and prints
# the path of the image (an OCI layout in a tar, for tests/cluster/load-image.sh) on its last line.
#   tests/upstream/image.sh sglang|vllm
# One image per engine, as upstream ships them (their pins conflict):
#   - Debian bookworm (debootstrap minbase, with python3 3.11, the images' Python minor version);
#   - upstream Infera's runtime dependencies, its `gaie` extra and what the engine's argument
#     parser imports, at the versions of that engine's parser venv (setup.sh; its `pip freeze` as
#     constraints), as cp311 wheels;
#   - upstream's `infera` package from the pinned snapshot (into the cached image, never the tree),
#     with the one module it imports and leaves out, infera.kvd.client, as discovery.py supplies it;
#   - the engine's own Python source at the pinned version (setup.sh's parser-only extraction), its
#     GPU stack stubbed (engine_stubs.py, through standin/sitecustomize.py), with the one module the
#     wrapper launches replaced by the stand-in engine (standin/): sglang/launch_server.py, or
#     vllm/entrypoints/cli/main.py;
#   - the images' entry point name, infera-inject-host-ionic (deploy/docker/Dockerfile.sglang),
#     which here only runs its arguments: the RDMA host injection has nothing to inject;
#   - a tiny tokenizer at /opt/infera/tokenizer (discovery.py's) for --router-tokenizer-path;
#   - the Hub at tier 3's mirror (HF_ENDPOINT=http://hf-hub.default.svc.cluster.local,
#     tests/cluster/hub.py), as a cluster without internet would set it, and the `hf` CLI.
# Cached under ~/.cache/infera-upstream (the Debian root once for both); quiet when ready. Needs
# root (debootstrap).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/upstream/env.sh
source "$HERE/env.sh"
log() { printf '==> %s\n' "$*" >&2; }
engine="${1:-}"
case $engine in
  sglang) launched=sglang/launch_server.py shim=sglang_launch_server.py ;;
  vllm) launched=vllm/entrypoints/cli/main.py shim=vllm_cli_main.py ;;
  *) echo "usage: tests/upstream/image.sh sglang|vllm" >&2; exit 2 ;;
esac

cache="${XDG_CACHE_HOME:-$HOME/.cache}/infera-upstream"
key="$(cat "$HERE/image.sh" "$HERE/../cluster/oci.py" "$HERE/engine_stubs.py" "$HERE"/standin/* \
  "$INFERA_UPSTREAM_DIR/pyproject.toml" <(echo "$UPSTREAM_VENV_ROOT") | sha256sum | cut -c1-10)"
out="$cache/standin-$engine-infera$UPSTREAM_COMMIT-$key.tar"
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

base="$cache/bookworm-minbase-python3.tar" # the Debian root both images start from
if [[ ! -f $base ]]; then
  log "stand-in image: Debian bookworm (debootstrap)"
  debootstrap --variant=minbase --include=python3,ca-certificates bookworm "$root" \
    http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
else
  mkdir -p "$root" && tar -C "$root" -xf "$base"
fi

log "stand-in $engine image: dependencies"
venv="$UPSTREAM_VENV_ROOT/$engine/venv"
"$venv/bin/python" -m pip freeze >"$work/constraints.txt"
{
  cat "$UPSTREAM_VENV_ROOT/$engine/requirements.txt"
  "$PYTHON" - "$INFERA_UPSTREAM_DIR/pyproject.toml" <<'PYEOF'
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["gaie"]))
PYEOF
} >"$work/requirements.txt"
"$venv/bin/python" -m pip --disable-pip-version-check --no-input -q install --target "$root/opt/infera/deps" \
  --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -c "$work/constraints.txt" -r "$work/requirements.txt"

mkdir -p "$root/opt/infera/src" "$root/opt/infera/standin"
cp -a "$INFERA_UPSTREAM_DIR/infera" "$root/opt/infera/src/infera"
# infera.kvd.client, which infera/server/app.py:19 imports and the snapshot leaves out (its README:
# "Not here: kvd/"): as discovery.py supplies it, every use raises (only /v1/prefetch with a kvd
# socket uses it, which our render never configures).
mkdir -p "$root/opt/infera/src/infera/kvd"
touch "$root/opt/infera/src/infera/kvd/__init__.py"
cat >"$root/opt/infera/src/infera/kvd/client.py" <<'PYEOF'
"""Stand-in for infera.kvd.client, absent from the pinned snapshot (tests/upstream/image.sh)."""


class KvdConnectionError(Exception):
    pass


class KvdClient:
    def __init__(self, *args, **kwargs):
        raise KvdConnectionError("infera.kvd is not in the pinned upstream snapshot")
PYEOF
cp -a "$UPSTREAM_ENGINES/$engine" "$root/opt/infera/engine"
cp "$HERE/standin/$shim" "$root/opt/infera/engine/$launched"
if [[ $engine == sglang ]]; then
  # SGLang's package __init__ is its frontend language API plus transformers patches, not the
  # server (check_argv.py leaves it out the same way).
  echo '"""SGLang 0.5.15.post1 without its frontend API (tests/upstream/image.sh)."""' \
    >"$root/opt/infera/engine/sglang/__init__.py"
fi
cp "$HERE/engine_stubs.py" "$HERE/standin/fake_engine.py" "$HERE/standin/sitecustomize.py" "$root/opt/infera/standin/"
# A tiny tokenizer for --router-tokenizer-path (there is no model hub here): /opt/infera/tokenizer.
"$HERE/discovery.sh" tokenizer "$root/opt/infera/tokenizer" >/dev/null 2>&1
cat >"$root/usr/local/bin/infera-inject-host-ionic" <<'SHEOF'
#!/bin/sh
# Stand-in for the rocm/infera images' entry point: nothing to inject, run the command.
exec "$@"
SHEOF
chmod 755 "$root/usr/local/bin/infera-inject-host-ionic"
# huggingface_hub's CLI, which the model download Job runs (pip --target leaves no usable script).
cat >"$root/usr/local/bin/hf" <<'SHEOF'
#!/bin/sh
exec python3 -c 'import sys; from huggingface_hub.cli.hf import main; sys.argv[0] = "hf"; sys.exit(main())' "$@"
SHEOF
chmod 755 "$root/usr/local/bin/hf"

log "stand-in $engine image: layer"
python3 "$HERE/../cluster/oci.py" --out "$out.tmp" --name "rocm/infera:standin-$engine" \
  --entrypoint /usr/local/bin/infera-inject-host-ionic --cmd /bin/bash \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env PYTHONPATH=/opt/infera/src:/opt/infera/engine:/opt/infera/standin:/opt/infera/deps \
  --env HF_ENDPOINT=http://hf-hub.default.svc.cluster.local \
  --rootfs "$root"
rm -f "$cache"/standin-"$engine"-*.tar "$cache"/standin-infera*.tar # earlier keys
mv "$out.tmp" "$out"
log "stand-in $engine image built in $((SECONDS - T0))s ($(du -h "$out" | cut -f1))"
echo "$out"
