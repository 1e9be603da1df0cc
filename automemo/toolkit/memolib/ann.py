"""Approximate nearest neighbours: the faiss HNSW graph a vector collection moves to once it is
large, and one search over a faiss index (flat or HNSW) with an exact row filter.

Exact search reads every vector: at 10^5 rows of 384 floats that is 150 MB per query, and it
grows tenfold with a tenfold memory. An HNSW graph (Malkov & Yashunin 2018, faiss's
`IndexHNSWFlat`) visits a few thousand vectors whatever the size, at the price of an
approximate ranking: recall@10 against exact search on the `bench memory` life at 10^5 rows is
0.97-0.98 for a `ScopedIndex`'s per-user graphs and 0.90 for one graph of all 10^5 rows
(docs/memolib.md, "Scaling"; `tests/test_memolib_sublinear.py` holds >= 0.95 at test size). So a
collection stays exact below `APPROXIMATE_ROWS` rows (small memories and every dev benchmark
keep their exact rankings) and moves to HNSW past it, once: a `DenseIndex`'s vectors move into
a graph and its flat index is dropped (each vector held once).

A row filter (one user's rows) is always exact: faiss's selector keeps every other row out of
the results. A filter of at most `EXACT_FILTER_ROWS` rows, or of less than `WALKED_FILTER_SHARE`
of the rows, is scored exactly (numpy, or faiss's flat scan of the graph's storage), since a
graph walk finds a few allowed rows among many others slowly and unreliably; only a filter that
keeps most rows is walked.
`ScopedIndex` goes further: past `APPROXIMATE_ROWS` each large scope gets a graph of its own,
which finds a scope's best rows more reliably than a filtered walk of one graph of all rows.

faiss is imported only when an index exists, i.e. inside a guest that made one, so memolib stays
importable without it."""

from __future__ import annotations

from typing import Any

import numpy as np

APPROXIMATE_ROWS = 20_000
"""Rows past which a faiss-backed collection (`DenseIndex` with `vector_index`, `ScopedIndex`)
searches an HNSW graph instead of every vector."""

EXACT_FILTER_ROWS = 4_096
"""A row filter at most this long is scored exactly, even in an approximate collection."""

HNSW_M = 32
"""Neighbours per node in the graph (faiss's M): more is better recall, more memory and slower adds."""

HNSW_EF_CONSTRUCTION = 64
"""Candidates kept while linking a new vector (faiss's efConstruction)."""

HNSW_EF_SEARCH = 256
"""Candidates kept while searching (faiss's efSearch), at least twice the rows asked for."""

FILTERED_EF_SEARCH = 512
"""efSearch of a walk with a row filter: the walk passes rows it may not return."""

WALKED_FILTER_SHARE = 0.5
"""A filter of at least this share of the rows is searched by a filtered walk; a smaller one is
scanned exactly (the walk would visit about 1/share times the nodes to find as many allowed
rows; at an eighth of 10^5 rows the exact scan of the allowed rows is the cheaper)."""

MERGED_SCOPES = 64
"""`ScopedIndex`: a search of all rows merges the walks of at most this many scopes; with more
scopes it reads every row (exact)."""


def hnsw_index(dim: int) -> Any:
    """An empty inner-product HNSW graph (normalised vectors: cosine)."""
    import faiss

    index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    return index


def graph_links(graph: Any) -> np.ndarray:
    """An HNSW graph's links without its vectors (a snapshot that holds the vectors elsewhere)."""
    import faiss

    writer = faiss.VectorIOWriter()
    faiss.write_index(graph, writer, faiss.IO_FLAG_SKIP_STORAGE)
    return faiss.vector_to_array(writer.data)


def graph_from_links(links: np.ndarray, vectors: np.ndarray) -> Any:
    """The graph `graph_links` gave, over `vectors` (its rows, in its order) again."""
    import faiss

    reader = faiss.VectorIOReader()
    faiss.copy_array_to_vector(np.ascontiguousarray(links, dtype=np.uint8), reader.data)
    graph = faiss.read_index(reader, faiss.IO_FLAG_SKIP_STORAGE)
    storage = faiss.IndexFlatIP(graph.d)
    storage.add(np.ascontiguousarray(vectors, dtype=np.float32))
    graph.storage = storage
    storage.this.disown()  # the graph owns (and frees) its storage
    graph.own_fields = True
    return graph


