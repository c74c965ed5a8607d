# Sourced by tests/upstream/{setup,check}.sh: the pinned versions and where their venv lives.
# The cache key names every pin, so changing one makes a new venv rather than reusing a stale one.
UPSTREAM_COMMIT=5890f7f
SGLANG_VERSION=0.5.15.post1   # the version in rocm/infera:sglang-v0.1.1 (issue 26)
VLLM_VERSION=0.25.1           # the version in the vLLM image (issue 26)
_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$_here/../.." && pwd)"
# Upstream's snapshot, run in place and never copied: $INFERA_UPSTREAM_DIR, else ../shared/upstream
# relative to the repository root, else where this machine keeps it (/work/shared/upstream).
if [[ -z ${INFERA_UPSTREAM_DIR:-} ]]; then
  for _dir in "$REPO_ROOT/../shared/upstream/infera-$UPSTREAM_COMMIT" "/work/shared/upstream/infera-$UPSTREAM_COMMIT"; do
    [[ -d $_dir ]] && { INFERA_UPSTREAM_DIR="$_dir"; break; }
  done
  INFERA_UPSTREAM_DIR="${INFERA_UPSTREAM_DIR:-$REPO_ROOT/../shared/upstream/infera-$UPSTREAM_COMMIT}"
fi
PYTHON="${PYTHON:-python3}"
_pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)"
_setup_hash="$(cat "$_here/setup.sh" "$_here/setup_helper.py" | sha256sum | cut -c1-10)"
UPSTREAM_VENV_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/infera-upstream/py$_pyver-infera$UPSTREAM_COMMIT-sglang$SGLANG_VERSION-vllm$VLLM_VERSION-$_setup_hash"
UPSTREAM_ENGINES="$UPSTREAM_VENV_ROOT/engines"
UPSTREAM_STAMP="$UPSTREAM_VENV_ROOT/ready"
