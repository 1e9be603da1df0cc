"""The units a program has stored, by row: the row numbers its indexes use (BM25, dense), each
unit's episode update order (for time-ordered payloads) and the rows of each scope (the scope
filter an index search takes as `allowed`).

Everything a query asks of the store is kept as units arrive, so no query walks every unit:
the rows of each scope and of each tag (e.g. image units) as growing int arrays, each unit's
stated time (parsed once) with the running bounds `recency_of` normalises by, and the first row
at each (episode, position) that `expand` looks neighbours up in."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from automemo.toolkit.memolib.buffers import GrowingArray
from automemo.toolkit.memolib.filters import parse_time
from automemo.toolkit.memolib.units import Unit


class UnitStore:
    """Append units episode by episode; row i is the i-th unit added, the same row an index gets
    when the units are added to it in the same order."""

    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.orders: list[int] = []  # the update order of each row's episode
        self._rows_of: dict[str, list[int]] = {}
        self._row_arrays: dict[str, GrowingArray] = {}  # `_rows_of` as int arrays (allowed_rows)
        self._tagged = GrowingArray(np.int64)  # a bit per tag, per row
        self._tags: dict[str, int] = {}
        self._times = GrowingArray(np.float64)  # stated time in seconds, nan when unknown
        self._untimed = 0
        self._time_bounds = (math.inf, -math.inf)
        self._first_row: dict[tuple[str, int], int] = {}
        self.episodes = 0

    def __len__(self) -> int:
        return len(self.units)

    def __getitem__(self, row: int) -> Unit:
        return self.units[row]

    def add_episode(self, turns: Sequence[Unit]) -> list[int]:
        """Store one episode's units (with the next update order); returns their rows."""
        rows = list(range(len(self.units), len(self.units) + len(turns)))
        for row, unit in zip(rows, turns):
            self.units.append(unit)
            self.orders.append(self.episodes)
            self._rows_of.setdefault(unit.scope, []).append(row)
            self._row_arrays.setdefault(unit.scope, GrowingArray(np.int64)).append(row)
            self._tagged.append(0)
            seconds = parse_time(unit.time)
            if seconds is None:
                self._untimed += 1
                self._times.append(math.nan)
            else:
                self._times.append(seconds)
                self._time_bounds = (min(self._time_bounds[0], seconds), max(self._time_bounds[1], seconds))
            self._first_row.setdefault((unit.episode_id, unit.position), row)
        self.episodes += 1
        return rows

    def allowed(self, scope: str) -> list[int] | None:
        """The rows of `scope` (e.g. the question's user), or None (search every row) when the
        scope is empty or unknown to this memory."""
        return self._rows_of.get(scope) if scope else None

    def tag(self, rows: Sequence[int], tag: str) -> None:
        """Mark rows (e.g. image units) so that `allowed_rows(..., without=tag)` leaves them out."""
        bit = self._tags.setdefault(tag, 1 << len(self._tags))
        if len(rows):
            self._tagged.view[np.asarray(rows, dtype=np.int64)] |= bit

    def allowed_rows(self, scope: str, without: str | None = None) -> np.ndarray | None:
        """`allowed(scope)` as an int array an index filters without a Python loop, minus the rows
        tagged `without`; None (every row) when nothing is filtered out. O(rows returned)."""
        rows = self._row_arrays[scope].view if scope and scope in self._row_arrays else None
        bit = self._tags.get(without) if without else None
        if bit is None:
            return rows
        tagged = self._tagged.view
        if rows is None:
            return np.flatnonzero((tagged & bit) == 0)
        return rows[(tagged[rows] & bit) == 0]

    def recency_of(self, rows: Sequence[int]) -> list[float]:
        """`filters.recency(self.units)` at `rows` only, from the bounds kept as units arrived."""
        n = len(self.units)
        if self._untimed == 0 and n:
            low, high = self._time_bounds
            keys = [float(self._times.view[r]) for r in rows]
        else:
            low, high = 0, n - 1
            keys = [float(r) for r in rows]
        return [(k - low) / (high - low) if high > low else 1.0 for k in keys]

    def row_at(self, episode_id: str, position: int) -> int | None:
        """The first row stored at `position` of `episode_id` (the turn, not its image units)."""
        return self._first_row.get((episode_id, position))

    def ranked(self, rows: Sequence[int]) -> list[tuple[Unit, int]]:
        """`(unit, episode order)` of `rows` in the given order: what `chronological` shows."""
        return [(self.units[r], self.orders[r]) for r in rows]
