"""A static text encoder distilled from the shipped all-MiniLM-L6-v2: one vector per word piece,
a text's vector is the mean of its word pieces' vectors. No forward pass per text: microseconds
of numpy a text where MiniLM spends ~30 ms of CPU on a 590-piece turn.

Model2Vec's method (Tulkens & van Dongen 2024, "Model2Vec: fast state-of-the-art static
embeddings"), computed here from the local weights, never downloaded:

1. every word piece of MiniLM's vocabulary (special and `[unused]` entries left out) is run
   through MiniLM alone, `[CLS] piece [SEP]`, and its output mean-pooled as the sentence encoder
   pools: that piece's vector;
2. PCA of those vectors down to `STATIC_DIM` dimensions (centred; each component's sign fixed so
   that its largest loading is positive, so the table is the same on every machine);
3. SIF weighting with Zipf's law over the vocabulary's order (BERT's word pieces are listed by
   frequency): weight `SIF / (SIF + p(rank))`, `p(rank)` proportional to `1 / rank`, so frequent
   pieces ("the", "##s", punctuation) weigh less in the mean.

The table (30,522 x 256 float32, 31 MB) is distilled on first use (~1 CPU minute) and kept under
the automemo cache folder (`AUTOMEMO_CACHE`, default `~/.cache/automemo`), named by the weights'
SHA-256 and this method's version; later processes read it. A text is read whole: no window, so a
fact late in a long turn still counts (MiniLM stops at 128 or 256 pieces), but word order and
context are lost. Its vectors are its own: its `name` is neither MiniLM encoder's, so the
content-keyed cache never mixes them.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from automemo.paths import CACHE_DIR
from automemo.toolkit.text_encoders import l2_normalise, minilm_model_dir

STATIC_DIM = 256
"""Dimensions kept by the PCA (Model2Vec's default)."""

SIF = 1e-4
"""The SIF coefficient: a piece of Zipf probability p weighs SIF / (SIF + p)."""

FIRST_PIECE = 999
"""BERT's vocabulary: ids below this are [PAD], [UNK], [CLS], [SEP], [MASK] and [unused] slots;
from here on, characters then word pieces, most frequent first."""

METHOD_VERSION = 1
"""Bump when the distillation changes: the name, and so every cache key, changes with it."""

_TABLES: dict[str, np.ndarray] = {}
_LOCK = threading.Lock()


def zipf_weights(n_pieces: int, sif: float = SIF) -> np.ndarray:
    """The SIF weight of each of `n_pieces` pieces listed most frequent first."""
    rank = np.arange(1, n_pieces + 1, dtype=np.float64)
    p = (1.0 / rank) / np.sum(1.0 / rank)
    return (sif / (sif + p)).astype(np.float32)


def pca(rows: np.ndarray, dim: int) -> np.ndarray:
    """`rows` centred and projected on their first `dim` principal components, each component's
    sign chosen so that its largest-magnitude loading is positive (deterministic)."""
    centred = rows - rows.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    components = vt[:dim]
    signs = np.sign(components[np.arange(len(components)), np.argmax(np.abs(components), axis=1)])
    return (centred @ (components * signs[:, None]).T).astype(np.float32)


def piece_vectors(model: Any, ids: Sequence[int], batch: int = 512) -> np.ndarray:
    """MiniLM's mean-pooled output for each piece id alone, `[CLS] piece [SEP]` (step 1)."""
    import torch

    transformer = model.bert
    cls, sep = model.cls_id, model.sep_id
    out = []
    with torch.inference_mode():
        for start in range(0, len(ids), batch):
            chunk = torch.tensor([[cls, i, sep] for i in ids[start : start + batch]], dtype=torch.long)
            hidden = transformer(input_ids=chunk, attention_mask=torch.ones_like(chunk)).last_hidden_state
            out.append(hidden.float().mean(dim=1).numpy())
    return np.concatenate(out).astype(np.float32)


def distill(model: Any, vocab_size: int, dim: int = STATIC_DIM) -> np.ndarray:
    """The static table, one row per vocabulary id (rows below `FIRST_PIECE` zero)."""
    ids = list(range(FIRST_PIECE, vocab_size))
    reduced = pca(piece_vectors(model, ids), dim) * zipf_weights(len(ids))[:, None]
    table = np.zeros((vocab_size, dim), dtype=np.float32)
    table[FIRST_PIECE:] = reduced
    return table


def _weights_digest(model_dir: Path) -> str:
    digest = hashlib.sha256()
    with open(model_dir / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _load_table(model_dir: Path, cache_dir: Path) -> np.ndarray:
    """The distilled table: from the cache folder, or distilled now and written there."""
    key = f"{_weights_digest(model_dir)}-v{METHOD_VERSION}-d{STATIC_DIM}"
    with _LOCK:
        if key in _TABLES:
            return _TABLES[key]
        path = cache_dir / "static-encoders" / f"all-MiniLM-L6-v2-{key}.npy"
        if path.exists():
            table = np.load(path)
        else:
            from automemo.toolkit.text_encoders import _load_minilm

            model = _load_minilm()
            table = distill(model, model.vocab_size)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                np.save(f, table)
            os.replace(tmp, path)  # atomic: a concurrent reader sees the whole table or none
        _TABLES[key] = table
        return table


class StaticMiniLMEncoder:
    """Text vectors from the static table distilled from all-MiniLM-L6-v2 (module docstring)."""

    name = f"all-MiniLM-L6-v2-static{STATIC_DIM}-v{METHOD_VERSION}"
    dim = STATIC_DIM

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else CACHE_DIR
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None

    def _ready(self) -> tuple[np.ndarray, Any]:
        if self._table is None:
            from tokenizers import Tokenizer

            model_dir = Path(minilm_model_dir())
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            tokenizer.no_truncation()  # the file sets MiniLM's 128-piece window; a static mean has none
            tokenizer.no_padding()
            self._tokenizer = tokenizer
            self._table = _load_table(model_dir, self.cache_dir)
        return self._table, self._tokenizer

    def encode(self, texts: Sequence[str], *, node: Any = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        table, tokenizer = self._ready()
        encoded = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encoded]
        ids = [i[i >= FIRST_PIECE] for i in ids]  # [UNK] and other specials carry no meaning here
        lengths = np.array([len(i) for i in ids])
        rows = np.zeros((len(ids), self.dim), dtype=np.float32)
        present = lengths > 0
        if present.any():
            flat = np.concatenate([i for i in ids if len(i)])
            starts = np.concatenate([[0], np.cumsum(lengths[present])[:-1]])
            rows[present] = np.add.reduceat(table[flat], starts, axis=0) / lengths[present, None]
        return l2_normalise(rows)
