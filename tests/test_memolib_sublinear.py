"""Retrieval whose cost does not grow with the memory: the HNSW paths of `DenseIndex` and
`ScopedIndex` past `ann.APPROXIMATE_ROWS` (recall against exact search, exact scope filters,
snapshots) and BM25's MaxScore pruning (the same top k as scoring every row)."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

faiss = pytest.importorskip("faiss")

from automemo.measurements.life import Life  # noqa: E402
from automemo.measurements.seeds import FastEncoder  # noqa: E402
from automemo.toolkit import memolib  # noqa: E402
from automemo.toolkit.memolib import ann  # noqa: E402

ROWS = 6_000


@pytest.fixture(scope="module")
def life_vectors():
    """Turns of the `bench memory` life, their users and vectors, and 60 questions' vectors."""
    encoder, life = FastEncoder(), Life(seed=1)
    texts, users = [], []
    while len(texts) < ROWS:
        episode = life.session()
        texts += [step.observation for step in episode.steps]
        users += [episode.metadata["user"]] * len(episode.steps)
    embed = lambda batch: memolib.as_matrix(encoder.handle("embed_text", {"texts": list(batch)}), 384)  # noqa: E731
    questions = embed([life.question(j).instruction for j in range(60)])
    return embed(texts[:ROWS]), users[:ROWS], questions


@pytest.fixture
def small_thresholds(monkeypatch):
    """The approximate paths at test size: a graph past 2,000 rows, exact filters up to 300."""
    monkeypatch.setattr(ann, "APPROXIMATE_ROWS", 2_000)
    monkeypatch.setattr(ann, "EXACT_FILTER_ROWS", 300)


def _no_embed(texts):
    raise AssertionError("these tests add vectors, never texts")


def _exact(vectors, query, k, rows=None):
    rows = np.arange(len(vectors)) if rows is None else np.asarray(rows)
    return ann.exact(vectors, query, k, rows)


def _recall(got, exact):
    """Share of the exact top k found, counting a row tied with the exact k-th as found."""
    cut = exact[-1][1] - 1e-6
    return sum(score >= cut for _, score in got) / len(exact)


def _scoped(vectors, users, batch=20):
    index = memolib.ScopedIndex(faiss.IndexFlatIP, vectors.shape[1])
    for start in range(0, len(vectors), batch):
        index.add(vectors[start:start + batch], users[start])
    return index


def test_below_the_threshold_search_is_exact_and_flat(life_vectors):
    vectors, users, questions = life_vectors
    index = _scoped(vectors[:1_500], users[:1_500])
    dense = memolib.DenseIndex(_no_embed, 384, vector_index=faiss.IndexFlatIP)
    dense.add_vectors(vectors[:1_500])
    assert not ann.is_approximate(index.all) and not index._graphs and not ann.is_approximate(dense._faiss)
    mine = [r for r in range(1_500) if users[r] == "U2"]
    for q in questions[:10]:
        assert [r for r, _ in index.search(q, 10)] == [r for r, _ in _exact(vectors[:1_500], q, 10)]
        assert [r for r, _ in index.search(q, 10, "U2")] == [r for r, _ in _exact(vectors[:1_500], q, 10, mine)]


def test_scoped_graphs_recall_the_exact_top_ten_and_never_cross_scopes(life_vectors, small_thresholds):
    vectors, users, questions = life_vectors
    index = _scoped(vectors, users)
    assert set(index._graphs) == {f"U{i}" for i in range(8)}  # 750 rows each, past the exact bound
    assert len(index.matrix) == ROWS and np.array_equal(index.matrix, vectors)  # held once, in row order
    recalls = []
    for j, q in enumerate(questions):
        user = f"U{j % 8}"
        mine = [r for r in range(ROWS) if users[r] == user]
        hits = index.search(q, 10, user)
        assert hits and all(users[r] == user for r, _ in hits)
        recalls.append(_recall(hits, _exact(vectors, q, 10, mine)))
        recalls.append(_recall(index.search(q, 10), _exact(vectors, q, 10)))
    assert np.mean(recalls) >= 0.95


