"""The dense index: unit texts embedded (`toolkit.embed_text`, MiniLM by default) and searched by
cosine similarity, with the same `add` / `search(query, k, allowed)` signature as `BM25Index` so
the two fuse (`fusion.rrf`). Exact search over one normalised matrix; a scope filter is a row
mask.

Incremental: an add copies only its own rows (amortised), and a search reads the matrix in
place, one matrix-vector product over the rows searched: O(n * dim), or O(|allowed| * dim).
Given `vector_index=toolkit.vector_index`, the rows live in the toolkit's faiss flat index
(`matrix` is a view of its storage, not a copy) and, past `FAISS_ROWS` rows, faiss scans them: it
is about twice as fast as numpy's matrix-vector product, which at 10^5 rows of 384 floats
(150 MB read per query) decides whether a query fits a served memory's latency. Below
`FAISS_ROWS` the scores are numpy's, as without faiss; past it they can differ from numpy's in
the last float bits (equal scores still rank by row). Past `ann.APPROXIMATE_ROWS` the rows move
to an HNSW graph (held once, `matrix` still a view): a search walks the graph instead of reading
every row, so its cost stops growing with the memory, and its ranking is approximate (an
`allowed` filter stays exact: `ann.search`). The move waits for the first search that would walk
the graph (no filter, or a filter of most rows): an index only ever searched within small
filters (one LongMemEval question's 500 turns among a split's 124,000) is scanned exactly
whatever it holds, and building a graph for it was most of the guest's indexing time (a graph
insert costs ~0.4 ms of CPU against ~2 us for a flat one). Once a walk has been asked for, adds
past the threshold move the rows at once, as a served memory's recalls expect.

Batched: `add_many` numbers its texts at once but embeds them `EMBED_BATCH` at a time, when that
many are waiting or at the next read (`search`, `scores`, `matrix`, `size`, `add_vectors`). A
program that adds one episode's turns per update (ten on LongMemEval) then hands the encoder 64
texts a call instead of ten: MiniLM on this 2-core machine spends about three times the CPU a
text in calls of ten as in calls of 64 (docs/benchmarks.md, "longmemeval: cost"). An encoder
failure surfaces at that later call. A deployed memory asks for every update to finish its own
embedding (`flush_all` after each update): a served remember's cost is then paid in that remember,
and the embedding cache entries it records are exactly its episode's, which forgetting it drops."""

from __future__ import annotations

import weakref
from typing import Any, Callable, Collection, Sequence

import numpy as np

from automemo.toolkit.memolib import ann
from automemo.toolkit.memolib.buffers import GrowingArray
from automemo.toolkit.memolib.vectors import allowed_rows, as_matrix, faiss_matrix, top_indices

FAISS_ROWS = 16_384
"""Rows past which a faiss-backed index searches with faiss rather than numpy."""

EMBED_BATCH = 64
"""Texts added and not yet embedded that make `add_many` embed them (one encoder call)."""

_WAITING: "weakref.WeakSet[DenseIndex]" = weakref.WeakSet()  # indexes holding texts not embedded yet


def flush_all() -> None:
    """Embed every index's waiting texts now (the sandbox runner calls this after a deployed
    memory's update)."""
    for index in list(_WAITING):
        index.flush()


