"""Test-environment shim for subprocesses, put on PYTHONPATH by tests/searchtools.py.

The PyPI torchvision is a CUDA build that imports next to CPU torch only once the op schemas
`torchvision::nms` and `torchvision::qnms` exist. This defines them just before torchvision's
own code runs — not at start-up, so processes that never embed do not pay for importing torch.
Not product code: the same shim as the `torch_cpu_shim` fixture in tests/conftest.py.

torch is imported in the loader's `exec_module`, never in `find_spec`: CPython calls finders
while holding its global import lock, and importing torch there blocked every other thread's
imports (and any fork) for seconds, which can deadlock a multi-threaded search.
"""

import importlib.abc
import sys

_LIBS = []


def _define_schemas():
    if _LIBS:
        return
    import torch

    try:
        lib = torch.library.Library("torchvision", "DEF")
        lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _LIBS.append(lib)
    except RuntimeError:
        _LIBS.append(None)  # defined already in this process


class _SchemasThenLoad(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        _define_schemas()
        self._loader.exec_module(module)


class _DefineSchemasFirst(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torchvision":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _SchemasThenLoad(spec.loader)
                return spec
        return None


sys.meta_path.insert(0, _DefineSchemasFirst())
