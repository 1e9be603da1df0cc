"""Taking a program out of a meta-LLM reply (the program is taken from a fenced code
block; anything else is a failed attempt).

Models wrap code in prose, repeat a snippet before the full file, or label the fence `py`: of all
```python / ```py blocks the longest wins (a snippet is shorter than the file it belongs to), the
last one on a tie (later text is the model's final answer). The result must compile and define
`class Memo`, because a reply that fails either would only waste a quick exam.
"""

from __future__ import annotations

import ast
import re

from automemo.meta.source import syntax
from automemo.meta.base import MetaError

_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_PYTHON_LABELS = {"python", "python3", "py"}
_SUMMARY = re.compile(r"^\s*(?:\*\*)?(?:summary|change summary)(?:\*\*)?\s*:\s*(?P<text>.+)$", re.I | re.M)


class CodeBlockError(MetaError):
    """The reply holds no usable program; the message says what was wrong (it is also what the
    retry prompt tells the model)."""


def python_blocks(text: str) -> list[str]:
    """The bodies of every fenced block labelled python/py, in order."""
    return [m["body"] for m in _FENCE.finditer(text) if m["lang"].lower() in _PYTHON_LABELS]


def program_blocks(text: str) -> list[str]:
    """The blocks that may hold the program: the python/py blocks; without any, the unlabelled
    blocks that define `class Memo` (small models often leave the fence unlabelled)."""
    return python_blocks(text) or [m["body"] for m in _FENCE.finditer(text)
                                    if not m["lang"] and "class Memo" in m["body"]]


def extract_program(text: str) -> str:
    """The program of a reply: the longest program block (last on a tie; see `program_blocks`),
    syntax-checked and required to define `class Memo`. Raises CodeBlockError."""
    blocks = program_blocks(text)
    if not blocks:
        raise CodeBlockError(
            "the reply contains no fenced ```python code block; the complete program must be "
            "inside exactly one ```python ... ``` block"
        )
    longest = max(len(b) for b in blocks)
    source = [b for b in blocks if len(b) == longest][-1]
    check_program(source)
    return source if source.endswith("\n") else source + "\n"


def check_program(source: str) -> None:
    """Raise CodeBlockError unless `source` parses and defines a top-level `class Memo`."""
    try:
        tree = syntax.parse(source)
    except SyntaxError as exc:
        line = (exc.text or "").rstrip()
        raise CodeBlockError(
            f"the program does not parse: {exc.msg} at line {exc.lineno}" + (f": {line}" if line else "")
        ) from None
    if not any(isinstance(n, ast.ClassDef) and n.name == "Memo" for n in tree.body):
        raise CodeBlockError(
            "the program defines no top-level `class Memo(MemoProgram)`; the sandbox loads "
            "exactly that class"
        )


def extract_summary(text: str, fallback: str) -> str:
    """The one-line change summary the reply gives outside its code blocks ("SUMMARY: ...")."""
    outside = _FENCE.sub("", text)
    match = _SUMMARY.search(outside)
    summary = match["text"].strip().strip("*").strip() if match else fallback
    summary = " ".join(summary.split())
    return summary[:200] if summary else fallback
