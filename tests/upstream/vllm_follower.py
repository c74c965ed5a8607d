"""Runs upstream Infera's vLLM wrapper (`python3 -m infera.engine.vllm`, its real `main()`) on one
rendered command line, with fake_vllm/ as the engine it spawns: how a multi-node rank above 0 of
the images behaves (docs/upstream-contract.md, multi-node vLLM). Run it through vllm_follower.sh.

Input (stdin): {"argv": [str], "env": {str: str}}, the process of a rendered pod
(tests/src/upstream.rs, `process`). The wrapper parses argv with vLLM 0.25.1's own flag table
(engine_stubs.py stands in for torch, as in check_argv.py) and spawns the engine with
$PYTHONPATH naming fake_vllm/ only. The wrapper's logs go to stderr; its exit status is this
process's.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys

import check_argv

request = json.load(sys.stdin)
check_argv._paths("vllm")
import engine_stubs  # noqa: E402  (on the path once _paths ran)

engine_stubs.install()
os.environ.update(request["env"])
os.environ["PYTHONPATH"] = str(check_argv.HERE / "fake_vllm")
sys.argv = ["python3 -m infera.engine.vllm", *request["argv"]]

from infera.engine.vllm.__main__ import main  # noqa: E402

asyncio.run(main())
