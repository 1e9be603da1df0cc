"""Hierarchical retrieval: rank whole sessions first, then the turns inside the best sessions.

A question's words are often spread over a session (the picnic in one round, the dessert two
rounds later) while no single round holds enough of them to win a flat search. Scoring the
session as a whole finds where the conversation was about it; the turn search inside it then
picks the round. This is the coarse-to-fine scheme of RAPTOR's tree (Sarthi et al., ICLR 2024)
and of session-then-turn memory retrieval (SeCom, Pan et al., ICLR 2025, arXiv:2502.05589;
LongMemEval's session-level key expansion, Wu et al., ICLR 2025, arXiv:2410.10813), without any
summarising model: a session is the text of its turns.

`hierarchical` with `outside=True` is session-level fusion rather than a filter: every turn hit
keeps its place in the mix, a turn of a session the session search did not rank counting 0 for
its session (score-level fusion of a passage's and its document's evidence, as in Callan's
passage-level evidence, SIGIR 1994, and the session-aware rerankers of SeCom and LongMemEval).
"""

from __future__ import annotations

from typing import Collection, Sequence

from automemo.toolkit.memolib.bm25 import BM25Index


class SessionIndex:
    """Session texts in an index (BM25 by default; anything with `add(text)` and
    `search(query, k, allowed)`, a `DenseIndex` too), each with the turn rows (of the program's
    turn indexes) it holds and its scope. A "session" is any group of turns indexed as one
    document: `passages.PassageIndex` keeps windows and summaries in these too."""

    def __init__(self, index: BM25Index | None = None) -> None:
        self.index = index or BM25Index()
        self.turn_rows: list[tuple[int, ...]] = []
        self.scopes: list[str] = []
        self._rows_of: dict[str, list[int]] = {}

    @property
    def size(self) -> int:
        return len(self.turn_rows)

    def add(self, text: str, turn_rows: Sequence[int], scope: str = "") -> int:
        """One session: its whole text, the rows its turns got, whose memory it is."""
        row = self.index.add(text)
        self.turn_rows.append(tuple(turn_rows))
        self.scopes.append(scope)
        self._rows_of.setdefault(scope, []).append(row)
        return row

    def search(self, query: str, top: int, scope: str = "") -> list[tuple[int, float]]:
        """The `top` sessions for `query` (of `scope` when the memory knows it), best first."""
        allowed = self._rows_of.get(scope) if scope else None
        return self.index.search(query, top, allowed)

    def rows_in(self, sessions: Sequence[tuple[int, float]]) -> list[int]:
        """The turn rows of `sessions`."""
        return [r for s, _ in sessions for r in self.turn_rows[s]]


def hierarchical(sessions: Sequence[tuple[int, float]], turns: Sequence[tuple[int, float]],
                 session_index: SessionIndex, session_weight: float = 0.5,
                 allowed: Collection[int] | None = None, outside: bool = False) -> list[tuple[int, float]]:
    """Turns of the ranked `sessions` only, each scored `session_weight` times its session's
    score plus the rest times its own (`turns`: a turn search over those sessions' rows), both
    min-max normalised: a good turn in a good session first. Turns the turn search did not
    return are left out. With `outside`, the turns of sessions not in `sessions` are kept too,
    their session counting 0 (session-level fusion of a whole turn ranking: nothing is
    dropped, a turn in a ranked session moves up)."""
    if not turns or not (sessions or outside):
        return []
    low, high = min((s for _, s in sessions), default=0.0), max((s for _, s in sessions), default=0.0)
    session_of: dict[int, float] = {}
    for row, s in sessions:  # a turn in two ranked groups (overlapping windows) counts its best
        for r in session_index.turn_rows[row]:
            session_of.setdefault(r, (s - low) / (high - low) if high > low else 1.0)
    if allowed is not None:
        allowed = set(allowed)
        session_of = {r: v for r, v in session_of.items() if r in allowed}
    if outside:  # every hit stays; an unranked session adds nothing to its turns
        session_of = {r: session_of.get(r, 0.0) for r, _ in turns if allowed is None or r in allowed}
    inside = [(r, s) for r, s in turns if r in session_of]
    if not inside:
        return []
    t_low, t_high = min(s for _, s in inside), max(s for _, s in inside)
    scored = [(r, session_weight * session_of[r] + (1 - session_weight) * ((s - t_low) / (t_high - t_low) if t_high > t_low else 1.0))
              for r, s in inside]
    order = {r: i for i, (r, _) in enumerate(inside)}
    return sorted(scored, key=lambda rs: (-rs[1], order[rs[0]]))
