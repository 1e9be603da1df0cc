"""The lazy dense stage: texts stored at update, embedded only when a first stage (BM25) names
them as a question's candidates, then ranked by cosine with the question.

A dense index embeds every unit it remembers: on a CPU that is most of what remembering costs
(MiniLM, ~0.5 ms a word piece on this machine: tens of milliseconds a turn; docs/cost.md). A
lazy stage embeds the first stage's `depth` candidates of each question, each unit at most once
(its vector is kept), so remembering costs what BM25 costs, and a recall pays for the candidates
no earlier question embedded. What it gives up: a unit no lexical match puts among the
candidates is never found by meaning.

    lazy = LazyDense(toolkit.embed_text)
    lazy.add_many(texts)                           # rows, as the BM25 index numbers them
    lazy.rerank(query, [row for row, _ in bm25.search(query, 30, allowed)])
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from automemo.toolkit.memolib.vectors import as_matrix


class LazyDense:
    def __init__(self, embed: Callable[[list[str]], Sequence[Sequence[float]]], max_chars: int = 1000) -> None:
        self.embed, self.max_chars = embed, max_chars
        self.texts: list[str] = []
        self._vectors: dict[int, np.ndarray] = {}  # row -> normalised vector, for rows embedded so far

    @property
    def size(self) -> int:
        return len(self.texts)

    @property
    def embedded(self) -> int:
        """Rows embedded so far (what the stage has cost)."""
        return len(self._vectors)

    def add_many(self, texts: Sequence[str]) -> list[int]:
        start = len(self.texts)
        self.texts.extend((t or "")[: self.max_chars] for t in texts)
        return list(range(start, len(self.texts)))

    def rerank(self, query: str, rows: Sequence[int]) -> list[tuple[int, float]]:
        """`rows` ordered by cosine with `query`, best first (ties keep their given order); the
        rows not embedded yet are embedded now, in one call."""
        rows = [r for r in dict.fromkeys(rows) if 0 <= r < len(self.texts)]
        if not rows:
            return []
        todo = [r for r in rows if r not in self._vectors]
        if todo:
            fresh = as_matrix(self.embed([self.texts[r] for r in todo]), 1)
            self._vectors.update(zip(todo, fresh))
        q = as_matrix(self.embed([query[: self.max_chars]]), 1)[0]
        scores = [float(self._vectors[r] @ q) for r in rows]
        order = sorted(range(len(rows)), key=lambda i: (-scores[i], i))
        return [(rows[i], scores[i]) for i in order]
