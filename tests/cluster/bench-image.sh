#!/usr/bin/env bash
# Builds tier 3's image of the load generator `kubectl infera bench` runs, kubernetes-sigs
# inference-perf 0.7.0 from its wheel, standing in for quay.io/inference-perf/inference-perf:v0.7.0
# (kubectl-infera/src/commands/bench/render.rs), and prints the path of the image (an OCI layout in
# a tar, for tests/cluster/load-image.sh) on its last line.
#   tests/cluster/bench-image.sh
#   tests/cluster/load-image.sh "$(tests/cluster/bench-image.sh | tail -1)" quay.io/inference-perf/inference-perf:v0.7.0
#   - Debian trixie (debootstrap minbase, with python3 3.13: inference-perf needs Python >= 3.12);
#   - inference-perf and the whole set it resolves to, as bench-requirements.txt pins them (version
#     and wheel hash), cp313 wheels in /opt/inference-perf/deps, compiled there by the image's own
#     python3 (the Job's root filesystem is read-only: nothing can be compiled at run time);
#   - /usr/local/bin/inference-perf, the package's console script (its entry_points.txt:
#     `inference-perf = inference_perf:main_cli`), which the Job runs as its command;
#   - the Hub at tier 3's mirror (HF_ENDPOINT=http://hf-hub.default.svc.cluster.local,
#     tests/cluster/hub.py) for the tokenizer, HOME and HF_HOME under /tmp (the Job's scratch
#     emptyDir), user 1000:1000 (the Job's runAsUser/runAsGroup).
# Upstream's image is python:3.12 on Alpine with the package in /workspace and no entry point; what
# the Job uses of it (the `inference-perf` command, its flags and config) is the same here.
# Cached under ~/.cache/infera-upstream (the Debian root once); quiet when ready. Needs root
# (debootstrap, chroot).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
log() { printf '==> %s\n' "$*" >&2; }
VERSION=0.7.0
PATH_ENV=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

cache="${XDG_CACHE_HOME:-$HOME/.cache}/infera-upstream"
key="$(cat "$HERE/bench-image.sh" "$HERE/oci.py" "$HERE/bench-requirements.txt" | sha256sum | cut -c1-10)"
out="$cache/bench-inference-perf-$VERSION-$key.tar"
[[ -f $out ]] && { echo "$out"; exit 0; }
mkdir -p "$cache"
command -v debootstrap >/dev/null || {
  SUDO=(); [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}
T0=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

base="$cache/trixie-minbase-python3.tar"
if [[ ! -f $base ]]; then
  log "inference-perf image: Debian trixie (debootstrap)"
  debootstrap --variant=minbase --include=python3,ca-certificates trixie "$root" \
    http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
else
  mkdir -p "$root" && tar -C "$root" -xf "$base"
fi

log "inference-perf image: inference-perf $VERSION and its dependencies"
# --ignore-requires-python: pip 23's install checks Requires-Python against the interpreter running
# it rather than --python-version; the pins were checked against 3.13 (bench-requirements.txt).
deps=/opt/inference-perf/deps
python3 -m pip --disable-pip-version-check --no-input -q install --root-user-action=ignore \
  --target "$root$deps" --no-deps --no-compile --ignore-requires-python \
  --only-binary=:all: --implementation cp --python-version 3.13 --abi cp313 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -r "$HERE/bench-requirements.txt"
rm -rf "${root:?}$deps/bin" # console scripts for the building interpreter; the image has its own
cat >"$root/usr/local/bin/inference-perf" <<SHEOF
#!/bin/sh
# inference-perf's console script (entry_points.txt: inference-perf = inference_perf:main_cli).
PYTHONPATH="$deps\${PYTHONPATH:+:\$PYTHONPATH}" exec python3 -c 'import sys; from inference_perf import main_cli; sys.argv[0] = "inference-perf"; sys.exit(main_cli())' "\$@"
SHEOF
chmod 755 "$root/usr/local/bin/inference-perf"
# Bytecode by the image's python3 for the dependencies and again for its standard library (Debian's
# records each source's mtime, which the layer sets to 0), checked by nothing but the magic number:
# the sources never change, and with stale bytecode each run compiles every module it imports again
# (inference-perf's imports: 8 s instead of 3 s, measured).
chroot "$root" python3 -m compileall -q -f --invalidation-mode unchecked-hash /usr/lib/python3.13 "$deps" >/dev/null
# It starts, as the Job runs it.
chroot --userspec=1000:1000 "$root" env -i PATH="$PATH_ENV" HOME=/tmp inference-perf --help >"$work/help.txt" 2>&1 ||
  { cat "$work/help.txt" >&2; exit 1; }

log "inference-perf image: layer"
python3 "$HERE/oci.py" --out "$out.tmp" --name "quay.io/inference-perf/inference-perf:v$VERSION" \
  --entrypoint /usr/local/bin/inference-perf --user 1000:1000 \
  --env PATH="$PATH_ENV" \
  --env PYTHONPATH="$deps" \
  --env HF_ENDPOINT=http://hf-hub.default.svc.cluster.local \
  --env HOME=/tmp --env HF_HOME=/tmp/hf \
  --rootfs "$root"
rm -f "$cache"/bench-inference-perf-*.tar # earlier keys
mv "$out.tmp" "$out"
log "inference-perf image built in $((SECONDS - T0))s ($(du -h "$out" | cut -f1))"
echo "$out"
