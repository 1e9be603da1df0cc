"""The meta agent: the LLM meta agent when the `meta` role is configured, else the
offline meta agent. The search loop sees only `automemo.meta.base.MetaAgent` and hands it a
context per call (`automemo.meta.context`).

The package, by what each part is: `source/` reads memo-program source (used by both agents),
`llm/` is the LLM meta agent, `offline/` the offline one, and at the top the interface, the
context, the config, the evidence both read and the mixed agent that combines them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from automemo.contract import Budget
from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.meta.context import GenerationContext, Improvement, ParentView, RepairContext
from automemo.meta.config import MetaConfig
from automemo.paths import SEEDS_DIR
from automemo.sandbox.base import Limits

__all__ = [
    "GenerationContext", "Improvement", "MetaAgent", "MetaConfig", "MetaError", "ParentView", "Proposal",
    "RepairContext", "build_meta_agent", "fit_question_router",
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
    train_questions: Sequence[tuple[str, ...]] = (),
    benchmark: Any = None,
    question_time_keys: Collection[str] = (),
    fit_ranker: Callable[[Any], Any] | None = None,
) -> MetaAgent:
    """`llm` is an `automemo.llm.LLMClient` (or None). With its `meta` role configured: the LLM
    meta agent, told `task_description`, the run's `budget` and sandbox `limits`, resolving
    evidence images under `image_roots`. Otherwise: `OfflineMetaAgent` over `seeds_dir`, which never
    transplants `root_seed` (the search's root) and fits question routers on `train_questions`
    ((question, label, conversation, task id) rows of the train split, kept on the host;
    cross-fitted by conversation) and, with `fit_ranker` (router params -> ranker params, fitted
    on the train split's evidence on the host), offers the fitted ranking stage. With both, and
    `config.mixed_tune_rate` > 0, the LLM agent shares the steps with the mutator (mixed mode)."""
    from automemo.meta.offline.agent import OfflineMetaAgent
    from automemo.meta.offline.router_fitting import fit_question_router, train_questions_of

    def mutator() -> OfflineMetaAgent:
        return OfflineMetaAgent(config, seeds_dir=seeds_dir, root=root_seed, train=train_questions_of(train_questions),
                                fit_router=fit_question_router, fit_ranker=fit_ranker)

    if llm is not None and llm.configured("meta"):
        from automemo.meta.llm.agent import LLMMetaAgent

        agent = LLMMetaAgent(
            llm,
            config,
            task_description=task_description,
            budget=budget,
            limits=limits,
            image_roots=image_roots,
            seeds_dir=seeds_dir,
            benchmark=benchmark,
            question_time_keys=question_time_keys,
        )
        if config.mixed_tune_rate <= 0:
            return agent
        from automemo.meta.mixed import MixedMetaAgent

        return MixedMetaAgent(agent, mutator(), config.mixed_tune_rate)
    return mutator()


def fit_question_router(questions: Sequence[str], labels: Sequence[str],
                        scopes: Sequence[str] = ()) -> dict[str, Any]:
    """The question router's params (automemo.meta.offline.router_fitting)."""
    from automemo.meta.offline import router_fitting

    return router_fitting.fit_question_router(questions, labels, scopes)
