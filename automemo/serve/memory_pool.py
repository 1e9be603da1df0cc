"""The namespaces a server holds: one `UserMemory` per user, opened on demand, at most
`max_open` open at once (the least recently used idle one is snapshotted and closed to make
room; it reopens from its snapshot when it is needed again), and at most `max_known` closed ones
remembered in its tables (the least recently used idle ones are pruned: a user met once must not
keep a table entry for the life of the server).

Calls into one namespace run one at a time, in arrival order (an asyncio lock is first come,
first served), on a shared thread pool: a recall never runs during an update of the same memory,
while two users' calls run side by side."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from automemo.serve.defaults import MAX_KNOWN_NAMESPACES
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.user_memory import Program, UserMemory

T = TypeVar("T")


class UserMemoryPool:
    def __init__(self, state: StateFolder, program: Program, *, max_open: int,
                 notice: Callable[[str], None], max_known: int = MAX_KNOWN_NAMESPACES) -> None:
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1, got {max_open}")
        self.state = state
        self.program = program
        self.max_open = max_open
        self.max_known = max(max_known, max_open)
        self._notice = notice
        self._memories: OrderedDict[str, UserMemory] = OrderedDict()  # least recently used first
        self._locks: dict[str, asyncio.Lock] = {}
        self._threads = ThreadPoolExecutor(max_workers=max(2, min(max_open, 8)),
                                           thread_name_prefix="automemo-memory")

    def memory(self, user: str) -> UserMemory:
        found = self._memories.get(user)
        if found is None:
            found = self._memories[user] = UserMemory(user, self.state, self.program, self._notice)
        self._memories.move_to_end(user)
        return found

    async def call(self, user: str, work: Callable[[UserMemory], T]) -> tuple[T, float]:
        """Run `work(memory)` on the user's namespace in its turn; returns its result and how
        long the call waited for its turn (ms)."""
        memory = self.memory(user)
        lock = self._lock(user)
        submitted = time.perf_counter()
        async with lock:
            waited_ms = (time.perf_counter() - submitted) * 1000
            result = await asyncio.get_running_loop().run_in_executor(self._threads, work, memory)
        await self._make_room(keep=user)
        return result, waited_ms

    async def drop(self, user: str) -> bool:
        """Forget the whole namespace: closed without a snapshot, its folder deleted."""
        memory = self.memory(user)
        async with self._lock(user):
            def erase() -> bool:
                memory.close(snapshot=False)
                return self.state.drop(user)
            return await asyncio.get_running_loop().run_in_executor(self._threads, erase)

    async def _make_room(self, keep: str) -> None:
        self._prune(keep)
        while True:
            open_users = [u for u, m in self._memories.items() if m.is_open]
            if len(open_users) <= self.max_open:
                return
            idle = [u for u in open_users if u != keep and not self._lock(u).locked()]
            if not idle:
                return  # every open memory is busy: close one when its call is done
            await self._evict(idle[0])

    async def _evict(self, user: str) -> None:
        # The UserMemory object stays (it is a few paths once closed): a call already waiting for
        # this lock holds it, and there must never be two objects, two programs, for one user.
        memory = self._memories[user]
        async with self._lock(user):
            await asyncio.get_running_loop().run_in_executor(self._threads, memory.close)

    def _prune(self, keep: str) -> None:
        """Forget the table entries of the least recently used closed, idle namespaces beyond
        `max_known` (a closed namespace is a few paths; reopening rebuilds its entry)."""
        for user in list(self._memories):
            if len(self._memories) <= self.max_known:
                return
            lock = self._locks.get(user)
            if user != keep and not self._memories[user].is_open and (lock is None or not lock.locked()):
                del self._memories[user]
                self._locks.pop(user, None)

    def _lock(self, user: str) -> asyncio.Lock:
        return self._locks.setdefault(user, asyncio.Lock())

    def open_count(self) -> int:
        return sum(1 for m in self._memories.values() if m.is_open)

    def open_now(self, user: str) -> UserMemory:
        """Open a namespace before serving starts (no event loop yet)."""
        memory = self.memory(user)
        memory.open()
        return memory

    def close(self) -> None:
        """Snapshot and close every open namespace (on shutdown)."""
        for memory in list(self._memories.values()):
            try:
                memory.close()
            except Exception as exc:  # noqa: BLE001 - one namespace's failure must not keep others open
                self._notice(f"closing the memory of one user failed ({exc}); its log is kept")
        self._threads.shutdown(wait=True)

    def stats(self) -> dict[str, Any]:
        return {"open": self.open_count(), "max_open": self.max_open, "known": len(self._memories),
                "locks": len(self._locks),
                "versions": {m.folder.name: m.version for m in self._memories.values() if m.is_open}}
