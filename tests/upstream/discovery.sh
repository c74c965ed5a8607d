#!/usr/bin/env bash
# Runs discovery.py (upstream's router, or its SGLang worker's registration, or the test tokenizer) in
# SGLang's venv of tests/upstream/setup.sh, with the process's environment as given: nothing here is
# exported to it. Fails, naming the command to run, when the venv is not there.
#   discovery.sh tokenizer DIR | router ARGV... | register ARGV...
set -euo pipefail
# shellcheck source=tests/upstream/env.sh
source "$(dirname "$0")/env.sh"
if [[ ! -f $UPSTREAM_STAMP ]]; then
  echo "error: the upstream-parsers venvs are missing ($UPSTREAM_VENV_ROOT): run tests/upstream/setup.sh" >&2
  exit 3
fi
[[ -d $INFERA_UPSTREAM_DIR ]] || { echo "error: upstream Infera's snapshot is not at $INFERA_UPSTREAM_DIR" >&2; exit 3; }
exec "$UPSTREAM_VENV_ROOT/sglang/venv/bin/python" "$(dirname "$0")/discovery.py" \
  --upstream "$(cd "$INFERA_UPSTREAM_DIR" && pwd)" --engines "$UPSTREAM_ENGINES" "$@"