def is_approximate(index: Any) -> bool:
    return hasattr(index, "hnsw")


def to_hnsw(index: Any, dim: int) -> Any:
    """A graph over the vectors of the flat `index`, in the same row order."""
    graph = hnsw_index(dim)
    if index.ntotal:
        graph.add(np.ascontiguousarray(stored_matrix(index, dim)))
    return graph


def faiss_flat_storage(index: Any) -> Any:
    """The flat index holding an HNSW graph's vectors (the graph keeps it alive)."""
    import faiss

    return faiss.downcast_index(index.storage)


def stored_matrix(index: Any, dim: int) -> np.ndarray:
    """The rows of a faiss flat or HNSW-flat index as numpy, shape (ntotal, dim): a view of the
    index's own storage, not a copy, valid until the next add."""
    if index.ntotal == 0:
        return np.zeros((0, dim), dtype=np.float32)
    import faiss

    flat = faiss_flat_storage(index) if is_approximate(index) else index
    return faiss.rev_swig_ptr(flat.get_xb(), index.ntotal * dim).reshape(index.ntotal, dim)


def walks(rows: np.ndarray | None, size: int) -> bool:
    """Whether a graph of `size` rows answers a search filtered to `rows` (None: no filter) by
    walking: a short filter, or one of less than `WALKED_FILTER_SHARE` of the rows, is scanned
    exactly instead."""
    return rows is None or (len(rows) > EXACT_FILTER_ROWS and len(rows) >= size * WALKED_FILTER_SHARE)


def search(index: Any, query: np.ndarray, k: int, rows: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The `k` best rows of `index` for `query` by inner product, best first, ties by row; only
    `rows` (sorted or not, int array) when given. Exact on a flat index and on a short filter;
    an HNSW walk otherwise. A few more than `k` are asked of faiss so that rows tied at the cut
    still rank by row."""
    size = int(index.ntotal)
    if size == 0 or k <= 0 or (rows is not None and len(rows) == 0):
        return []
    query = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
    approximate = is_approximate(index)
    if approximate and not walks(rows, size):
        if len(rows) <= EXACT_FILTER_ROWS:
            return exact(stored_matrix(index, query.shape[1]), query[0], k, rows)
        index = faiss_flat_storage(index)  # a walk would pass too many rows it may not return
        approximate = False
    import faiss

    wanted = min(size, k + 16)
    selector = None
    if rows is not None:
        mask = np.zeros(size, dtype=bool)
        mask[rows] = True
        bitmap = np.packbits(mask, bitorder="little")
        selector = faiss.IDSelectorBitmap(size, faiss.swig_ptr(bitmap))
    if approximate:
        params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH if selector is None else FILTERED_EF_SEARCH, 2 * wanted))
        if selector is not None:
            params.sel = selector
    else:
        params = faiss.SearchParameters(sel=selector) if selector is not None else None
    scores, ids = index.search(query, wanted, params=params)
    found = [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]
    if approximate:
        # A walk's distances come batched by the order it meets neighbours, so the same row can
        # score an ulp apart in a graph rebuilt from a snapshot: one dot a row makes them equal.
        matrix = stored_matrix(index, query.shape[1])
        found = [(i, float(np.dot(matrix[i], query[0]))) for i, _ in found]
    return sorted(found, key=lambda h: (-h[1], h[0]))[:k]


def exact(matrix: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray) -> list[tuple[int, float]]:
    """The `k` best of `rows` of `matrix` by inner product, scored in numpy (O(|rows| * dim))."""
    if len(rows) == 0 or k <= 0:
        return []
    scores = matrix[rows] @ np.asarray(query, dtype=np.float32).reshape(-1)
    top = np.argpartition(-scores, min(k + 16, len(rows)) - 1)[: k + 16] if len(rows) > k + 16 else np.arange(len(rows))
    hits = [(int(rows[i]), float(scores[i])) for i in top]
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]
