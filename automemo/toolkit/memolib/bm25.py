"""A BM25 lexical index (Okapi BM25, Robertson & Zaragoza 2009): exact word matches that dense
embeddings blur (names, places, numbers, rare words).

`score(d, q) = sum over query terms t of idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))`
with `idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))` (never negative). Rows are numbered in
insertion order; `search` has the same signature as `DenseIndex.search`, so the two fuse
(`fusion.rrf`). Pure Python postings with numpy accumulation: a query costs its terms' postings.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Callable, Collection, Sequence

import numpy as np

from automemo.toolkit.memolib.text import tokens as default_tokens
from automemo.toolkit.memolib.vectors import top_indices


class BM25Index:
    """Add documents (texts), search them by a query text; `k1` saturates term frequency, `b`
    normalises by document length. `tokenize` defaults to `memolib.tokens` (lower-cased words
    without stop words)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, tokenize: Callable[[str], Sequence[str]] = default_tokens) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25Index: k1 must be >= 0 and b in 0..1, got k1={k1}, b={b}")
        self.k1, self.b, self.tokenize = k1, b, tokenize
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._lengths: list[int] = []
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # postings as arrays, built on first search
        self._norm: np.ndarray | None = None  # k1 * (1 - b + b * |d| / avgdl) per row, built on first search

    @property
    def size(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> int:
        """Index one document; returns its row."""
        row = len(self._lengths)
        counts = Counter(self.tokenize(text or ""))
        for term, tf in counts.items():
            rows, tfs = self._postings.setdefault(term, ([], []))
            rows.append(row)
            tfs.append(tf)
            self._arrays.pop(term, None)
        self._lengths.append(sum(counts.values()))
        self._norm = None
        return row

    def add_many(self, texts: Sequence[str]) -> list[int]:
        return [self.add(t) for t in texts]

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every row for `query` (0 where no query term occurs)."""
        n = len(self._lengths)
        out = np.zeros(n, dtype=np.float64)
        if n == 0:
            return out
        if self._norm is None:
            lengths = np.asarray(self._lengths, dtype=np.float64)
            self._norm = self.k1 * (1.0 - self.b + self.b * lengths / max(lengths.mean(), 1e-9))
        norm = self._norm
        for term in set(self.tokenize(query or "")):
            if term not in self._postings:
                continue
            if term not in self._arrays:
                rows, tfs = self._postings[term]
                self._arrays[term] = (np.asarray(rows), np.asarray(tfs, dtype=np.float64))
            rows, tfs = self._arrays[term]
            idf = math.log(1.0 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
            out[rows] += idf * tfs * (self.k1 + 1.0) / (tfs + norm[rows])
        return out

    def search(self, query: str, k: int, allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """The `k` best rows and their scores, best first; only rows in `allowed` when given (e.g.
        `filters.in_scope`), and only rows that share a term with the query."""
        scores = self.scores(query)
        if allowed is not None:
            mask = np.full(scores.shape, -np.inf)
            keep = np.fromiter((r for r in allowed if 0 <= r < scores.shape[0]), dtype=np.int64)
            mask[keep] = scores[keep]
            scores = mask
        return [(i, float(scores[i])) for i in top_indices(scores, k) if scores[i] > 0]
