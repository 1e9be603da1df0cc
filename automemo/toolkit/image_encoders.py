"""Image encoders: open_clip when the user configures weights, else a deterministic perceptual
feature.

The perceptual feature (`PerceptualImageEncoder`, 320 dims) is what runs when no CLIP weights
exist, which is the normal case offline (no model hub; no CLIP weights ship in a package):

- a colour histogram: RGB quantised to 4 levels per channel (64 bins), normalised to sum 1,
  then L2-normalised — captures palette and dominant colours regardless of layout;
- a grey thumbnail: the image resized to 16×16 with a box filter, converted to grey, mean-
  centred and L2-normalised — captures coarse layout (where the light and dark areas are);

the two blocks are concatenated with equal weight and L2-normalised again, so a dot product is a
cosine in [-1, 1] and identical pixels give identical vectors on every machine.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from automemo.toolkit.text_encoders import l2_normalise

_HIST_LEVELS = 4
_THUMB = 16


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class PerceptualImageEncoder:
    name = f"perceptual-hist{_HIST_LEVELS**3}-thumb{_THUMB}x{_THUMB}"
    dim = _HIST_LEVELS**3 + _THUMB * _THUMB

    def encode(self, images: Sequence[Any]) -> np.ndarray:
        if not images:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._feature(img) for img in images]).astype(np.float32)

    def _feature(self, image: Any) -> np.ndarray:
        from PIL import Image

        rgb = np.asarray(image.convert("RGB"), dtype=np.uint8)
        quantised = (rgb.astype(np.int32) * _HIST_LEVELS) // 256
        bins = (quantised[..., 0] * _HIST_LEVELS + quantised[..., 1]) * _HIST_LEVELS + quantised[..., 2]
        hist = np.bincount(bins.ravel(), minlength=_HIST_LEVELS**3).astype(np.float64)
        hist = _unit(hist / max(1.0, hist.sum()))
        thumb = np.asarray(image.convert("L").resize((_THUMB, _THUMB), Image.Resampling.BOX), dtype=np.float64)
        thumb = thumb.ravel() - thumb.mean()
        # A flat image has no layout: its thumbnail block stays zero rather than amplifying noise.
        thumb = _unit(thumb) if np.abs(thumb).max() > 1e-9 else thumb
        return _unit(np.concatenate([hist, thumb]))


_OPEN_CLIP_LOCK = threading.Lock()


class OpenClipEncoder:
    """open_clip image tower. `pretrained` is a checkpoint file or a tag open_clip can resolve
    from its local cache (nothing is downloaded on machines without a model hub).
    `model_config` registers a custom architecture (an open_clip model-config JSON file) first."""

    def __init__(self, model: str, pretrained: str, *, model_config: str = "", batch_size: int = 32) -> None:
        if not pretrained:
            raise ValueError(
                "open_clip needs weights: set embedding.clip_pretrained to a checkpoint path or a "
                "pretrained tag; leave embedding.image = \"auto\" to use the perceptual feature instead"
            )
        self.model_name = model
        self.pretrained = pretrained
        self.model_config = model_config
        self.batch_size = batch_size
        self.name = f"open_clip:{model}:{Path(pretrained).name if Path(pretrained).exists() else pretrained}"
        self._model: Any = None
        self._preprocess: Any = None
        self._dim: int | None = None
        self._torch: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            try:
                import open_clip
                import torch
            except Exception as exc:  # noqa: BLE001 - a broken torchvision raises RuntimeError here
                raise RuntimeError(
                    f"open_clip could not be imported ({exc}); install the `clip` extra with a "
                    "torchvision that matches torch, or use the perceptual image feature"
                ) from exc
            with _OPEN_CLIP_LOCK:  # open_clip's model-config registry is a module global
                if self.model_config:
                    open_clip.add_model_config(self.model_config)
                model, _, preprocess = open_clip.create_model_and_transforms(
                    self.model_name, pretrained=self.pretrained, device="cpu"
                )
            model.eval()
            self._model, self._preprocess, self._torch = model, preprocess, torch
            with torch.no_grad():
                probe = model.encode_image(preprocess(_blank()).unsqueeze(0))
            self._dim = int(probe.shape[-1])

    @property
    def dim(self) -> int:
        self._load()
        return self._dim  # type: ignore[return-value]

    def encode(self, images: Sequence[Any]) -> np.ndarray:
        self._load()
        if not images:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        rows = []
        torch = self._torch
        with self._lock, torch.no_grad():
            for start in range(0, len(images), self.batch_size):
                batch = torch.stack([self._preprocess(img.convert("RGB")) for img in images[start : start + self.batch_size]])
                rows.append(self._model.encode_image(batch).float().numpy())
        return l2_normalise(np.concatenate(rows))


def _blank() -> Any:
    from PIL import Image

    return Image.new("RGB", (32, 32), (127, 127, 127))
