"""Runs upstream Infera's own discovery code for tests/tests/upstream_discovery.rs (docs/upstream-proof.md).

  discovery.py tokenizer DIR
      Saves a minimal tokenizer (a WordLevel vocabulary, `save_pretrained`) in DIR and loads it back with
      AutoTokenizer, as the router's KV-aware hasher would (infera/router/kv_event/block_hasher.py:246): a
      local `--router-tokenizer-path`, since the tests have no model hub.

  discovery.py router ARGV...
      Upstream's router, `python3 -m infera.server ARGV...` (runpy runs its `__main__` as `-m` does),
      with the process's own environment. One module is supplied: `infera.kvd.client`, which
      infera/server/app.py:19 imports and the pinned snapshot does not contain (its README: "Not here:
      kvd/"); it is used only by `/v1/prefetch` with a kvd socket (app.py:385-399), which our render
      never configures. Any use of it raises.

  discovery.py register ARGV...
      Upstream's SGLang worker wrapper up to and including its registration, for the worker
      container's ARGV and the process's environment (POD_NAME, POD_NAMESPACE, POD_IP):
        - `parse_sglang_args(ARGV)` (infera/engine/sglang/args.py:67), with SGLang 0.5.15.post1's own
          flag table and the GPU stack stubbed, as check_argv.py runs it;
        - the advertise host from POD_IP under Kubernetes discovery (infera/engine/sglang/__main__.py:195-198);
        - `SglangEngine(...).start()` (infera/engine/sglang/worker.py:80-153), upstream's own code
          building the EngineConfig (model name, advertise host, port, disagg mode, KV events), with
          two things replaced because there is no engine to run: the `sglang.launch_server`
          subprocess (recorded, not spawned) and the wait for its /health (returns at once);
        - `config.request_transport = args.request_transport` (__main__.py:353);
        - `K8sRegistrationClient(namespace=args.k8s_namespace).register(config)`
          (__main__.py:376-392, infera/common/registration_k8s.py:68-94): a PATCH of the pod's own
          `infera.amd.com/worker-info` annotation, as the in-cluster identity under
          /var/run/secrets/kubernetes.io/serviceaccount (infera/common/k8s_client.py:24-27).
      Not run: the KV plane (__main__.py:321-323; it starts servers of its own and loads the
      model's tokenizer) and the heartbeat loop. Prints {"worker_id", "payload", "sglang_argv"} as
      JSON on stdout; on a refused PATCH prints the API server's answer and exits 1.

Paths: INFERA_UPSTREAM_DIR and INFERA_UPSTREAM_ENGINES are given as `--upstream DIR --engines DIR`
before the subcommand (discovery.sh passes them), so the upstream process's environment is only
what the test gives it.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import runpy
import sys
import traceback
import types

# Nothing is written next to the sources: not into this tree, not into upstream's snapshot.
sys.dont_write_bytecode = True

HERE = pathlib.Path(__file__).resolve().parent


def _tokenizer(out: str) -> int:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    words = ["[UNK]", "[PAD]", "<s>", "</s>", "hello", "world", "the", "a", "infera", "router"]
    core = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>"
    )
    fast.save_pretrained(out)
    back = AutoTokenizer.from_pretrained(out)
    ids = back("hello infera router")["input_ids"]
    if ids != [4, 8, 9]:
        print(f"tokenizer in {out} encodes 'hello infera router' as {ids}", file=sys.stderr)
        return 1
    print(out)
    return 0


def _stub_kvd() -> None:
    """infera.kvd.client, absent from the pinned snapshot (see the module docstring)."""
    import infera

    class KvdConnectionError(Exception):
        pass

    class KvdClient:
        def __init__(self, *args, **kwargs):
            raise KvdConnectionError("infera.kvd is not in the pinned upstream snapshot")

    kvd = types.ModuleType("infera.kvd")
    kvd.__path__ = []
    client = types.ModuleType("infera.kvd.client")
    client.KvdClient = KvdClient
    client.KvdConnectionError = KvdConnectionError
    kvd.client = client
    infera.kvd = kvd
    sys.modules["infera.kvd"] = kvd
    sys.modules["infera.kvd.client"] = client


def _router(upstream: str, argv: list[str]) -> int:
    sys.path.insert(0, upstream)
    _stub_kvd()
    sys.argv = ["python3", *argv]
    runpy.run_module("infera.server", run_name="__main__", alter_sys=True)
    return 0


class _NoEngine:
    """Stands for the `sglang.launch_server` child (worker.py:103-109): records its command line."""

    argv: list[str] = []
    returncode = None

    def __init__(self, cmd, **_kwargs):
        _NoEngine.argv = list(cmd)

    def poll(self):
        return None


def _register(upstream: str, engines: str, argv: list[str]) -> int:
    import logging

    sys.path.insert(0, str(HERE))
    import check_argv

    saved = {k: os.environ.get(k) for k in ("INFERA_UPSTREAM_DIR", "INFERA_UPSTREAM_ENGINES")}
    os.environ["INFERA_UPSTREAM_DIR"], os.environ["INFERA_UPSTREAM_ENGINES"] = upstream, engines
    check_argv._paths("sglang")
    parsers = check_argv._load("sglang")
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    logging.disable(logging.NOTSET)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)

    sys.argv[0] = "python3 -m infera.engine.sglang"
    args = parsers["sglang"](argv)
    # infera/engine/sglang/__main__.py:195-198
    if args.discovery_backend == "kubernetes" and not args.advertise_host:
        pod_ip = os.environ.get("POD_IP")
        if pod_ip:
            args.advertise_host = pod_ip
    if args.discovery_backend != "kubernetes":
        print(f"the worker's discovery backend is {args.discovery_backend!r}, not kubernetes", file=sys.stderr)
        return 2

    import httpx

    from infera.common.registration import build_worker_payload
    from infera.common.registration_k8s import K8sRegistrationClient
    from infera.engine.sglang import worker

    worker.subprocess = types.SimpleNamespace(Popen=_NoEngine)
    engine = worker.SglangEngine(
        args.server_args,
        sglang_argv=args.sglang_argv,
        advertise_host=args.advertise_host,
        enable_kv_events=args.enable_kv_events,
    )

    async def ready(*_args, **_kwargs) -> None:
        return None

    engine._wait_ready = ready

    async def run() -> int:
        config = await engine.start()
        config.request_transport = args.request_transport  # __main__.py:353
        client = K8sRegistrationClient(namespace=args.k8s_namespace)
        try:
            worker_id = await client.register(config)
        except httpx.HTTPStatusError as exc:
            traceback.print_exc()
            print(f"registration refused: {exc}", file=sys.stderr)
            print(f"API server answered: {exc.response.text}", file=sys.stderr)
            return 1
        finally:
            await client._http.aclose()
        out = {"worker_id": worker_id, "payload": build_worker_payload(config), "sglang_argv": _NoEngine.argv}
        print(json.dumps(out))
        return 0

    return asyncio.run(run())


def main() -> int:
    args = sys.argv[1:]
    upstream = engines = None
    while args and args[0] in ("--upstream", "--engines"):
        if args[0] == "--upstream":
            upstream = args[1]
        else:
            engines = args[1]
        args = args[2:]
    if not args:
        sys.exit("usage: discovery.py [--upstream DIR] [--engines DIR] tokenizer DIR | router ARGV... | register ARGV...")
    command, rest = args[0], args[1:]
    if command == "tokenizer" and len(rest) == 1:
        return _tokenizer(rest[0])
    if upstream is None:
        sys.exit("discovery.py: --upstream DIR is required (run it through discovery.sh)")
    if command == "router":
        return _router(upstream, rest)
    if command == "register":
        if engines is None:
            sys.exit("discovery.py: --engines DIR is required (run it through discovery.sh)")
        return _register(upstream, engines, rest)
    sys.exit(f"discovery.py: unknown command {command!r}")


if __name__ == "__main__":
    sys.exit(main())
