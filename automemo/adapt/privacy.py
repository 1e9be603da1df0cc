"""What a pooled candidate may carry from one user's memory into another's program: aggregate
constants (weights, sizes, stage choices), never a user's text, ids or vocabulary.

A fitted table can hold words (a question router keyed by question words, a term list), so a
pooled candidate is read before it is installed: every word of its string constants must be a
word the program's authors wrote (the seed programs, memolib, the recipe templates, the live
program). A word found only in the users' memories is a user's vocabulary, and the candidate is
refused whole."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from automemo.paths import PROMPTS_DIR, SEEDS_DIR

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
PACKAGE = Path(__file__).resolve().parents[1]
# What the package's own authors wrote that a program may quote: the seed programs, the toolkit a
# program calls, the templates and generators that write programs.
CLEAN_SOURCES = (SEEDS_DIR, PROMPTS_DIR, PACKAGE / "toolkit", PACKAGE / "meta")


@lru_cache(maxsize=1)
def authored_words() -> frozenset[str]:
    words: set[str] = set()
    for folder in CLEAN_SOURCES:
        for path in Path(folder).rglob("*"):
            if path.suffix in (".py", ".j2") and path.is_file():
                words.update(w.lower() for w in _WORD.findall(path.read_text(errors="ignore")))
    return frozenset(words)


def string_words(source: str) -> set[str]:
    """The words of every string constant of a program (dict keys, table entries, docstrings)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {w.lower() for w in _WORD.findall(source)}
    return {w.lower() for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for w in _WORD.findall(node.value)}


def foreign_words(candidate: str, live: str) -> list[str]:
    """The words of the candidate's string constants that neither the package's authors nor the
    live program wrote: a user's vocabulary, if any."""
    allowed = authored_words() | string_words(live) | {w.lower() for w in _WORD.findall(live)}
    return sorted(string_words(candidate) - allowed)
