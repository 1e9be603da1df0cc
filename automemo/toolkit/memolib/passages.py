"""Passages: a whole session, a window of a session's turns, or a session's extractive summary,
indexed as a document of its own beside the turns; a ranked passage is cited by its best turns.

A question about a conversation's topic rather than one sentence of it matches a stretch of
turns better than any turn: session- and window-level keys are how the published session-level
memories reach high session recall (LongMemEval indexes sessions and rounds, with expanded keys,
Wu et al., ICLR 2025; SeCom retrieves topical segments, Pan et al., ICLR 2025; passage windows of
a document, Callan SIGIR 1994, and the passage-level scores of MaxP, Dai & Callan SIGIR 2019).

A passage cannot be cited by itself: the benchmarks score the turn ids a payload cites. So a
ranked passage stands in the turn ranking for its best turns (`best_turns`): the turns of the
ranked passages are searched again, restricted to those rows, and each passage is represented by
its best-scoring turn there, breadth first (every ranked passage's best turn, in passage order,
before any passage's second); a turn two overlapping windows share counts once, where the better
window put it. The resulting ranking of turns fuses with the turn rankings like any other.
"""

from __future__ import annotations

from typing import Any, Sequence

from automemo.toolkit.memolib.fusion import rrf
from automemo.toolkit.memolib.hierarchy import SessionIndex
from automemo.toolkit.memolib.summaries import SessionSummarizer

PASSAGE_KINDS = ("session", "window", "summary")


def spans(count: int, size: int) -> list[range]:
    """Windows over positions 0..count-1 of `size` positions each, a new one every `size // 2`
    (half overlapping, so a topic cut by one window's edge sits inside the next), the last one
    ending at `count`; one span of everything when `size` <= 0 or covers it all."""
    if count <= 0:
        return []
    if size <= 0 or size >= count:
        return [range(count)]
    stride = max(1, size // 2)
    starts = list(range(0, count - size, stride)) + [count - size]
    return [range(start, start + size) for start in dict.fromkeys(starts)]


class PassageIndex:
    """Passages of one `kind` ("session", "window": `length` turns, "summary": `length`
    sentences) in each of `indexes` (e.g. a `BM25Index` and a `DenseIndex`), searched together
    and fused by reciprocal rank."""

    def __init__(self, indexes: Sequence[Any], kind: str = "session", length: int = 4) -> None:
        if kind not in PASSAGE_KINDS:
            raise ValueError(f"passage kind {kind!r}: one of {', '.join(PASSAGE_KINDS)}")
        if not indexes:
            raise ValueError("a PassageIndex needs at least one index")
        self.kind, self.length = kind, length
        self.views = [SessionIndex(index) for index in indexes]
        self.summarizer = SessionSummarizer(sentences=length) if kind == "summary" else None

    @property
    def size(self) -> int:
        return self.views[0].size

    @property
    def turn_rows(self) -> list[tuple[int, ...]]:
        return self.views[0].turn_rows

    def add(self, texts: Sequence[str], rows: Sequence[int], scope: str = "") -> list[int]:
        """One session's turns (their `texts` and the `rows` the turn indexes gave them) as
        passages of this kind; returns the passages' numbers."""
        if not texts:
            return []
        if self.summarizer is not None:
            parts = [(self.summarizer.add(texts, scope), list(rows))]
        else:
            cut = spans(len(texts), self.length if self.kind == "window" else 0)
            parts = [("\n".join(texts[i] for i in span), [rows[i] for i in span]) for span in cut]
        return [[view.add(text, turn_rows, scope) for view in self.views][0] for text, turn_rows in parts]

    def search(self, query: str, top: int, scope: str = "") -> list[tuple[int, float]]:
        """The `top` passages for `query` (of `scope` when the memory knows it), best first."""
        found = [view.search(query, top, scope) for view in self.views]
        return found[0] if len(found) == 1 else rrf(found)[:top]

    def rows_in(self, passages: Sequence[tuple[int, float]]) -> list[int]:
        """The turn rows of `passages`, each once."""
        return list(dict.fromkeys(self.views[0].rows_in(passages)))


def best_turns(passages: Sequence[tuple[int, float]], inside: Sequence[tuple[int, float]],
               index: PassageIndex | SessionIndex, per_passage: int = 1) -> list[tuple[int, float]]:
    """The turns that stand for the ranked `passages` (best first), in `per_passage` rounds: in
    each, every passage in passage order gives its best turn not given yet (best by `inside`, a
    turn search over the passages' rows, best first), until it has given `per_passage`; each
    turn scored with its passage's score. A passage none of whose turns `inside` holds is left
    out."""
    place = {row: i for i, (row, _) in enumerate(inside)}
    ordered = [(sorted((r for r in index.turn_rows[p] if r in place), key=place.__getitem__), score)
               for p, score in passages]
    out: list[tuple[int, float]] = []
    taken: set[int] = set()
    for _ in range(per_passage):
        for rows, score in ordered:
            turn = next((r for r in rows if r not in taken), None)
            if turn is not None:
                taken.add(turn)
                out.append((turn, score))
    return out