def test_a_small_scope_of_a_large_index_is_searched_exactly(life_vectors, small_thresholds):
    vectors, users, questions = life_vectors
    index = _scoped(vectors, users)
    rare = vectors[:50] * -1.0  # a new user's few rows, unlike anyone else's
    index.add(rare, "newcomer")
    assert "newcomer" not in index._graphs
    for q in questions[:10]:
        hits = index.search(q, 5, "newcomer")
        expected = _exact(rare, q, 5)
        assert [r - ROWS for r, _ in hits] == [r for r, _ in expected]


def test_dense_index_moves_to_a_graph_and_keeps_filters_exact(life_vectors, small_thresholds):
    vectors, users, questions = life_vectors
    dense = memolib.DenseIndex(_no_embed, 384, vector_index=faiss.IndexFlatIP)
    for start in range(0, ROWS, 500):
        dense.add_vectors(vectors[start:start + 500])
    assert not ann.is_approximate(dense._faiss)  # no search has wanted a walk yet
    dense.search(questions[0], 10)
    assert ann.is_approximate(dense._faiss) and dense.size == ROWS
    assert np.allclose(dense.matrix, vectors, atol=1e-6)  # the graph's storage, read in place
    store = memolib.UnitStore()
    for r, user in enumerate(users):
        store.add_episode([memolib.Unit(f"e{r}", 0, "", scope=user)])
    recalls = []
    for j, q in enumerate(questions):
        recalls.append(_recall(dense.search(q, 10), _exact(vectors, q, 10)))
        allowed = store.allowed_rows(f"U{j % 8}")  # 750 rows, an eighth: scanned exactly
        hits = dense.search(q, 10, allowed)
        assert [r for r, _ in hits] == [r for r, _ in _exact(vectors, q, 10, allowed)]
        most = np.flatnonzero(np.array(users) != f"U{j % 8}")  # seven eighths: a filtered walk
        hits = dense.search(q, 10, most)
        assert hits and not {r for r, _ in hits} & set(allowed.tolist())
        recalls.append(_recall(hits, _exact(vectors, q, 10, most)))
        few = allowed[:200]  # within the exact bound: exactly the exact ranking
        assert [r for r, _ in dense.search(q, 10, few)] == [r for r, _ in _exact(vectors, q, 10, few)]
    assert np.mean(recalls) >= 0.95


def test_searched_only_within_small_filters_a_dense_index_stays_flat_and_exact(life_vectors, small_thresholds):
    vectors, users, questions = life_vectors
    dense = memolib.DenseIndex(_no_embed, 384, vector_index=faiss.IndexFlatIP)
    dense.add_vectors(vectors)
    store = memolib.UnitStore()
    for r, user in enumerate(users):
        store.add_episode([memolib.Unit(f"e{r}", 0, "", scope=user)])
    for j, q in enumerate(questions[:10]):
        allowed = store.allowed_rows(f"U{j % 8}")  # one user's rows: an exact scan, no graph needed
        assert [r for r, _ in dense.search(q, 10, allowed)] == [r for r, _ in _exact(vectors, q, 10, allowed)]
    assert not ann.is_approximate(dense._faiss)  # never built: the evaluation's case
    dense.search(questions[0], 10)  # a walk: the graph is built now
    assert ann.is_approximate(dense._faiss)
    dense.add_vectors(vectors[:10])  # and grows with later adds
    assert ann.is_approximate(dense._faiss) and dense.size == ROWS + 10


