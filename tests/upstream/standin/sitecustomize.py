"""Loaded by every Python process of the stand-in image (it is on PYTHONPATH), so that upstream's
wrappers and the engines' own parsers import as they do in the rocm/infera images:
- the GPU stack (torch, triton, …) and the engines' compiled parts are stubbed (engine_stubs.py,
  the same stubs the parser proofs use, docs/upstream-proof.md);
- SGLang's `ServerArgs.__post_init__`, which resolves defaults against the GPU it finds and fails
  without one, is replaced once sglang.srt.server_args is imported (as in check_argv.py) by the one
  resolution that needs no GPU and that the router depends on: the page size, by SGLang's own
  default pass (`_page_size_default`, sglang/srt/arg_groups/overrides.py:1755-1775: 1 on ROCm with
  the default KV layout), which the wrapper registers as the worker's KV block size
  (infera/engine/sglang/worker.py:131-136).
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

            def post_init(self):
                from sglang.srt.arg_groups.overrides import _page_size_default

                for name, value in _page_size_default(self).items():
                    setattr(self, name, value)

            module.ServerArgs.__post_init__ = post_init

        spec.loader.exec_module = patched
        return spec


sys.meta_path.insert(0, _NoGpuPostInit())
