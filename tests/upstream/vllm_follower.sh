#!/usr/bin/env bash
# Runs vllm_follower.py (upstream's vLLM wrapper on one rendered command line, a fake engine
# beneath it) in the vLLM venv of tests/upstream/setup.sh. Fails, naming the command to run, when
# that venv is not there.
set -euo pipefail
# shellcheck source=tests/upstream/env.sh
source "$(dirname "$0")/env.sh"
if [[ ! -f $UPSTREAM_STAMP ]]; then
  echo "error: the upstream-parsers venvs are missing ($UPSTREAM_VENV_ROOT): run tests/upstream/setup.sh" >&2
  exit 3
fi
export INFERA_UPSTREAM_DIR INFERA_UPSTREAM_ENGINES="$UPSTREAM_ENGINES"
exec "$UPSTREAM_VENV_ROOT/vllm/venv/bin/python" "$(dirname "$0")/vllm_follower.py"
