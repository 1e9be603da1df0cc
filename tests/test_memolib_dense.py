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
    assert len(seen[0]) == 10
