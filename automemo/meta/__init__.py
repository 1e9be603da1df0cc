"""The meta agent: the LLM meta agent when the `meta` role is configured, else the
offline parameter mutator. The search loop sees only `automemo.meta.base.MetaAgent`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from automemo.contract import Budget
from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.meta.context import GenerationContext, Improvement, ParentView, RepairContext
from automemo.meta.config import MetaConfig
from automemo.paths import SEEDS_DIR
from automemo.sandbox.base import Limits

__all__ = [
    "GenerationContext", "Improvement", "MetaAgent", "MetaConfig", "MetaError", "ParentView", "Proposal",
    "RepairContext", "build_meta_agent",
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
) -> MetaAgent:
    """`llm` is an `automemo.llm.LLMClient` (or None). With its `meta` role configured: the LLM
    meta agent, told `task_description`, the run's `budget` and sandbox `limits`, resolving
    evidence images under `image_roots`. Otherwise: `OfflineMetaAgent` over `seeds_dir`, which never
    transplants `root_seed` (the search's root) and fits question routers on `train_questions`
    ((question, label, conversation, task id) rows of the train split, kept on the host;
    cross-fitted by conversation). With both, and
    `config.mixed_tune_rate` > 0, the LLM agent shares the steps with the mutator (mixed mode)."""
    from automemo.meta.mutator import OfflineMetaAgent

    def mutator() -> OfflineMetaAgent:
        return OfflineMetaAgent(config, seeds_dir=seeds_dir, root=root_seed, train=_train(train_questions),
                                fit_router=fit_question_router)

    if llm is not None and llm.configured("meta"):
        from automemo.meta.llm_agent import LLMMetaAgent

        agent = LLMMetaAgent(
            llm,
            config,
            task_description=task_description,
            budget=budget,
            limits=limits,
            image_roots=image_roots,
            seeds_dir=seeds_dir,
            benchmark=benchmark,
        )
        if config.mixed_tune_rate <= 0:
            return agent
        from automemo.meta.mixed import MixedMetaAgent

        return MixedMetaAgent(agent, mutator(), config.mixed_tune_rate)
    return mutator()


def _train(rows: Sequence[tuple[str, ...]]):
    """TrainQuestions from (question, label) or (question, label, scope, task id) rows."""
    from automemo.meta.generator import TrainQuestions

    if not rows:
        return None
    full = [tuple(r) + ("", "")[: max(0, 4 - len(r))] for r in rows]
    return TrainQuestions(tuple(r[0] for r in full), tuple(str(r[1]) for r in full),
                          tuple(str(r[2]) for r in full), tuple(str(r[3]) for r in full))


def fit_question_router(questions: Sequence[str], labels: Sequence[str],
                        scopes: Sequence[str] = ()) -> dict[str, Any]:
    """The router's params: cross-fitted by conversation when the questions' conversations are
    known (a validation score must not come from a router fitted on the scored conversation),
    else fitted on all of them."""
    from automemo.toolkit import memolib

    if any(scopes):
        return memolib.QuestionRouter.cross_fit(questions, labels, scopes).params()
    return memolib.QuestionRouter.fit(questions, labels).params()
