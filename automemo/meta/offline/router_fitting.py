"""Fitting the question router on the host, at search time: from the train split's questions and
their labels (never shown to `retrieve`), cross-fitted by conversation; where the questions' conversations
are unknown nothing is routed. What recipes route by and crossovers route with."""

from __future__ import annotations

from typing import Any, Sequence

from automemo.meta.offline.generator import TrainQuestions


def train_questions_of(rows: Sequence[tuple[str, ...]]) -> TrainQuestions | None:
    """TrainQuestions from (question, label) or (question, label, scope, task id) rows."""
    if not rows:
        return None
    full = [tuple(r) + ("", "")[: max(0, 4 - len(r))] for r in rows]
    return TrainQuestions(tuple(r[0] for r in full), tuple(str(r[1]) for r in full),
                          tuple(str(r[2]) for r in full), tuple(str(r[3]) for r in full))


def fit_question_router(questions: Sequence[str], labels: Sequence[str],
                        scopes: Sequence[str] = ()) -> dict[str, Any]:
    """The router's params, cross-fitted by conversation (a validation score must not come from
    a router fitted on the scored conversation). Raises ValueError, which turns routing off for
    the run, when a question's conversation is unknown: there is nothing to hold it out by, and a
    router fitted on it would route it by its own label."""
    from automemo.toolkit import memolib

    if len(scopes) != len(questions) or not all(scopes):
        raise ValueError("a question router needs each train question's conversation to be cross-fitted by; "
                         "this benchmark's tasks name none, so no question is routed")
    return memolib.QuestionRouter.cross_fit(questions, labels, scopes).params()
