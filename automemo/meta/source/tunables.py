"""Tunable constants: the knobs a seed declares and the offline mutator turns.

A tunable is a module-level assignment of one literal with a marker comment, one per line:

    TOP_K = 10  # tunable: int 1..30
    THRESHOLD = 0.35  # tunable: float 0.0..0.9
    MODE = "dense"  # tunable: choice dense|hybrid|graph
    USE_IMAGES = True  # tunable: bool

`parse_tunables` checks each declaration against the program's AST (the literal must be a
module-level constant of the declared type, inside the declared range), so that a mutator never
writes a value the program's author did not allow. `apply` rewrites only the literal's characters
and leaves every other byte of the source (comments, formatting) as it was, which keeps the diff
a parent→child step shows readable.
"""

from __future__ import annotations

import ast
import collections
import io
import math
import random
import re
import tokenize
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from automemo.errors import AutomemoError
from automemo.meta.source import syntax

MARKER = "tunable:"

_SPEC = re.compile(
    r"""^\s*(?:
        (?P<num>int|float)\s+(?P<low>[-+0-9.eE]+)\s*\.\.\s*(?P<high>[-+0-9.eE]+)
      | choice\s+(?P<choices>\S+)
      | (?P<bool>bool)
    )\s*$""",
    re.VERBOSE,
)


class TunableError(AutomemoError, ValueError):
    """A tunable declaration or a value for it is invalid. The message names the line."""


@dataclass(frozen=True)
class Tunable:
    name: str
    kind: str                        # "int" | "float" | "choice" | "bool"
    value: Any
    line: int                        # 1-based line of the assignment
    low: float | None = None         # inclusive bounds of int/float
    high: float | None = None
    choices: tuple[str, ...] = ()    # allowed values of a choice

    def check(self, value: Any) -> Any:
        """Return `value` if it fits this declaration, else raise TunableError."""
        where = f"tunable {self.name} (line {self.line})"
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise TunableError(f"{where}: expected True or False, got {value!r}")
        elif self.kind == "choice":
            if value not in self.choices:
                raise TunableError(
                    f"{where}: expected one of {'|'.join(self.choices)}, got {value!r}"
                )
        else:
            numeric = (int,) if self.kind == "int" else (int, float)
            if isinstance(value, bool) or not isinstance(value, numeric):
                raise TunableError(f"{where}: expected {self.kind}, got {value!r}")
            if not self.low <= value <= self.high:
                raise TunableError(
                    f"{where}: {value!r} is outside its declared range {self.low}..{self.high}"
                )
        return value

    def describe(self) -> str:
        if self.kind in ("int", "float"):
            return f"{self.name} = {self.value!r} ({self.kind} {_num(self.low)}..{_num(self.high)})"
        if self.kind == "choice":
            return f"{self.name} = {self.value!r} (choice {'|'.join(self.choices)})"
        return f"{self.name} = {self.value!r} (bool)"


def _num(x: float | None) -> str:
    return str(int(x)) if x is not None and float(x).is_integer() else str(x)


def parse_tunables(source: str, *, tree: ast.Module | None = None) -> list[Tunable]:
    """Every tunable the program declares, in source order. Raises TunableError naming the line
    when a marker sits on something that is not a well-formed, in-range declaration. `tree`:
    the program's syntax tree when the caller parsed it already."""
    markers = _marker_comments(source)
    if not markers:
        return []
    if tree is None:
        try:
            tree = syntax.parse(source)
        except SyntaxError as exc:
            raise TunableError(f"line {exc.lineno}: cannot parse the program ({exc.msg})") from None
    assignments = {node.lineno: node for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))}
    statements_per_line = collections.Counter(node.lineno for node in tree.body)
    out: list[Tunable] = []
    seen: dict[str, int] = {}
    for line, spec in markers.items():
        node = assignments.get(line)
        if node is None:
            raise TunableError(
                f"line {line}: a '# {MARKER}' marker must sit on a module-level assignment "
                f"of one literal (NAME = literal)"
            )
        if statements_per_line[line] > 1:
            raise TunableError(f"line {line}: a tunable's line must hold its assignment alone")
        tunable = _declaration(node, spec, line)
        if tunable.name in seen:
            raise TunableError(
                f"line {line}: tunable {tunable.name} is already declared on line {seen[tunable.name]}"
            )
        seen[tunable.name] = line
        out.append(tunable)
    return out


def _marker_comments(source: str) -> dict[int, str]:
    """line -> the spec text after 'tunable:' for every marker comment (tokenize, so that a
    '# tunable:' inside a string literal is not mistaken for a declaration)."""
    found: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                body = tok.string.lstrip("#").strip()
                if body.startswith(MARKER):
                    found[tok.start[0]] = body[len(MARKER):].strip()
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        raise TunableError(f"cannot tokenize the program: {exc}") from None
    return found


