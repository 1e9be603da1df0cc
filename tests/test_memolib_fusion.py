"""memolib fusion: reciprocal rank (constant k, weights) and min-max weighted score fusion."""

from __future__ import annotations

import pytest

from automemo.toolkit.memolib import rrf, weighted


def test_rrf_sums_weighted_reciprocal_ranks():
    lexical = [(7, 12.0), (3, 8.0)]
    dense = [(3, 0.9), (5, 0.8)]
    fused = dict(rrf([lexical, dense], k=60))
    assert fused[3] == pytest.approx(1 / 62 + 1 / 61) and fused[7] == pytest.approx(1 / 61)
    assert [key for key, _ in rrf([lexical, dense], k=60)] == [3, 7, 5]
    # A heavier second ranking puts its first hit on top; bare keys are ranks too.
    assert rrf([[7, 3], [5]], k=1, weights=[1.0, 3.0])[0][0] == 5
    assert rrf([[7, 3], [5]], weights=[1.0, 0.0]) == rrf([[7, 3]])  # weight 0: the ranking is left out
    with pytest.raises(ValueError, match="2 weights for 1 rankings"):
        rrf([[1]], weights=[1, 2])


def test_weighted_fusion_normalises_each_ranking_first():
    fused = weighted([[("a", 100.0), ("b", 50.0), ("c", 0.0)], [("c", 0.9), ("a", 0.1)]], weights=[1.0, 0.5])
    assert dict(fused) == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.5})
    assert [k for k, _ in fused] == ["a", "b", "c"]  # ties keep the order of first appearance
    assert weighted([[("x", 3.0)]]) == [("x", 1.0)] and weighted([]) == []
    assert weighted([[("x", 3.0)], [("y", 1.0)]], weights=[1.0, 0.0]) == [("x", 1.0)]
