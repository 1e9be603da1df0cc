"""Side-by-side diff of a node's program against its parent's, as rows for the node page.

Unchanged stretches longer than the context collapse into one "skip" row, so a two-line change in
a 300-line program reads at a glance. Within a changed line pair the differing characters are
marked, because meta-agent edits are often a constant or a condition inside an otherwise equal
line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from markupsafe import Markup, escape

from automemo.content_memo import by_content

RowKind = Literal["equal", "change", "insert", "delete", "skip"]


@dataclass(frozen=True)
class DiffRow:
    kind: RowKind
    left_no: int | None = None    # 1-based line number in the parent's program
    left: Markup = Markup("")     # escaped line text, changed characters wrapped in <del>
    right_no: int | None = None   # 1-based line number in the node's program
    right: Markup = Markup("")    # escaped line text, changed characters wrapped in <ins>
    skipped: int = 0              # for "skip": how many unchanged lines the row stands for


@dataclass(frozen=True)
class DiffStats:
    added: int
    removed: int


def side_by_side(old: str, new: str, *, context: int = 3) -> list[DiffRow]:
    """Rows of the diff from `old` to `new`; empty when the programs are identical. Computed once
    per pair of texts (`automemo.content_memo`)."""
    return list(_side_by_side(old, new, context=context))


@by_content
def _side_by_side(old: str, new: str, *, context: int) -> tuple[DiffRow, ...]:
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(context))
    if not groups or all(tag == "equal" for g in groups for tag, *_ in g):
        return ()
    rows: list[DiffRow] = []
    shown_a = 0   # lines of `a` covered by rows so far
    for group in groups:
        first_a = group[0][1]
        if first_a > shown_a:
            rows.append(DiffRow("skip", skipped=first_a - shown_a))
        for tag, i1, i2, j1, j2 in group:
            rows.extend(_rows(tag, a, b, i1, i2, j1, j2))
        shown_a = group[-1][2]
    if shown_a < len(a):
        rows.append(DiffRow("skip", skipped=len(a) - shown_a))
    return tuple(rows)


@by_content
def diff_stats(old: str, new: str) -> DiffStats:
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return DiffStats(added, removed)


def _rows(tag: str, a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> list[DiffRow]:
    if tag == "equal":
        return [
            DiffRow("equal", i + 1, escape(a[i]), j + 1, escape(b[j]))
            for i, j in zip(range(i1, i2), range(j1, j2))
        ]
    if tag == "delete":
        return [DiffRow("delete", i + 1, escape(a[i])) for i in range(i1, i2)]
    if tag == "insert":
        return [DiffRow("insert", right_no=j + 1, right=escape(b[j])) for j in range(j1, j2)]
    rows = []
    for off in range(max(i2 - i1, j2 - j1)):
        i, j = i1 + off, j1 + off
        if i < i2 and j < j2:
            left, right = mark_changes(a[i], b[j])
            rows.append(DiffRow("change", i + 1, left, j + 1, right))
        elif i < i2:
            rows.append(DiffRow("delete", i + 1, escape(a[i])))
        else:
            rows.append(DiffRow("insert", right_no=j + 1, right=escape(b[j])))
    return rows


MARK_CHARS = 2_000
"""Longer lines are marked whole: a character diff costs the product of the two lengths, and a
crossover of crossovers holds its parents' sources as one string literal each (a line of 87 000
characters on the dev data, against its parent's; the report stalled on it)."""


def mark_changes(old_line: str, new_line: str) -> tuple[Markup, Markup]:
    """Both lines escaped, with the characters that differ wrapped in <del> / <ins> (the whole
    line when either is longer than `MARK_CHARS`)."""
    if len(old_line) > MARK_CHARS or len(new_line) > MARK_CHARS:
        return Markup("<del>%s</del>") % old_line, Markup("<ins>%s</ins>") % new_line
    matcher = difflib.SequenceMatcher(None, old_line, new_line, autojunk=False)
    left, right = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            left.append(escape(old_line[i1:i2]))
            right.append(escape(new_line[j1:j2]))
            continue
        if i2 > i1:
            left.append(Markup("<del>%s</del>") % old_line[i1:i2])
        if j2 > j1:
            right.append(Markup("<ins>%s</ins>") % new_line[j1:j2])
    return Markup("").join(left), Markup("").join(right)
