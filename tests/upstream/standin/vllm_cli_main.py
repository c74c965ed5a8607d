"""`python -m vllm.entrypoints.cli.main serve …` in the stand-in image (installed as
vllm/entrypoints/cli/main.py).

The command line is parsed by vLLM 0.25.1's own `serve` parser (`make_arg_parser`, the one
upstream's wrapper also uses, infera/engine/vllm/args.py:350-354), with the model positional as
`vllm serve` takes it, so a flag vLLM refuses exits 2 with vLLM's message. With `--headless` (a
multi-node rank above 0) vLLM runs only its workers and serves no HTTP (vllm/entrypoints/cli/
serve.py:140-141, 193-206): this process then serves nothing and runs until it is signalled.
Otherwise it serves the stand-in engine (fake_engine.py) in place of the model.
"""
import argparse
import signal
import sys
import time

from vllm.entrypoints.openai.cli_args import make_arg_parser

import fake_engine

argv = sys.argv[1:]
if argv[:1] != ["serve"]:
    sys.exit(f"stand-in vllm: only `serve` is supported, got {argv[:1]}")
parser = make_arg_parser(argparse.ArgumentParser(prog="vllm serve", allow_abbrev=False))
parser.add_argument("model_tag", nargs="?", default=None)
args = parser.parse_args(argv[1:])
model = args.model_tag or args.model
if getattr(args, "headless", False):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)
fake_engine.load_config(model)
served = args.served_model_name
fake_engine.serve(fake_engine.Engine(
    kind="vllm",
    model=(served[0] if isinstance(served, list) else served) or model,
    host=args.host or "0.0.0.0",
    port=args.port,
))
