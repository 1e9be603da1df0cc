"""Mixed mode: the LLM meta agent and the offline mutator share the generate steps.

An LLM rewrite is expensive and a tunable's best value is cheap to find by perturbation; so a
parent that declares live tunables (a seed, a recipe, or an LLM-written child that kept or added
`# tunable:` markers) gets, with chance `rate` drawn from (seed, node id), a child from the offline
mutator's perturbation instead of the LLM's. Everything else (other parents, repairs, the first
program) is the LLM's.
"""

from __future__ import annotations

import random

from automemo.meta.base import MetaAgent, Proposal
from automemo.meta.context import GenerationContext, RepairContext
from automemo.meta.offline.agent import OfflineMetaAgent
from automemo.meta.source.tunables import can_move


class MixedMetaAgent(MetaAgent):
    def __init__(self, llm_agent: MetaAgent, mutator: OfflineMetaAgent, rate: float) -> None:
        self.llm_agent = llm_agent
        self.mutator = mutator
        self.rate = rate

    def propose(self, context: GenerationContext) -> Proposal:
        if self._tunes(context):
            return self.mutator.tune(context)
        return self.llm_agent.propose(context)

    def _tunes(self, context: GenerationContext) -> bool:
        if random.Random(f"mixed:{context.seed}:{context.node_id}").random() >= self.rate:
            return False
        return any(can_move(t) for t in context.parsed.live_tunables)

    def repair(self, context: RepairContext) -> Proposal:
        # A perturbation that failed its exam goes back to the mutator, which reverts it.
        if context.author == "offline":
            return self.mutator.repair(context)
        return self.llm_agent.repair(context)

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        return self.llm_agent.initialize(task_description, node_id=node_id, seed=seed)
