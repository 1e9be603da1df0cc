"""Hybrid fusion of several rankings of the same rows (e.g. BM25 and dense search results).

- `rrf`: reciprocal rank fusion (Cormack, Clarke & Buettcher 2009): `sum_i w_i / (k + rank_i)`,
  ranks from 1; uses ranks only, so rankings on incomparable scales fuse without calibration.
- `weighted`: weighted sum of min-max normalised scores: keeps how far apart the hits are.

A ranking is a sequence of `(key, score)` pairs best first (what `search` returns) or of bare keys.
Both return `(key, fused score)` pairs best first; ties keep the key order of first appearance.
A ranking of weight 0 is left out entirely (its keys do not enter the result).
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

RRF_K = 60
"""The reciprocal-rank constant of the paper and of the recipes (`RRF_K`, a recipe's default):
the fusion a fitted stage is measured against is the one the recipes fuse with."""


def _pairs(ranking: Sequence[Any]) -> list[tuple[Hashable, float]]:
    out = []
    for rank, item in enumerate(ranking):
        if isinstance(item, tuple) and len(item) == 2:
            out.append((item[0], float(item[1])))
        else:
            out.append((item, float(len(ranking) - rank)))
    return out


def _weights(rankings: Sequence[Any], weights: Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"fusion: {len(weights)} weights for {len(rankings)} rankings")
    return [float(w) for w in weights]


def _sorted(fused: dict[Hashable, float], order: dict[Hashable, int]) -> list[tuple[Hashable, float]]:
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def rrf(rankings: Sequence[Sequence[Any]], k: float = RRF_K, weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Reciprocal rank fusion with constant `k` (60 in the paper; smaller lets the first few
    ranks dominate) and a weight per ranking."""
    fused: dict[Hashable, float] = {}
    order: dict[Hashable, int] = {}
    for ranking, weight in zip(rankings, _weights(rankings, weights)):
        if weight == 0:
            continue
        for rank, (key, _) in enumerate(_pairs(ranking), start=1):
            order.setdefault(key, len(order))
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return _sorted(fused, order)


def weighted(rankings: Sequence[Sequence[Any]], weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Weighted sum of each ranking's scores, min-max normalised to 0..1 within the ranking (a
    ranking whose scores are all equal counts 1 for each of its keys); a key a ranking lacks
    scores 0 there."""
    fused: dict[Hashable, float] = {}
    order: dict[Hashable, int] = {}
    for ranking, weight in zip(rankings, _weights(rankings, weights)):
        pairs = _pairs(ranking)
        if not pairs or weight == 0:
            continue
        low, high = min(s for _, s in pairs), max(s for _, s in pairs)
        for key, score in pairs:
            order.setdefault(key, len(order))
            norm = (score - low) / (high - low) if high > low else 1.0
            fused[key] = fused.get(key, 0.0) + weight * norm
    return _sorted(fused, order)
