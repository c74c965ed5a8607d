"""The stand-in image's engine: what upstream Infera's wrappers and router use of SGLang and vLLM,
served over HTTP by a process that has no GPU, no model and no kernels (tests/upstream/README.md).

The wrapper launches it exactly as it launches the engine (`python -m sglang.launch_server …`,
infera/engine/sglang/worker.py; `python -m vllm.entrypoints.cli.main serve …`,
infera/engine/vllm/worker.py), and the engine's own parser reads the command line first
(launch_server.py / cli_main.py beside this file), so a flag the pinned engine refuses fails here
as it fails there. Then, as the engines do:
- it loads the model's config as the engines do (transformers' AutoConfig, from a local directory
  or the Hub), failing as they fail when the model is not there, then "loads weights" for
  $INFERA_STANDIN_STARTUP_SECONDS (default 5) before its port opens, so the pod's probes and the
  wrapper's readiness wait are real waits;
- /health answers 200 once serving and 503 while shutting down (SGLang http_server.py:578-600),
  /ping 200; /metrics carries the in-flight series the wrapper's drain reads
  (infera/common/engine_metrics.py);
- /v1/completions, /v1/chat/completions (also streamed) and SGLang's /generate answer with
  deterministic text, $INFERA_STANDIN_TOKEN_SECONDS (default 0.02) per output token;
- a latency model for the SLO planner: with $INFERA_STANDIN_DECODE_SLOTS (default 0: off) a token
  takes that per-token time times the requests running per slot (at least 1), so inter-token
  latency grows with the decode batch; with $INFERA_STANDIN_PREFILL_SECONDS_PER_TOKEN (default 0)
  one prompt at a time is "prefilled" for that long per prompt word, so time to first token grows
  with the prefill queue; with SGLang's `--max-running-requests N` at most N requests run and the
  others wait (`sglang:num_queue_reqs`), as SGLang 0.5.15.post1's scheduler admits new requests only
  up to the requests it can still allocate (sglang/srt/managers/scheduler.py:2737-2740, its
  request pool sized by --max-running-requests) and reports its waiting queue as num_queue_reqs
  (scheduler_components/metrics_reporter.py:621), so a queue builds before the batch grows past N. /metrics carries the latencies as the engines' histograms
  (time_to_first_token_seconds and inter_token_latency_seconds, names in
  infera-core/src/metrics.rs): a prefill engine observes TTFT, a decode engine ITL, a mixed one both;
- in SGLang's prefill/decode mode the request body carries bootstrap_host/port/room (the router's
  sglang-bootstrap protocol, infera/router/disagg_protocols/sglang_bootstrap.py): the prefill
  engine serves the prompt's "KV" on its bootstrap port and the decode engine fetches it from the
  address in the body before it answers, so a completion proves the router paired the legs and
  that decode reached prefill at the advertised address. The real transfer (RDMA, mori or
  Mooncake) is what this cannot prove;
- in a multi-node group (`--nnodes`), the ranks meet at `--dist-init-addr` before serving
  (join_group), so a rank that cannot reach its leader at the rendered address never gets ready;
- with `--kv-events-config` (which upstream's wrappers pass by default) it publishes its prefix cache
  as KV-aware routers read it (KvEvents): the engine's own event classes and ZMQ publisher, one
  BlockStored per page of each prompt it has not cached yet, tokens from the model's tokenizer as
  the router tokenizes them — so upstream's relay, NATS and the router's kv-aware policy run on
  real events. Eviction and the engines' own block hashes are what this cannot prove;
- on SIGTERM it stops taking requests and finishes the ones in flight (uvicorn's graceful exit).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

log = logging.getLogger("infera-standin-engine")


@dataclass
class KvEvents:
    """The engine's prefix cache as upstream's kv-aware router sees it
    (infera/router/kv_event/client.py:278-350): each prompt is tokenized as the router tokenizes
    it (infera/router/kv_event/block_hasher.py:60-80) with the model's own tokenizer, cut into
    pages of `block_size` tokens, and every page not cached yet is announced with one BlockStored
    chained to the page before it, as SGLang's radix cache announces its pages
    (sglang/srt/mem_cache/events.py:35-85). The hashes are sha256 chains of the page's tokens in
    the signed 64-bit form SGLang publishes (hash_str_to_int64); the router recomputes its own from
    the tokens and uses these only to chain parents."""

    block_size: int
    tokenizer: object
    publish: Callable[[list], None]  # sends one batch with the engine's own publisher
    stored: Callable[[int, int | None, list[int]], object]  # the engine's BlockStored(hash, parent, tokens)
    cached: set[int] = field(default_factory=set)

    def tokens(self, body: dict) -> list[int]:
        if messages := body.get("messages"):
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:
            text = _prompt(body)
        return self.tokenizer.encode(text, add_special_tokens=False)

    def store(self, body: dict) -> None:
        try:
            tokens = self.tokens(body)
        except Exception as exc:  # noqa: BLE001 - as the router, no cache information for this one
            log.warning("no KV events for this request: cannot tokenize it (%s)", exc)
            return
        digest, parent, events = b"", None, []
        for start in range(0, len(tokens) - self.block_size + 1, self.block_size):
            page = tokens[start:start + self.block_size]
            digest = hashlib.sha256(digest + json.dumps(page).encode()).digest()
            block = int.from_bytes(digest[:8], "big", signed=True)
            if block not in self.cached:
                self.cached.add(block)
                events.append(self.stored(block, parent, page))
            parent = block
        if events:
            self.publish(events)


def load_tokenizer(source: str):
    """The model's tokenizer, from a local directory or the Hub, as the engines load it at startup."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(source)
    except Exception as exc:  # noqa: BLE001 - the engine dies with the loader's message
        sys.exit(f"stand-in engine: cannot load the tokenizer {source!r}: {exc}")


