#!/usr/bin/env bash
# The Python venvs in which tests run upstream Infera's own argument parsers (docs/upstream-proof.md):
#   - upstream's dependencies, read from its pyproject.toml (the package itself is not published: the
#     checker puts the pinned snapshot on sys.path, it is never installed or copied);
#   - the SGLang and vLLM wheels at the versions the images carry, downloaded without their
#     dependencies and unpacked as Python source only (no torch, no compiled kernels), with the
#     packages their argument parsers import, at the versions those wheels declare.
# One venv per engine, as each image has its own: their pins conflict (SGLang's openai==2.6.1 lacks
# types vLLM imports). Cached under ~/.cache/infera-upstream/<key>, the key naming every pin.
# Idempotent, quiet when ready. Needs python3 >= 3.11 with venv (installs Debian's python3-venv if
# missing) and the Python package index.
set -euo pipefail
# shellcheck source=tests/upstream/env.sh
source "$(dirname "$0")/env.sh"

[[ -f $UPSTREAM_STAMP && -d $INFERA_UPSTREAM_DIR ]] && exit 0

log() { printf '==> %s\n' "$*" >&2; }
[[ -f $INFERA_UPSTREAM_DIR/pyproject.toml ]] || {
  echo "error: upstream Infera's snapshot is not at $INFERA_UPSTREAM_DIR (set INFERA_UPSTREAM_DIR)" >&2
  exit 1
}
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  log "installing Debian package python3-venv"
  SUDO=(); [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "error: $PYTHON is older than 3.11 (SGLang $SGLANG_VERSION's wheel and tomllib need 3.11)" >&2
  exit 1
}

mkdir -p "$UPSTREAM_VENV_ROOT"
exec 9>"$UPSTREAM_VENV_ROOT.lock"
flock 9
[[ -f $UPSTREAM_STAMP ]] && exit 0 # another run finished while this one waited
T0=$SECONDS
log "building the upstream-parsers venvs in $UPSTREAM_VENV_ROOT"
rm -rf "${UPSTREAM_VENV_ROOT:?}"/{sglang,vllm,engines,wheels}
wheels="$UPSTREAM_VENV_ROOT/wheels"
mkdir -p "$wheels" "$UPSTREAM_ENGINES"
log "downloading sglang==$SGLANG_VERSION and vllm==$VLLM_VERSION (no dependencies)"
"$PYTHON" -m pip --disable-pip-version-check --no-input -q download --no-deps --only-binary=:all: \
  --python-version "$("$PYTHON" -c 'import sys; print("%d%d" % sys.version_info[:2])')" \
  -d "$wheels" "sglang==$SGLANG_VERSION" "vllm==$VLLM_VERSION"
"$PYTHON" "$(dirname "$0")/setup_helper.py" extract "$wheels" "$UPSTREAM_ENGINES" \
  "sglang==$SGLANG_VERSION" "vllm==$VLLM_VERSION"

for engine in sglang vllm; do
  venv="$UPSTREAM_VENV_ROOT/$engine/venv"
  reqs="$UPSTREAM_VENV_ROOT/$engine/requirements.txt"
  "$PYTHON" -m venv "$venv"
  "$PYTHON" "$(dirname "$0")/setup_helper.py" requirements "$INFERA_UPSTREAM_DIR/pyproject.toml" \
    "$UPSTREAM_ENGINES/$engine" >"$reqs"
  log "installing $engine's venv ($(wc -l <"$reqs") requirements)"
  "$venv/bin/python" -m pip --disable-pip-version-check --no-input -q install -r "$reqs"
  # The checker's smoke test: imports the parsers, accepts a good line and refuses wrong flags.
  INFERA_UPSTREAM_DIR="$INFERA_UPSTREAM_DIR" INFERA_UPSTREAM_ENGINES="$UPSTREAM_ENGINES" \
    "$venv/bin/python" "$(dirname "$0")/check_argv.py" --engine "$engine" --self-test
done
rm -rf "$wheels"
touch "$UPSTREAM_STAMP"
log "upstream-parsers venvs ready in $((SECONDS - T0))s"
