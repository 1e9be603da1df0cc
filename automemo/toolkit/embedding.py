"""Embeddings served to memo programs: configuration, the encoder pair of a run, and
the content-hash cache in front of both.

    encoders = default_encoders(EmbeddingConfig(), llm=client)
    encoders.text.embed(["a sentence"])        # (1, 384) float32, L2-normalised
    encoders.image.embed_files([path])         # (1, d_image) float32, L2-normalised
    encoders.describe()                        # what the run's resolved config records

Encoders are built once per run and shared by every session: models load lazily (a program that
never embeds costs nothing) and the cache makes re-embedding the same episodes for every
candidate a lookup.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

import numpy as np

from automemo.configtools import ConfigError
from automemo.paths import SHIPPED_DATA_DIR
from automemo.toolkit.embedding_cache import EmbeddingCache, content_key
from automemo.toolkit.embedding_pack import shipped_packs, shipped_vectors
from automemo.toolkit.image_encoders import OpenClipEncoder, PerceptualImageEncoder
from automemo.toolkit.static_encoder import StaticMiniLMEncoder
from automemo.toolkit.text_encoders import FAST_MAX_TOKENS, MiniLMEncoder, OpenAIEmbeddingEncoder

if TYPE_CHECKING:
    from automemo.llm import LLMClient

__all__ = [
    "CachedImageEncoder", "CachedTextEncoder", "EmbeddingCache", "EmbeddingConfig", "Encoders",
    "MiniLMEncoder", "OpenAIEmbeddingEncoder", "OpenClipEncoder", "PerceptualImageEncoder",
    "default_encoders",
]


@dataclass(frozen=True)
class EmbeddingConfig:
    # local all-MiniLM-L6-v2; minilm_fast: the same truncated at 128 tokens, bfloat16 where the CPU
    # has it (~4x less CPU a long text, its own cache entries); minilm_static: a static table
    # distilled from it once (Model2Vec's method, 256 dims, ~40x less CPU than minilm_fast, whole
    # texts, no word order); or the memo role's endpoint
    text: Literal["minilm", "minilm_fast", "minilm_static", "openai"] = "minilm"
    openai_model: str = "text-embedding-3-small"      # embedding model name when text = "openai"
    image: Literal["auto", "perceptual", "open_clip"] = "auto"  # auto: open_clip iff clip_pretrained is set
    clip_model: str = "ViT-B-32"                      # open_clip architecture name
    clip_pretrained: str = ""                         # checkpoint path or pretrained tag; empty = no CLIP
    clip_model_config: str = ""                       # JSON config of a custom open_clip architecture
    cache_path: str = ""                              # sqlite file for the cache; empty = memory only
    batch_size: int = 64                              # texts per forward pass of the local model
    # word pieces minilm_fast reads of a text (MiniLM was trained at 128; the name says it, e.g.
    # all-MiniLM-L6-v2@128-bf16, so each length has its own cache entries)
    fast_max_tokens: int = FAST_MAX_TOKENS
    # concurrent one-thread forward passes a batch of the local MiniLM is split over, each on its
    # own copy of the model (~45-90 MB); 1: one pass on torch's own threads, which spin-wait on
    # each other when other work holds a core (1.65x the CPU a text, measured on 2 busy cores)
    streams: int = 2


def image_encoder_kind(config: EmbeddingConfig) -> Literal["perceptual", "open_clip"]:
    """The image encoder `config` selects ("auto" resolved): CLIP iff weights are named. Known
    without loading anything, so a run's config, its export and the meta agent can say it."""
    if config.image == "open_clip" or (config.image == "auto" and bool(config.clip_pretrained)):
        return "open_clip"
    return "perceptual"


def image_encoder_label(config: EmbeddingConfig) -> str:
    """One sentence naming the active image encoder, printed once and told to the meta agent."""
    if image_encoder_kind(config) == "open_clip":
        return (f"CLIP (open_clip {config.clip_model}, weights {config.clip_pretrained}): image "
                "vectors from CLIP's image tower, comparable with each other, not with text vectors")
    return ("the perceptual fallback (no CLIP weights configured): a colour histogram and a grey "
            "16x16 thumbnail per image, comparable with each other, not with text vectors")


class _CachedEncoder:
    """An encoder behind the run's content-hash cache: same name and dimension as the encoder."""

    def __init__(self, encoder: Any, cache: EmbeddingCache) -> None:
        self.encoder = encoder
        self.cache = cache

    @property
    def name(self) -> str:
        return self.encoder.name

    @property
    def dim(self) -> int:
        return self.encoder.dim


