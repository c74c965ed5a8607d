"""`python -m vllm.entrypoints.cli.main serve …` in the stand-in image (installed as
vllm/entrypoints/cli/main.py).

The command line is parsed by vLLM 0.25.1's own `serve` parser (`make_arg_parser`, the one
upstream's wrapper also uses, infera/engine/vllm/args.py:350-354), with the model positional as
`vllm serve` takes it, so a flag vLLM refuses exits 2 with vLLM's message. With `--headless` (a
multi-node rank above 0) vLLM runs only its workers and serves no HTTP (vllm/entrypoints/cli/
serve.py:140-141, 193-206): this process then serves nothing and runs until it is signalled.
Otherwise it serves the stand-in engine (fake_engine.py) in place of the model, with the block size
vLLM resolves when none is given (CacheConfig.DEFAULT_BLOCK_SIZE, vllm/config/cache.py:47,255-256)
and, with `--kv-events-config` (upstream's wrapper passes it by default, infera/engine/vllm/
__main__.py:36-75), its prefix cache published through vLLM's own publisher and event classes
(vllm/distributed/kv_events.py), with the int block hashes the wrapper asks for
(VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES).
"""
import argparse
import signal
import sys
import time

from vllm.config.cache import CacheConfig
from vllm.entrypoints.openai.cli_args import make_arg_parser

import engine_stubs
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
block_size = args.block_size or CacheConfig.DEFAULT_BLOCK_SIZE
kv = None
if args.kv_events_config is not None and args.kv_events_config.enable_kv_cache_events:
    # vllm/distributed/kv_events.py imports vllm/v1/request.py, which imports vLLM's compiled
    # structured-output backends: stubbed in this process only (SGLang's types need the absence).
    engine_stubs.STUB_TOP |= {"llguidance", "xgrammar", "outlines_core"}
    from vllm.distributed.kv_events import BlockStored, EventPublisherFactory, KVEventBatch

    publisher = EventPublisherFactory.create(args.kv_events_config, 0)
    kv = fake_engine.KvEvents(
        block_size=block_size,
        tokenizer=fake_engine.load_tokenizer(args.tokenizer or model),
        publish=lambda events: publisher.publish(KVEventBatch(ts=time.time(), events=events)),
        stored=lambda block, parent, tokens: BlockStored(
            block_hashes=[block], parent_block_hash=parent, token_ids=tokens,
            block_size=len(tokens), lora_id=None, medium="GPU", lora_name=None),
    )
served = args.served_model_name
fake_engine.serve(fake_engine.Engine(
    kind="vllm",
    model=(served[0] if isinstance(served, list) else served) or model,
    host=args.host or "0.0.0.0",
    port=args.port,
    kv=kv,
    block_size=block_size,
))
