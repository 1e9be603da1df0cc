"""Shared pytest fixtures. Keep this file small: fixtures that one test file needs live there."""

from __future__ import annotations

import sys

import pytest

from automemo.measurements.stand_ins.fakellm import FakeLLM


def pytest_collection_modifyitems(config, items):
    """Files with a slow test (marked `slow`: over ~20 s) run first. The suite runs on two
    workers a file at a time (`--dist loadfile`, in collection order); a long file handed out
    last keeps one worker busy while the other has nothing left. Longest first lets the two
    finish together. The order within a file is kept."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: False (slow) first


@pytest.fixture
def fake_llm():
    """A started OpenAI-compatible fake server on 127.0.0.1 (see automemo.measurements.stand_ins.fakellm); stopped after."""
    with FakeLLM() as server:
        yield server


_TORCHVISION_SCHEMAS: list = []


@pytest.fixture(scope="session")
def torch_cpu_shim():
    """Lets the PyPI torchvision (a CUDA build) import next to CPU torch by defining the two op
    schemas it looks for. Test-environment only; request it before anything imports
    sentence-transformers or open_clip."""
    import torch

    if not _TORCHVISION_SCHEMAS:
        try:
            lib = torch.library.Library("torchvision", "DEF")
            lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            _TORCHVISION_SCHEMAS.append(lib)  # the definitions live as long as this object
        except RuntimeError:
            pass  # already defined in this process (e.g. by tests/seedtools.py)
    # A text encoder loaded earlier in this process without the shim hid the broken torchvision
    # from transformers (toolkit/text_encoders.py); with the schemas defined it imports again.
    if "torchvision" in sys.modules and sys.modules["torchvision"] is None:
        del sys.modules["torchvision"]
    yield
