"""A program's fits in their deployable form: what `automemo export` ships.

A program the search scores carries its fitted parts twice (memolib.crossfit): fitted on every
train question, and cross-fitted by conversation so that a train question is scored by a fit
made without its own conversation (the router's `held_out` predictions keyed by train
conversation and question hash, the ranker's per-fold models and the `fold_of` table naming the
train conversations, a crossover's per-fold route tables). The cross-fitted tables exist for
validation only. Deployed, they are a liability: a served user whose name equals a train
conversation's id (`conv-26`) is looked up in them, and the router raises `UnheldQuestion` on
every question that user asks; they also ship the train conversations' ids and question hashes.

`deployable_source` removes every cross-fitted table from a program's source and keeps the fits
on all train questions, which is what every question outside the train conversations was
answered by during the search. It edits the module's literal constants in place (the rest of
the text stays byte for byte), so a rendered recipe stays exactly the template's rendering of
its constants (`parse_recipe` still reads it), and it descends into the parent sources a
crossover carries as string constants.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from automemo.meta.source import syntax
from automemo.meta.source.recipe import dict_literal

ROUTER_CROSS_FIT = frozenset({"held_out"})
"""Keys of `memolib.QuestionRouter.params()` that only cross-fitting needs (the held-out
predictions: train conversation -> question hash -> type)."""

RANKER_CROSS_FIT = frozenset({"folds", "fold_of", "held_out_gain"})
"""Keys of a fitted ranker's params (`memolib.ranker_from_params`: a linear or tree ranker, and
a blend's "linear" and "trees" inside it) that only cross-fitting needs: the per-fold models, the
train conversation -> fold table, and the fit's held-out check. Removed at every depth: no
other key of the ranker's params is spelt like these (weights are named by signal, trees' nodes
by `feature`, `threshold`, ...)."""

CROSSOVER_CROSS_FIT = {"FOLD_ROUTES": "()", "FOLD_OF": "{}"}
"""A crossover's per-fold route tables (prompts/program_crossover.j2) and their empty values:
without them every question takes its type's weight from ROUTES, decided on every train
question."""


def deployable_source(source: str) -> str:
    """`source` without its cross-fitted tables, its fits on all train questions kept; a program
    that carries none (or does not parse) comes back unchanged, character for character."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a null byte
        return source
    edits: list[tuple[ast.AST, str]] = []
    for node in tree.body:
        name, value = _assigned(node)
        if value is None:
            continue
        if name == "ROUTER":
            edits += _without(_params_of(value), ROUTER_CROSS_FIT, source, deep=False)
        elif name == "RANKER":
            edits += _without(_params_of(value), RANKER_CROSS_FIT, source, deep=True)
        elif name in CROSSOVER_CROSS_FIT and _literal(value):
            edits.append((value, CROSSOVER_CROSS_FIT[name]))
        elif isinstance(value, ast.Constant) and isinstance(value.value, str):
            # a crossover runs its parents from their sources, held as string constants
            inner = deployable_source(value.value)
            if inner != value.value:
                edits.append((value, repr(inner)))
    return _replaced(source, edits)


def _assigned(node: ast.stmt) -> tuple[str, ast.expr | None]:
    """The module-level constant a statement assigns, and its value node."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return "", None


def _params_of(value: ast.expr) -> ast.expr | None:
    """The params literal of a fitted part: the constant itself (a recipe's ROUTER, RANKER), or
    the one argument of the call that builds the part from it (a crossover's
    `memolib.QuestionRouter.from_params({...})`)."""
    if isinstance(value, ast.Dict):
        return value
    if isinstance(value, ast.Call) and len(value.args) == 1 and isinstance(value.args[0], ast.Dict):
        return value.args[0]
    return None


def _literal(value: ast.expr) -> Any:
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _without(node: ast.expr | None, keys: frozenset[str], source: str, *, deep: bool) -> list[tuple[ast.AST, str]]:
    """The edit that drops `keys` from the params literal `node` (at every depth with `deep`),
    written as the original was: one entry per line as a recipe renders it, or on one line as
    `repr` writes it; no edit when none of `keys` is there."""
    params = _literal(node) if node is not None else None
    if not isinstance(params, dict):
        return []
    kept = _dropped(params, keys, deep)
    if kept == params:
        return []
    text = ast.get_source_segment(source, node)
    return [(node, repr(kept) if text == repr(params) else dict_literal(kept))]


def _dropped(value: Any, keys: frozenset[str], deep: bool) -> Any:
    if isinstance(value, Mapping):
        return {k: (_dropped(v, keys, deep) if deep else v) for k, v in value.items() if k not in keys}
    if deep and isinstance(value, list):
        return [_dropped(v, keys, deep) for v in value]
    return value


def _replaced(source: str, edits: list[tuple[ast.AST, str]]) -> str:
    """`source` with each node's text replaced; node positions count UTF-8 bytes within a line."""
    if not edits:
        return source
    data = source.encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = data
    for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        out = out[:begin] + text.encode("utf-8") + out[end:]
    return out.decode("utf-8")