class CachedTextEncoder(_CachedEncoder):
    def __init__(self, encoder: Any, cache: EmbeddingCache, *, shipped: Path | None = SHIPPED_DATA_DIR) -> None:
        """`shipped`: the folder of data sets whose precomputed vectors of this encoder
        (embedding_pack.py, checked against the encoder's name and the data's hash) are used
        before the encoder; None: none are."""
        super().__init__(encoder, cache)
        self.shipped = shipped if shipped is not None and shipped_packs(encoder.name, shipped) else None
        self._expected_tokens: dict[str, str] = {}  # key -> text, see `expect_tokens`
        self._expected_lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, node: Any = None,
              before_encode: Callable[[int], None] | None = None) -> np.ndarray:
        """`before_encode(n)` is called with the number of texts the encoder is about to compute
        (neither cached nor shipped), before it runs: a session's quota counts those."""
        keys = [content_key(self.encoder.name, t.encode("utf-8")) for t in texts]
        found = self.cache.get_many(keys)
        todo = {k: t for k, t in zip(keys, texts) if k not in found}  # dict: duplicates once
        if todo and self.shipped is not None:
            pack = shipped_vectors(self.encoder.name, self.dim, self.shipped)
            shipped = {k: pack[k] for k in todo if k in pack}
            if shipped:
                self.cache.put_many(shipped)
                found.update(shipped)
                todo = {k: t for k, t in todo.items() if k not in shipped}
        if todo:
            self._compute(todo, found, node, before_encode)
        return _stack(keys, found, self.dim if not keys else None)

    def _compute(self, todo: dict[str, str], found: dict[str, np.ndarray], node: Any,
                 before_encode: Callable[[int], None] | None) -> None:
        """The vectors of `todo` (key -> text, neither cached nor shipped) into `found` and the
        cache. An encoder that says what it reads of a text (`read_keys`: MiniLM's word pieces cut
        at its window) runs once per distinct reading, across calls and programs: a turn that
        one program embeds whole, another cut at 1,000 characters and a third at 2,000 is one
        vector when the encoder reads only its first 128 pieces (LongMemEval's seeds did each
        of those, and each paid for the S split's turns again). The reading's key is an alias in
        the cache; the texts' own keys still answer every later call without tokenizing."""
        reads: dict[str, str] = {}
        if hasattr(self.encoder, "read_keys"):
            reads = {k: content_key(self.encoder.name + "/reads", r)
                     for k, r in zip(todo, self.encoder.read_keys(list(todo.values()))) if r is not None}
            known = self.cache.get_many(list(set(reads.values())))
            aliased = {k: known[r] for k, r in reads.items() if r in known}
            if aliased:
                self.cache.put_many(aliased)
                found.update(aliased)
                todo = {k: t for k, t in todo.items() if k not in aliased}
        if not todo:
            return
        first_of = {}  # reading (or text key) -> the key whose text is encoded for it
        for k in todo:
            first_of.setdefault(reads.get(k, k), k)
        if before_encode is not None:
            before_encode(len(first_of))
        fresh = dict(zip(first_of, self.encoder.encode([todo[k] for k in first_of.values()], node=node)))
        computed = {k: fresh[reads.get(k, k)] for k in todo}
        computed.update({reads[k]: fresh[reads[k]] for k in todo if k in reads})
        self.cache.put_many(computed)
        found.update(computed)

    @property
    def has_tokens(self) -> bool:
        """Whether the encoder exposes token embeddings (the local MiniLM does; an endpoint
        returns pooled vectors only)."""
        return hasattr(self.encoder, "encode_tokens")

    def _token_key(self, text: str) -> str:
        return content_key(self.encoder.name + "/tokens", text.encode("utf-8"))

    def expect_tokens(self, texts: Sequence[str]) -> None:
        """Texts whose token matrices a program may ask for (a split's questions): computed in
        the same batch as the first `embed_tokens` call that has to run the encoder, not now.
        Only late interaction reads token matrices; a run whose programs never do (the
        quickstart's) then never pays for them, or for loading the model to make them."""
        with self._expected_lock:
            self._expected_tokens.update((self._token_key(t), t) for t in texts)

    def embed_tokens(self, texts: Sequence[str], *, node: Any = None) -> list[np.ndarray]:
        """Each text's token matrix (tokens x dim, float16, rows L2-normalised), cached by
        content like `embed`."""
        if not self.has_tokens:
            raise NotImplementedError(f"{self.name} has no token embeddings")
        keys = [self._token_key(t) for t in texts]
        found = self.cache.get_matrices(keys)
        todo = {k: t for k, t in zip(keys, texts) if k not in found}
        if todo:
            with self._expected_lock:
                expected, self._expected_tokens = self._expected_tokens, {}
            ahead = {k: t for k, t in expected.items() if k not in todo}
            cached = self.cache.get_matrices(list(ahead))  # a resumed run's file may hold them
            batch = {**todo, **{k: t for k, t in ahead.items() if k not in cached}}
            fresh = self.encoder.encode_tokens(list(batch.values()), node=node)
            computed = {k: np.asarray(m, dtype=np.float16) for k, m in zip(batch, fresh)}
            self.cache.put_matrices(computed)
            found.update(computed)
        return [found[k] for k in keys]


