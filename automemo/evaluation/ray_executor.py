"""Episodes on a Ray cluster (`evaluation.executor = "ray"`).

`workers` Ray actors each receive the function to run once (pickled): for an evaluation, the
episode player with its benchmark, agent and their clients, so every worker keeps its own browser
pool and LLM connections for as long as the executor lives, across evaluations. Items are handed
to idle workers as they free up; results come back in completion order.

A worker whose process or machine dies under an item is an infrastructure failure, not the
item's: the worker is replaced and the item retried on it, up to `retries` times, after which
`lost(item, errors)` stands for its result (the harness excludes the task and reports it).

The cluster is `ray.address` when set; otherwise, unless this process already joined one, a
local cluster is started here (no dashboard, so it comes up in seconds) and shut down by
`close`. The run directory (episode store, evidence) must be on a filesystem the workers see.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Iterable, Iterator, TypeVar

from automemo.errors import HostError
from automemo.evaluation.config import RayConfig
from automemo.evaluation.executor import Executor
from automemo.llm import remote as llm_remote  # how an LLM client inside a shipped function travels

T = TypeVar("T")
R = TypeVar("R")


class RayUnavailable(HostError, RuntimeError):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


class WorkerLost(HostError, RuntimeError):
    """Every attempt of an item died with its worker, and the caller gave no `lost` stand-in."""


def _ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            "evaluation.executor = 'ray' needs Ray: pip install 'automemo[ray]' "
            "(or set evaluation.executor = 'threads')"
        ) from None
    return ray


class _Worker:
    """The actor. It unpickles each function it is given once and keeps it, so the function's
    state (browser pool, LLM clients) lives as long as the worker."""

    def __init__(self) -> None:
        self.fns: dict[int, Callable[[Any], Any]] = {}

    def call(self, key: int, holder: list, item: Any) -> tuple[Any, list]:
        fn = self.fns.get(key)
        if fn is None:  # `holder` wraps the ref so that Ray does not resolve it on every call
            fn = self.fns[key] = _ray().get(holder[0])
        result = fn(item)
        return result, llm_remote.drain()  # LLM calls made here go home to the driver's ledger

    def pid(self) -> int:
        return os.getpid()


class RayExecutor(Executor):
    remote = True

    def __init__(self, workers: int, config: RayConfig = RayConfig(), *, retries: int = 2) -> None:
        if workers < 1:
            raise ValueError(f"an executor needs at least one worker, got {workers}")
        self.workers = workers
        self.config = config
        self.retries = retries
        self._lock = threading.Lock()
        self._owns_cluster = False
        # Every function mapped so far, with its key and its object ref: kept for the
        # executor's life, so that an id is never reused and a replaced worker can fetch it.
        self._fns: list[tuple[Callable[[Any], Any], Any]] = []
        self._actors: list[Any] = []
        self._actor_class: Any = None

    # cluster and workers -----------------------------------------------------------------------

    def _connect(self):
        ray = _ray()
        if ray.is_initialized():
            return ray
        try:
            if self.config.address:
                ray.init(address=self.config.address, log_to_driver=False)
            else:
                cpus = self.config.local_cpus or max(
                    os.cpu_count() or 1, int(self.workers * self.config.cpus_per_worker + 0.999))
                # The workers import the same code as this process, wherever it comes from.
                path = os.pathsep.join(p for p in sys.path if p)
                ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                         runtime_env={"env_vars": {"PYTHONPATH": path}})
                self._owns_cluster = True
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.config.address or "a local cluster"
            raise RayUnavailable(f"could not start or join Ray ({where}): {exc}") from exc
        return ray

    def _spawn(self) -> Any:
        return self._actor_class.remote()

    def _register(self, fn: Callable[[Any], Any]) -> tuple[list[Any], int, list]:
        """The workers (started on first use) and `fn`'s key and ref (put once)."""
        ray = self._connect()
        with self._lock:
            if not self._actors:
                self._actor_class = ray.remote(num_cpus=self.config.cpus_per_worker)(_Worker)
                self._actors = [self._spawn() for _ in range(self.workers)]
            for key, (known, ref) in enumerate(self._fns):
                if known is fn:
                    return self._actors, key, [ref]
            try:
                ref = ray.put(fn)
            except Exception as exc:  # pickling: a client, lock or open file inside fn
                raise RayUnavailable(
                    f"the evaluation cannot be shipped to Ray workers ({type(exc).__name__}: "
                    f"{exc}); its benchmark and agent must be picklable"
                ) from exc
            self._fns.append((fn, ref))
            return self._actors, len(self._fns) - 1, [ref]

    def _replace(self, slot: int, dead: Any) -> None:
        with self._lock:
            if self._actors[slot] is dead:  # a concurrent map may have replaced it already
                self._kill([dead])
                self._actors[slot] = self._spawn()

    def _kill(self, actors: list[Any]) -> None:
        ray = _ray()
        for actor in actors:
            try:
                ray.kill(actor)
            except Exception:  # already gone with its node
                pass

    def worker_pids(self) -> list[int]:
        """Process ids of the current workers (for tests and diagnostics)."""
        ray = _ray()
        return ray.get([a.pid.remote() for a in self._actors])

    def close(self) -> None:
        if not self._actors and not self._owns_cluster:
            return
        ray = _ray()
        with self._lock:
            self._kill(self._actors)
            self._actors, self._fns = [], []
        if self._owns_cluster and ray.is_initialized():
            ray.shutdown()
            self._owns_cluster = False

    # map ---------------------------------------------------------------------------------------

    def map(self, fn: Callable[[T], R], items: Iterable[T], *,
            lost: Callable[[T, list[str]], R] | None = None) -> Iterator[R]:
        ray = _ray()
        from ray.exceptions import RayActorError, WorkerCrashedError

        actors, key, holder = self._register(fn)
        pending = iter(items)
        free = list(range(len(actors)))
        # One item pulled ahead while every worker is busy: pulling it is what runs the memo
        # program's retrieve here, so it overlaps the episodes instead of idling a worker.
        ahead: list[T] = []
        running: dict[Any, tuple[T, int, Any, list[str]]] = {}  # ref -> item, slot, actor, errors

        def submit(item: T, errors: list[str]) -> None:
            slot = free.pop()
            actor = self._actors[slot]
            running[actor.call.remote(key, holder, item)] = (item, slot, actor, errors)

        def fill() -> None:
            while free:
                if not ahead and not pull():
                    return
                submit(ahead.pop(), [])
            pull()

        def pull() -> bool:
            if not ahead:
                try:
                    ahead.append(next(pending))
                except StopIteration:
                    return False
            return True

        try:
            fill()
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                ref = ready[0]
                item, slot, actor, errors = running.pop(ref)
                free.append(slot)
                try:
                    result, calls = ray.get(ref)
                    llm_remote.absorb(calls)
                except (RayActorError, WorkerCrashedError) as exc:
                    self._replace(slot, actor)
                    errors = [*errors, f"worker lost: {type(exc).__name__}: {str(exc)[:300]}"]
                    if len(errors) <= self.retries:
                        submit(item, errors)
                        continue
                    if lost is None:
                        raise WorkerLost(f"an item died with its worker {len(errors)} times: "
                                         f"{errors[-1]}") from exc
                    result = lost(item, errors)
                yield result
                fill()
        finally:
            for ref in running:  # the consumer stopped early or fn raised: drop what is queued
                try:
                    ray.cancel(ref)
                except Exception:
                    pass
