"""Late interaction: ColBERT-style MaxSim scoring over the token embeddings of the same
single-vector model the dense index uses (MiniLM's word-piece outputs before pooling).

ColBERT (Khattab & Zaharia, SIGIR 2020) scores a document by `sum over query tokens q of max over
document tokens d of cos(q, d)`: each query word finds its best match anywhere in the document,
so one rare word ("sourdough", a name) is not averaged away as it is in a pooled vector. Reading a
single-vector model's token outputs this way needs no ColBERT training; a public report on LoCoMo
measured any-hit recall 0.64 with MiniLM's pooled vectors and 0.81 with MaxSim over MiniLM's
token outputs.

Cost: a text's matrix is (tokens x 384) float16, kept per row with its own length. Scoring every
stored unit costs far more than a pooled cosine, so `TokenIndex.rerank` scores only a first
stage's candidates (BM25 / dense top-N): the scores of 50 candidates are one matrix product.
"""

from __future__ import annotations

from typing import Callable, Collection, Sequence

import numpy as np

from automemo.toolkit.memolib.vectors import top_indices

EmbedTokens = Callable[[list[str]], Sequence[np.ndarray]]


def maxsim(query: np.ndarray, document: np.ndarray) -> float:
    """ColBERT's late-interaction score: for each query token its best cosine with any document
    token, summed. Both are (tokens x dim) with normalised rows; 0 for an empty side."""
    if len(query) == 0 or len(document) == 0:
        return 0.0
    sims = np.asarray(query, dtype=np.float32) @ np.asarray(document, dtype=np.float32).T
    return float(sims.max(axis=1).sum())


class TokenIndex:
    """Token matrices of the texts added, from `embed_tokens` (`toolkit.embed_tokens`); rows
    numbered in insertion order like `BM25Index` and `DenseIndex`, so a ranking of one reranks
    with the others' rows. `max_chars` cuts a text before embedding (MiniLM reads 256 word
    pieces)."""

    def __init__(self, embed_tokens: EmbedTokens, max_chars: int = 1000) -> None:
        self.embed_tokens, self.max_chars = embed_tokens, max_chars
        self.matrices: list[np.ndarray] = []   # float16, one (tokens x dim) per row

    @property
    def size(self) -> int:
        return len(self.matrices)

    def add_many(self, texts: Sequence[str]) -> list[int]:
        """Embed and index `texts` in one host call; returns their rows."""
        if not texts:
            return []
        start = len(self.matrices)
        for matrix in self.embed_tokens([(t or "")[: self.max_chars] for t in texts]):
            self.matrices.append(np.asarray(matrix, dtype=np.float16))
        return list(range(start, len(self.matrices)))

    def add(self, text: str) -> int:
        return self.add_many([text])[0]

    def query_tokens(self, query: str) -> np.ndarray:
        return np.asarray(self.embed_tokens([(query or "")[: self.max_chars]])[0], dtype=np.float32)

    def scores(self, query: str | np.ndarray, rows: Sequence[int]) -> np.ndarray:
        """MaxSim of `query` (a text, embedded here, or its token matrix) with each of `rows`."""
        q = self.query_tokens(query) if isinstance(query, str) else np.asarray(query, dtype=np.float32)
        rows = [r for r in rows if 0 <= r < len(self.matrices)]
        if not rows or len(q) == 0:
            return np.zeros(len(rows), dtype=np.float32)
        # One product over the candidates' stacked tokens, then the best match per query token
        # inside each candidate's slice: cheaper than one product per candidate.
        lengths = [len(self.matrices[r]) for r in rows]
        stacked = np.concatenate([self.matrices[r] for r in rows], dtype=np.float32)  # one copy, not two
        sims = q @ stacked.T
        bounds = np.cumsum([0, *lengths])
        return np.array([sims[:, a:b].max(axis=1).sum() if b > a else 0.0
                         for a, b in zip(bounds[:-1], bounds[1:])], dtype=np.float32)

    def rerank(self, query: str | np.ndarray, rows: Sequence[int], k: int | None = None) -> list[tuple[int, float]]:
        """`rows` (a first stage's candidates, best first, or `(row, score)` pairs) reordered by
        MaxSim with `query`; the best `k` (all when None)."""
        rows = [r[0] if isinstance(r, tuple) else r for r in rows]
        scores = self.scores(query, rows)
        order = top_indices(scores, len(rows) if k is None else k)
        return [(int(rows[i]), float(scores[i])) for i in order]

    def search(self, query: str | np.ndarray, k: int, allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """Exhaustive MaxSim over `allowed` (every row when None): exact but slow on large
        memories; prefer `rerank` of a first stage's candidates."""
        rows = sorted(allowed) if allowed is not None else range(len(self.matrices))
        return self.rerank(query, list(rows), k)
