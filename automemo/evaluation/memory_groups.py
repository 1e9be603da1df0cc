"""Which update episodes an evaluation feeds the program, and in how many sandbox sessions.

Usually one session: every update episode, then every task. A benchmark whose tasks each have a
memory of their own (`Benchmark.memory_scope`: LongMemEval, a question and its haystack) gets
only the episodes of the tasks asked, in sessions of `memories_per_session` tasks and at most
`update_steps_per_session` update steps each (the steps bound what a guest holds whatever a
haystack's size: 50 of LongMemEval M's haystacks are ~240,000 turns, ten times S's). On
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
                  memories_per_session: int, update_steps_per_session: int = 0) -> list[MemoryGroup]:
    """The sessions of one evaluation of `tasks`, in task order (module docstring); a task whose
    memory alone passes `update_steps_per_session` (0: no bound) gets a session of its own."""
    if any(benchmark.memory_scope(t) is None for t in tasks):
        return [MemoryGroup(tuple(episodes), tuple(tasks))]
    steps: dict[str, int] = {}  # scope -> update steps of its memory
    for e in episodes:
        scope = e.metadata.get(USER_KEY)
        steps[scope] = steps.get(scope, 0) + max(1, len(e.steps))  # an episode without steps is one unit
    cuts: list[list[Task]] = []
    held, scopes = 0, set()
    for task in tasks:
        scope = benchmark.memory_scope(task)
        more = 0 if scope in scopes else steps.get(scope, 0)
        if cuts and (len(cuts[-1]) >= memories_per_session
                     or (update_steps_per_session and held + more > update_steps_per_session)):
            cuts.append([])
            held, scopes = 0, set()
            more = steps.get(scope, 0)
        if not cuts:
            cuts.append([])
        cuts[-1].append(task)
        scopes.add(scope)
        held += more
    groups = []
    for cut in cuts:
        scopes = {benchmark.memory_scope(t) for t in cut}
        groups.append(MemoryGroup(tuple(e for e in episodes if e.metadata.get(USER_KEY) in scopes), tuple(cut)))
    return groups
