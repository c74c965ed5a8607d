#!/usr/bin/env bash
# Runs check_argv.py on entries (JSON on stdin) in the venvs tests/upstream/setup.sh builds: server
# and sglang entries in SGLang's, vllm entries in vLLM's. Fails, naming the command to run, when
# those venvs are not there: nothing is skipped. Exit 0 when every entry is accepted.
set -euo pipefail
# shellcheck source=tests/upstream/env.sh
source "$(dirname "$0")/env.sh"
if [[ ! -f $UPSTREAM_STAMP ]]; then
  echo "error: the upstream-parsers venvs are missing ($UPSTREAM_VENV_ROOT): run tests/upstream/setup.sh" >&2
  exit 3
fi
[[ -d $INFERA_UPSTREAM_DIR ]] || { echo "error: upstream Infera's snapshot is not at $INFERA_UPSTREAM_DIR" >&2; exit 3; }
export INFERA_UPSTREAM_DIR INFERA_UPSTREAM_ENGINES="$UPSTREAM_ENGINES"
input="$(cat)"
rc=0
for engine in sglang vllm; do
  "$UPSTREAM_VENV_ROOT/$engine/venv/bin/python" "$(dirname "$0")/check_argv.py" --engine "$engine" "$@" <<<"$input" || rc=1
done
exit "$rc"
