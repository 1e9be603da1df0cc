"""A BM25 lexical index (Okapi BM25, Robertson & Zaragoza 2009): exact word matches that dense
embeddings blur (names, places, numbers, rare words).

`score(d, q) = sum over query terms t of idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))`
with `idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))` (never negative). Rows are numbered in
insertion order; `search` has the same signature as `DenseIndex.search`, so the two fuse
(`fusion.rrf`). Postings are growing numpy buffers (`buffers.GrowingArray`), kept as documents
arrive (appended to lists, moved into the buffers in one block at the next read): an add costs
its own terms (amortised O(1) each), a search reads the postings of the
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


class _Postings:
    """A term's rows and term frequencies. An add appends to two Python lists (a document adds
    one posting per distinct term: two numpy scalar stores each cost ten times a list append, and
    indexing a LongMemEval haystack is millions of postings); the first read after moves them into
    the numpy buffers in one block, so each posting is still converted once."""

    __slots__ = ("rows", "tfs", "new_rows", "new_tfs")

    def __init__(self) -> None:
        self.rows, self.tfs = GrowingArray(np.int64, capacity=4), GrowingArray(np.float64, capacity=4)
        self.new_rows: list[int] = []
        self.new_tfs: list[int] = []

    def __len__(self) -> int:
        return len(self.rows) + len(self.new_rows)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, tfs) as numpy views, valid until the next add."""
        if self.new_rows:
            self.rows.extend(self.new_rows)
            self.tfs.extend(self.new_tfs)
            self.new_rows, self.new_tfs = [], []
        return self.rows.view, self.tfs.view


