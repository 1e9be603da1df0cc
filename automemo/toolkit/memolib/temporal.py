"""Temporal anchoring: dates a text states or implies, resolved against the time it was said,
and a ranking that prefers, for a question about time, the units dated near the date it asks
about.

A round dated 2024-07-29 that says "yesterday" is about 2024-07-28; a question "what did she do
in May?" asks about May of the conversation's year. TReMu (Ge et al., ACL Findings 2025,
arXiv:2502.01630) resolves each session's relative time expressions against the session date
before retrieval and lifts temporal multi-session QA; TimeR4 (Qian et al., EMNLP 2024) retrieves
by the question's resolved time constraint. This module does both without a model: a rule-based
reading of absolute dates and common relative phrases, anchored on the unit's own time (its
session date), and a question-side reading anchored on the question's time (`metadata["time"]`)
or, when a benchmark gives none, on the latest date the memory holds.

Whether a question is about time is read from its text alone (`is_time_question`), never from a
label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Collection, Sequence

from automemo.toolkit.memolib.filters import parse_time

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december"]
_MONTH = {m: i + 1 for i, m in enumerate(_MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
            "several": 3}
_MONTH_NAMES = "|".join(sorted(_MONTH, key=len, reverse=True))
_COUNT = r"(\d+|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_UNIT_DAYS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}

_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?,?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_DAY = re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s+\d{{4}})")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?,?\s+(?:of\s+)?(\d{{4}})\b")
_IN_MONTH = re.compile(rf"\b(?:in|during|since|until|by|early|late|mid|end of|beginning of)\s+({_MONTH_NAMES})\b(?!\.?,?\s+(?:of\s+)?\d)")
_YEAR = re.compile(r"\b(?:in|during|since|of)\s+((?:19|20)\d{2})\b")
_AGO = re.compile(rf"\b{_COUNT}\s+(day|days|week|weeks|month|months|year|years)\s+(ago|before|earlier|later|after)\b")
_LAST = re.compile(r"\b(last|this|next|past|previous)\s+(week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")\b")
_SIMPLE = {"yesterday": (-1, -1), "day before yesterday": (-2, -2), "today": (0, 0), "tonight": (0, 0),
           "this morning": (0, 0), "this afternoon": (0, 0), "this evening": (0, 0), "last night": (-1, -1),
           "tomorrow": (1, 1), "day after tomorrow": (2, 2), "recently": (-14, 0), "the other day": (-7, -1)}
_SIMPLE_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _SIMPLE), key=len, reverse=True)) + r")\b")

_TIME_QUESTION = re.compile(
    r"^\s*when\b|\bwhen (?:did|does|do|was|were|is|will|had|has)\b|\bwhat (?:date|day|month|year|time|week)\b"
    r"|\bwhich (?:date|day|month|year|week|weekend)\b|\bhow long (?:ago|before|after|since)\b"
    r"|\bhow many (?:days|weeks|months|years)\b|\bsince when\b|\bin what (?:month|year)\b"
    r"|\byyyy|\bdate\b", re.IGNORECASE)


@dataclass(frozen=True)
class DateSpan:
    """A stretch of days a text refers to (one day, a week, a month), with the phrase read."""

    start: date
    end: date
    phrase: str

    def distance(self, other: DateSpan) -> int:
        """Days between the two spans (0 when they overlap)."""
        if self.end < other.start:
            return (other.start - self.end).days
        if other.end < self.start:
            return (self.start - other.end).days
        return 0


def anchor_of(time: str | float | None) -> date | None:
    """The day a stated time (as `filters.parse_time` reads it, or seconds) falls on."""
    seconds = parse_time(time) if isinstance(time, str) else time
    return datetime.fromtimestamp(seconds).date() if seconds is not None else None


def _month_span(year: int, month: int, phrase: str) -> DateSpan:
    last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1))
    return DateSpan(date(year, month, 1), last, phrase)


def _day(year: int, month: int, day: int, phrase: str) -> DateSpan | None:
    try:
        d = date(year, month, day)
    except ValueError:
        return None
    return DateSpan(d, d, phrase)


def _year_for(month: int, anchor: date | None) -> int | None:
    """A month named without a year: the latest such month not after the anchor."""
    if anchor is None:
        return None
    return anchor.year if month <= anchor.month else anchor.year - 1


def date_mentions(text: str, anchor: date | None = None) -> list[DateSpan]:
    """The dates `text` states (ISO, "28 July 2024", "July 28, 2024", "July 2024") and, given the
    day it was said (`anchor`), the ones it implies: "yesterday", "last week", "three days ago",
    "two weeks before", "in May", "on July 28", "last Friday". In order of appearance."""
    found: list[tuple[int, DateSpan]] = []
    taken: list[tuple[int, int]] = []
    low = (text or "").lower()

    def add(match: re.Match[str], span: DateSpan | None) -> None:
        if span is None or any(a < match.end() and match.start() < b for a, b in taken):
            return
        taken.append((match.start(), match.end()))
        found.append((match.start(), span))

    for m in _ISO.finditer(low):
        add(m, _day(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(0)))
    for m in _DAY_MONTH_YEAR.finditer(low):
        add(m, _day(int(m.group(3)), _MONTH[m.group(2)], int(m.group(1)), m.group(0)))
    for m in _MONTH_DAY_YEAR.finditer(low):
        add(m, _day(int(m.group(3)), _MONTH[m.group(1)], int(m.group(2)), m.group(0)))
    for m in _MONTH_YEAR.finditer(low):
        add(m, _month_span(int(m.group(2)), _MONTH[m.group(1)], m.group(0)))
    for m in _YEAR.finditer(low):
        add(m, DateSpan(date(int(m.group(1)), 1, 1), date(int(m.group(1)), 12, 31), m.group(0)))
    if anchor is not None:
        for m in _MONTH_DAY.finditer(low):
            add(m, _day(_year_for(_MONTH[m.group(1)], anchor), _MONTH[m.group(1)], int(m.group(2)), m.group(0)))
        for m in _IN_MONTH.finditer(low):
            month = _MONTH[m.group(1)]
            add(m, _month_span(_year_for(month, anchor), month, m.group(0)))
        for m in _AGO.finditer(low):
            days = (int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]) * _UNIT_DAYS[m.group(2)]
            sign = 1 if m.group(3) in ("later", "after") else -1
            d = anchor + timedelta(days=sign * days)
            slack = 0 if _UNIT_DAYS[m.group(2)] == 1 else _UNIT_DAYS[m.group(2)] // 7
            add(m, DateSpan(d - timedelta(days=slack), d + timedelta(days=slack), m.group(0)))
        for m in _LAST.finditer(low):
            add(m, _relative_period(m.group(1), m.group(2), anchor, m.group(0)))
        for m in _SIMPLE_RE.finditer(low):
            a, b = _SIMPLE[m.group(1)]
            add(m, DateSpan(anchor + timedelta(days=a), anchor + timedelta(days=b), m.group(0)))
    return [span for _, span in sorted(found, key=lambda ps: ps[0])]


def _relative_period(which: str, period: str, anchor: date, phrase: str) -> DateSpan:
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1}[which]
    if period in _WEEKDAYS:
        wanted = _WEEKDAYS.index(period)
        back = (anchor.weekday() - wanted) % 7 or 7  # "last Friday": the Friday before the anchor
        d = anchor - timedelta(days=back) if step <= 0 else anchor + timedelta(days=(wanted - anchor.weekday()) % 7 or 7)
        return DateSpan(d, d, phrase)
    if period in ("week", "weekend"):
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=step)
        start = monday + timedelta(days=5) if period == "weekend" else monday
        return DateSpan(start, monday + timedelta(days=6), phrase)
    if period == "month":
        month_index = anchor.year * 12 + anchor.month - 1 + step
        return _month_span(month_index // 12, month_index % 12 + 1, phrase)
    year = anchor.year + step
    return DateSpan(date(year, 1, 1), date(year, 12, 31), phrase)


def is_time_question(question: str) -> bool:
    """Whether a question asks about time (when, what date, how long ago ...), from its text."""
    return bool(_TIME_QUESTION.search(question or ""))


class DateIndex:
    """Each row's dates: its own time (a session date) and the dates its text states or implies
    resolved against that time. Rows numbered in insertion order like the other indexes."""

    def __init__(self) -> None:
        self.times: list[date | None] = []
        self.mentions: list[tuple[DateSpan, ...]] = []

    @property
    def size(self) -> int:
        return len(self.times)

    def add(self, text: str, time: str = "") -> int:
        anchor = anchor_of(time)
        self.times.append(anchor)
        self.mentions.append(tuple(date_mentions(text, anchor)))
        return len(self.times) - 1

    def add_many(self, texts: Sequence[str], times: Sequence[str]) -> list[int]:
        return [self.add(t, when) for t, when in zip(texts, times)]

    def latest(self, allowed: Collection[int] | None = None) -> date | None:
        rows = range(len(self.times)) if allowed is None else allowed
        dates = [self.times[r] for r in rows if 0 <= r < len(self.times) and self.times[r] is not None]
        return max(dates) if dates else None

    def search(self, question: str, k: int, allowed: Collection[int] | None = None,
               prior: Sequence[int | tuple[int, float]] = (), now: str | None = None) -> list[tuple[int, float]]:
        """For a question that names or implies a date (anchored on `now`, else the latest date
        of the rows searched): rows by how near their dates come to it (a date the row's text
        states counts before its session date), ties in `prior`'s order. For a time question
        naming no date: `prior`'s rows that state a date of their own first (the answer to
        "when" is a date someone said). Otherwise empty: nothing to anchor."""
        rows = [r for r in (range(len(self.times)) if allowed is None else allowed) if 0 <= r < len(self.times)]
        anchor = anchor_of(now) if now else self.latest(rows)
        targets = date_mentions(question, anchor)
        place = {(p[0] if isinstance(p, tuple) else p): i for i, p in enumerate(prior)}
        if targets:
            scored = []
            for r in rows:
                stated = [min(t.distance(m) for t in targets) for m in self.mentions[r]]
                own = [min(t.distance(DateSpan(self.times[r], self.times[r], "")) for t in targets)] \
                    if self.times[r] is not None else []
                # A stated date that hits the target beats a session date that does: the round
                # that says "yesterday" is about that day, its neighbours only on the day after.
                best = min([2 * d for d in stated] + [2 * d + 1 for d in own], default=None)
                if best is not None and best <= 60:
                    scored.append((r, 1.0 / (1.0 + best)))
            scored.sort(key=lambda rs: (-rs[1], place.get(rs[0], len(place)), rs[0]))
            return scored[:k]
        if is_time_question(question) and prior:
            ordered = [p[0] if isinstance(p, tuple) else p for p in prior]
            allowed_set = set(rows)
            dated = [r for r in ordered if r in allowed_set and 0 <= r < len(self.mentions) and self.mentions[r]]
            return [(r, 1.0 / (1 + i)) for i, r in enumerate(dated[:k])]
        return []
