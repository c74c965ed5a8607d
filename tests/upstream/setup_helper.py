"""Helpers of tests/upstream/setup.sh (run with the system python3 >= 3.11).

  setup_helper.py extract <wheel dir> <out dir> <name==version>...
      unpacks each wheel's Python source and package metadata into <out dir>/<name>/
  setup_helper.py requirements <upstream pyproject.toml> <unpacked engine dir>
      prints upstream's runtime dependencies and the packages that engine's argument parser modules
      import, constrained as the engine's wheel declares them (e.g. SGLang pins transformers)
"""

import pathlib
import re
import sys
import tomllib
import zipfile

# Imported (directly, or through transformers' integrations) by sglang/srt/server_args.py and
# vllm/entrypoints/openai/cli_args.py; found by importing them with only the GPU stack stubbed
# (engine_stubs.py), which makes any other missing package an ImportError.
NEEDED = """aiohttp cachetools cbor2 cloudpickle dill kernels msgspec numpy openai openai-harmony orjson
    packaging partial-json-parser pillow psutil py-cpuinfo pybase64 pydantic pyyaml requests
    sentencepiece tqdm transformers""".split()


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extract(wheels: pathlib.Path, out: pathlib.Path, pins: list[str]) -> None:
    for pin in pins:
        name, version = pin.split("==")
        (whl,) = wheels.glob(f"{name}-{version}-*.whl")
        with zipfile.ZipFile(whl) as z:
            members = [
                m
                for m in z.namelist()
                if (m.startswith(f"{name}/") and m.endswith(".py"))
                or m.startswith(f"{name}-{version}.dist-info/")
            ]
            z.extractall(out / name, members)


def requirements(pyproject: pathlib.Path, engine: pathlib.Path) -> None:
    reqs = list(tomllib.loads(pyproject.read_text())["project"]["dependencies"])
    declared: dict[str, list[str]] = {}
    for meta in engine.glob("*.dist-info/METADATA"):
        for line in meta.read_text().splitlines():
            if line.startswith("Requires-Dist:") and "extra ==" not in line:
                req = line.split(":", 1)[1].strip()
                head = re.match(r"[A-Za-z0-9_.-]+", req)
                if head:
                    declared.setdefault(norm(head.group()), []).append(req)
    for name in NEEDED:
        reqs.extend(declared.get(norm(name), [name]))
    print("\n".join(reqs))


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    if cmd == "extract":
        extract(pathlib.Path(rest[0]), pathlib.Path(rest[1]), rest[2:])
    elif cmd == "requirements":
        requirements(pathlib.Path(rest[0]), pathlib.Path(rest[1]))
    else:
        sys.exit(__doc__)
