"""Where a request's heavy parsing runs: never on the event loop, and not in the server's process.

A request carrying images (base64 to decode, pixels to check) is parsed in an image worker
process, few on purpose and as background work for the kernel's scheduler (the lowest priority,
in a scheduling group of its own): a tenant flooding large images queues on them, and another
tenant's recall gets the cores first.

Why a process: the bytes are a stranger's. A decoder that crashes or runs away on a crafted
file takes down one worker (its request is answered 503 and a new worker starts), not the server
and every tenant's memory with it. It also keeps base64 decoding, JSON scanning and Pillow's
Python-level tile loop off the server's interpreter lock, which a waiting thread gets only every
5 ms. (Measured, `automemo bench serve --tenants` on a quiet 2-core machine: the process alone
did not change user A's p95 under another tenant's image flood; its own scheduling group at the
lowest priority did, from a ratio of 2.8 to 2.3; see docs/serve.md.)

A request without images is parsed in place: a hop would cost it more than its parse. What the
workers run and return crosses a pipe, so it must pickle: module-level functions and their
`functools.partial`s of plain values (the request parsers are). Workers die with the server
(Linux: a parent-death signal), so a killed server leaves no process behind."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any, Callable, TypeVar

from automemo.errors import AutomemoError
from automemo.serve.defaults import IMAGE_WORKER_NICE, IMAGE_WORKERS
from automemo.serve.requests import BadRequest

T = TypeVar("T")
_LIGHT_BYTES = 64_000  # a body below this without a data URL holds no image and parses in microseconds


class WorkerLost(AutomemoError):
    """The image worker holding the request died; a new one has started. HTTP 503: retry."""

    status = 503


class ParsingWorkers:
    def __init__(self, workers: int = IMAGE_WORKERS) -> None:
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    async def parse(self, raw: bytes, parse: Callable[[Any], T]) -> T:
        """`parse(the JSON of raw)`, in an image worker unless `raw` is light."""
        if len(raw) < _LIGHT_BYTES and b"data:image" not in raw:
            return parse(json_of(raw))
        return await self.run(partial(_parsed, raw, parse))

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` in an image worker (the workers start with the first call)."""
        pool = self._executor()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, work)
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None  # the next call starts new workers
            pool.shutdown(wait=False, cancel_futures=True)
            raise WorkerLost("the worker decoding this request's images stopped; send the request again") from None

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: the server has threads (and their locks) a fork would copy
                self._pool = ProcessPoolExecutor(self._workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start_worker, initargs=(os.getpid(),))
            return self._pool


def _start_worker(server_pid: int) -> None:
    """A worker: dies with the server, runs as background work."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: the pool's own shutdown at exit ends the workers
    if os.getppid() != server_pid:  # the server died before the signal was asked for
        os._exit(0)
    _background_priority(IMAGE_WORKER_NICE)


def _background_priority(nice: int) -> None:
    """Make this process background work for the kernel's scheduler, in both of the ways Linux
    groups tasks. Where tasks are grouped by session (autogroup, a desktop kernel's default for
    processes outside a cgroup of their own), the niceness of one process counts only against its
    own session: a niced worker in the server's session still spent the server's share of the
    CPU, so the server's threads that run another tenant's recall waited on it. In a session of
    its own at the group's lowest weight, the worker gets what the other groups leave. Where tasks
    are not grouped (a container's or a service's cgroup), the process's own niceness does it."""
    try:
        os.setsid()
        with open("/proc/self/autogroup", "w") as fh:  # absent without autogroup: niceness alone
            fh.write(str(nice))
    except OSError:
        pass  # not Linux, or a kernel without autogroup
    try:
        os.nice(nice - os.nice(0))
    except OSError:
        pass


def _parsed(raw: bytes, parse: Callable[[Any], T]) -> T:
    return parse(json_of(raw))


def json_of(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"the body is not valid JSON ({exc.__class__.__name__} at position "
                         f"{getattr(exc, 'pos', getattr(exc, 'start', 0))})") from None
