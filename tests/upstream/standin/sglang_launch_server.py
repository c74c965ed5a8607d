"""`python -m sglang.launch_server` in the stand-in image (installed as sglang/launch_server.py).

SGLang 0.5.15.post1's own module (sglang/launch_server.py) parses the command line with
`prepare_server_args(sys.argv[1:])` and launches the HTTP server; this one parses it with the same
function, so a flag SGLang refuses exits 2 with SGLang's own message, then serves the stand-in
engine (fake_engine.py) in place of the model. `ServerArgs.__post_init__`, which resolves defaults
against the GPU it finds, is a no-op here (sitecustomize.py).
"""
import sys

from sglang.srt.server_args import prepare_server_args

import fake_engine

args = prepare_server_args(sys.argv[1:])
fake_engine.load_config(args.model_path)
fake_engine.serve(fake_engine.Engine(
    kind="sglang",
    model=args.served_model_name or args.model_path,
    host=args.host,
    port=args.port,
    mode=args.disaggregation_mode if args.disaggregation_mode in ("prefill", "decode") else "mixed",
    bootstrap_port=args.disaggregation_bootstrap_port,
    nnodes=args.nnodes,
    node_rank=args.node_rank,
    dist_init_addr=args.dist_init_addr,
))
