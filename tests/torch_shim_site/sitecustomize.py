"""Test-environment shim for subprocesses, put on PYTHONPATH by tests/searchtools.py.

The PyPI torchvision is a CUDA build that imports next to CPU torch only once the op schemas
`torchvision::nms` and `torchvision::qnms` exist. This defines them just before torchvision is
first imported — not at start-up, so processes that never embed do not pay for importing torch.
Not product code: the same shim as the `torch_cpu_shim` fixture in tests/conftest.py.
"""

import importlib.abc
import sys

_LIBS = []


class _DefineSchemasFirst(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torchvision" or _LIBS:
            return None
        import torch

        try:
            lib = torch.library.Library("torchvision", "DEF")
            lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            _LIBS.append(lib)
        except RuntimeError:
            _LIBS.append(None)  # defined already in this process
        return None  # let the normal finders import torchvision itself


sys.meta_path.insert(0, _DefineSchemasFirst())
