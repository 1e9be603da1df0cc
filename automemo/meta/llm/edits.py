"""Edits instead of rewrites: SEARCH/REPLACE blocks (the diff format of OpenEvolve and Aider)
applied to the parent program.

A child that changes ten lines of a 400-line parent costs ten lines of completion, not 400, and
cannot come back cut or with the parent's unrelated parts silently lost. Each block is applied
exactly; a block whose SEARCH text is not in the program is tried again, forgivingly, the way
small models miss: line by line with whitespace ignored (they re-indent and trim trailing
spaces), a one-line SEARCH as part of a line (they drop a trailing comment), and SEARCH lines
found in order with lines skipped between them (they leave out lines they think irrelevant).
A forgiving match must be unique: an edit that could apply in two places is never applied. A
block that matches nowhere makes the whole edit fail with a message naming it, so the caller can
ask again.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from automemo.meta.base import MetaError
from automemo.meta.llm.codeblock import program_blocks
from automemo.meta.context import ParsedSource
from automemo.meta.source.tunables import TunableError

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


# `NAME = value` or `NAME old -> value` on a line of its own (a small model's way of saying that a
# constant changes), in backticks or not, a trailing comment ignored.
_SETTING = re.compile(
    r"^[ \t>*`-]*(?:SUMMARY:[ \t]*)?(?P<name>[A-Z][A-Z0-9_]*)[ \t]*(?:=|[ \t]\S+[ \t]*->)[ \t]*"
    r"(?P<value>[^#`\n,;]+?)[ \t`]*(?:[,;#].*)?$", re.MULTILINE)


def setting_edits(text: str, source: str, *, program: ParsedSource | None = None) -> list[Edit]:
    """Edits for the lines of `text` that set a module-level constant of `source` to a new literal
    (`TOP_K = 8`, or `TOP_K 10 -> 8`): each becomes an exact edit of the constant's line, its
    comment kept. Only a name assigned once at module level, a value that is a literal of the
    same kind, and, for a declared tunable, inside its declared range; the first setting of a
    name counts. [] when there is none. `program`: `source` parsed already."""
    if program is None:
        program = ParsedSource.of(source)
    if program.tree is None or program.malformed:
        return []
    tree = program.tree
    declared = {t.name: t for t in program.tunables}
    assigned: dict[str, list[ast.Assign]] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.lineno == node.end_lineno):
            assigned.setdefault(node.targets[0].id, []).append(node)
    lines = source.splitlines(keepends=True)
    edits: list[Edit] = []
    seen: set[str] = set()
    for match in _SETTING.finditer(text):
        name, written = match["name"], match["value"].strip()
        if name in seen or len(assigned.get(name, ())) != 1:
            continue
        node = assigned[name][0]
        try:
            old, new = ast.literal_eval(node.value), ast.literal_eval(written)
        except (ValueError, SyntaxError):
            continue
        if type(new) is not type(old) and not (isinstance(old, float) and type(new) is int):
            continue
        if name in declared:
            try:
                declared[name].check(new)
            except TunableError:
                continue
        seen.add(name)
        if new == old:
            continue
        raw = lines[node.lineno - 1].encode()
        line = (raw[:node.value.col_offset] + written.encode() + raw[node.value.end_col_offset:]).decode()
        edits.append(Edit(lines[node.lineno - 1], line))
    return edits


def edited(source: str, text: str, *, program: ParsedSource | None = None) -> tuple[str, int] | None:
    """The child a reply's edits make of `source`, and how many edits: its SEARCH/REPLACE
    blocks; blocks that match nowhere but whose REPLACE parts only set constants, those
    settings; a reply with neither blocks nor a program in a python block, its settings of
    constants (`TOP_K = 8` alone in a python block is a setting too).
    None when the reply holds no edit (a whole program, or nothing usable); EditError when its
    blocks do not apply. `program`: `source` parsed already."""
    blocks = parse_edits(text)
    if blocks:
        try:
            return apply_edits(source, blocks), len(blocks)
        except EditError:
            replaced = [line for b in blocks for line in b.replace.splitlines() if line.strip()]
            per_line = [setting_edits(line, source, program=program) for line in replaced]
            if not all(per_line):
                raise
            settings = [edit for found in per_line for edit in found]
            return apply_edits(source, settings), len(settings)
    if any("class Memo" in block for block in program_blocks(text)):
        return None  # a whole program (or an attempt at one): the caller reads it as such
    settings = setting_edits(text, source, program=program)
    return (apply_edits(source, settings), len(settings)) if settings else None


def apply_edits(source: str, edits: list[Edit]) -> str:
    """`source` with every edit applied in order: exactly, else by the first forgiving match
    (`_FORGIVING`) that finds the SEARCH text in exactly one place. Raises EditError naming the
    first block that matches nowhere, or in more than one place (an ambiguous edit is never
    applied)."""
    if not edits:
        raise EditError("the reply holds no SEARCH/REPLACE block")
    out = source
    for number, edit in enumerate(edits, start=1):
        if not edit.search.strip():
            raise EditError(f"edit {number} has an empty SEARCH part: quote the lines to replace")
        first = edit.search.strip().splitlines()[0][:120]
        exact = out.count(edit.search)
        if exact == 1:
            out = out.replace(edit.search, edit.replace, 1)
            continue
        if exact > 1:
            raise EditError(f"edit {number}: its SEARCH text (starting {first!r}) occurs {exact} times "
                            f"in the parent program; quote more lines so that it is unique")
        for match in _FORGIVING:
            try:
                loose = match(out, edit)
            except _Ambiguous as exc:
                raise EditError(f"edit {number}: its SEARCH text (starting {first!r}) matches {exc} "
                                f"places of the parent program once whitespace is ignored; quote "
                                f"more lines so that it is unique") from None
            if loose is not None:
                out = loose
                break
        else:
            raise EditError(f"edit {number}: its SEARCH text (starting {first!r}) is not in the "
                            f"parent program, not even with whitespace ignored")
    return out


class _Ambiguous(Exception):
    """A forgiving match found the SEARCH text in more than one place (args[0]: how many)."""


def _key(line: str) -> str:
    """A line as the forgiving matches compare it: runs of whitespace as one space, stripped."""
    return " ".join(line.split())


def _contiguous(source: str, edit: Edit) -> str | None:
    """Match the SEARCH lines against the program's lines with whitespace runs and blank lines
    ignored; replace the matched span, re-indented by the offset between the program's first
    matched line and the SEARCH text's first line."""
    lines = source.splitlines(keepends=True)
    wanted = [_key(line) for line in edit.search.splitlines() if line.strip()]
    content = [(i, _key(line)) for i, line in enumerate(lines) if line.strip()]
    starts = [s for s in range(len(content) - len(wanted) + 1)
              if [text for _, text in content[s:s + len(wanted)]] == wanted]
    if len(starts) > 1:
        raise _Ambiguous(len(starts))
    if not starts:
        return None
    first, last = content[starts[0]][0], content[starts[0] + len(wanted) - 1][0]
    return _splice(lines, first, last + 1, edit.search, edit.replace)


