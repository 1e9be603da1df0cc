"""Pseudo-relevance feedback: expand a query with the terms of its first hits (RM3).

A multi-hop question names one end of what it wants ("the quote Maya found"); the first hits
share words with the other end ("library", "cookbook"), and a second search with those words
reaches the rounds the question never names. RM3 (Abdul-Jaleel et al., UMass at TREC 2004;
Lavrenko & Croft's relevance model, SIGIR 2001) weights each term of the top `docs` hits by
`sum over hits d of P(t | d) * weight(d)`, keeps the best `terms`, and interpolates them with
the original query (`original_weight`); it remains a strong no-LLM baseline on BM25 (Lin's
"BM25 + RM3" in Anserini; Yang et al., SIGIR 2019).
"""

from __future__ import annotations

from collections import Counter
from typing import Collection, Sequence

import numpy as np

from automemo.toolkit.memolib.bm25 import BM25Index
from automemo.toolkit.memolib.text import tokens


def feedback_terms(query: str, texts: Sequence[str], weights: Sequence[float] | None = None,
                   terms: int = 10) -> list[tuple[str, float]]:
    """The relevance model of the feedback `texts` (the first hits, best first): the `terms`
    most probable words that are not the query's, with weights summing to 1. `weights` are the
    hits' relevance (default: 1 / rank)."""
    asked = set(tokens(query))
    weights = list(weights) if weights is not None else [1.0 / (i + 1) for i in range(len(texts))]
    model: Counter[str] = Counter()
    for text, w in zip(texts, weights):
        counts = Counter(tokens(text))
        total = sum(counts.values())
        for term, n in counts.items():
            if term not in asked and not term.isdigit():
                model[term] += w * n / total
    best = sorted(model.items(), key=lambda tw: (-tw[1], tw[0]))[:terms]
    mass = sum(w for _, w in best)
    return [(t, w / mass) for t, w in best] if mass > 0 else []


def expanded_search(index: BM25Index, query: str, expansion: Sequence[tuple[str, float]], k: int,
                    allowed: Collection[int] | None = None, original_weight: float = 0.6) -> list[tuple[int, float]]:
    """BM25 with the RM3 query: `original_weight` times the query's scores plus the rest times
    the expansion terms' weighted scores (each part scaled to 0..1 first)."""
    base = index.scores(query)
    extra = np.zeros_like(base)
    for term, weight in expansion:
        extra += weight * index.scores(term)
    scores = np.zeros_like(base)
    for weight, part in ((original_weight, base), (1 - original_weight, extra)):
        if part.size and part.max() > 0:
            scores += weight * part / part.max()
    rows = range(len(scores)) if allowed is None else sorted(r for r in allowed if 0 <= r < len(scores))
    ranked = sorted(((r, float(scores[r])) for r in rows if scores[r] > 0), key=lambda rs: (-rs[1], rs[0]))
    return ranked[:k]
