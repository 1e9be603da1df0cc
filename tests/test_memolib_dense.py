"""memolib.DenseIndex: cosine search over embedded texts, same signature as BM25, scope filter."""

from __future__ import annotations

import numpy as np

from automemo.toolkit.memolib import DenseIndex

VOCAB = ["bike", "car", "lyon", "cat"]


def bag(texts):
    """A toy embedding: word counts over VOCAB (what the real model would be, in miniature)."""
    return [[t.lower().split().count(w) for w in VOCAB] for t in texts]


def test_search_returns_rows_by_cosine_and_respects_allowed_rows():
    index = DenseIndex(bag)
    assert index.add_many(["bike bike", "car", "bike lyon", "cat"]) == [0, 1, 2, 3]
    hits = index.search("bike", 2)
    assert [r for r, _ in hits] == [0, 2] and hits[0][1] == np.float32(1.0)
    assert [r for r, _ in index.search("bike", 2, allowed=[1, 2])] == [2, 1]
    assert index.add_vectors([[0, 0, 0, 2]]) == [4] and index.size == 5
    assert [r for r, _ in index.search(np.array([0, 0, 0, 1.0]), 2)] == [3, 4]


def test_an_empty_index_finds_nothing_and_long_texts_are_cut():
    seen = []
    index = DenseIndex(lambda texts: seen.extend(texts) or bag(texts), max_chars=10)
    assert index.search("bike", 3) == []
    index.add("bike " * 100)
    assert index.size == 1 and len(seen[0]) == 10


def test_a_faiss_backed_index_ranks_as_numpy_past_its_faiss_threshold(monkeypatch):
    import faiss

    from automemo.toolkit.memolib import dense

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    vectors[50] = vectors[10]  # a tie: equal scores rank by row on both paths
    plain, backed = DenseIndex(bag, 8), DenseIndex(bag, 8, vector_index=faiss.IndexFlatIP)
    for start in range(0, 300, 37):  # added in pieces, as a served memory grows
        plain.add_vectors(vectors[start:start + 37])
        backed.add_vectors(vectors[start:start + 37])
    assert np.array_equal(backed.matrix, plain.matrix) and backed.size == 300
    monkeypatch.setattr(dense, "FAISS_ROWS", 100)
    query = vectors[10] + 0.01
    for allowed in (None, list(range(0, 300, 7)), [10, 50, 3], []):
        want, got = plain.search(query, 5, allowed), backed.search(query, 5, allowed)
        assert [r for r, _ in got] == [r for r, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    assert [r for r, _ in backed.search(query, 2)] == [10, 50]


def test_added_texts_are_embedded_in_batches_and_read_as_if_embedded_at_once(monkeypatch):
    """`add_many` numbers texts at once and embeds them EMBED_BATCH at a time (or at the next
    read): an encoder handed ten texts a call spends far more a text than one handed 64."""
    from automemo.toolkit.memolib import dense

    monkeypatch.setattr(dense, "EMBED_BATCH", 8)
    calls = []
    lazy = DenseIndex(lambda texts: calls.append(len(texts)) or bag(texts))
    eager = DenseIndex(bag)
    words = ["bike", "car", "lyon", "cat", "bike lyon"]
    for start in range(0, 15, 3):  # five "episodes" of three texts
        texts = [words[(start + i) % 5] for i in range(3)]
        assert lazy.add_many(texts) == list(range(start, start + 3))
        eager.add_many(texts)
    assert calls == [9]  # the first 9 once 8 waited; the other 6 wait for a read
    assert lazy.search("bike", 4) == eager.search("bike", 4)  # the read embeds them
    assert calls == [9, 6, 1] and lazy.size == 15  # 1: the query
    assert np.array_equal(lazy.matrix, eager.matrix)
    assert lazy.add("cat") == 15 and lazy.add_vectors([[0, 0, 0, 1]]) == [16]  # in order
    assert [r for r, _ in lazy.search("cat", 3, allowed=[3, 15, 16])] == [3, 15, 16]
