"""A BM25 lexical index (Okapi BM25, Robertson & Zaragoza 2009): exact word matches that dense
embeddings blur (names, places, numbers, rare words).

`score(d, q) = sum over query terms t of idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))`
with `idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))` (never negative). Rows are numbered in
insertion order; `search` has the same signature as `DenseIndex.search`, so the two fuse
(`fusion.rrf`). Postings are growing numpy buffers (`buffers.GrowingArray`), kept as documents
arrive: an add costs its own terms (amortised O(1) each), a search reads the postings of the
terms that can change its top k (MaxScore pruning, exact: `search`) and looks the others up by
binary search, so a common word's long postings are not read (no per-row Python loop, nothing
rebuilt per add).
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
        self._bounds: dict[str, list[float]] = {}  # term -> [largest tf, shortest row] of its postings

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
        for term, tf in counts.items():
            bound = self._bounds.get(term)
            if bound is None:
                self._bounds[term] = [float(tf), float(length)]
            else:
                bound[0], bound[1] = max(bound[0], tf), min(bound[1], length)
        self._lengths.append(length)
        self._total_length += length
        return row

    def add_many(self, texts: Sequence[str]) -> list[int]:
        return [self.add(t) for t in texts]

    # A snapshot holds the postings as three flat arrays (terms' offsets into all rows and tfs),
    # not two small pickled buffers per term: ten times smaller with a large vocabulary.

    def __getstate__(self) -> dict:
        state = {k: v for k, v in vars(self).items() if k not in ("_postings", "_bounds")}
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
        lengths = self._lengths.view
        self._bounds = {term: [float(tfs.view.max()), float(lengths[rows.view].min())]
                        for term, (rows, tfs) in self._postings.items()}

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every row for `query` (0 where no query term occurs)."""
        n = len(self._lengths)
        out = np.zeros(n, dtype=np.float64)
        if n == 0:
            return out
        for rows, contribution in self._contributions(self._query_terms(query)):
            out[rows] += contribution
        return out

    def _query_terms(self, query: str) -> list[str]:
        """The query's distinct indexed terms, in the order scores are summed (every path sums
        them in this order, so that pruned and full scores are the same floats)."""
        return [term for term in set(self.tokenize(query or "")) if term in self._postings]

    def _idf(self, term: str) -> float:
        n, df = len(self._lengths), len(self._postings[term][0])
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _norm(self, lengths: np.ndarray) -> np.ndarray:
        avgdl = max(self._total_length / len(self._lengths), 1e-9)
        return self.k1 * (1.0 - self.b + self.b * lengths / avgdl)

    def _contributions(self, terms: Sequence[str]):
        """Each term's postings rows and its score contribution there."""
        lengths = self._lengths.view
        for term in terms:
            rows, tfs = (buffer.view for buffer in self._postings[term])
            yield rows, self._idf(term) * tfs * (self.k1 + 1.0) / (tfs + self._norm(lengths[rows]))

    def _upper_bound(self, term: str) -> float:
        """No row scores more than this for `term`: tf/(tf + norm) grows with tf and falls with
        the row's length, so the largest tf over the shortest row bounds it (a hair above, for
        float rounding)."""
        most_tf, shortest = self._bounds[term]
        norm = float(self._norm(np.array([shortest]))[0])
        return self._idf(term) * most_tf * (self.k1 + 1.0) / (most_tf + norm) * (1.0 + 1e-9) + 1e-12

    def search(self, query: str, k: int, allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """The `k` best rows and their scores, best first; only rows in `allowed` when given (e.g.
        `filters.in_scope`), and only rows that share a term with the query.

        Exact top k, without reading every posting of a common word (MaxScore, Turtle & Flood
        1995): terms sorted by the most they can add to a row; once the k-th best score found so
        far exceeds what the weakest terms together can add, a row that has only those terms
        cannot enter the top k, so only the other terms' postings are candidates. The
        candidates' scores are complete (every term is looked up in their postings by binary
        search) and summed in the same order as `scores`, so the ranking equals the full one."""
        n = len(self._lengths)
        if n == 0 or k <= 0:
            return []
        terms = self._query_terms(query)
        if not terms:
            return []
        keep = None
        if allowed is not None:
            keep = np.zeros(n, dtype=bool)
            keep[allowed_rows(allowed, n)] = True
        bounds = {term: self._upper_bound(term) for term in terms}
        by_bound = sorted(terms, key=lambda t: (bounds[t], t))  # weakest first
        weakest_sums = np.cumsum([bounds[t] for t in by_bound])
        essential = 1  # how many of the strongest terms supply candidates
        threshold = 0.0
        while True:
            candidates = np.unique(np.concatenate([self._postings[t][0].view for t in by_bound[-essential:]]))
            if keep is not None:
                candidates = candidates[keep[candidates]]
            scores = self._scores_of(terms, candidates)
            if len(scores) >= k:
                threshold = max(threshold, float(np.partition(scores, len(scores) - k)[len(scores) - k]))
            # the weakest terms whose bounds sum below the threshold cannot lift a row into the top k
            needed = len(terms) - int(np.searchsorted(weakest_sums, threshold, side="left")) if threshold > 0 else len(terms)
            if needed <= essential:
                break
            essential = needed
        top = top_indices(scores, k)
        return [(int(candidates[i]), float(scores[i])) for i in top if scores[i] > 0]

    def _scores_of(self, terms: Sequence[str], candidates: np.ndarray) -> np.ndarray:
        """The full BM25 scores of `candidates` (sorted rows), summed in `terms` order."""
        out = np.zeros(len(candidates), dtype=np.float64)
        if not len(candidates):
            return out
        lengths = self._lengths.view
        for term in terms:
            rows, tfs = (buffer.view for buffer in self._postings[term])
            at = np.searchsorted(rows, candidates)
            found = at < len(rows)
            found[found] = rows[at[found]] == candidates[found]
            hit_rows, hit_tfs = candidates[found], tfs[at[found]]
            out[found] += self._idf(term) * hit_tfs * (self.k1 + 1.0) / (hit_tfs + self._norm(lengths[hit_rows]))
        return out
