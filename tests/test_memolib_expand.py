"""memolib re-ranking: neighbour expansion within an episode, MMR diversity."""

from __future__ import annotations

import numpy as np

from automemo.toolkit.memolib import Unit, as_matrix, expand, mmr, neighbours


def turns():
    return [Unit("s1", i, f"s1 round {i}") for i in range(4)] + [Unit("s2", i, f"s2 round {i}") for i in range(2)]


def test_expansion_follows_each_hit_with_its_neighbours_in_its_own_episode():
    t = turns()
    assert neighbours(t, radius=1)[0] == [1] and neighbours(t, radius=2)[1] == [0, 2, 3]
    assert neighbours(t)[4] == [5]  # s2's first round: never s1's last
    assert expand([2, 4], t, radius=1) == [2, 1, 3, 4, 5]
    assert expand([2, 1], t, radius=1, limit=4) == [2, 1, 3, 0]
    assert expand([], t) == []


def test_mmr_skips_a_near_duplicate_for_a_different_hit():
    vectors = as_matrix([[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0]], 3)
    hits = [(0, 0.9), (1, 0.89), (2, 0.5)]
    assert mmr(hits, vectors, 2, lam=0.5) == [0, 2]
    assert mmr(hits, vectors, 3, lam=1.0) == [0, 1, 2]  # pure relevance keeps the order
    assert mmr([], vectors, 2) == [] and mmr(hits, np.eye(3, dtype=np.float32), 0) == []
