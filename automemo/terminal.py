"""Console output that reads well both in a terminal and piped to a file.

In a terminal: rich colours, progress bars, tables at the terminal's width. Piped (stdout or
stderr not a TTY): one line per event, never hard-wrapped at 80 columns (a wrapped log line
breaks grep), no trailing padding spaces, no progress bars. Third-party progress bars (model
weights loading through huggingface/transformers/tqdm) are never shown: in a file they are
carriage-return noise, and in a terminal they break into our own bars.
"""

from __future__ import annotations

import os
import re
import sys
from typing import IO, Any

_TRAILING = re.compile(r"[ \t]+(?=\n)")


def is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _NoTrailingSpaces:
    """A text stream that drops the spaces rich pads lines with before each newline. rich writes
    whole rendered lines, so a line is never split across two writes at a newline."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(_TRAILING.sub("", text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def console(*, stderr: bool = False, **options: Any):
    """A rich Console for stdout (or stderr) that behaves as the module docstring says."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if is_terminal(stream):
        return Console(stderr=stderr, **options)
    options.setdefault("soft_wrap", True)
    return Console(file=_NoTrailingSpaces(stream), **options)


def progress_wanted(quiet: bool) -> bool:
    """Whether to draw our own progress bars: not with --quiet, not when stderr is a file."""
    return not quiet and is_terminal(sys.stderr)


def silence_third_party_progress() -> None:
    """Turn off the progress bars of huggingface_hub, transformers and tqdm (set before they are
    imported; a user's own setting of these variables wins)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
