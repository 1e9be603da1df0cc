"""memolib.BM25Index: Okapi BM25 scores by hand, rare terms weigh more, scope filtering."""

from __future__ import annotations

import math

import pytest

from automemo.toolkit.memolib import BM25Index

DOCS = ["Ann rode her red bike to Lyon", "The blue car is parked", "Lyon Lyon Lyon is lovely", "nothing here"]


def test_scores_follow_the_okapi_formula():
    index = BM25Index(k1=1.2, b=0.75)
    assert index.add_many(DOCS) == [0, 1, 2, 3]
    n, lengths = 4, [5, 3, 4, 1]  # tokens without stop words: ann rode red bike lyon / blue car parked / ...
    avg = sum(lengths) / n
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))  # "lyon" is in two documents

    def expected(tf, length):
        return idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))

    scores = index.scores("lyon")
    assert scores[0] == pytest.approx(expected(1, 5)) and scores[2] == pytest.approx(expected(3, 4))
    assert scores[1] == scores[3] == 0.0


def test_search_ranks_rare_terms_first_and_filters_rows():
    index = BM25Index()
    index.add_many(DOCS)
    hits = index.search("red bike in lyon", 10)
    assert [r for r, _ in hits] == [0, 2]  # doc 0 holds the rare "red" and "bike"; no match, no hit
    assert index.search("lyon", 10, allowed={1, 2, 3, 99}) == [(2, index.scores("lyon")[2])]
    assert index.search("zebra", 10) == [] and BM25Index().search("lyon", 3) == []


def test_b_zero_ignores_length_and_bad_parameters_are_refused():
    index = BM25Index(b=0.0)
    index.add_many(["lyon", "lyon and many other words besides"])
    s = index.scores("lyon")
    assert s[0] == pytest.approx(s[1])
    with pytest.raises(ValueError, match="b in 0..1"):
        BM25Index(b=1.5)


def test_documents_added_between_searches_and_snapshots_are_all_found():
    """Postings wait in lists until the next read: a search, or a snapshot, after any mix of adds
    sees every document, and a restored index ranks as the one it was taken from."""
    import pickle

    index = BM25Index()
    index.add_many(DOCS[:2])
    assert [r for r, _ in index.search("lyon", 10)] == [0]
    index.add_many(DOCS[2:])  # pending: added after the search
    restored = pickle.loads(pickle.dumps(index))
    assert [r for r, _ in index.search("lyon", 10)] == [2, 0]
    assert restored.search("lyon", 10) == index.search("lyon", 10)
    restored.add("Lyon again")
    assert sorted(r for r, _ in restored.search("lyon", 10)) == [0, 2, 4]
