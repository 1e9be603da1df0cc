"""Which update episodes an evaluation feeds the program, and in how many sandbox sessions.

Usually one session: every update episode, then every task. A benchmark whose tasks each have a
memory of their own (`Benchmark.memory_scope`: LongMemEval, a question and its haystack) gets
only the episodes of the tasks asked, in sessions of `memories_per_session` tasks each. On
LongMemEval a first sample of 47 of 250 questions then updates 47 haystacks, not 250 (the
programs' update work and the embedding of their turns, most of a sample's cost, shrink with the
sample), and no guest holds more than 50 haystacks: one holding an S test split's 250 ran out of
2 GB for a recipe that indexes each turn twice (docs/benchmarks.md, "longmemeval: cost")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from automemo.benchmarks.base import Benchmark, Task
from automemo.contract import USER_KEY, EpisodeRecorder


@dataclass(frozen=True)
class MemoryGroup:
    """One sandbox session's work: `update` on `episodes` in order, then `retrieve` for `tasks`."""

    episodes: tuple[EpisodeRecorder, ...]
    tasks: tuple[Task, ...]


def memory_groups(benchmark: Benchmark, episodes: Sequence[EpisodeRecorder], tasks: Sequence[Task],
                  memories_per_session: int) -> list[MemoryGroup]:
    """The sessions of one evaluation of `tasks`, in task order (module docstring)."""
    if any(benchmark.memory_scope(t) is None for t in tasks):
        return [MemoryGroup(tuple(episodes), tuple(tasks))]
    groups = []
    for start in range(0, len(tasks), memories_per_session):
        group = tuple(tasks[start:start + memories_per_session])
        scopes = {benchmark.memory_scope(t) for t in group}
        groups.append(MemoryGroup(tuple(e for e in episodes if e.metadata.get(USER_KEY) in scopes), group))
    return groups
