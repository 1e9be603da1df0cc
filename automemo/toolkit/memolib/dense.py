"""The dense index: unit texts embedded (`toolkit.embed_text`, MiniLM by default) and searched by
cosine similarity, with the same `add` / `search(query, k, allowed)` signature as `BM25Index` so
the two fuse (`fusion.rrf`). Vectors live in one normalised numpy matrix: exact search, and a
scope filter is a row mask.

Incremental: the matrix is a growing buffer (`buffers.GrowingArray`), so an add copies only its
own rows (amortised) and a search reads the matrix in place; a search costs one matrix-vector
product over the rows searched (O(n * dim), or O(|allowed| * dim) under a scope filter)."""

from __future__ import annotations

from typing import Callable, Collection, Sequence

import numpy as np

from automemo.toolkit.memolib.buffers import GrowingArray
from automemo.toolkit.memolib.vectors import allowed_rows, as_matrix, top_indices


class DenseIndex:
    """`embed(texts) -> vectors` (e.g. `toolkit.embed_text`); `max_chars` cuts each text before
    embedding (MiniLM reads 256 word pieces, about 1,000 characters)."""

    def __init__(self, embed: Callable[[list[str]], Sequence[Sequence[float]]], dim: int | None = None,
                 max_chars: int = 1000) -> None:
        self.embed, self.dim, self.max_chars = embed, dim, max_chars
        self._vectors: GrowingArray | None = None  # made at the first add, when the dim is known

    @property
    def size(self) -> int:
        return len(self._vectors) if self._vectors is not None else 0

    @property
    def matrix(self) -> np.ndarray:
        """Every row's normalised vector, shape (size, dim): a view, valid until the next add."""
        if self._vectors is None:
            return np.zeros((0, self.dim or 1), np.float32)
        return self._vectors.view

    def add_many(self, texts: Sequence[str]) -> list[int]:
        """Embed and index `texts` in one call; returns their rows."""
        if not texts:
            return []
        return self.add_vectors(self.embed([(t or "")[: self.max_chars] for t in texts]))

    def add(self, text: str) -> int:
        return self.add_many([text])[0]

    def add_vectors(self, vectors: Sequence[Sequence[float]]) -> list[int]:
        """Index vectors embedded elsewhere (normalised here); returns their rows."""
        block = as_matrix(vectors, self.dim or (len(vectors[0]) if len(vectors) else 1))
        self.dim = block.shape[1]
        if self._vectors is None:
            self._vectors = GrowingArray(np.float32, width=self.dim)
        return list(self._vectors.extend(block))

    def query_vector(self, query: str | np.ndarray) -> np.ndarray:
        if isinstance(query, str):
            return as_matrix(self.embed([query[: self.max_chars]]), self.dim or 1)[0]
        return as_matrix([np.asarray(query).reshape(-1)], self.dim or np.asarray(query).size)[0]

    def scores(self, query: str | np.ndarray) -> np.ndarray:
        """The cosine of every row with `query` (a text, embedded here, or a vector)."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        return self.matrix @ self.query_vector(query)

    def search(self, query: str | np.ndarray, k: int, allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """The `k` rows most similar to `query`, best first; only rows in `allowed` when given
        (scored alone when they are a small part of the index, e.g. one user's memory)."""
        if self.size == 0:
            return []
        if allowed is None:
            scores = self.matrix @ self.query_vector(query)
            return [(i, float(scores[i])) for i in top_indices(scores, k)]
        rows = allowed_rows(allowed, self.size)
        query_vector = self.query_vector(query)
        # most rows allowed: score them in place; a few: copy only those (O(|allowed| * dim))
        scores = (self.matrix @ query_vector)[rows] if 2 * len(rows) > self.size else self.matrix[rows] @ query_vector
        return [(int(rows[i]), float(scores[i])) for i in top_indices(scores, k)]
