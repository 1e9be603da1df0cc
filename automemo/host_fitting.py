"""What is fitted on the host, from the train split's labelled questions, before a program can
use it: the meta agent's question router rows (`train_questions`) and its ranking stage
(`ranker_fit`). Labels never reach a program's `retrieve`: a fit's result is written into the
program as constants (cross-fitted by conversation where the search scores it).

The composition root (`automemo.assembly`) hands both to the meta agent; fitting is a concept of
its own, so it lives apart from the wiring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


def train_questions(evaluator: Any) -> list[tuple[str, str, str, str]]:
    """The train split's retrieve questions with their labels, conversations ("" when the
    benchmark names none) and task ids, for the meta agent's router fitting on the host,
    cross-fitted by conversation (a label never reaches a program's `retrieve`)."""
    return [(t.instruction, t.category, str(t.data.get("user") or ""), t.task_id)
            for t in evaluator.split("train").scored]


def ranker_fit(setup: Any, state_dir: Path, make_services: Callable[[], Any],
               model: str = "blend") -> Callable[[Any], dict[str, Any]]:
    """The meta agent's ranking-stage fit (the run's routing -> ranker params), run on the host
    when the generator first proposes the stage: the train split's update episodes and its
    questions as `retrieve` sees them, with their gold clues, embedded by the run's own
    encoders (through the embedding cache the evaluations share). Only benchmarks that score
    cited evidence give clues; elsewhere the fit finds none and the stage stays off.

    Without late interaction: with it, the fit on the dev data's five train conversations took
    18.5 min on a loaded 2-core machine (every round's token matrix embedded), and every
    evaluation of a ranked program would move each round's token matrix into the sandbox.
    `setup`: the search's `assembly.EvaluationSetup`; `make_services`: its host services without
    an LLM (`assembly.services_factory`). `model`: the ranker's model (linear, trees, blend or
    auto; automemo.meta.offline.ranking)."""

    def fit(routing: Any) -> dict[str, Any]:
        from automemo.meta.offline.ranking import MATCH_SIGNALS, SIGNALS, RankingQuestion, fit_ranker
        from automemo.toolkit import memolib
        from automemo.toolkit.guest import Toolkit

        evaluator = setup.evaluator
        partials = evaluator.partials("train")
        questions = [RankingQuestion(p.instruction, memolib.query_text(p), memolib.scope_of(p),
                                     frozenset(map(str, t.data.get("clues") or ())), p.metadata.get("time"))
                     for t in evaluator.split("train").scored for p in [partials[t.task_id]]]
        # A label-free search fits on pseudo-questions of other kinds than it is scored on, and
        # judges the fit by its gain on the ones it is scored on (benchmarks.pseudo.label_free).
        fitting = list(getattr(setup.benchmark, "fitting_questions", ()) or ())
        judged: list[Any] = []
        if fitting:
            judged = questions
            questions = [RankingQuestion(q.question, q.question, q.scope, frozenset(q.clues), q.date or None)
                         for q in fitting]
        state_dir.mkdir(parents=True, exist_ok=True)
        services = make_services()
        toolkit = Toolkit(state_dir, setup.store.root, services.handle)
        # Every question embedded in one batch first: the fit then asks the cache one by one.
        toolkit.embed_text([q.query for q in [*questions, *judged]])
        # Fitted on pseudo-questions, the stage weighs how candidates match the question only
        # (ranking.MATCH_SIGNALS: where a pseudo-question's answers sit is its writer's doing).
        label_free = getattr(setup.benchmark, "label_free", None) is not None
        return fit_ranker(evaluator.update_episodes("train"), questions, toolkit.embed_text,
                          toolkit.embedding_dims()["text"], routing=routing, model=model,
                          signals=MATCH_SIGNALS if label_free else SIGNALS, gain_on=judged)

    return fit