def _within_line(source: str, edit: Edit) -> str | None:
    """A one-line SEARCH that is part of one line (`TOP_K = 10` of `TOP_K = 10  # tunable: ...`):
    that part is replaced by the one-line REPLACE, the rest of the line kept unless the REPLACE
    repeats it. A multi-line REPLACE takes the whole line's place."""
    searched = [line for line in edit.search.splitlines() if line.strip()]
    if len(searched) != 1:
        return None
    needle = searched[0].strip()
    lines = source.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) for _ in range(line.count(needle))]
    if len(hits) > 1:
        raise _Ambiguous(len(hits))
    if not hits:
        return None
    i = hits[0]
    replaced = [line for line in edit.replace.splitlines() if line.strip()]
    if len(replaced) != 1:
        return _splice(lines, i, i + 1, searched[0], edit.replace)
    line = lines[i]
    at = line.index(needle)
    rest = line[at + len(needle):]
    new = replaced[0].strip()
    if rest.strip() and new.endswith(rest.strip()):  # the REPLACE quotes the line's tail too
        rest = "\n" if line.endswith("\n") else ""
    return "".join(lines[:i]) + line[:at] + new + rest + "".join(lines[i + 1:])


def _subsequence(source: str, edit: Edit) -> str | None:
    """A SEARCH that skipped lines of the program: its lines found in order, with gaps, in
    exactly one place, where every line it quotes occurs in the matched span as often as in the
    SEARCH (so each quoted line has one place only). The line diff between SEARCH and REPLACE is
    then applied at those places; the skipped lines stay. None when a changed run of SEARCH
    lines spans a gap (what the model meant for the skipped lines is unknown)."""
    search = [line for line in edit.search.splitlines() if line.strip()]
    wanted = [_key(line) for line in search]
    lines = source.splitlines(keepends=True)
    keys = [_key(line) for line in lines]
    places = []
    for start in (i for i, k in enumerate(keys) if k == wanted[0]):
        at, found = start, [start]
        for w in wanted[1:]:
            at = next((j for j in range(at + 1, len(keys)) if keys[j] == w), -1)
            if at < 0:
                break
            found.append(at)
        if len(found) == len(wanted):
            span = keys[found[0]:found[-1] + 1]
            if all(span.count(w) == wanted.count(w) for w in set(wanted)):
                places.append(found)
    if len(places) > 1:
        raise _Ambiguous(len(places))
    if not places:
        return None
    found = places[0]
    replace = edit.replace.splitlines()
    have, given = _indent(lines[found[0]]), _indent(search[0])
    ops = difflib.SequenceMatcher(a=wanted, b=[_key(line) for line in replace], autojunk=False).get_opcodes()
    out = list(lines)
    for tag, i1, i2, j1, j2 in reversed(ops):  # from the end, so earlier indices stay valid
        if tag == "equal":
            continue
        if i2 > i1 and found[i2 - 1] - found[i1] != i2 - 1 - i1:
            return None
        body = [_reindent(line, given, have) + "\n" for line in replace[j1:j2]]
        if i2 > i1:
            out[found[i1]:found[i2 - 1] + 1] = body
        else:
            where = found[i1] if i1 < len(found) else found[-1] + 1
            out[where:where] = body
    return "".join(out)


def _splice(lines: list[str], first: int, end: int, search: str, replace: str) -> str:
    """lines[first:end] replaced by `replace`, re-indented from the SEARCH's indentation to the
    program's."""
    have = _indent(lines[first])
    given = _indent(next(line for line in search.splitlines() if line.strip()))
    body = "".join(_reindent(line, given, have) + "\n" for line in replace.splitlines())
    return "".join(lines[:first]) + body + "".join(lines[end:])


_FORGIVING = (_contiguous, _within_line, _subsequence)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(line: str, given: str, have: str) -> str:
    if not line.strip():
        return ""
    if line.startswith(given):
        return have + line[len(given):]
    return have + line.lstrip()
