"""What a memo program may call: the toolkit's interface.

Stdlib only (imported in the guest). `automemo.toolkit.guest.Toolkit` implements it inside the
sandbox; the methods marked *host* travel over the session channel to `HostServices`, are
counted in the run's ledger under the role `memo`, and are limited by a per-session quota.

Embeddings come back as lists of float lists (JSON-friendly; text vectors travel as their float32
bytes, `automemo.toolkit.matrix_wire`, and arrive bit-identical); a program that wants numpy calls
`numpy.asarray(...)`. Token embeddings (`embed_tokens`) come back as numpy float16 matrices: they
travel compactly (`automemo.toolkit.matrix_wire`). Text embeddings are L2-normalised, so a dot product is a cosine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, Sequence

from automemo.contract import ImageRef
from automemo.errors import AutomemoError


class ToolkitAPI(Protocol):
    state_dir: Path
    """Writable directory private to this session (the only writable path in the sandbox)."""

    store_root: Path
    """Read-only root of the episode store; `store_root / ref.path` is an image file."""

    def llm(
        self,
        prompt: str | list[dict[str, Any]],
        *,
        images: Sequence[ImageRef] = (),
        max_tokens: int = 512,
        temperature: float = 0.0,
        purpose: str = "",
    ) -> str:
        """*host* Chat completion with the run's `memo` model. `prompt` is a user message or a
        list of OpenAI-style messages; `images` are attached to the (last) user message.
        Raises `ToolkitUnavailable` when no memo model is configured: programs must have a
        deterministic fallback."""

    def embed_text(self, texts: Sequence[str]) -> list[list[float]]:
        """*host* L2-normalised text embeddings (default: all-MiniLM-L6-v2, 384 dims)."""

    def embed_tokens(self, texts: Sequence[str]) -> list[Any]:
        """*host* Each text's token embeddings from the same model as `embed_text` (its
        contextual word-piece outputs before pooling): a `numpy.ndarray` of shape
        (tokens, dim), float16, rows L2-normalised, one per text (lengths differ). For
        ColBERT-style late interaction: `memolib.TokenIndex` / `memolib.maxsim`. Raises
        `ToolkitUnavailable` when the run's encoder has no token outputs (an endpoint)."""

    def embed_image(self, refs: Sequence[ImageRef]) -> list[list[float]]:
        """*host* L2-normalised image embeddings: open_clip when configured, otherwise the
        deterministic perceptual feature (colour histogram + thumbnail)."""

    def embedding_dims(self) -> dict[str, int]:
        """*host* {"text": d_text, "image": d_image} of the configured encoders."""

    def has_llm(self) -> bool:
        """*host* Whether `llm` is configured for this run."""

    def image(self, ref: ImageRef) -> Any:
        """Open an image of the episode store as a `PIL.Image.Image` (RGB)."""

    def vector_index(self, dim: int) -> Any:
        """A `faiss.IndexFlatIP(dim)` (inner product; use normalised vectors for cosine)."""

    def graph(self, directed: bool = False) -> Any:
        """An empty `networkx.Graph` (or `DiGraph`)."""

    def db(self, name: str) -> Any:
        """A `sqlite_utils.Database` stored as `state_dir / f"{name}.db"`."""


class ToolkitUnavailable(AutomemoError, RuntimeError):
    """A host service is not configured (e.g. no memo LLM) or its quota is spent."""