LATENCY_BUCKETS = (0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
                   0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 20.0, 60.0)


@dataclass
class Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * len(LATENCY_BUCKETS))
    count: int = 0
    total: float = 0.0

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        for i, bound in enumerate(LATENCY_BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1

    def lines(self, name: str, labels: str) -> list[str]:
        out = [f"# TYPE {name} histogram"]
        for bound, count in zip(LATENCY_BUCKETS, self.counts):
            out.append(f'{name}_bucket{{{labels},le="{bound}"}} {count}')
        out.append(f'{name}_bucket{{{labels},le="+Inf"}} {self.count}')
        out.append(f"{name}_sum{{{labels}}} {self.total}")
        out.append(f"{name}_count{{{labels}}} {self.count}")
        return out


@dataclass
class Engine:
    kind: str  # "sglang" | "vllm"
    model: str
    host: str
    port: int
    mode: str = "mixed"  # "mixed" | "prefill" | "decode"
    bootstrap_port: int | None = None
    nnodes: int = 1
    node_rank: int = 0
    dist_init_addr: str | None = None  # host:port of rank 0, where the other ranks join
    group_server: object = None  # rank 0's listener, or a rank's connection to it (kept open)
    running: int = 0
    finished: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    shutting_down: bool = False
    rooms: dict[int, dict] = field(default_factory=dict)
    room_ready: dict[int, asyncio.Event] = field(default_factory=dict)
    kv: KvEvents | None = None  # with --kv-events-config
    ttft: Histogram = field(default_factory=Histogram)
    itl: Histogram = field(default_factory=Histogram)
    prefill_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    max_running: int | None = None  # SGLang's --max-running-requests: more wait in the queue
    queued: int = 0
    admission: asyncio.Semaphore | None = None
    block_size: int | None = None  # vLLM's resolved block size, in vllm:cache_config_info


def _seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        sys.exit(f"{name}={os.environ[name]!r} is not a number of seconds")


def _prompt(body: dict) -> str:
    if "messages" in body:
        return " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
    prompt = body.get("prompt", body.get("text", ""))
    return " ".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt)


def _pieces(text: str, n: int) -> list[str]:
    """What a generation capped at `n` tokens streams of `text`: its first `n` tokens as a
    tokenizer's pre-tokenizer cuts it (a run of word characters or one other character, with the
    spaces before it), going round the text again when it has fewer. One token per chunk as the
    client's tokenizer counts it (inference-perf times every token by its chunk), where whole
    words or an even split of the echoed prompt would put several in one chunk."""
    units = re.findall(r"\s*(?:\w+|[^\w\s])", text) or [text]
    return [units[i] if i < len(units) else " " + units[i % len(units)].lstrip() for i in range(n)]


