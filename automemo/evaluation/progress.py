"""Progress bars for the long parts of an evaluation (collecting episodes, updates, retrieve tasks).

`quiet=True` gives a tracker with the same methods that draws nothing, so that the search loop,
which owns the terminal, can run evaluations without two displays fighting over it. Nothing is
drawn either when stderr is not a terminal (a log gets no bars).
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Protocol


class Tracker(Protocol):
    def advance(self, n: int = 1) -> None: ...

    def note(self, text: str) -> None: ...


class _Silent:
    def advance(self, n: int = 1) -> None:
        pass

    def note(self, text: str) -> None:
        pass


class _RichTracker:
    def __init__(self, progress, task_id, label: str) -> None:
        self._progress = progress
        self._task = task_id
        self._label = label

    def advance(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)

    def note(self, text: str) -> None:
        self._progress.update(self._task, description=f"{self._label} [dim]{text}[/dim]")


@contextlib.contextmanager
def track(label: str, total: int, *, quiet: bool) -> Iterator[Tracker]:
    """A progress bar for `total` units of work, removed from the terminal when done."""
    from automemo.terminal import progress_wanted

    if not progress_wanted(quiet) or total <= 0:
        yield _Silent()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
    ) as progress:
        yield _RichTracker(progress, progress.add_task(label, total=total), label)