def test_approximate_indexes_round_trip_through_a_snapshot(life_vectors, small_thresholds):
    vectors, users, questions = life_vectors
    index = _scoped(vectors[:4_000], users[:4_000])
    dense = memolib.DenseIndex(_no_embed, 384, vector_index=faiss.IndexFlatIP)
    dense.add_vectors(vectors[:4_000])
    dense.search(questions[0], 10)  # a walk wanted: past the threshold, a graph
    data = pickle.dumps(index)
    assert len(data) < 1.3 * vectors[:4_000].nbytes  # each vector once: the graphs' links only
    copy_index, copy_dense = pickle.loads(data), pickle.loads(pickle.dumps(dense))
    assert set(copy_index._graphs) == set(index._graphs) and ann.is_approximate(copy_dense._faiss)
    for start in range(4_000, ROWS, 20):  # both keep growing alike after the round trip
        for scoped in (index, copy_index):
            scoped.add(vectors[start:start + 20], users[start])
        for d in (dense, copy_dense):
            d.add_vectors(vectors[start:start + 20])
    for q in questions[:20]:
        for scope in ("", "U1", "nobody"):
            assert copy_index.search(q, 10, scope) == index.search(q, 10, scope)
        assert copy_dense.search(q, 10) == dense.search(q, 10)


def test_a_snapshot_from_before_row_lists_loads_with_its_scopes():
    old = memolib.ScopedIndex.__new__(memolib.ScopedIndex)
    flat = faiss.IndexFlatIP(2)
    flat.add(np.array([[1, 0], [0.9, 0.1], [0, 1]], dtype=np.float32))
    old.__setstate__({"new_index": faiss.IndexFlatIP, "dim": 2, "vectors": memolib.faiss_matrix(flat, 2).copy(),
                      "scopes": {"A": np.array([0, 2])}})  # row 1 had no scope
    q = np.array([1, 0], np.float32)
    assert [r for r, _ in old.search(q, 5, "A")] == [0, 2]
    assert [r for r, _ in old.search(q, 5)] == [0, 1, 2]


# --- BM25: MaxScore pruning, exact ------------------------------------------------------------


def _full_ranking(index, query, k, allowed=None):
    """Today's ranking: every row scored, then the top k."""
    scores = index.scores(query)
    if allowed is not None:
        masked = np.full(scores.shape, -np.inf)
        masked[list(allowed)] = scores[list(allowed)]
        scores = masked
    return [(i, float(scores[i])) for i in memolib.top_indices(scores, k) if scores[i] > 0]


@pytest.mark.parametrize("seed", range(6))
def test_pruned_bm25_search_equals_scoring_every_row(seed):
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(rng.choice([30, 300, 3000]))]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]  # a few words everywhere
    index = memolib.BM25Index(k1=rng.uniform(0.5, 2.0), b=rng.uniform(0.0, 1.0))
    for _ in range(rng.choice([50, 500, 3000])):
        index.add(" ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 30))))
    for _ in range(40):
        query = " ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 12)) + rng.sample(vocabulary, 2))
        k = rng.choice([1, 5, 10, 50])
        allowed = None if rng.random() < 0.5 else sorted(rng.sample(range(index.size), index.size // rng.choice([2, 8])))
        assert index.search(query, k, allowed) == _full_ranking(index, query, k, allowed)
    copy = pickle.loads(pickle.dumps(index))  # the bounds are rebuilt from the postings
    assert copy._shortest == index._shortest
    query = " ".join(rng.choices(vocabulary, weights, k=8))
    assert copy.search(query, 10) == index.search(query, 10)


def test_bm25_search_skips_a_common_words_postings_when_a_rare_word_decides():
    index = memolib.BM25Index()
    for i in range(5_000):
        index.add(f"common filler{i % 7} {'zebra' if i % 500 == 0 else ''}")
    read = []
    contributions = index._contributions
    index._contributions = lambda terms: ((read.append(len(rows)) or (rows, c)) for rows, c in contributions(terms))
    hits = index.search("common zebra", 5)
    assert read == [10]  # the postings of "zebra", not the 5,000 of "common"
    assert [r for r, _ in hits] == [0, 500, 1000, 1500, 2000] == [r for r, _ in _full_ranking(index, "common zebra", 5)]
