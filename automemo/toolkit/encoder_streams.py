"""A batch of texts split over concurrent one-thread forward passes ("streams"), each on its own
copy of the model, instead of one pass on torch's threads.

torch's intra-op threads meet at a barrier after every operation and spin while they wait. On
this 2-core machine, shared with other engineers' runs, a thread that loses its core stalls the
other: MiniLM's fast path did 29.7 texts per CPU second on torch's two threads and 49.1 on one
(load 2.3-2.5, the same 384 synthetic turns; docs/benchmarks.md, "longmemeval: cost"). Streams
never wait on each other, so each core that is free does useful work and a busy one costs only
its own share. The split is contiguous and the parts are joined in order: row i is text i's.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator

import numpy as np

_THREADS_LOCK = threading.Lock()


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch's intra-op threads set to 1 for the block (process-wide; restored after)."""
    import torch

    with _THREADS_LOCK:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        yield
    finally:
        with _THREADS_LOCK:
            torch.set_num_threads(before)


def split(n: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous ranges covering 0..n as evenly as may be (none empty)."""
    parts = max(1, min(parts, n))
    bounds = [round(i * n / parts) for i in range(parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def in_streams(texts: list[str], streams: int, encode_part: Callable[[int, list[str]], np.ndarray]) -> np.ndarray:
    """`encode_part(copy, texts)` over `streams` contiguous parts of `texts` at once, each on one
    torch thread with model copy `copy`; the rows in the order of `texts`."""
    ranges = split(len(texts), streams)
    with one_torch_thread(), ThreadPoolExecutor(len(ranges), thread_name_prefix="encoder-stream") as pool:
        parts = list(pool.map(lambda i: encode_part(i, texts[ranges[i][0]:ranges[i][1]]), range(len(ranges))))
    return np.concatenate(parts, axis=0)