class CachedImageEncoder(_CachedEncoder):
    def embed_files(self, paths: Sequence[Path]) -> np.ndarray:
        from PIL import Image

        blobs = [Path(p).read_bytes() for p in paths]
        keys = [content_key(self.encoder.name, b) for b in blobs]
        found = self.cache.get_many(keys)
        todo = {k: b for k, b in zip(keys, blobs) if k not in found}
        if todo:
            images = []
            for key, blob in todo.items():
                try:
                    with Image.open(io.BytesIO(blob)) as img:
                        images.append(img.convert("RGB"))
                except Exception as exc:  # noqa: BLE001 - PIL raises many types for bad files
                    where = paths[keys.index(key)]
                    raise ValueError(f"{where} is not a readable image: {exc}") from None
            computed = dict(zip(todo, self.encoder.encode(images)))
            self.cache.put_many(computed)
            found.update(computed)
        return _stack(keys, found, self.dim if not keys else None)


def _stack(keys: list[str], vectors: dict[str, np.ndarray], empty_dim: int | None) -> np.ndarray:
    if not keys:
        return np.zeros((0, empty_dim or 0), dtype=np.float32)
    return np.stack([vectors[k] for k in keys]).astype(np.float32)


@dataclass(frozen=True)
class Encoders:
    text: CachedTextEncoder
    image: CachedImageEncoder

    def dims(self) -> dict[str, int]:
        return {"text": int(self.text.dim), "image": int(self.image.dim)}

    def describe(self) -> dict[str, Any]:
        """Which encoders a run uses, for its resolved config (no model is loaded to answer)."""
        perceptual = isinstance(self.image.encoder, PerceptualImageEncoder)
        return {
            "text": self.text.name,
            "image": self.image.name,
            "image_fallback": perceptual,
            "note": (
                "no CLIP weights configured: images use the deterministic perceptual feature "
                "(colour histogram + 16x16 grey thumbnail, L2-normalised)"
                if perceptual else "images use open_clip"
            ),
        }


def default_encoders(config: EmbeddingConfig = EmbeddingConfig(), llm: LLMClient | None = None) -> Encoders:
    """The run's encoder pair from its config. Raises ConfigError when the config asks for
    something it cannot have (an embeddings endpoint without a memo role, CLIP without weights)."""
    cache = EmbeddingCache(config.cache_path or None)
    if config.text == "openai":
        if llm is None or not llm.configured("memo"):
            raise ConfigError(
                "embedding.text = \"openai\" needs the memo LLM role (llm.memo.model and base_url); "
                "configure it or use embedding.text = \"minilm\""
            )
        text: Any = OpenAIEmbeddingEncoder(llm, config.openai_model)
    elif config.text in ("minilm", "minilm_fast") and config.streams < 1:
        raise ConfigError(f"embeddings.streams must be 1 or more, got {config.streams}")
    elif config.text == "minilm_fast" and not 16 <= config.fast_max_tokens <= 512:
        raise ConfigError(f"embeddings.fast_max_tokens must be 16..512 (MiniLM's positions), got {config.fast_max_tokens}")
    elif config.text == "minilm_static":
        text = StaticMiniLMEncoder()
    else:
        text = MiniLMEncoder(batch_size=config.batch_size, fast=config.text == "minilm_fast", streams=config.streams,
                            max_tokens=config.fast_max_tokens)
    use_clip = image_encoder_kind(config) == "open_clip"
    if use_clip and not config.clip_pretrained:
        raise ConfigError(
            "embedding.image = \"open_clip\" needs embedding.clip_pretrained (a checkpoint path or a "
            "pretrained tag); with none, use embedding.image = \"auto\" for the perceptual feature"
        )
    image: Any = (
        OpenClipEncoder(config.clip_model, config.clip_pretrained, model_config=config.clip_model_config)
        if use_clip else PerceptualImageEncoder()
    )
    return Encoders(CachedTextEncoder(text, cache), CachedImageEncoder(image, cache))
