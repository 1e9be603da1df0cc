"""One user's memory held by one of several processes that share a state folder (a replica of
`automemo serve --engine ray`): the same `UserMemory` the single-process server opens, taken under
the namespace's lease (`serve.cluster.lease`) and writing only through fenced files (`serve.cluster.lease_checked_writes`).

Opening a `LeasedUserMemory` takes the lease or fails with `NotOwner` (another process has the
memory open: the call belongs there). Calls run one at a time in arrival order, as in
`memory_pool.UserMemoryPool`. A call that finds the lease gone (`LeaseLost`: its token was
superseded) drops the open program without a snapshot, since the program may hold an episode
the log refused, and answers `NotOwner`; the next call takes the lease again or goes to the owner.
`close` (the replica's least-recently-used eviction, or its shutdown) snapshots under the lease
and lets it go."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Executor
from pathlib import Path
from typing import Awaitable, Callable, TypeVar

from automemo.errors import AutomemoError
from automemo.serve.cluster.lease import LeaseHeld, LeaseLost, NamespaceLease
from automemo.serve.cluster.lease_checked_writes import LeaseCheckedStateFolder
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.user_memory import Program, UserMemory

T = TypeVar("T")


class NotOwner(AutomemoError, RuntimeError):
    """Another process holds this namespace: the call is to be retried where it is open."""


class Evicted(AutomemoError, RuntimeError):
    """Internal: the namespace object was closed by its replica; load it again."""


class LeasedUserMemory:
    def __init__(self, user: str, root: Path, program: Program, holder: str, *,
                 notice: Callable[[str], None], wait_seconds: float) -> None:
        self.user = user
        self.lease = NamespaceLease(root, StateFolder(root).key(user), holder)
        self._wait_seconds = wait_seconds
        self._take_lease()
        # every write of the memory (log, images, cache entries, snapshots) goes through the
        # fenced folder's writers
        self.memory = UserMemory(user, LeaseCheckedStateFolder(root, self.lease), program, notice)
        self.log = self.memory.log
        self._turn = asyncio.Lock()        # arrival order between calls
        self._busy = threading.Lock()      # a call's work against `close` from another thread
        self._closed = False

    async def call(self, work: Callable[[UserMemory], T], threads: Executor) -> tuple[T, float]:
        """Run `work(memory)` in its turn on `threads`; returns its result and its wait (ms)."""
        submitted = time.perf_counter()
        async with self._turn:
            waited_ms = (time.perf_counter() - submitted) * 1000
            result = await asyncio.get_running_loop().run_in_executor(threads, self._run, work)
        return result, waited_ms

    def _run(self, work: Callable[[UserMemory], T]) -> T:
        with self._busy:
            if self._closed:
                raise Evicted(self.user)
            if not self.lease.held:
                self._take_lease()
            try:
                self.lease.check()
                return work(self.memory)
            except LeaseLost as exc:
                self._let_go()
                raise NotOwner(f"this replica lost the lease of the namespace ({exc})") from None

    def _take_lease(self) -> None:
        try:
            self.lease.acquire(self._wait_seconds)
        except LeaseHeld as exc:
            raise NotOwner(str(exc)) from None

    def _let_go(self) -> None:
        try:
            self.memory.close(snapshot=False)
        finally:
            self.lease.release()

    def close(self) -> None:
        """Snapshot (under the lease) and close; later calls on this object raise `Evicted`."""
        with self._busy:
            if self._closed:
                return
            self._closed = True
            try:
                if self.lease.held:
                    self.memory.close()
            except LeaseLost:
                self.memory.close(snapshot=False)
            finally:
                self.lease.release()

    def __del__(self) -> None:
        # Ray Serve's multiplexing calls a model's __del__ when it evicts it (the least recently
        # used namespace of a full replica); close is idempotent, so the collector's later call is
        # harmless, and an object whose lease was never taken has nothing to close.
        if "_busy" in self.__dict__:
            self.close()

    @property
    def is_open(self) -> bool:
        return not self._closed and self.memory.is_open


class LeasedUserMemoryPool:
    """What `MemoryService`'s calls need of a pool (`call`, `drop`), over leased namespaces that
    `load(user)` opens or finds (the replica's multiplexed cache)."""

    ATTEMPTS = 3  # a namespace evicted between its load and its call is loaded again

    def __init__(self, load: Callable[[str], Awaitable[LeasedUserMemory]], threads: Executor) -> None:
        self._load = load
        self._threads = threads

    async def call(self, user: str, work: Callable[[UserMemory], T]) -> tuple[T, float]:
        for _ in range(self.ATTEMPTS):
            namespace = await self._load(user)
            try:
                return await namespace.call(work, self._threads)
            except Evicted:
                continue
        raise NotOwner("the namespace was closed by this replica while the call waited for it")

    async def drop(self, user: str) -> bool:
        """Forget the whole namespace: closed without a snapshot, its folder deleted (fenced)."""
        def erase(memory: UserMemory) -> bool:
            memory.close(snapshot=False)
            return memory.state.drop(memory.user)
        return (await self.call(user, erase))[0]