def _declaration(node: ast.Assign | ast.AnnAssign, spec: str, line: int) -> Tunable:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        raise TunableError(f"line {line}: a tunable assigns exactly one plain name")
    if node.lineno != getattr(node, "end_lineno", node.lineno):
        raise TunableError(f"line {line}: a tunable's assignment must fit on one line")
    name = targets[0].id
    value = _literal(node.value, name, line)
    match = _SPEC.match(spec)
    if not match:
        raise TunableError(
            f"line {line}: cannot read the tunable spec {spec!r} of {name}; write "
            f"'int LOW..HIGH', 'float LOW..HIGH', 'choice A|B|C' or 'bool'"
        )
    if match["bool"]:
        tunable = Tunable(name, "bool", value, line)
    elif match["choices"]:
        choices = tuple(c for c in match["choices"].split("|") if c)
        if len(choices) < 2:
            raise TunableError(f"line {line}: choice tunable {name} needs at least two options")
        tunable = Tunable(name, "choice", value, line, choices=choices)
    else:
        kind = match["num"]
        try:
            low, high = (int(match[k]) if kind == "int" else float(match[k]) for k in ("low", "high"))
        except ValueError:
            raise TunableError(
                f"line {line}: the range of {kind} tunable {name} must be two {kind} numbers, "
                f"got {match['low']}..{match['high']}"
            ) from None
        if low > high:
            raise TunableError(f"line {line}: tunable {name} has an empty range {low}..{high}")
        tunable = Tunable(name, kind, value, line, low=low, high=high)
    tunable.check(value)
    return tunable


def _literal(expr: ast.expr | None, name: str, line: int) -> Any:
    # A negative number is an UnaryOp in the AST; literal_eval handles both shapes.
    if expr is None:
        raise TunableError(f"line {line}: tunable {name} has no value")
    try:
        value = ast.literal_eval(expr)
    except ValueError:
        raise TunableError(f"line {line}: tunable {name} must be assigned a literal") from None
    if not isinstance(value, (bool, int, float, str)):
        raise TunableError(
            f"line {line}: tunable {name} must be a number, string or bool literal, got {value!r}"
        )
    return value


def apply(source: str, values: Mapping[str, Any], *, tunables: Sequence[Tunable] | None = None,
          tree: ast.Module | None = None) -> str:
    """The program with the named tunables set to `values` (each checked against its
    declaration). Only the literals change. `tunables` and `tree`: the program's declared
    tunables and syntax tree when the caller holds them already."""
    declared = {t.name: t for t in (parse_tunables(source, tree=tree) if tunables is None else tunables)}
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise TunableError(
            f"unknown tunable(s) {', '.join(unknown)}; the program declares "
            f"{', '.join(declared) or 'none'}"
        )
    replacements = {}
    for name, new in values.items():
        tunable = declared[name]
        tunable.check(new)
        replacements[tunable.line] = new
    return _replace_literals(source, replacements, tree)


def skeleton(source: str, *, tunables: Sequence[Tunable] | None = None, tree: ast.Module | None = None) -> str:
    """The program with every tunable's value blanked: two programs that differ only in their
    tunables share a skeleton, which is how the mutator recognises variants of one seed."""
    declared = parse_tunables(source, tree=tree) if tunables is None else tunables
    return _replace_literals(source, {t.line: ... for t in declared}, tree)


def _replace_literals(source: str, replacements: Mapping[int, Any], tree: ast.Module | None = None) -> str:
    """Replace the right-hand literal of the module-level assignment on each given line
    (`...` writes an Ellipsis, the skeleton's placeholder)."""
    if not replacements:
        return source
    value_nodes = {
        node.lineno: node.value
        for node in (tree if tree is not None else syntax.parse(source)).body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
    }
    lines = source.splitlines(keepends=True)
    for line, text in replacements.items():
        node = value_nodes[line]
        # AST column offsets count UTF-8 bytes; slice bytes so non-ASCII lines stay right.
        raw = lines[line - 1].encode()
        old = raw[node.col_offset : node.end_col_offset].decode()
        text = _literal_text(text, old).encode()
        lines[line - 1] = (raw[: node.col_offset] + text + raw[node.end_col_offset:]).decode()
    return "".join(lines)


def _literal_text(value: Any, old: str) -> str:
    """Python text of `value`, in the quoting style of the literal it replaces."""
    if value is ...:
        return "..."
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str) and old.startswith('"') and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return repr(value)


def can_move(tunable: Tunable) -> bool:
    """Whether the declared range leaves any value other than the current one."""
    if tunable.kind == "bool":
        return True
    if tunable.kind == "choice":
        return any(c != tunable.value for c in tunable.choices)
    return tunable.high > tunable.low


def perturb_value(tunable: Tunable, rng: random.Random, step_fraction: float) -> Any:
    """A new value for `tunable`, inside its range and different from the current one when the
    range allows. Numeric steps are Gaussian with a spread of `step_fraction` of the range, so
    most moves are local and a few are bold."""
    current = tunable.value
    if tunable.kind == "bool":
        return not current
    if tunable.kind == "choice":
        others = [c for c in tunable.choices if c != current]
        return rng.choice(others) if others else current
    low, high = tunable.low, tunable.high
    span = high - low
    if span <= 0:
        return current
    if tunable.kind == "int":
        step = max(1, round(abs(rng.gauss(0.0, step_fraction * span))))
        direction = rng.choice((-1, 1))
        value = min(high, max(low, current + direction * step))
        if value == current:
            value = min(high, max(low, current - direction * step))
        return int(value)
    delta = rng.gauss(0.0, step_fraction * span)
    if abs(delta) < 0.02 * span:  # a move too small to show in an evaluation
        delta = math.copysign(0.02 * span, delta or 1.0)
    digits = max(2, 3 - math.floor(math.log10(span)))
    value = round(min(high, max(low, current + delta)), digits)
    if value == current:
        value = round(min(high, max(low, current - delta)), digits)
    return float(value)
