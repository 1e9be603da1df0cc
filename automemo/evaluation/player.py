"""The expensive half of a retrieve task: the agent plays the episode with the payload the memo
program retrieved, and the benchmark scores it.

Split from the harness so that it can run where the executor puts it: on a thread of this
process, or on a Ray worker (which receives the `EpisodePlayer` once, pickled, and so keeps its
own copy of the benchmark, agent, browser pool and LLM clients). Everything here is picklable:
a job and its outcome cross process boundaries.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Any

from automemo.benchmarks.base import Benchmark, InfrastructureError, Task, TaskScore
from automemo.contract import EpisodeRecorder, MemoryPayload
from automemo.failures import FailureKind, InfrastructureFailure
from automemo.llm import CALLS_STOPPED, ContextLengthError, LLMError

# Statuses of an LLM call that failed on the way (the client retried them already): the
# transport's fault, retried again by the harness, then the task is excluded.
_TRANSPORT_STATUSES = {"timeout", "connection", "http 408", "http 409", "http 429"}
# A request the agent's server refused for what it carried (the payload's text or images).
_REQUEST_STATUSES = {"http 400", "http 413", "http 415", "http 422"}


def episode_failure(exc: Exception) -> tuple[FailureKind, bool]:
    """Whose fault an exception out of `run_episode` is, and whether another attempt may help.
    The agent's LLM refusing what the program handed it (a context overflow, a 400 on the
    payload's image) is the program's, like any other break on its payload; a transport failure
    is not; an LLM that is misconfigured (401/403/404, no key) is not the program's either."""
    if isinstance(exc, (InfrastructureError, InfrastructureFailure)):
        return FailureKind.INFRASTRUCTURE, True
    if isinstance(exc, LLMError):
        if exc.status in _TRANSPORT_STATUSES or exc.status.startswith("http 5"):
            return FailureKind.INFRASTRUCTURE, True
        if exc.role == "judge":
            return FailureKind.SCORER, False
        if exc.role == "agent" and (isinstance(exc, ContextLengthError) or exc.status in _REQUEST_STATUSES):
            return FailureKind.AGENT, False
        return FailureKind.INFRASTRUCTURE, False
    return FailureKind.AGENT, False


@dataclass(frozen=True)
class EpisodeJob:
    task: Task
    payload: MemoryPayload
    retrieve_s: float
    started: float  # the driver's perf_counter when the task began (retrieve included)


@dataclass(frozen=True)
class EpisodeOutcome:
    """What became of a job. `score` is None when it did not complete: every attempt met an
    infrastructure failure (`infra_errors`, the task is excluded), or `failed` says whose fault
    it was (`FailureKind`, detail, traceback): the agent's on this payload (scores 0 like a
    program failure), the scorer's or the infrastructure's (excluded)."""

    job: EpisodeJob
    episode: EpisodeRecorder | None = None
    score: TaskScore | None = None
    infra_errors: tuple[str, ...] = ()
    failed: tuple[FailureKind, str, str] | None = None


@dataclass
class EpisodePlayer:
    benchmark: Benchmark
    agent: Any
    store: Any
    infra_retries: int

    def __call__(self, job: EpisodeJob) -> EpisodeOutcome:
        infra_errors: list[str] = []
        for _ in range(self.infra_retries + 1):
            try:
                episode = self.benchmark.run_episode(job.task, self.agent, job.payload, self.store)
            except CALLS_STOPPED:
                raise  # a spent LLM budget or a dead endpoint ends the evaluation; the search stops cleanly on it
            except Exception as exc:
                kind, retry = episode_failure(exc)
                detail = f"{type(exc).__name__}: {exc}"
                if retry:
                    infra_errors.append(detail)
                    continue
                return EpisodeOutcome(job, infra_errors=tuple(infra_errors),
                                      failed=(kind, detail, traceback.format_exc()))
            try:
                score = self.benchmark.ranked_score(job.task, episode, job.payload)
            except CALLS_STOPPED:
                raise
            except Exception as exc:  # the scorer broke: the task fails, the evaluation goes on
                return EpisodeOutcome(job, episode, infra_errors=tuple(infra_errors),
                                      failed=(FailureKind.SCORER, f"{type(exc).__name__}: {exc}",
                                              traceback.format_exc()))
            return EpisodeOutcome(job, episode, score, tuple(infra_errors))
        return EpisodeOutcome(job, infra_errors=tuple(infra_errors))


def lost_outcome(job: EpisodeJob, errors: list[str]) -> EpisodeOutcome:
    """The outcome of a job whose worker died on every attempt: an infrastructure failure."""
    return EpisodeOutcome(job, infra_errors=tuple(errors))


def elapsed(job: EpisodeJob) -> float:
    return time.perf_counter() - job.started
