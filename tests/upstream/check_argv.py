"""Runs upstream Infera's own argument parsers on command lines our operator renders.

Input (stdin): a JSON list of {"name": str, "program": "server"|"gaie"|"sglang"|"vllm", "argv": [str],
"env": {str: str}}. Output (stdout): one JSON object per entry and line, {"name", "program", "ok",
"error", "parsed"}: `parsed` is what the parser made of the line (every option's value, defaults and
environment included, as JSON), so two command lines can be compared by what the process would do
rather than by how their flags are spelled; a human summary on stderr. Exit status 0 when every
entry is accepted, 1 otherwise.

Each entry is parsed as its process would parse it in the image, with `env` as the environment:
- server: `parse_server_args(argv)` (upstream infera/server/args.py:14), then the entry point's own
  refusals before it serves: --discovery-backend=kubernetes without a label selector
  (--k8s-label-selector or $INFERA_K8S_LABEL_SELECTOR, infera/server/__main__.py:192-197), etcd
  without --etcd-endpoint (:209-211).
- gaie: the Endpoint Picker's `parse_epp_args(argv)` (infera/gaie/args.py:14), then the entry point's
  refusals: kubernetes discovery without a label selector, etcd without --etcd-endpoint
  (infera/gaie/__main__.py:83-101). The GAIE frontend sidecar is program server (in direct mode).
- sglang: `parse_sglang_args(argv)` (infera/engine/sglang/args.py:67): the wrapper's parser takes its
  own flags (parse_known_args, :246) and hands the rest to SGLang's own `ServerArgs.add_cli_args`
  parser with parse_args (:248-251), which refuses any flag SGLang does not know. Then the worker's
  registration needs: POD_NAME for kubernetes (infera/common/registration_k8s.py:61,69-72),
  --etcd-endpoint for etcd (infera/engine/sglang/__main__.py:380-382).
- vllm: `parse_vllm_args(argv)` (infera/engine/vllm/args.py:209): the same split (:331) into vLLM's
  own `make_arg_parser` (:350-354) and `--model` required (:358-359); registration as for sglang
  (infera/engine/vllm/__main__.py:329-338).

SGLang 0.5.15.post1 and vLLM 0.25.1 are the wheels' own Python source (tests/upstream/setup.sh),
imported with only the GPU stack stubbed (engine_stubs.py). One step is not run: SGLang's
`ServerArgs.__post_init__`, called by `from_cli_args` (args.py:302), resolves defaults against the
GPU it finds (and fails without one); it is replaced by a no-op, so SGLang's cross-flag checks that
need hardware facts are outside this proof. vLLM's config validation runs (on a stubbed ROCm
platform).

  check_argv.py --engine sglang|vllm [--self-test] < entries.json   (through check.sh)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import io
import json
import os
import pathlib
import re
import sys
import types
import warnings

HERE = pathlib.Path(__file__).resolve().parent
PROGS = {
    "server": "python3 -m infera.server",
    "gaie": "python3 -m infera.gaie",
    "sglang": "python3 -m infera.engine.sglang",
    "vllm": "python3 -m infera.engine.vllm",
}


def _paths(engine: str) -> None:
    upstream = os.environ.get("INFERA_UPSTREAM_DIR")
    engines = os.environ.get("INFERA_UPSTREAM_ENGINES")
    if not upstream or not engines:
        sys.exit("check_argv.py: run it through tests/upstream/check.sh (INFERA_UPSTREAM_DIR unset)")
    engine_dir = pathlib.Path(engines) / engine
    sys.path[:0] = [upstream, str(engine_dir), str(HERE)]
    if engine == "sglang":
        # SGLang's package __init__ is its frontend language API plus transformers monkey-patches,
        # not part of the server's flag table; its subpackages are imported as they are, without it.
        pkg = types.ModuleType("sglang")
        pkg.__path__ = [str(engine_dir / "sglang")]
        pkg.__file__ = str(engine_dir / "sglang" / "__init__.py")
        sys.modules["sglang"] = pkg


def _load(engine: str):
    """The parsers this engine's venv runs: the router's in SGLang's venv, and the engine's."""
    import engine_stubs

    engine_stubs.install()
    warnings.simplefilter("ignore")
    import logging

    logging.disable(logging.WARNING)
    if engine == "sglang":
        from sglang.srt.server_args import ServerArgs

        # Hardware resolution; see the module docstring.
        ServerArgs.__post_init__ = lambda self: None
        from infera.engine.sglang.args import parse_sglang_args
        from infera.gaie.args import parse_epp_args
        from infera.server.args import parse_server_args

        return {"server": parse_server_args, "gaie": parse_epp_args, "sglang": parse_sglang_args}
    from infera.engine.vllm.args import parse_vllm_args

    # parse_vllm_args imports vLLM's parser on first use: do it now, outside any entry's env.
    from vllm.entrypoints.openai.cli_args import make_arg_parser  # noqa: F401

    return {"vllm": parse_vllm_args}


@contextlib.contextmanager
def _environ(env: dict[str, str]):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update({"PATH": saved.get("PATH", "/usr/bin:/bin"), "HOME": saved.get("HOME", "/")})
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _entry_checks(program: str, parsed, env: dict[str, str]) -> str | None:
    """What the entry point refuses after parsing, before it serves."""
    if program in ("server", "gaie"):
        if parsed.discovery_backend == "kubernetes" and not parsed.k8s_label_selector:
            return (
                f"infera/{program}/__main__.py: SystemExit: --discovery-backend=kubernetes requires "
                "--k8s-label-selector (or $INFERA_K8S_LABEL_SELECTOR)"
            )
        if parsed.discovery_backend == "etcd" and not parsed.etcd_endpoint:
            return f"infera/{program}/__main__.py: SystemExit: --discovery-backend=etcd requires --etcd-endpoint"
        return None
    if parsed.discovery_backend == "kubernetes" and not env.get("POD_NAME"):
        return (
            "infera/common/registration_k8s.py:70: RuntimeError: K8sRegistrationClient needs "
            "POD_NAME (downward API) to patch its own Pod"
        )
    if parsed.discovery_backend == "etcd" and not parsed.etcd_endpoint:
        return f"infera/engine/{program}/__main__.py: SystemExit: --discovery-backend=etcd requires --etcd-endpoint"
    return None


def _plain(value, depth: int = 0):
    """`value` as JSON: dataclasses, namespaces and objects by their fields, enums by value, the
    rest by `str` (without memory addresses, which differ between two parses of the same line)."""
    if depth > 6:
        return "..."
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value, depth + 1)
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_plain(v, depth + 1) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name, None), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, argparse.Namespace):
        return _plain(vars(value), depth)
    return re.sub(r" at 0x[0-9a-f]+", "", str(value))


def check(parsers, entry: dict) -> tuple[str | None, object]:
    """(None, what the parser made of it) when the entry's process would start, else (why not —
    the parser's own message, None)."""
    program = entry.get("program")
    argv, env = list(entry["argv"]), dict(entry.get("env") or {})
    stderr = io.StringIO()
    saved_argv0 = sys.argv[0]
    sys.argv[0] = PROGS[program]
    try:
        with _environ(env), contextlib.redirect_stderr(stderr):
            parsed = parsers[program](argv)
            return _entry_checks(program, parsed, env), _plain(parsed)
    except SystemExit as e:
        lines = [line for line in stderr.getvalue().splitlines() if "error:" in line]
        return (lines[-1] if lines else f"SystemExit({e.code})"), None
    except Exception as e:  # a parser's type conversion or a config validator refusing a value
        return f"{type(e).__name__}: {e}".splitlines()[0], None
    finally:
        sys.argv[0] = saved_argv0


