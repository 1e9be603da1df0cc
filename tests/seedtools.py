"""Running seed memo programs in-process for the seed tests: load a seed file as a module, and
give it the guest toolkit wired to host services with the real MiniLM text encoder."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from automemo.contract import EpisodeRecorder, PartialRecorder, Step
from automemo.paths import SEEDS_DIR


def load_seed(name: str, **overrides) -> ModuleType:
    """Import `seeds/<name>.py` as a fresh module; `overrides` replace its tunable constants
    (the mutator's job in a search, set directly here to test one knob at a time)."""
    path = SEEDS_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"seed_{name}_{len(overrides)}_{id(overrides)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for key, value in overrides.items():
        assert hasattr(module, key), f"{name} has no tunable {key}"
        setattr(module, key, value)
    return module


def _torchvision_shim():
    # The PyPI torchvision is a CUDA build; with CPU torch it imports only once these two op
    # schemas exist (a test-environment fact). Defining them twice is an error.
    # The Library objects must stay alive: their definitions vanish when they are collected.
    import torch

    if _SHIM:
        return
    try:
        lib = torch.library.Library("torchvision", "DEF")
    except RuntimeError:
        return  # someone else (conftest, the embedding module) already defined them
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _SHIM.append(lib)


_SHIM: list = []


@functools.lru_cache(maxsize=1)
def encoders():
    """The run's default encoders (real MiniLM, perceptual image feature), loaded once per test
    process: loading the model is the slow part, not using it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _torchvision_shim()
    from automemo.toolkit.embedding import default_encoders

    return default_encoders()


def host_services(store_root: Path, *, llm=None):
    """The LLM engineer's MemoServices over the real encoders; `llm` an LLMClient or None."""
    from automemo.toolkit.services import MemoServices

    return MemoServices(encoders(), llm, store_root)


def toolkit(tmp_path: Path, store_root: Path | None = None, *, llm=None):
    """The guest toolkit, in-process, answered by host services with real embeddings."""
    from automemo.toolkit.guest import Toolkit

    store_root = Path(store_root or tmp_path / "store")
    store_root.mkdir(parents=True, exist_ok=True)
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    services = host_services(store_root, llm=llm)
    return Toolkit(state, store_root, call_host=services.handle)


# --- episode builders -------------------------------------------------------------------------


def web_episode(task_id, instruction, actions, *, reward=1.0, url="https://shop.example.com/",
                errors=None, screenshots=None, final_answer=None):
    errors = errors or {}
    screenshots = screenshots or {}
    steps = [
        Step(index=i, observation=f"page {url} step {i}", action=a, error=errors.get(i),
             screenshot=screenshots.get(i))
        for i, a in enumerate(actions)
    ]
    return EpisodeRecorder(
        task_id=task_id, benchmark="web", instruction=instruction,
        initial_observation=f"URL: {url}", steps=steps, reward=reward, success=reward >= 1.0,
        final_answer=final_answer,
    )


def conversation(task_id, rounds, *, images=None, user=None):
    """A conversation episode shaped like a Mini-Gallery session: `rounds` is a list of
    (round_id, text); `images` maps a round position to (image_id, ImageRef)."""
    images = images or {}
    steps, meta_rounds = [], []
    for i, (round_id, text) in enumerate(rounds):
        image_id, ref = images.get(i, (None, None))
        steps.append(Step(index=i, observation=text, screenshot=ref))
        meta_rounds.append({"round_id": round_id, "time": f"2024-01-0{1 + i % 9} 10:00",
                            "image_id": image_id})
    return EpisodeRecorder(
        task_id=task_id, benchmark="minigallery", instruction=f"conversation session {task_id}",
        steps=steps, reward=1.0, success=True,
        metadata={"conversation": True, "rounds": meta_rounds, **({"user": user} if user else {})},
    )


def question(text, *, images=(), budget=None, task_id="q", user=None):
    meta = {"user": user} if user else {}
    if budget:
        meta["budget"] = budget
    return PartialRecorder(task_id=task_id, benchmark="minigallery", instruction=text,
                           task_images=tuple(images), metadata=meta)


def web_task(instruction, url="https://shop.example.com/", task_id="t"):
    return PartialRecorder(task_id=task_id, benchmark="web", instruction=instruction,
                           initial_observation=f"URL: {url}")


def solid_image(store, colour, caption=None):
    from PIL import Image

    return store.put_image(Image.new("RGB", (32, 32), colour), caption=caption)

