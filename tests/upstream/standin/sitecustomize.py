"""Loaded by every Python process of the stand-in image (it is on PYTHONPATH), so that upstream's
wrappers and the engines' own parsers import as they do in the rocm/infera images:
- the GPU stack (torch, triton, …) and the engines' compiled parts are stubbed (engine_stubs.py,
  the same stubs the parser proofs use, docs/upstream-proof.md);
- SGLang's `ServerArgs.__post_init__`, which resolves defaults against the GPU it finds and fails
  without one, is a no-op once sglang.srt.server_args is imported (as in check_argv.py).
"""
import importlib.abc
import importlib.util
import sys

import engine_stubs

engine_stubs.install()


class _NoGpuPostInit(importlib.abc.MetaPathFinder):
    TARGET = "sglang.srt.server_args"

    def find_spec(self, name, path, target=None):
        if name != self.TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        exec_module = spec.loader.exec_module

        def patched(module):
            exec_module(module)
            module.ServerArgs.__post_init__ = lambda self: None

        spec.loader.exec_module = patched
        return spec


sys.meta_path.insert(0, _NoGpuPostInit())
