"""Where the episodes of an evaluation run: the `Executor` seam.

The harness only asks an executor to `map` a function over items and hands back results as they
finish, so that a distributed engine (one worker per machine, a job queue) can replace the
thread pool when one machine is not enough, without touching the harness. Which executor a
configuration names is decided in `executor_factory` (it knows every implementation; this
module knows none).
"""

from __future__ import annotations

import abc
import concurrent.futures
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(abc.ABC):
    workers: int = 1
    # True when `fn` and the items run in other processes: they must then be picklable, and
    # the caller keeps what must stay with it (the memo session) out of `fn`.
    remote: bool = False

    @abc.abstractmethod
    def map(self, fn: Callable[[T], R], items: Iterable[T], *,
            lost: Callable[[T, list[str]], R] | None = None) -> Iterator[R]:
        """Call `fn` on every item and yield the results in the order they finish. `items` is
        consumed lazily, as workers free up.

        An exception raised by `fn` is re-raised from the iterator and the items not yet
        started are cancelled: callers that want to survive per-item failures catch them
        inside `fn` (the harness does, turning them into task results). A worker that dies
        under an item (a remote executor's machine or process) is not `fn`'s failure: the item
        is retried on another worker, then `lost(item, errors)` is yielded in its place."""

    def close(self) -> None:
        """Release the workers (a no-op for threads, which live only within `map`)."""


class ThreadExecutor(Executor):
    """Runs items on a pool of `workers` threads. Episodes spend their time waiting on an LLM
    server, a browser or a sandbox process, so threads overlap them despite the GIL."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"an executor needs at least one worker, got {workers}")
        self.workers = workers

    def map(self, fn: Callable[[T], R], items: Iterable[T], *,
            lost: Callable[[T, list[str]], R] | None = None) -> Iterator[R]:
        # `lost` is unused: a thread cannot die apart from this process.
        pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.workers, thread_name_prefix="automemo-eval"
        )
        futures = [pool.submit(fn, item) for item in items]
        try:
            for future in concurrent.futures.as_completed(futures):
                yield future.result()
        finally:
            # Reached on normal exhaustion, on an exception from `fn`, and when the consumer
            # stops early (generator closed): never leave queued work running behind its back.
            for future in futures:
                future.cancel()
            pool.shutdown(wait=True)

