"""Fitting the question router on the host, at search time: from the train split's questions and
their labels (never shown to `retrieve`), cross-fitted by conversation when the conversations
are known. What recipes route by and crossovers route with."""

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
    """The router's params: cross-fitted by conversation when the questions' conversations are
    known (a validation score must not come from a router fitted on the scored conversation),
    else fitted on all of them."""
    from automemo.toolkit import memolib

    if any(scopes):
        return memolib.QuestionRouter.cross_fit(questions, labels, scopes).params()
    return memolib.QuestionRouter.fit(questions, labels).params()