SELF_TEST = [
    ({"program": "server", "argv": ["--router-tokenizer-path", "m", "--k8s-label-selector", "a=b"]}, True),
    ({"program": "server", "argv": ["--router-tokenizer-path", "m", "--nats-url", "nats://n:4222"]}, False),
    ({"program": "server", "argv": ["--router-tokenizer-path", "m"]}, False),
    ({"program": "gaie", "argv": ["--router-tokenizer-path", "m", "--grpc-port", "9002", "--k8s-label-selector", "a=b"]},
     True),
    ({"program": "gaie", "argv": ["--router-tokenizer-path", "m", "--k8s-label-selector", "a=b",
                                  "--request-transport", "http"]}, False),
    ({"program": "gaie", "argv": ["--k8s-label-selector", "a=b"]}, False),
    ({"program": "sglang", "argv": ["--model-path", "m", "--tp-size", "2", "--disaggregation-mode", "decode"],
      "env": {"POD_NAME": "p"}}, True),
    ({"program": "sglang", "argv": ["--model-path", "m", "--tp-sise", "2"], "env": {"POD_NAME": "p"}}, False),
    ({"program": "vllm", "argv": ["--model", "m", "--tensor-parallel-size", "2"], "env": {"POD_NAME": "p"}}, True),
    ({"program": "vllm", "argv": ["--model", "m", "--disaggregation-mode", "prefill"], "env": {"POD_NAME": "p"}}, False),
]


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "--engine" or args[1] not in ("sglang", "vllm"):
        sys.exit("usage: check_argv.py --engine sglang|vllm [--self-test] < entries.json")
    engine = args[1]
    _paths(engine)
    parsers = _load(engine)
    if args[2:] == ["--self-test"]:
        tests = [(e, want) for e, want in SELF_TEST if e["program"] in parsers]
        bad = [(e, want) for e, want in tests if (check(parsers, e)[0] is None) != want]
        for e, want in bad:
            print(f"self-test: {e} should be {'accepted' if want else 'refused'}", file=sys.stderr)
        return 1 if bad else 0
    entries = json.load(sys.stdin)
    failed = 0
    for entry in entries:
        program = entry.get("program")
        if engine == "vllm" and program in ("server", "gaie", "sglang"):
            continue  # checked in SGLang's venv
        if engine == "sglang" and program not in parsers:
            if program != "vllm":
                error = f"unknown program {program!r} (expected server, gaie, sglang or vllm)"
                failed += 1
                print(json.dumps({"name": entry.get("name", "?"), "program": program, "ok": False, "error": error}))
                print(f"ERROR {entry.get('name', '?')}: {error}", file=sys.stderr)
            continue
        error, parsed = check(parsers, entry)
        failed += error is not None
        name = entry.get("name", "?")
        print(json.dumps({"name": name, "program": entry.get("program"), "ok": error is None, "error": error,
                          "parsed": parsed}))
        print(f"{'ok   ' if error is None else 'ERROR'} {name}" + (f": {error}" if error else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
