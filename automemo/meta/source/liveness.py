"""Which tunables can change what a program does: a constant that no code reachable from the
memo class reads is inert, and perturbing it spends an evaluation on a child that behaves
exactly like its parent (a leftover of an LLM rewrite, or a knob of a path that was removed).

Reachability is read from the AST, conservatively: every method of the memo class is an entry
(the harness may call any of them), a reachable function makes reachable every module-level
function or class it names and every method whose name it uses as an attribute, and a
module-level constant is live when reachable code (or another live constant's value) reads it.
Code the analysis cannot follow (`globals()`, `eval`, `exec`, `getattr` on the module, or no
memo class at all) makes every tunable live.
"""

from __future__ import annotations

import ast
from typing import Sequence

from automemo.meta.source import syntax
from automemo.meta.source.tunables import Tunable

MEMO_CLASS = "Memo"
_OPAQUE = frozenset({"globals", "vars", "eval", "exec", "__import__", "getattr"})


def live_tunables(source: str, tunables: Sequence[Tunable], *, tree: ast.Module | None = None) -> list[Tunable]:
    """The tunables that code reachable from the memo class reads, in their order (`tree`: the
    program's syntax tree when the caller parsed it already)."""
    live = live_names(source, tree=tree)
    return list(tunables) if live is None else [t for t in tunables if t.name in live]


def live_names(source: str, *, tree: ast.Module | None = None) -> set[str] | None:
    """Module-level names read by reachable code, or None when reachability cannot be told."""
    if tree is None:
        try:
            tree = syntax.parse(source)
        except SyntaxError:
            return None
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    if MEMO_CLASS not in classes:
        return None
    constants: dict[str, list[ast.AST]] = {}
    pending: list[ast.AST] = []
    for node in tree.body:
        targets = _assigned_names(node)
        if targets:
            for name in targets:
                constants.setdefault(name, []).append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                   ast.Import, ast.ImportFrom)):
            pending.append(node)  # other module-level code runs on import: what it reads is live
    methods = {m.name: m for c in classes.values() for m in c.body
               if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    pending.append(classes[MEMO_CLASS])
    seen: set[int] = set()
    read: set[str] = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                if sub.id in _OPAQUE:
                    return None
                read.add(sub.id)
                pending += [x for x in (functions.get(sub.id), classes.get(sub.id)) if x is not None]
                pending += constants.get(sub.id, [])
            elif isinstance(sub, ast.Attribute) and sub.attr in methods:
                pending.append(methods[sub.attr])
    return read


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return []
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    return names if len(names) == len(targets) else []
