"""The meta agent: the LLM meta agent when the `meta` role is configured, else the
offline parameter mutator. The search loop sees only `automemo.meta.base.MetaAgent`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from automemo.contract import Budget
from automemo.meta.base import Improvement, MetaAgent, MetaError, ParentView, Proposal
from automemo.meta.config import MetaConfig
from automemo.paths import SEEDS_DIR
from automemo.sandbox.base import Limits

__all__ = [
    "Improvement", "MetaAgent", "MetaConfig", "MetaError", "ParentView", "Proposal", "build_meta_agent",
]


def build_meta_agent(
    llm: Any | None,
    config: MetaConfig = MetaConfig(),
    *,
    seeds_dir: str | Path = SEEDS_DIR,
    task_description: str = "",
    budget: Budget = Budget(),
    limits: Limits = Limits(),
    image_roots: Sequence[Path] = (),
    root_seed: str = "no_memory",
) -> MetaAgent:
    """`llm` is an `automemo.llm.LLMClient` (or None). With its `meta` role configured: the LLM
    meta agent, told `task_description`, the run's `budget` and sandbox `limits`, resolving
    evidence images under `image_roots`. Otherwise: `ParameterMutator` over `seeds_dir`, which never
    transplants `root_seed` (the search's root)."""
    if llm is not None and llm.configured("meta"):
        from automemo.meta.llm_agent import LLMMetaAgent

        return LLMMetaAgent(
            llm,
            config,
            task_description=task_description,
            budget=budget,
            limits=limits,
            image_roots=image_roots,
        )
    from automemo.meta.mutator import ParameterMutator

    return ParameterMutator(config, seeds_dir=seeds_dir, root=root_seed, budget=budget)
