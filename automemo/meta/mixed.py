"""Mixed mode: the LLM meta agent and the offline mutator share the generate steps.

An LLM rewrite is expensive and a tunable's best value is cheap to find by perturbation; so a
parent that declares live tunables (a seed, a recipe, or an LLM-written child that kept or added
`# tunable:` markers) gets, with chance `rate` drawn from (seed, node id), a child from the offline
mutator's perturbation instead of the LLM's. Everything else (other parents, repairs, the first
program) is the LLM's.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

from automemo.meta.base import Improvement, MetaAgent, ParentView, Proposal, ScoredProgram
from automemo.meta.liveness import live_tunables
from automemo.meta.mutator import ParameterMutator, declared_tunables
from automemo.meta.tunables import can_move


class MixedMetaAgent(MetaAgent):
    def __init__(self, llm_agent: MetaAgent, mutator: ParameterMutator, rate: float) -> None:
        self.llm_agent = llm_agent
        self.mutator = mutator
        self.rate = rate

    def propose(self, parent: ParentView, improvements: Sequence[Improvement], *, node_id: int,
                seed: int) -> Proposal:
        if self._tunes(parent.source, node_id=node_id, seed=seed):
            return self.mutator.tune(parent, node_id=node_id, seed=seed)
        return self.llm_agent.propose(parent, improvements, node_id=node_id, seed=seed)

    def _tunes(self, source: str, *, node_id: int, seed: int) -> bool:
        if random.Random(f"mixed:{seed}:{node_id}").random() >= self.rate:
            return False
        return any(can_move(t) for t in live_tunables(source, declared_tunables(source)))

    def repair(self, source: str, exam_report: Mapping[str, Any], attempt: int, *, node_id: int,
               seed: int) -> Proposal:
        # A perturbation that failed its exam goes back to the mutator, which reverts it.
        if self.mutator.proposed(source):
            return self.mutator.repair(source, exam_report, attempt, node_id=node_id, seed=seed)
        return self.llm_agent.repair(source, exam_report, attempt, node_id=node_id, seed=seed)

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        return self.llm_agent.initialize(task_description, node_id=node_id, seed=seed)

    def observe_tree(self, sources: Sequence[str]) -> None:
        self.mutator.observe_tree(sources)
        self.llm_agent.observe_tree(sources)

    def observe_scores(self, programs: Sequence[ScoredProgram]) -> None:
        self.mutator.observe_scores(programs)
        self.llm_agent.observe_scores(programs)
