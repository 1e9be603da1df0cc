"""A candidate's memory inside the sandbox, rebuilt when its guest dies.

One evaluation holds one `MemoSession`: a sandbox session fed every update episode in order,
then asked `retrieve` for each task. A memo program that raises, returns garbage, crashes or
times out costs the call it was in, not the evaluation: when the guest is gone, the next call
first opens a fresh guest and replays the updates that had succeeded, so later tasks see the
same memory. Rebuilds are capped (`max_restarts`), since each replays every update.

Calls are serialised by this object's lock (the sandbox session serialises them anyway); the
check "is the guest alive?" and the call that follows happen under it, so a task waiting behind
a call that killed the guest is served by the rebuilt guest instead of being blamed.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from automemo.contract import ContractError, EpisodeRecorder, MemoryPayload, PartialRecorder
from automemo.errors import AutomemoError
from automemo.evaluation.cost import CostTally
from automemo.evaluation.progress import Tracker
from automemo.toolkit.memolib.units import episode_units
from automemo.toolkit.services import raise_host_failure
from automemo.sandbox.base import (
    HostServices,
    Limits,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    Session,
)


class MemoCallFailed(AutomemoError, RuntimeError):
    """The memo program failed one call. `kind` is the sandbox's label ("exception", "timeout",
    "crash", "bad-result", "import") or "gave-up" once the restart cap is spent."""

    def __init__(self, kind: str, detail: str, traceback: str = "") -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.traceback = traceback

    @classmethod
    def from_sandbox(cls, exc: SandboxError) -> MemoCallFailed:
        return cls(exc.kind, exc.detail, exc.traceback)


@dataclass(frozen=True)
class UpdateFailure:
    task_id: str
    kind: str
    detail: str
    traceback: str = ""
    replay: bool = False   # it failed while replaying into a rebuilt guest

    def to_dict(self) -> dict:
        return dict(
            task_id=self.task_id,
            kind=self.kind,
            detail=self.detail,
            traceback=self.traceback,
            replay=self.replay,
        )


def remembered_turns(episode: EpisodeRecorder) -> int:
    """The turns an episode gives a memory, as memolib's programs index them: each dialogue round
    or web step, or one for an episode without steps."""
    return len(episode_units(episode))


class MemoSession:
    def __init__(
        self,
        sandbox: Sandbox,
        source: str,
        *,
        limits: Limits,
        services: HostServices | None,
        store_root: Path | None,
        max_restarts: int,
    ) -> None:
        self._sandbox = sandbox
        self._source = source
        self._limits = limits
        self._services = services
        self._store_root = store_root
        self._update_timeout = limits.timeout("update")
        self._retrieve_timeout = limits.timeout("retrieve")
        self._max_restarts = max_restarts
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._applied: list[EpisodeRecorder] = []
        self._seen: set[str] = set()
        self.restarts = 0
        self.update_s = 0.0      # time in first-pass `update` calls (what the program costs)
        self.replay_s = 0.0      # time spent rebuilding dead guests
        self.update_failures: list[UpdateFailure] = []
        self.cost = CostTally()  # first-pass calls' CPU, host encoding cold (evaluation/cost.py)

    # lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Open the first guest. Raises `MemoCallFailed` (kind "import" etc.) if the program
        does not load: nothing can be scored then."""
        with self._lock:
            self._session = self._open()

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    def __enter__(self) -> MemoSession:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def applied(self) -> int:
        """How many update episodes the live memory holds."""
        return len(self._applied)

    # calls -------------------------------------------------------------------------------

    def load(self, episodes: Sequence[EpisodeRecorder], tracker: Tracker) -> None:
        """`update` on every episode in order. Failures are recorded and skipped. A spent
        restart cap stops the loading; `retrieve` then reports it for every task. A host
        failure during an update (`HostServiceFailed`, `BudgetExceeded`) stops the evaluation:
        the memory it left is not the program's, and an update is not safe to repeat."""
        with self._lock:
            try:
                self._feed(list(episodes), tracker)
            except MemoCallFailed:
                return
            self._finish_updates()

    def retrieve(self, task: PartialRecorder) -> tuple[MemoryPayload, float]:
        """The program's payload for `task` (not yet truncated) and the seconds the call took.
        Raises `MemoCallFailed` when the program fails this call, `HostServiceFailed` when a
        host toolkit service failed during it (whatever the program made of that),
        `BudgetExceeded` when the run's cap was reached during it, and `SandboxUnavailable`
        when the engine is gone."""
        with self._lock:
            if self._session is None or not self._session.alive:
                self._revive()
            host_before = self._host_ms()
            started = time.perf_counter()
            try:
                result = self._session.call(
                    "retrieve", {"task": task.to_dict()}, self._retrieve_timeout
                )
            except SandboxUnavailable:
                raise
            except SandboxError as exc:
                raise_host_failure(self._services, f"retrieve of {task.task_id}")
                raise MemoCallFailed.from_sandbox(exc) from None
            raise_host_failure(self._services, f"retrieve of {task.task_id}")
            elapsed = time.perf_counter() - started
            self.cost.recall(self._session.last_cpu_ms, self._host_ms() - host_before, elapsed * 1000.0)
        try:
            return MemoryPayload.from_dict(result, "retrieve() result"), elapsed
        except ContractError as exc:
            raise MemoCallFailed("bad-result", str(exc)) from None

    # internals (called with the lock held) -----------------------------------------------

    def _host_ms(self) -> float:
        """The host encoding charged to this evaluation so far, cold (0 for services that do
        not meter it, such as a test's stub)."""
        return float(getattr(self._services, "cold_encode_ms", 0.0) or 0.0)

    def _finish_updates(self) -> None:
        """After the last update: work the program deferred (memolib's batched embedding) is done
        now and charged to remembering, then the state it holds is measured. Neither is a call
        the program can fail: a refusal (a guest from before these calls, a state pickle cannot
        carry) leaves the deferred work to the first retrieve, or the size unmeasured."""
        if self._session is None or not self._session.alive:
            return
        host_before = self._host_ms()
        try:
            self._session.call("flush", {}, self._update_timeout)
            self.cost.ingest(self._session.last_cpu_ms, self._host_ms() - host_before)
        except SandboxUnavailable:
            raise
        except SandboxError:
            pass
        raise_host_failure(self._services, "the updates' deferred embedding")
        if self._session is None or not self._session.alive:
            return
        try:
            size = self._session.call("state_size", {}, self._limits.timeout("save_state"))
            self.cost.index_bytes = int(size["bytes"])
        except SandboxUnavailable:
            raise
        except (SandboxError, KeyError, TypeError, ValueError):
            self.cost.index_bytes = None

    def _open(self) -> Session:
        try:
            return self._sandbox.open(
                self._source, self._limits, services=self._services, store_root=self._store_root
            )
        except SandboxUnavailable:
            raise  # the engine is gone: no program is to blame, and none can be scored
        except SandboxError as exc:
            raise MemoCallFailed.from_sandbox(exc) from None

    def _restart(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        if self.restarts >= self._max_restarts:
            raise MemoCallFailed(
                "gave-up",
                f"the program's sandbox died {self.restarts + 1} times; after "
                f"{self._max_restarts} rebuilds the remaining calls are charged to the program",
            )
        self.restarts += 1
        self._session = self._open()

    def _revive(self) -> None:
        """Open a fresh guest and replay what the dead one had learned. A replay the host
        cannot finish (a host service failed) leaves no half-fed guest behind: the next call
        starts the replay again, from everything learned."""
        self._restart()
        replay, self._applied = self._applied, []
        try:
            self._feed(replay, None)
        except BaseException:
            self._applied = replay
            if self._session is not None:
                self._session.close()
                self._session = None
            raise

    def _feed(self, episodes: list[EpisodeRecorder], tracker: Tracker | None) -> None:
        queue = collections.deque(episodes)
        while queue:
            if self._session is None or not self._session.alive:
                # The guest died on the previous update: rebuild it with everything learned
                # so far, then carry on with the episodes still queued.
                queue.extendleft(reversed(self._applied))
                self._applied = []
                self._restart()
            episode = queue.popleft()
            first = episode.task_id not in self._seen
            self._seen.add(episode.task_id)
            host_before = self._host_ms()
            started = time.perf_counter()
            try:
                self._session.call("update", {"episode": episode.to_dict()}, self._update_timeout)
                raise_host_failure(self._services, f"update with {episode.task_id}")
                self._applied.append(episode)
                if first:
                    self.cost.turns += remembered_turns(episode)
            except SandboxUnavailable:
                raise
            except SandboxError as exc:
                raise_host_failure(self._services, f"update with {episode.task_id}")
                self.update_failures.append(
                    UpdateFailure(episode.task_id, exc.kind, exc.detail, exc.traceback, not first)
                )
            elapsed = time.perf_counter() - started
            if first:
                # a failed update's CPU was spent too; only an applied one's turns are remembered
                self.cost.ingest(self._session.last_cpu_ms if self._session is not None else None,
                                 self._host_ms() - host_before)
                self.update_s += elapsed
                if tracker is not None:
                    tracker.advance()
            else:
                self.replay_s += elapsed