def _room_event(engine: Engine, room: int) -> asyncio.Event:
    return engine.room_ready.setdefault(room, asyncio.Event())


async def _kv_from_prefill(body: dict) -> dict:
    """Decode's half of the handoff: the prompt's state from the prefill engine the router named."""
    for key in ("bootstrap_host", "bootstrap_port", "bootstrap_room"):
        if key not in body:
            raise ValueError(f"decode mode needs {key} in the request (the router's PD dispatch sets it)")
    url = f"http://{body['bootstrap_host']}:{body['bootstrap_port']}/kv/{body['bootstrap_room']}"
    async with httpx.AsyncClient(timeout=60) as client:
        resp = await client.get(url)
        resp.raise_for_status()
        return resp.json()


def build_app(engine: Engine):
    app = FastAPI()
    per_token = _seconds("INFERA_STANDIN_TOKEN_SECONDS", 0.02)
    decode_slots = _seconds("INFERA_STANDIN_DECODE_SLOTS", 0)
    prefill_per_word = _seconds("INFERA_STANDIN_PREFILL_SECONDS_PER_TOKEN", 0)
    me = socket.gethostname()

    @app.get("/health")
    @app.get("/health_generate")
    async def health():
        return Response(status_code=503 if engine.shutting_down else 200)

    @app.get("/ping")
    async def ping():
        return Response(status_code=200)

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": engine.model, "object": "model", "owned_by": engine.kind}]}

    @app.get("/get_model_info")
    async def model_info():
        return {"model_path": engine.model, "is_generation": True}

    @app.get("/metrics")
    async def metrics():
        if engine.kind == "sglang":
            gauges = {
                "sglang:num_running_reqs": engine.running,
                "sglang:num_queue_reqs": engine.queued,
                "sglang:token_usage": 0.0,
                "sglang:num_prefill_bootstrap_queue_reqs": 0,
                "sglang:num_prefill_inflight_queue_reqs": 0,
                "sglang:num_decode_prealloc_queue_reqs": 0,
                "sglang:num_decode_transfer_queue_reqs": 0,
            }
            counters = {
                "sglang:prompt_tokens_total": engine.prompt_tokens,
                "sglang:generation_tokens_total": engine.generation_tokens,
                "sglang:num_requests_total": engine.finished,
            }
        else:
            gauges = {
                "vllm:num_requests_running": engine.running,
                "vllm:num_requests_waiting": 0,
                "vllm:kv_cache_usage_perc": 0.0,
            }
            counters = {
                "vllm:prompt_tokens_total": engine.prompt_tokens,
                "vllm:generation_tokens_total": engine.generation_tokens,
                "vllm:request_success_total": engine.finished,
            }
        label = f'{{model_name="{engine.model}"}}'
        lines = []
        for kind, series in (("gauge", gauges), ("counter", counters)):
            for name, value in series.items():
                lines += [f"# TYPE {name} {kind}", f"{name}{label} {value}"]
        lines += engine.ttft.lines(f"{engine.kind}:time_to_first_token_seconds", f'model_name="{engine.model}"')
        lines += engine.itl.lines(f"{engine.kind}:inter_token_latency_seconds", f'model_name="{engine.model}"')
        if engine.block_size:
            # vLLM's resolved block size, which upstream's vLLM wrapper reads and registers for the
            # router (infera/engine/vllm/worker.py:101-155), as vLLM exports it
            # (vllm/v1/metrics/loggers.py:1039-1060).
            lines += ["# TYPE vllm:cache_config_info gauge",
                      f'vllm:cache_config_info{{block_size="{engine.block_size}",engine="0"}} 1.0']
        return Response("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    async def answer(body: dict, chat: bool, path: str):
        arrived = time.monotonic()
        prompt = _prompt(body)
        n_prompt = len(prompt.split())
        max_tokens = int(body.get("max_tokens") or body.get("max_new_tokens") or 16)
        handoff = ""
        if engine.kv is not None:
            engine.kv.store(body)
        if engine.mode == "prefill":
            room = int(body.get("bootstrap_room", -1))
            engine.rooms[room] = {"prefill": me, "prompt_tokens": n_prompt}
            _room_event(engine, room).set()
            max_tokens = 1  # a prefill engine returns after the first token
        elif engine.mode == "decode":
            try:
                kv = await _kv_from_prefill(body)
            except Exception as exc:  # noqa: BLE001 - reported to the router as the engine's error
                return JSONResponse({"error": {"message": f"KV handoff failed: {exc}"}}, status_code=500)
            handoff = f", KV from {kv['prefill']} (room {body['bootstrap_room']})"
        text = f"[stand-in {engine.kind} on {me}{handoff}] you said: {prompt}"
        created, rid = int(time.time()), f"standin-{time.monotonic_ns()}"

        def chunk(piece: str, finish: str | None) -> dict:
            choice = {"index": 0, "finish_reason": finish}
            if chat:
                choice["delta"] = {"role": "assistant", "content": piece}
            else:
                choice["text"] = piece
            kind = "chat.completion.chunk" if chat else "text_completion"
            return {"id": rid, "object": kind, "created": created, "model": engine.model, "choices": [choice]}

        engine.prompt_tokens += n_prompt

        async def tokens():
            """Generates the answer: yields the index of each token as it is produced, once the
            request is admitted (at most `max_running` at a time; the others wait, queued)."""
            if engine.max_running:
                engine.admission = engine.admission or asyncio.Semaphore(engine.max_running)
                engine.queued += 1
                try:
                    await engine.admission.acquire()
                finally:
                    engine.queued -= 1
            engine.running += 1
            try:
                if prefill_per_word > 0 and engine.mode != "decode":
                    async with engine.prefill_lock:
                        await asyncio.sleep(prefill_per_word * n_prompt)
                last = None
                for i in range(max_tokens):
                    batch = engine.running / decode_slots if decode_slots > 0 else 1
                    await asyncio.sleep(per_token * max(1.0, batch))
                    engine.generation_tokens += 1
                    now = time.monotonic()
                    if last is None and engine.mode != "decode":
                        engine.ttft.observe(now - arrived)
                    elif last is not None and engine.mode != "prefill":
                        engine.itl.observe(now - last)
                    last = now
                    yield i
            finally:
                engine.running -= 1
                engine.finished += 1
                if engine.admission is not None:
                    engine.admission.release()

        usage = {"prompt_tokens": n_prompt, "completion_tokens": max_tokens, "total_tokens": n_prompt + max_tokens}
        if body.get("stream"):
            # As the engines stream: one chunk per token as it is produced (the answer cut to
            # max_tokens tokens, _pieces), the last one with the finish reason, then (with
            # stream_options.include_usage) one with the usage and no choices (SGLang
            # serving_completions.py:423-440 and serving_chat.py:1221-1250, vLLM
            # completion/serving.py:456 and chat_completion/serving.py:748), then [DONE].
            pieces = _pieces(text, max_tokens)

            async def events():
                generating = tokens()
                try:
                    async for i in generating:
                        yield f"data: {json.dumps(chunk(pieces[i], 'stop' if i == max_tokens - 1 else None))}\n\n"
                finally:
                    await generating.aclose()  # a client gone mid-answer ends its generation now
                if (body.get("stream_options") or {}).get("include_usage"):
                    kind = "chat.completion.chunk" if chat else "text_completion"
                    final = {"id": rid, "object": kind, "created": created, "model": engine.model,
                             "choices": [], "usage": usage}
                    yield f"data: {json.dumps(final)}\n\n"
                yield "data: [DONE]\n\n"
            return StreamingResponse(events(), media_type="text/event-stream")
        async for _ in tokens():
            pass
        if path == "/generate":
            return {"text": text, "meta_info": {"id": rid, "prompt_tokens": n_prompt, "completion_tokens": max_tokens}}
        choice = {"index": 0, "finish_reason": "stop"}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        kind = "chat.completion" if chat else "text_completion"
        return {"id": rid, "object": kind, "created": created, "model": engine.model, "choices": [choice], "usage": usage}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        return await answer(await request.json(), True, "/v1/chat/completions")

    @app.post("/v1/completions")
    async def completions(request: Request):
        return await answer(await request.json(), False, "/v1/completions")

    if engine.kind == "sglang":
        @app.post("/generate")
        async def generate(request: Request):
            return await answer(await request.json(), False, "/generate")

    return app


def build_bootstrap_app(engine: Engine):
    """The prefill engine's bootstrap port: decode engines fetch a room's state here."""
    app = FastAPI()

    @app.get("/kv/{room}")
    async def kv(room: int):
        try:
            await asyncio.wait_for(_room_event(engine, room).wait(), timeout=30)
        except asyncio.TimeoutError:
            return JSONResponse({"error": f"room {room} never reached this prefill engine"}, status_code=404)
        engine.room_ready.pop(room, None)
        return engine.rooms.pop(room)

    return app


async def join_group(engine: Engine) -> None:
    """A multi-node group meets before it serves, as torch.distributed's rendezvous does at
    `--dist-init-addr`: rank 0 listens there and waits for every other rank; the others connect
    (retrying while rank 0 is not up) and stay connected. A rank whose peer goes away exits, as an
    engine does when its collective breaks."""
    host, _, port = (engine.dist_init_addr or "").rpartition(":")
    if not host or not port.isdigit():
        sys.exit(f"--nnodes {engine.nnodes} needs --dist-init-addr HOST:PORT, got {engine.dist_init_addr!r}")

    async def hold(reader: asyncio.StreamReader, peer: str) -> None:
        await reader.read()  # until the peer closes
        log.error("lost %s: the group is broken", peer)
        os._exit(1)

    if engine.node_rank == 0:
        joined: asyncio.Queue[str] = asyncio.Queue()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            rank = (await reader.readline()).decode().strip()
            peer = f"rank {rank} at {writer.get_extra_info('peername')[0]}"
            await joined.put(peer)
            asyncio.ensure_future(hold(reader, peer))

        server = await asyncio.start_server(accept, "0.0.0.0", int(port))
        engine.group_server = server
        log.info("rank 0 of %d: waiting on port %s for the other ranks", engine.nnodes, port)
        for _ in range(engine.nnodes - 1):
            log.info("%s joined the group", await joined.get())
        return
    while True:
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
            break
        except OSError as exc:
            log.info("rank %d: rank 0 at %s not reachable yet (%s)", engine.node_rank, engine.dist_init_addr, exc)
            await asyncio.sleep(2)
    writer.write(f"{engine.node_rank}\n".encode())
    await writer.drain()
    engine.group_server = writer
    log.info("rank %d of %d: joined rank 0 at %s", engine.node_rank, engine.nnodes, engine.dist_init_addr)
    asyncio.ensure_future(hold(reader, f"rank 0 at {engine.dist_init_addr}"))


def load_config(model: str) -> None:
    """What both engines read first at startup: the model's config, from a local directory or the
    Hub (HF_ENDPOINT), through transformers' AutoConfig. A model that is not there stops the engine
    here as it stops the real one, with transformers' own message."""
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(model)
    except Exception as exc:  # noqa: BLE001 - the engine dies with the loader's message
        sys.exit(f"stand-in engine: cannot load the config of model {model!r}: {exc}")


def serve(engine: Engine) -> None:
    """Loads for the configured startup time, then serves until SIGTERM (draining in-flight work)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    startup = _seconds("INFERA_STANDIN_STARTUP_SECONDS", 5)
    log.info("stand-in %s: loading %s (%.0f s, no weights), %s mode", engine.kind, engine.model, startup, engine.mode)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    deadline = time.monotonic() + startup
    while time.monotonic() < deadline and not stop["now"]:
        time.sleep(0.1)
    if stop["now"]:
        sys.exit(0)

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):  # every server drains on the first SIGTERM; none re-raises it
            if not engine.shutting_down:
                log.info("SIGTERM: finishing %d request(s) in flight", engine.running)
            engine.shutting_down = True
            for s in servers:
                s.should_exit = True

    servers = [Server(uvicorn.Config(build_app(engine), host=engine.host, port=engine.port,
                                     log_level="warning", timeout_graceful_shutdown=300))]
    if engine.mode == "prefill" and engine.bootstrap_port:
        servers.append(Server(uvicorn.Config(build_bootstrap_app(engine), host=engine.host,
                                             port=engine.bootstrap_port, log_level="warning")))

    async def main() -> None:
        if engine.nnodes > 1:
            await join_group(engine)
        log.info("stand-in %s serving on %s:%d", engine.kind, engine.host, engine.port)
        await asyncio.gather(*(s.serve() for s in servers))
        log.info("stand-in %s stopped (%d request(s) served)", engine.kind, engine.finished)

    asyncio.run(main())
