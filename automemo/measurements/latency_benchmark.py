"""A benchmark whose episodes only wait: each retrieve task sleeps a fixed latency (standing in
for an agent waiting on an LLM or a browser, without using the CPU), then answers from the
memory payload. Scores are deterministic, so two executors must produce identical ones; the
figures of `automemo bench scale` are then the executor's alone.

Picklable and importable by name, so that Ray workers can hold their own copy."""

from __future__ import annotations

import time
from typing import Any

from automemo.benchmarks.base import Benchmark, Split, Task, TaskScore
from automemo.contract import EpisodeRecorder, MemoryPayload, PartialRecorder
from automemo.measurements.eval import FACTS_PROGRAM  # the fact table every harness benchmark measures with


class LatencyBenchmark(Benchmark):
    """`n_tasks` facts; update episodes state them, retrieve task i asks for fact i and waits
    `latency_s`. A task scores (i mod 3 + 1) / 3 when the payload holds its value, else 0, so
    that scores differ between tasks and a mix-up between them would show."""

    name = "bench-latency"
    family = "conversation"
    question_time_keys = frozenset({"key"})  # the fact asked about, as an application would pass it

    def __init__(self, n_tasks: int, latency_s: float, known: int | None = None) -> None:
        self.n_tasks = n_tasks
        self.latency_s = latency_s
        self.known = n_tasks if known is None else known  # facts the update episodes state

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "n_tasks": self.n_tasks, "known": self.known}

    def split(self, name: str) -> Split:
        update = tuple(Task(f"{name}-fact{i}", self.name, "fact", f"key{i} is value{i}")
                       for i in range(self.known))
        retrieve = tuple(Task(f"{name}-q{i}", self.name, "lookup", f"What is key{i}?",
                              {"key": f"key{i}", "i": i})
                         for i in range(self.n_tasks))
        return Split(name, update, retrieve)

    def partial(self, task: Task, store) -> PartialRecorder:
        return PartialRecorder(task_id=task.task_id, benchmark=self.name,
                               instruction=task.instruction, metadata={"key": task.data.get("key", "")})

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None,
                    store) -> EpisodeRecorder:
        if payload is None:  # an update task: the fact itself is the episode
            return EpisodeRecorder(task_id=task.task_id, benchmark=self.name,
                                   instruction=task.instruction, final_answer=task.instruction,
                                   reward=1.0, success=True)
        time.sleep(self.latency_s)
        answer = payload.text.split(" is ")[-1] if " is " in payload.text else "unknown"
        return EpisodeRecorder(task_id=task.task_id, benchmark=self.name,
                               instruction=task.instruction, final_answer=answer)

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        expected = task.data["key"].replace("key", "value")
        hit = float(episode.final_answer == expected)
        return TaskScore(hit * (task.data["i"] % 3 + 1) / 3, {"hit": hit})