class BM25Index:
    """Add documents (texts), search them by a query text; `k1` saturates term frequency, `b`
    normalises by document length. `tokenize` defaults to `memolib.tokens` (lower-cased words
    without stop words)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, tokenize: Callable[[str], Sequence[str]] = default_tokens) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25Index: k1 must be >= 0 and b in 0..1, got k1={k1}, b={b}")
        self.k1, self.b, self.tokenize = k1, b, tokenize
        self._postings: dict[str, _Postings] = {}  # term -> its rows and tfs
        self._lengths = GrowingArray(np.float64)  # each row's token count
        self._total_length = 0.0
        self._shortest: dict[str, dict[int, float]] = {}  # term -> {tf: shortest row holding it tf times}

    @property
    def size(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> int:
        """Index one document; returns its row."""
        row = len(self._lengths)
        terms = self.tokenize(text or "")
        length = len(terms)
        postings, shortests = self._postings, self._shortest
        for term, tf in Counter(terms).items():  # one pass per distinct term: the hot loop of indexing
            held = postings.get(term)
            if held is None:
                held = postings[term] = _Postings()
                shortests[term] = {}
            held.new_rows.append(row)
            held.new_tfs.append(tf)
            shortest = shortests[term]
            if length < shortest.get(tf, math.inf):
                shortest[tf] = float(length)
        self._lengths.append(length)
        self._total_length += length
        return row

    def add_many(self, texts: Sequence[str]) -> list[int]:
        return [self.add(t) for t in texts]

    # A snapshot holds the postings as three flat arrays (terms' offsets into all rows and tfs),
    # not two small pickled buffers per term: ten times smaller with a large vocabulary.

    def __getstate__(self) -> dict:
        state = {k: v for k, v in vars(self).items() if k not in ("_postings", "_shortest")}
        terms = list(self._postings)
        arrays = [self._postings[t].arrays() for t in terms]
        counts = np.fromiter((len(rows) for rows, _ in arrays), dtype=np.int64, count=len(terms))
        state["_terms"] = terms
        state["_offsets"] = np.concatenate([[0], np.cumsum(counts)])
        state["_rows"] = np.concatenate([rows for rows, _ in arrays]) if terms else np.zeros(0, np.int64)
        state["_tfs"] = np.concatenate([tfs for _, tfs in arrays]) if terms else np.zeros(0)
        return state

    def __setstate__(self, state: dict) -> None:
        terms, offsets, rows, tfs = (state.pop(k) for k in ("_terms", "_offsets", "_rows", "_tfs"))
        vars(self).update(state)
        self._postings = {}
        for i, term in enumerate(terms):
            held = self._postings[term] = _Postings()
            held.rows.extend(rows[offsets[i]:offsets[i + 1]])
            held.tfs.extend(tfs[offsets[i]:offsets[i + 1]])
        lengths = self._lengths.view
        self._shortest = {}
        for term, held in self._postings.items():
            shortest = self._shortest[term] = {}
            term_rows, term_tfs = held.arrays()
            for tf, length in zip(term_tfs.tolist(), lengths[term_rows].tolist()):
                if length < shortest.get(int(tf), math.inf):
                    shortest[int(tf)] = float(length)

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
        """The query's distinct indexed terms, strongest first (by `_upper_bound`): the order
        `search` reads them in, and the order every path sums them in, so that pruned and full
        scores are the same floats."""
        terms = {term for term in self.tokenize(query or "") if term in self._postings}
        return sorted(terms, key=lambda t: (-self._upper_bound(t), t))

    def _idf(self, term: str) -> float:
        n, df = len(self._lengths), len(self._postings[term])
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _norm(self, lengths: np.ndarray) -> np.ndarray:
        avgdl = max(self._total_length / len(self._lengths), 1e-9)
        return self.k1 * (1.0 - self.b + self.b * lengths / avgdl)

    def _contribution(self, term: str, rows: np.ndarray, tfs: np.ndarray) -> np.ndarray:
        """`term`'s share of the score of `rows`, which hold it `tfs` times."""
        return self._idf(term) * tfs * (self.k1 + 1.0) / (tfs + self._norm(self._lengths.view[rows]))

    def _contributions(self, terms: Sequence[str]):
        """Each term's postings rows and its score contribution there."""
        for term in terms:
            rows, tfs = self._postings[term].arrays()
            yield rows, self._contribution(term, rows, tfs)

    def _upper_bound(self, term: str) -> float:
        """No row scores more than this for `term` (a hair above, for float rounding): for each
        tf the term occurs with, tf/(tf + norm) is largest at the shortest row, kept as rows
        arrive, so this is the term's largest contribution to any row."""
        shortest = self._shortest[term]
        tfs = np.fromiter(shortest.keys(), dtype=np.float64, count=len(shortest))
        lengths = np.fromiter(shortest.values(), dtype=np.float64, count=len(shortest))
        best = float(np.max(tfs / (tfs + self._norm(lengths))))
        return self._idf(term) * (self.k1 + 1.0) * best * (1.0 + 1e-9) + 1e-12

    def search(self, query: str, k: int, allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """The `k` best rows and their scores, best first; only rows in `allowed` when given (e.g.
        `filters.in_scope`), and only rows that share a term with the query.

        Exact top k, without reading every posting of a common word (MaxScore, Turtle & Flood
        1995): terms are read strongest first (by the most they can add to a row), their scores
        accumulated; once the k-th best score so far exceeds what the unread terms together can
        add, a row none of the read terms has cannot enter the top k, and the unread terms'
        postings are only looked up (binary search) for the rows already found. Every row's
        terms are summed in the same order as in `scores`, so the ranking equals the full one."""
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
        bounds = [self._upper_bound(t) for t in terms]
        unread = np.cumsum(bounds[::-1])[::-1]  # bound sum of terms i.. onwards
        partial = np.zeros(n, dtype=np.float64)
        read = 0
        for rows, contribution in self._contributions(terms):
            if keep is not None:
                inside = keep[rows]
                rows, contribution = rows[inside], contribution[inside]
            partial[rows] += contribution
            read += 1
            if read == len(terms):
                break
            if unread[read] >= unread[0] - unread[read]:
                continue  # the unread terms can add more than any row has so far: no row is ruled out
            found = np.flatnonzero(partial)
            if len(found) >= k:
                kth = np.partition(partial[found], len(found) - k)[len(found) - k]
                if unread[read] < kth:
                    break
        candidates = np.flatnonzero(partial)
        scores = partial[candidates]
        for term in terms[read:]:  # the unread terms, at the candidates only
            rows, tfs = self._postings[term].arrays()
            at = np.searchsorted(rows, candidates)
            hit = at < len(rows)
            hit[hit] = rows[at[hit]] == candidates[hit]
            scores[hit] += self._contribution(term, candidates[hit], tfs[at[hit]])
        return [(int(candidates[i]), float(scores[i])) for i in top_indices(scores, k)]
