"""The meta agent as one generate action sees it.

A meta agent that keeps what it was told (`observe_tree`, `observe_scores`: the offline mutator
does) holds one state for the whole search, but under `search.parallel` > 1 several actions
propose at once: one action's observation would be overwritten by another's before its own
`propose` reads it. So each action hands the agent ITS tree snapshot right before each of its
calls, and a lock shared by all actions makes observe-then-call one step. An agent that keeps
no observed state (the LLM meta agent) is neither told nor locked: its calls overlap freely.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Mapping, Sequence

from automemo.meta.base import Improvement, MetaAgent, ParentView, Proposal, ScoredProgram


def observes(meta: MetaAgent) -> bool:
    """True when `meta` overrides an observe hook, i.e. keeps state between calls."""
    kind = type(meta)
    return (kind.observe_tree is not MetaAgent.observe_tree
            or kind.observe_scores is not MetaAgent.observe_scores)


class ObservedMeta(MetaAgent):
    """`meta` told `sources` and `programs()` (computed once, on first use) before each call,
    under `lock` when it observes."""

    def __init__(self, meta: MetaAgent, lock: threading.Lock, sources: Callable[[], Sequence[str]],
                 programs: Callable[[], Sequence[ScoredProgram]]) -> None:
        self.meta = meta
        self._lock = lock
        self._sources, self._programs = sources, programs
        self._told: tuple[Sequence[str], Sequence[ScoredProgram]] | None = None

    def __getattr__(self, name: str) -> Any:
        # Anything else the agent offers (usage counters, hooks added later) is the agent's own.
        return getattr(self.meta, name)

    @contextlib.contextmanager
    def _observed(self):
        if not observes(self.meta):
            yield
            return
        if self._told is None:
            self._told = (list(self._sources()), list(self._programs()))
        with self._lock:
            self.meta.observe_tree(self._told[0])
            self.meta.observe_scores(self._told[1])
            yield

    def propose(self, parent: ParentView, improvements: Sequence[Improvement], *, node_id: int,
                seed: int) -> Proposal:
        with self._observed():
            return self.meta.propose(parent, improvements, node_id=node_id, seed=seed)

    def repair(self, source: str, exam_report: Mapping[str, Any], attempt: int, *, node_id: int,
               seed: int) -> Proposal:
        with self._observed():
            return self.meta.repair(source, exam_report, attempt, node_id=node_id, seed=seed)

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        with self._observed():
            return self.meta.initialize(task_description, node_id=node_id, seed=seed)
