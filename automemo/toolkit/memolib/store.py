"""The units a program has stored, by row: the row numbers its indexes use (BM25, dense), each
unit's episode update order (for time-ordered payloads) and the rows of each scope (the scope
filter an index search takes as `allowed`)."""

from __future__ import annotations

from typing import Sequence

from automemo.toolkit.memolib.units import Unit


class UnitStore:
    """Append units episode by episode; row i is the i-th unit added, the same row an index gets
    when the units are added to it in the same order."""

    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.orders: list[int] = []  # the update order of each row's episode
        self._rows_of: dict[str, list[int]] = {}
        self.episodes = 0

    def __len__(self) -> int:
        return len(self.units)

    def add_episode(self, turns: Sequence[Unit]) -> list[int]:
        """Store one episode's units (with the next update order); returns their rows."""
        rows = list(range(len(self.units), len(self.units) + len(turns)))
        for row, unit in zip(rows, turns):
            self.units.append(unit)
            self.orders.append(self.episodes)
            self._rows_of.setdefault(unit.scope, []).append(row)
        self.episodes += 1
        return rows

    def allowed(self, scope: str) -> list[int] | None:
        """The rows of `scope` (e.g. the question's user), or None (search every row) when the
        scope is empty or unknown to this memory."""
        return self._rows_of.get(scope) if scope else None

    def ranked(self, rows: Sequence[int]) -> list[tuple[Unit, int]]:
        """`(unit, episode order)` of `rows` in the given order: what `chronological` shows."""
        return [(self.units[r], self.orders[r]) for r in rows]
