"""Filters and priors over units: whose memory (scope), when (a time window), how recent.

Times are read from what episodes state (`Unit.time`): ISO dates and datetimes
(`2023-05-08`, `2023-05-08T13:56`), LoCoMo's `1:56 pm on 8 May, 2023`, `8 May 2023`; anything
else reads as unknown, and an unknown time passes a time filter and sorts by insertion order.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Sequence

from automemo.toolkit.memolib.units import Unit

_MONTHS = {m: i + 1 for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2}))?")
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})\s+([A-Za-z]{3,})\.?,?\s+(\d{4})")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)?", re.IGNORECASE)


def parse_time(text: str) -> float | None:
    """Seconds since the epoch (UTC, naive) of a time as episodes state it, or None."""
    text = text or ""
    match = _ISO.search(text)
    try:
        if match:
            y, mo, d, h, mi = match.groups()
            return datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0)).timestamp()
        match = _DAY_MONTH_YEAR.search(text)
        if match and match.group(2)[:3].lower() in _MONTHS:
            hour = minute = 0
            clock = _CLOCK.search(text)
            if clock:
                hour, minute = int(clock.group(1)) % 12 if clock.group(3) else int(clock.group(1)), int(clock.group(2))
                if clock.group(3) and clock.group(3).lower() == "pm":
                    hour += 12
            return datetime(int(match.group(3)), _MONTHS[match.group(2)[:3].lower()], int(match.group(1)),
                            hour, minute).timestamp()
    except ValueError:
        return None
    return None


def in_scope(turns: Sequence[Unit], scope: str) -> list[int]:
    """Rows of `turns` that belong to `scope` (e.g. the question's `user`); every row when the
    scope is empty or no unit belongs to it (a memory that knows no such owner searches all)."""
    rows = [i for i, u in enumerate(turns) if scope and u.scope == scope]
    return rows if rows else list(range(len(turns)))


def in_time(turns: Sequence[Unit], start: str | float | None = None, end: str | float | None = None) -> list[int]:
    """Rows whose time lies in [start, end] (either bound optional; times as text or seconds);
    units of unknown time are kept."""
    lo = parse_time(start) if isinstance(start, str) else start
    hi = parse_time(end) if isinstance(end, str) else end
    out = []
    for i, u in enumerate(turns):
        t = parse_time(u.time)
        if t is None or ((lo is None or t >= lo) and (hi is None or t <= hi)):
            out.append(i)
    return out


def recency(turns: Sequence[Unit]) -> list[float]:
    """Each row's recency in 0..1 (1 the latest): by stated time where every unit has one, else
    by insertion order (episodes arrive in time order)."""
    n = len(turns)
    if n == 0:
        return []
    times = [parse_time(u.time) for u in turns]
    keys = times if all(t is not None for t in times) else list(range(n))
    low, high = min(keys), max(keys)
    return [(k - low) / (high - low) if high > low else 1.0 for k in keys]


def recency_rerank(hits: Sequence[tuple[int, float]], turns: Sequence[Unit], weight: float = 0.2) -> list[tuple[int, float]]:
    """`hits` re-scored as `(1 - weight) * relevance + weight * recency`, relevance min-max
    normalised over the hits; best first (ties keep the hits' order). `turns` a `UnitStore`
    costs O(hits) (its time bounds are kept as units arrive); a list of units O(all units)."""
    if not hits:
        return []
    if hasattr(turns, "recency_of"):
        fresh = dict(zip((row for row, _ in hits), turns.recency_of([row for row, _ in hits])))
    else:
        fresh = recency(turns)
    scores = [s for _, s in hits]
    low, high = min(scores), max(scores)
    rescored = [(row, (1 - weight) * ((s - low) / (high - low) if high > low else 1.0) + weight * fresh[row])
                for row, s in hits]
    order = {row: i for i, (row, _) in enumerate(hits)}
    return sorted(rescored, key=lambda rs: (-rs[1], order[rs[0]]))
