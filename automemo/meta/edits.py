"""Edits instead of rewrites: SEARCH/REPLACE blocks (the diff format of OpenEvolve and Aider)
applied to the parent program.

A child that changes ten lines of a 400-line parent costs ten lines of completion, not 400, and
cannot come back cut or with the parent's unrelated parts silently lost. Each block is applied
exactly; a block whose SEARCH text is not in the program is tried again line by line with
whitespace ignored (models re-indent and trim trailing spaces), keeping the program's own
indentation. A block that matches neither way makes the whole edit fail with a message naming
it, so the caller can ask once for the whole program instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from automemo.meta.base import MetaError

_BLOCK = re.compile(
    r"^[ \t]*<{5,}[ \t]*SEARCH[ \t]*\n(?P<search>.*?)^[ \t]*={5,}[ \t]*\n(?P<replace>.*?)^[ \t]*>{5,}[ \t]*REPLACE[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


class EditError(MetaError):
    """The reply's edits do not apply to the parent; the message says which and why."""


@dataclass(frozen=True)
class Edit:
    search: str
    replace: str


def parse_edits(text: str) -> list[Edit]:
    """The SEARCH/REPLACE blocks of a reply, in order ([] when it holds none)."""
    return [Edit(m["search"], m["replace"]) for m in _BLOCK.finditer(text)]


def apply_edits(source: str, edits: list[Edit]) -> str:
    """`source` with every edit applied in order (exactly, else whitespace-insensitively).
    Raises EditError naming the first block that matches nowhere."""
    if not edits:
        raise EditError("the reply holds no SEARCH/REPLACE block")
    out = source
    for number, edit in enumerate(edits, start=1):
        if not edit.search.strip():
            raise EditError(f"edit {number} has an empty SEARCH part: quote the lines to replace")
        if edit.search in out:
            out = out.replace(edit.search, edit.replace, 1)
            continue
        loose = _apply_loosely(out, edit)
        if loose is None:
            first = edit.search.strip().splitlines()[0][:120]
            raise EditError(f"edit {number}: its SEARCH text (starting {first!r}) is not in the "
                            f"parent program, not even with whitespace ignored")
        out = loose
    return out


def _apply_loosely(source: str, edit: Edit) -> str | None:
    """Match the SEARCH lines against the program's lines with leading/trailing whitespace and
    blank lines ignored; replace the matched span, re-indented by the offset between the
    program's first matched line and the SEARCH text's first line."""
    lines = source.splitlines(keepends=True)
    wanted = [line.strip() for line in edit.search.splitlines() if line.strip()]
    content = [(i, line.strip()) for i, line in enumerate(lines) if line.strip()]
    for start in range(len(content) - len(wanted) + 1):
        if [text for _, text in content[start:start + len(wanted)]] != wanted:
            continue
        first, last = content[start][0], content[start + len(wanted) - 1][0]
        have = _indent(lines[first])
        given = _indent(next(line for line in edit.search.splitlines() if line.strip()))
        replacement = [_reindent(line, given, have) for line in edit.replace.splitlines()]
        body = "".join(line + "\n" for line in replacement)
        return "".join(lines[:first]) + body + "".join(lines[last + 1:])
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(line: str, given: str, have: str) -> str:
    if not line.strip():
        return ""
    if line.startswith(given):
        return have + line[len(given):]
    return have + line.lstrip()
