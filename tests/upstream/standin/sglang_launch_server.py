"""`python -m sglang.launch_server` in the stand-in image (installed as sglang/launch_server.py).

SGLang 0.5.15.post1's own module (sglang/launch_server.py) parses the command line with
`prepare_server_args(sys.argv[1:])` and launches the HTTP server; this one parses it with the same
function, so a flag SGLang refuses exits 2 with SGLang's own message, then serves the stand-in
engine (fake_engine.py) in place of the model. Of `ServerArgs.__post_init__`, which resolves
defaults against the GPU it finds, only the page size is resolved here (sitecustomize.py).

With `--kv-events-config` (upstream's wrapper passes it by default, infera/engine/sglang/worker.py:
91-101) the prefix cache is published through SGLang's own publisher and event classes
(sglang/srt/disaggregation/kv_events.py), as the scheduler publishes them
(sglang/srt/managers/scheduler_components/kv_events_publisher.py:63-107). A decode engine keeps no
radix cache unless `--disaggregation-decode-enable-radix-cache`, so it publishes nothing.
"""
import sys
import time

from sglang.srt.server_args import prepare_server_args

import fake_engine

args = prepare_server_args(sys.argv[1:])
fake_engine.load_config(args.model_path)
mode = args.disaggregation_mode if args.disaggregation_mode in ("prefill", "decode") else "mixed"
kv = None
if args.kv_events_config and (mode != "decode" or args.disaggregation_decode_enable_radix_cache):
    from sglang.srt.disaggregation.kv_events import BlockStored, EventPublisherFactory, KVEventBatch

    publisher = EventPublisherFactory.create(args.kv_events_config, 0)
    kv = fake_engine.KvEvents(
        block_size=args.page_size,
        tokenizer=fake_engine.load_tokenizer(args.tokenizer_path or args.model_path),
        publish=lambda events: publisher.publish(KVEventBatch(ts=time.time(), events=events)),
        stored=lambda block, parent, tokens: BlockStored(
            block_hashes=[block], parent_block_hash=parent, token_ids=tokens,
            block_size=len(tokens), lora_id=None, medium="GPU"),
    )
fake_engine.serve(fake_engine.Engine(
    kind="sglang",
    model=args.served_model_name or args.model_path,
    host=args.host,
    port=args.port,
    mode=mode,
    bootstrap_port=args.disaggregation_bootstrap_port,
    nnodes=args.nnodes,
    node_rank=args.node_rank,
    dist_init_addr=args.dist_init_addr,
    kv=kv,
    max_running=args.max_running_requests,
))
