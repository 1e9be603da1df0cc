"""Parsing memo-program source in the meta layer, one parse at a time.

A parallel search (`search.parallel` > 1) proposes, repairs and inspects children in several
threads at once. CPython 3.11 keeps the recursion depth of its AST-to-object conversion in
interpreter-wide state, so two `ast.parse` calls that interleave can fail with
"SystemError: AST constructor recursion depth mismatch" (seen once in a K = 4 search on the
simulated landscape, which it ended). A parse takes milliseconds; a lock costs nothing that
matters and makes the failure impossible.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

from automemo.content_memo import by_content, digest

_PARSING = threading.Lock()


def parse(source: str, filename: str = "<program>") -> ast.Module:
    """`ast.parse(source)`, serialised across threads; raises SyntaxError like it."""
    with _PARSING:
        return ast.parse(source, filename)


def literal_constants(tree: ast.Module) -> dict[str, Any]:
    """The module's top-level `NAME = <literal>` assignments, by name (a value that is no literal
    is left out): a recipe's constants, a program's tunables."""
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return out


def normalised(source: str, *, tree: ast.Module | None = None) -> str:
    """A program's identity for duplicate detection: the SHA-256 of its AST without docstrings,
    comments or formatting (two programs with equal identities behave the same); of the source
    itself when it does not parse. Computed once per text (`automemo.content_memo`). `tree`: its
    syntax tree, parsed already; it is changed (pass a copy)."""
    return _identity(source, tree=tree)


@by_content(ignore=("tree",))
def _identity(source: str, *, tree: ast.Module | None = None) -> str:
    if tree is None:
        try:
            tree = parse(source)
        except (SyntaxError, ValueError):
            return "source:" + digest(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return "ast:" + digest(ast.dump(tree, annotate_fields=False, include_attributes=False))
