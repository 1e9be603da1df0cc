"""A BM25 lexical index (Okapi BM25, Robertson & Zaragoza 2009): exact word matches that dense
embeddings blur (names, places, numbers, rare words).

`score(d, q) = sum over query terms t of idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))`
with `idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))` (never negative). Rows are numbered in
insertion order; `search` has the same signature as `DenseIndex.search`, so the two fuse
(`fusion.rrf`). Postings are growing numpy buffers (`buffers.GrowingArray`), kept as documents
arrive: an add costs its own terms (amortised O(1) each), a query O(postings of its terms) to
accumulate plus O(n) numpy work to rank (no per-row Python loop, nothing rebuilt per add).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Callable, Collection, Sequence

import numpy as np

from automemo.toolkit.memolib.buffers import GrowingArray
from automemo.toolkit.memolib.text import tokens as default_tokens
from automemo.toolkit.memolib.vectors import allowed_rows, top_indices


class BM25Index:
    """Add documents (texts), search them by a query text; `k1` saturates term frequency, `b`
    normalises by document length. `tokenize` defaults to `memolib.tokens` (lower-cased words
    without stop words)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, tokenize: Callable[[str], Sequence[str]] = default_tokens) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25Index: k1 must be >= 0 and b in 0..1, got k1={k1}, b={b}")
        self.k1, self.b, self.tokenize = k1, b, tokenize
        self._postings: dict[str, tuple[GrowingArray, GrowingArray]] = {}  # term -> (rows, tfs)
        self._lengths = GrowingArray(np.float64)  # each row's token count
        self._total_length = 0.0

    @property
    def size(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> int:
        """Index one document; returns its row."""
        row = len(self._lengths)
        counts = Counter(self.tokenize(text or ""))
        for term, tf in counts.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = (GrowingArray(np.int64, capacity=4), GrowingArray(np.float64, capacity=4))
            postings[0].append(row)
            postings[1].append(tf)
        length = sum(counts.values())
        self._lengths.append(length)
        self._total_length += length
        return row

    def add_many(self, texts: Sequence[str]) -> list[int]:
        return [self.add(t) for t in texts]

    # A snapshot holds the postings as three flat arrays (terms' offsets into all rows and tfs),
    # not two small pickled buffers per term: ten times smaller with a large vocabulary.

    def __getstate__(self) -> dict:
        state = {k: v for k, v in vars(self).items() if k != "_postings"}
        terms = list(self._postings)
        counts = np.fromiter((len(self._postings[t][0]) for t in terms), dtype=np.int64, count=len(terms))
        state["_terms"] = terms
        state["_offsets"] = np.concatenate([[0], np.cumsum(counts)])
        state["_rows"] = np.concatenate([self._postings[t][0].view for t in terms]) if terms else np.zeros(0, np.int64)
        state["_tfs"] = np.concatenate([self._postings[t][1].view for t in terms]) if terms else np.zeros(0)
        return state

    def __setstate__(self, state: dict) -> None:
        terms, offsets, rows, tfs = (state.pop(k) for k in ("_terms", "_offsets", "_rows", "_tfs"))
        vars(self).update(state)
        self._postings = {}
        for i, term in enumerate(terms):
            term_rows, term_tfs = GrowingArray(np.int64, capacity=4), GrowingArray(np.float64, capacity=4)
            term_rows.extend(rows[offsets[i]:offsets[i + 1]])
            term_tfs.extend(tfs[offsets[i]:offsets[i + 1]])
            self._postings[term] = (term_rows, term_tfs)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every row for `query` (0 where no query term occurs)."""
        n = len(self._lengths)
        out = np.zeros(n, dtype=np.float64)
        if n == 0:
            return out
        lengths = self._lengths.view
        avgdl = max(self._total_length / n, 1e-9)
        for term in set(self.tokenize(query or "")):
            if term not in self._postings:
                continue
            rows, tfs = (buffer.view for buffer in self._postings[term])
            idf = math.log(1.0 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
            norm = self.k1 * (1.0 - self.b + self.b * lengths[rows] / avgdl)
            out[rows] += idf * tfs * (self.k1 + 1.0) / (tfs + norm)
        return out

    def search(self, query: str, k: int, allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """The `k` best rows and their scores, best first; only rows in `allowed` when given (e.g.
        `filters.in_scope`), and only rows that share a term with the query."""
        scores = self.scores(query)
        if allowed is not None:
            mask = np.full(scores.shape, -np.inf)
            keep = allowed_rows(allowed, scores.shape[0])
            mask[keep] = scores[keep]
            scores = mask
        return [(i, float(scores[i])) for i in top_indices(scores, k) if scores[i] > 0]
