"""Stands in for vLLM 0.25.1's `python -m vllm.entrypoints.cli.main serve …` on a multi-node rank
above 0, as the Infera wrapper spawns it (infera/engine/vllm/worker.py:70-83): only what the
wrapper can observe, read from vLLM's source. With `--headless` the rank runs its workers and
serves no HTTP (vllm/entrypoints/cli/serve.py:140-141, 193-206): this process serves nothing and
runs until it is signalled. Without it, the rank's API server fails on a follower node
(vllm/v1/executor/multiproc_executor.py:352-354): this process exits 1 with that assertion.

It records its pid and argv (JSON, one line) in $FAKE_VLLM_RECORD, so a test can check what the
wrapper launched and stop the engine as a crash would.
"""
import json
import os
import signal
import sys
import time

argv = sys.argv[1:]
with open(os.environ["FAKE_VLLM_RECORD"], "a", encoding="utf-8") as record:
    record.write(json.dumps({"pid": os.getpid(), "argv": argv}) + "\n")
if argv[:1] != ["serve"]:
    sys.exit(f"fake vllm: expected `serve`, got {argv[:1]}")
if "--headless" not in argv:
    sys.exit('AssertionError: collective_rpc should not be called on follower node')
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(3600)
