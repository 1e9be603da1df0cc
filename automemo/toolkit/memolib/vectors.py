"""Vectors: normalised matrices, top-k by score, cosine search, and a faiss index split by scope.

faiss indexes come from the toolkit (`toolkit.vector_index`); this module imports faiss only to
view such an index's storage as numpy (`faiss_matrix`), so memolib stays importable without it."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def as_matrix(vectors: Sequence[Sequence[float]], dim: int) -> np.ndarray:
    """Float32 rows, L2-normalised (zero rows stay zero), shape (n, dim) even when n == 0."""
    if len(vectors) == 0:
        return np.zeros((0, dim), dtype=np.float32)
    m = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


def top_indices(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the `k` largest scores, best first; ties keep index order (deterministic)."""
    scores = np.asarray(scores).reshape(-1)
    k = min(k, scores.shape[0])
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
    return sorted(top.tolist(), key=lambda i: (-float(scores[i]), i))


def cosine_top_k(query: np.ndarray, matrix: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Indices and cosines of the `k` rows of `matrix` most similar to `query`, best first.
    Both are expected L2-normalised."""
    if matrix.shape[0] == 0:
        return []
    scores = matrix @ np.asarray(query, dtype=np.float32).reshape(-1)
    return [(i, float(scores[i])) for i in top_indices(scores, k)]


class ScopedIndex:
    """Vectors tagged with an owner scope (see `scope_of`): a search with a known scope looks only
    at that scope's rows, any other search at all rows. Row ids are global, in insertion order.
    `new_index(dim)` makes an empty inner-product index (the toolkit's `vector_index`)."""

    def __init__(self, new_index, dim: int) -> None:
        self._new_index, self.dim = new_index, dim
        self.all = new_index(dim)
        self._scoped: dict[str, tuple[Any, list[int]]] = {}

    @property
    def size(self) -> int:
        return self.all.ntotal

    def add(self, matrix: np.ndarray, scope: str = "") -> list[int]:
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        rows = list(range(self.all.ntotal, self.all.ntotal + matrix.shape[0]))
        self.all.add(matrix)
        if scope:
            index, ids = self._scoped.setdefault(scope, (self._new_index(self.dim), []))
            index.add(matrix)
            ids += rows
        return rows

    # A snapshot holds each vector once (the all-rows index's) and each scope's row ids; loading
    # rebuilds the scope indexes from them: half the bytes of pickling every faiss index.

    def __getstate__(self) -> dict[str, Any]:
        vectors = self.all.reconstruct_n(0, self.all.ntotal) if self.all.ntotal else np.zeros((0, self.dim), np.float32)
        return {"new_index": self._new_index, "dim": self.dim, "vectors": vectors,
                "scopes": {scope: np.asarray(ids, dtype=np.int64) for scope, (_, ids) in self._scoped.items()}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "new_index" not in state:  # a snapshot from before this layout: the attributes as they were
            vars(self).update(state)
            return
        self._new_index, self.dim = state["new_index"], state["dim"]
        vectors = np.ascontiguousarray(state["vectors"], dtype=np.float32)
        self.all = self._new_index(self.dim)
        if len(vectors):
            self.all.add(vectors)
        self._scoped = {}
        for scope, ids in state["scopes"].items():
            index = self._new_index(self.dim)
            if len(ids):
                index.add(np.ascontiguousarray(vectors[ids]))
            self._scoped[scope] = (index, ids.tolist())

    @property
    def matrix(self) -> np.ndarray:
        """Every row's vector, shape (size, dim): a view of the all-rows index, valid until the next add."""
        return faiss_matrix(self.all, self.dim)

    def search(self, query: np.ndarray, k: int, scope: str = "") -> list[tuple[int, float]]:
        if scope in self._scoped:
            index, ids = self._scoped[scope]
            return [(ids[i], s) for i, s in faiss_search(index, query, k)]
        return faiss_search(self.all, query, k)


def faiss_search(index: Any, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Search a faiss index with one query vector; drops faiss's -1 padding."""
    if index.ntotal == 0 or k <= 0:
        return []
    scores, ids = index.search(np.asarray(query, dtype=np.float32).reshape(1, -1), min(k, index.ntotal))
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]


def allowed_rows(allowed: Any, size: int) -> np.ndarray:
    """`allowed` (rows in any iterable, or an int array such as `UnitStore.allowed_rows`) as an
    int64 array of the rows below `size`, order kept; an array is filtered without a Python loop."""
    if isinstance(allowed, np.ndarray):
        rows = allowed.astype(np.int64, copy=False).reshape(-1)
    else:
        rows = np.fromiter(allowed, dtype=np.int64)
    return rows[(rows >= 0) & (rows < size)]


def faiss_matrix(index: Any, dim: int) -> np.ndarray:
    """The rows of a faiss flat index (`toolkit.vector_index`) as a numpy array, shape (ntotal,
    dim): a view of the index's own storage, not a copy, valid until the next add. faiss is
    imported here only when such an index exists, i.e. inside a guest that made one."""
    if index.ntotal == 0:
        return np.zeros((0, dim), dtype=np.float32)
    import faiss

    return faiss.rev_swig_ptr(index.get_xb(), index.ntotal * dim).reshape(index.ntotal, dim)