class DenseIndex:
    """`embed(texts) -> vectors` (e.g. `toolkit.embed_text`); `max_chars` cuts each text before
    embedding (MiniLM reads 256 word pieces, about 1,000 characters); `vector_index(dim)` (e.g.
    `toolkit.vector_index`) makes the faiss index that holds the rows, else a numpy buffer does."""

    def __init__(self, embed: Callable[[list[str]], Sequence[Sequence[float]]], dim: int | None = None,
                 max_chars: int = 1000, vector_index: Callable[[int], Any] | None = None) -> None:
        self.embed, self.dim, self.max_chars = embed, dim, max_chars
        self._new_index = vector_index
        self._vectors: GrowingArray | None = None  # numpy storage, made at the first add
        self._faiss: Any = None  # faiss storage (with `vector_index`), made at the first add
        self._pending: list[str] = []  # texts numbered by `add_many`, not embedded yet

    _walks = False  # a search has wanted a graph walk (class default: snapshots from before it)

    def _stored(self) -> int:
        if self._faiss is not None:
            return int(self._faiss.ntotal)
        return len(self._vectors) if self._vectors is not None else 0

    def flush(self) -> None:
        """Embed the texts `add_many` numbered and has not embedded yet (every read does this)."""
        if self._pending:
            texts, self._pending = self._pending, []
            _WAITING.discard(self)
            self._store(self.embed(texts))

    @property
    def size(self) -> int:
        self.flush()
        return self._stored()

    @property
    def matrix(self) -> np.ndarray:
        """Every row's normalised vector, shape (size, dim): a view, valid until the next add."""
        self.flush()
        if self._faiss is not None:
            return faiss_matrix(self._faiss, self.dim)
        if self._vectors is None:
            return np.zeros((0, self.dim or 1), np.float32)
        return self._vectors.view

    def add_many(self, texts: Sequence[str]) -> list[int]:
        """Index `texts`; returns their rows. They are embedded once `EMBED_BATCH` texts wait, or
        at the next read."""
        if not texts:
            return []
        start = self._stored() + len(self._pending)
        self._pending.extend((t or "")[: self.max_chars] for t in texts)
        _WAITING.add(self)
        if len(self._pending) >= EMBED_BATCH:
            self.flush()
        return list(range(start, start + len(texts)))

    def add(self, text: str) -> int:
        return self.add_many([text])[0]

    def add_vectors(self, vectors: Sequence[Sequence[float]]) -> list[int]:
        """Index vectors embedded elsewhere (normalised here); returns their rows."""
        self.flush()
        return self._store(vectors)

    def _store(self, vectors: Sequence[Sequence[float]]) -> list[int]:
        block = as_matrix(vectors, self.dim or (len(vectors[0]) if len(vectors) else 1))
        self.dim = block.shape[1]
        start = self._stored()
        if self._new_index is not None:
            if self._faiss is None:
                self._faiss = self._new_index(self.dim)
            self._faiss.add(np.ascontiguousarray(block, dtype=np.float32))
            self._move_to_graph()
        else:
            if self._vectors is None:
                self._vectors = GrowingArray(np.float32, width=self.dim)
            self._vectors.extend(block)
        return list(range(start, start + block.shape[0]))

    def _move_to_graph(self) -> None:
        """Rows into an HNSW graph, once a walk is wanted and the index is past the threshold."""
        if (self._walks and self._faiss is not None and not ann.is_approximate(self._faiss)
                and self._faiss.ntotal >= ann.APPROXIMATE_ROWS):
            self._faiss = ann.to_hnsw(self._faiss, self.dim)

    def query_vector(self, query: str | np.ndarray) -> np.ndarray:
        self.flush()  # the index's dimension may come from its first vectors
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
        if self.size == 0 or k <= 0:
            return []
        query_vector = self.query_vector(query)
        rows = None if allowed is None else allowed_rows(allowed, self.size)
        if ann.walks(rows, self.size):
            self._walks = True  # a search a graph would answer by walking
            self._move_to_graph()
        if self._faiss is not None and (self.size >= FAISS_ROWS or ann.is_approximate(self._faiss)):
            return ann.search(self._faiss, query_vector, k, rows)
        if rows is None:
            scores = self.matrix @ query_vector
            return [(i, float(scores[i])) for i in top_indices(scores, k)]
        # most rows allowed: score them in place; a few: copy only those (O(|allowed| * dim))
        scores = (self.matrix @ query_vector)[rows] if 2 * len(rows) > self.size else self.matrix[rows] @ query_vector
        return [(int(rows[i]), float(scores[i])) for i in top_indices(scores, k)]
