"""Import stubs for the engines' GPU stack, so that SGLang's and vLLM's own argument parsers run
on a machine without torch.

What is stubbed, and only that: the top-level packages in STUB_TOP (torch and its siblings, triton,
SGLang's kernel package, AMD's SMI bindings, IPython) and any *submodule of sglang or vllm* the
parser-only extraction lacks (their compiled extensions; the wheels' .py files are all there). A
stub answers every attribute with another stub, except the few in OVERRIDES, which describe a ROCm
build of torch on a host whose GPU is not visible to triton (the images are ROCm). Anything else
that is missing raises ImportError as usual, so a dependency the setup script forgot shows up as
such instead of being silently faked. `stubbed()` lists what was stubbed.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata as _md
import inspect
import sys
import types

STUBBED: list[str] = []
STUB_TOP = {'torch', 'torchvision', 'torchaudio', 'torchcodec', 'triton', 'sgl_kernel', 'IPython', 'amdsmi'}
_MISSING = object()
# What a stub answers instead of another stub: a ROCm build of torch (the images are ROCm), no GPU
# visible to triton, one AMD GPU (gfx942) to AMD SMI so vLLM selects its ROCm platform.
OVERRIDES = {
    'torch.__version__': '2.11.0',
    'torch.version.__version__': '2.11.0',
    'torch.version.hip': '7.2.0',
    'torch.version.cuda': None,
    'torch.version.git_version': 'stub',
    'torch.cuda.is_available': lambda: False,
    'torch.cuda.device_count': lambda: 0,
    'torch.distributed.is_available': lambda: False,
    'torch.distributed.is_initialized': lambda: False,
}
def _no_gpu(*a, **k):
    raise RuntimeError('no GPU visible (stub)')
OVERRIDES['triton.runtime.driver.active.get_current_target'] = _no_gpu
OVERRIDES['triton.runtime.driver.active.utils.get_device_properties'] = _no_gpu
def _infer_schema(fn, *a, **k):
    sig = inspect.signature(fn)
    n = str(sig.return_annotation).count('Tensor') or 1
    rets = 'Tensor' if n == 1 else '(' + ', '.join(['Tensor'] * n) + ')'
    return '(' + ', '.join(f'Tensor {p}' for p in sig.parameters) + ') -> ' + rets
OVERRIDES['torch.library.infer_schema'] = _infer_schema
OVERRIDES['amdsmi.amdsmi_get_processor_handles'] = lambda *a, **k: ['gpu0']
OVERRIDES['amdsmi.amdsmi_get_gpu_asic_info'] = lambda *a, **k: {'target_graphics_version': 'gfx942', 'market_name': 'AMD Instinct MI300X'}
# Device backends a ROCm torch does not have: hasattr() must be False.
ABSENT = {'torch.npu', 'torch.hpu', 'torch.xpu', 'torch.mlu', 'torch.musa', 'torch.mps'}
def _lookup(path):
    if path in ABSENT: raise AttributeError(path)
    v = OVERRIDES.get(path, _MISSING)
    return _make(path) if v is _MISSING else v
class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith('__') and name.endswith('__') and f"{cls._path}.{name}" not in OVERRIDES:
            raise AttributeError(name)
        v = _lookup(f"{cls._path}.{name}")
        setattr(cls, name, v); return v
    def __call__(cls, *a, **k):
        if len(a) == 1 and callable(a[0]) and not k: return a[0]  # used as a decorator
        return _make(f"{cls._path}()")
    def __getitem__(cls, item): return cls
    def __or__(cls, o): return cls
    def __ror__(cls, o): return cls
    def __iter__(cls): return iter(())
    def __len__(cls): return 0
    def __bool__(cls): return False
    def __int__(cls): return 0
    def __index__(cls): return 0
    def __float__(cls): return 0.0
    def __repr__(cls): return f"<stub {cls._path}>"
    def __add__(cls, o): return cls
    def __radd__(cls, o): return cls
    def __sub__(cls, o): return cls
    def __rsub__(cls, o): return cls
    def __mul__(cls, o): return cls
    def __rmul__(cls, o): return cls
    def __truediv__(cls, o): return cls
    def __rtruediv__(cls, o): return cls
    def __lt__(cls, o): return False
    def __gt__(cls, o): return False
    def __le__(cls, o): return False
    def __ge__(cls, o): return False
    def __contains__(cls, o): return False
    def __enter__(cls): return cls
    def __exit__(cls, *a): return False
    def __eq__(cls, o): return isinstance(o, _Meta) and o._path == cls._path
    def __ne__(cls, o): return not _Meta.__eq__(cls, o)
    def __hash__(cls): return hash(cls._path)
def _make(path):
    return _Meta(path.rsplit('.',1)[-1] or 'Stub', (), {'_path': path, '__module__': path.rsplit('.',1)[0]})
class StubModule(types.ModuleType):
    def __getattr__(self, name):
        path = f"{self.__name__}.{name}"
        if name.startswith('__') and name.endswith('__') and path not in OVERRIDES:
            raise AttributeError(name)
        v = _lookup(path); setattr(self, name, v); return v
class StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        m = StubModule(spec.name); m.__path__ = []; m.__file__ = f"<stub {spec.name}>"; return m
    def exec_module(self, m): STUBBED.append(m.__name__)
# Package metadata for the stubs (transformers and vLLM ask for versions): the engines' own pins
# (both wheels require torch==2.11.0; torchvision 0.26.0 and torchaudio 2.11.0 from vLLM's, torchcodec
# 0.11.1 from SGLang's); triton's is nominal, nothing compares it.
STUB_DISTS = {'torch': '2.11.0', 'torchvision': '0.26.0', 'torchaudio': '2.11.0', 'torchcodec': '0.11.1', 'triton': '3.6.0'}
class _StubDist(_md.Distribution):
    def __init__(self, name, version): self._n, self._v = name, version
    def read_text(self, filename):
        if filename in ('METADATA', 'PKG-INFO'): return f"Metadata-Version: 2.1\nName: {self._n}\nVersion: {self._v}\n"
        return None
    def locate_file(self, path): return path
OVERRIDES.update({f'{k}.__version__': v for k, v in STUB_DISTS.items()})
class StubFinder(importlib.abc.MetaPathFinder):
    def find_distributions(self, context=_md.DistributionFinder.Context()):
        name = context.name
        if name is None: return iter(())
        n = name.replace('-', '_').lower()
        return iter([_StubDist(n, STUB_DISTS[n])] if n in STUB_DISTS else [])
    def find_spec(self, name, path, target=None):
        top = name.split('.')[0]
        if name in ABSENT: return None
        if top not in STUB_TOP and not (top in ('sglang','vllm') and '.' in name):
            return None
        return importlib.machinery.ModuleSpec(name, StubLoader(), is_package=True)


def install() -> None:
    """Adds the stub finder at the end of sys.meta_path: installed modules always win."""
    if not any(isinstance(f, StubFinder) for f in sys.meta_path):
        sys.meta_path.append(StubFinder())


def stubbed() -> list[str]:
    return sorted(set(STUBBED))
