"""Vectors: normalised matrices, top-k by score, cosine search, and a faiss index split by scope.

faiss indexes come from the toolkit (`toolkit.vector_index`); this module imports faiss only to
view such an index's storage as numpy (`faiss_matrix`), so memolib stays importable without it."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from automemo.toolkit.memolib import ann
from automemo.toolkit.memolib.buffers import GrowingArray


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
    if k < scores.shape[0]:
        # every row tied with the k-th best is a candidate, so that ties at the cut go to the first rows
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        top = np.flatnonzero(scores >= kth)
    else:
        top = np.arange(scores.shape[0])
    return top[np.lexsort((top, -scores[top]))][:k].tolist()


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
    `new_index(dim)` makes an empty inner-product index (the toolkit's `vector_index`).

    A scope is the list of its rows; a scoped search reads only those rows, so no row of another
    scope is ever returned. Once the index holds `ann.APPROXIMATE_ROWS` rows, each scope of more
    than `ann.EXACT_FILTER_ROWS` rows (rows with no scope form one more) gets its own HNSW graph,
    and a search walks the graph of its scope (approximate ranking), a search of all rows the
    graphs of every scope, merged; smaller scopes stay exact."""

    def __init__(self, new_index, dim: int) -> None:
        self._new_index, self.dim = new_index, dim
        self.all = new_index(dim)
        self._rows_of: dict[str, GrowingArray] = {}
        self._graphs: dict[str, Any] = {}  # scope -> HNSW graph over its rows, in their order

    @property
    def size(self) -> int:
        return self.all.ntotal

    def add(self, matrix: np.ndarray, scope: str = "") -> list[int]:
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        rows = list(range(self.all.ntotal, self.all.ntotal + matrix.shape[0]))
        self.all.add(matrix)
        self._rows_of.setdefault(scope, GrowingArray(np.int64)).extend(rows)
        if scope in self._graphs:
            self._graphs[scope].add(matrix)
        elif self.all.ntotal - len(rows) < ann.APPROXIMATE_ROWS:  # crossing the bound: every scope
            self._grow_graphs()
        else:
            self._grow_graphs([scope])
        return rows

    def _grow_graphs(self, scopes: Sequence[str] | None = None) -> None:
        """A graph for every scope (of `scopes`) grown past the exact bound, once the index is large."""
        if self.all.ntotal < ann.APPROXIMATE_ROWS:
            return
        for scope in self._rows_of if scopes is None else scopes:
            rows = self._rows_of[scope]
            if scope not in self._graphs and len(rows) > ann.EXACT_FILTER_ROWS:
                graph = ann.hnsw_index(self.dim)
                graph.add(np.ascontiguousarray(self.matrix[rows.view]))
                self._graphs[scope] = graph

    # A snapshot holds each vector once (the all-rows index), each scope's row ids and each
    # graph's links without its vectors; loading gives the graphs their scope's vectors again.

    def __getstate__(self) -> dict[str, Any]:
        return {"new_index": self._new_index, "dim": self.dim, "index": self.all,
                "scopes": {scope: rows.view.copy() for scope, rows in self._rows_of.items()},
                "graph_links": {scope: ann.graph_links(graph) for scope, graph in self._graphs.items()}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "new_index" not in state:  # a snapshot from before scopes were row lists: one index per scope
            state = {"new_index": state["_new_index"], "dim": state["dim"], "index": state["all"],
                     "scopes": {scope: np.asarray(ids, dtype=np.int64) for scope, (_, ids) in state["_scoped"].items()}}
        self._new_index, self.dim = state["new_index"], state["dim"]
        if "index" in state:
            self.all = state["index"]
        else:  # a snapshot that held the vectors alone
            self.all = self._new_index(self.dim)
            if len(state["vectors"]):
                self.all.add(np.ascontiguousarray(state["vectors"], dtype=np.float32))
        scopes = dict(state["scopes"])
        if "graph_links" not in state:  # older snapshots listed scoped rows only: the others have no scope
            scoped = np.concatenate([np.asarray(ids, dtype=np.int64) for ids in scopes.values()]) if scopes else np.zeros(0, np.int64)
            unscoped = np.setdiff1d(np.arange(self.all.ntotal), scoped)
            if len(unscoped):
                scopes[""] = unscoped
        self._rows_of = {}
        for scope, ids in scopes.items():
            self._rows_of[scope] = GrowingArray(np.int64)
            self._rows_of[scope].extend(np.asarray(ids, dtype=np.int64))
        self._graphs = {scope: ann.graph_from_links(links, self.matrix[self._rows_of[scope].view])
                        for scope, links in state.get("graph_links", {}).items()}
        self._grow_graphs()

    @property
    def matrix(self) -> np.ndarray:
        """Every row's vector, shape (size, dim): a view of the all-rows index, valid until the next add."""
        return faiss_matrix(self.all, self.dim)

    def search(self, query: np.ndarray, k: int, scope: str = "") -> list[tuple[int, float]]:
        if scope and scope in self._rows_of:
            return self._search_scope(query, k, scope)
        if not self._graphs or len(self._rows_of) > ann.MERGED_SCOPES:
            return ann.search(self.all, query, k)
        hits = [hit for s in self._rows_of for hit in self._search_scope(query, k, s)]
        return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]

    def _search_scope(self, query: np.ndarray, k: int, scope: str) -> list[tuple[int, float]]:
        rows = self._rows_of[scope].view
        if scope in self._graphs:
            return [(int(rows[i]), s) for i, s in ann.search(self._graphs[scope], query, k)]
        if self.all.ntotal >= ann.APPROXIMATE_ROWS:  # a small scope of a large index: its rows alone
            return ann.exact(self.matrix, query, k, rows)
        return ann.search(self.all, query, k, rows)


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
    """The rows of a faiss flat index (`toolkit.vector_index`) or of an HNSW graph (`ann`) as a
    numpy array, shape (ntotal, dim): a view of the index's own storage, not a copy, valid until
    the next add. faiss is imported here only when such an index exists, i.e. inside a guest
    that made one."""
    return ann.stored_matrix(index, dim)
