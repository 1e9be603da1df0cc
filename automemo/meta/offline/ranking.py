"""Fitting the ranking stage on the host, at search time (memolib.ranker holds the model and why).

The train split's update episodes are stored as a recipe stores them (turn units, the same
`RankingSignals` a program builds), each train question's candidate pool gets its signals, and
a candidate is relevant when it cites one of the question's gold clues. Pairs (relevant,
irrelevant) of one question become feature differences; a logistic regression without
intercept on them (scikit-learn) is the pairwise linear ranker (RankSVM's pairs with a logistic
loss). Each question weighs the same in the fit, whatever its number of pairs, as Recall@k
averages questions.

Cross-fitted by conversation: the conversations are dealt into folds as the router's are
(`CROSS_FIT_FOLDS`), and each fold's weights are fitted without its conversations' questions. No
conversation known, or fewer than two: no fit (ValueError), as no validation score could then
be honest. The labels (clues) stay here; the program gets weights.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from automemo.toolkit import memolib
from automemo.toolkit.memolib.ranker import CUES, SIGNALS, column, contexts_of, design
from automemo.toolkit.memolib.router import CROSS_FIT_FOLDS

RANKER_C = 0.5
"""Inverse L2 strength of the pairwise logistic fit: a few hundred questions against a few hundred
weights (every signal once per context) need the weights held near 0 where evidence is thin."""

EVIDENCE_K = 10
"""The cut at which the held-out check compares the fitted order with the fused one (the payload's
default size)."""

NEGATIVES = 40
"""Irrelevant candidates paired with each relevant one, the best-placed in the pool first: the
ones that compete for the top k."""


@dataclass(frozen=True)
class RankingQuestion:
    """A train question as `retrieve` sees it (text, query text, conversation, time asked) and
    its gold clues, which only the fit reads."""

    question: str
    query: str
    scope: str
    clues: frozenset[str]
    now: str | None = None


@dataclass(frozen=True)
class Example:
    scope: str
    features: np.ndarray     # candidates x columns
    relevant: np.ndarray     # bool per candidate


def ranking_examples(episodes: Sequence[Any], questions: Sequence[RankingQuestion], embed_text: Callable,
                     dim: int | None, *, embed_tokens: Callable | None = None,
                     router: Mapping[str, Any] | None = None) -> tuple[list[Example], list[str]]:
    """Each question with a relevant and an irrelevant candidate as an `Example`, and the
    columns (weight names) their features fill. `router`: the run's QuestionRouter params; a
    train question gets its cross-fitted type, as the program will route it."""
    store = memolib.UnitStore()
    signals = memolib.RankingSignals(embed_text, dim, embed_tokens)
    for episode in episodes:
        turns = memolib.episode_units(episode)
        rows = store.add_episode(turns)
        signals.add(episode, turns, len(turns), rows)
    routed = memolib.QuestionRouter.from_params(router) if router else None
    labels = list(routed.labels) if routed is not None else []
    columns = [column(c, s) for c in ["", *CUES, *(f"type:{t}" for t in labels)] for s in SIGNALS]
    out: list[Example] = []
    for q in questions:
        if not q.clues:
            continue
        pool = signals.candidates(q.question, q.query, store.allowed_rows(q.scope, without="image"), store,
                                  scope=q.scope, now=q.now)
        relevant = np.array([any(e in q.clues for e in store.units[r].evidence) for r in pool.rows], dtype=bool)
        if not relevant.any() or relevant.all():
            continue
        qtype = routed.predict(q.question, q.scope) if routed is not None else ""
        out.append(Example(q.scope, design(pool.values, contexts_of(q.question, qtype), columns), relevant))
    return out, columns


def fit_weights(examples: Sequence[Example], columns: Sequence[str], *, c: float = RANKER_C) -> dict[str, float]:
    """Pairwise logistic regression on the examples' (relevant - irrelevant) differences, both
    signs, each question weighing 1 in all; the nonzero weights by name, rounded."""
    from sklearn.linear_model import LogisticRegression

    diffs, weights = [], []
    for ex in examples:
        pos = np.flatnonzero(ex.relevant)
        neg = np.flatnonzero(~ex.relevant)[:NEGATIVES]   # pool order: the first stage's best first
        pairs = (ex.features[pos][:, None, :] - ex.features[neg][None, :, :]).reshape(-1, len(columns))
        diffs.append(pairs)
        weights.append(np.full(len(pairs), 1.0 / len(pairs)))
    if not diffs:
        raise ValueError("the ranking stage: no train question has both a relevant and an irrelevant "
                         "candidate to learn from")
    x = np.concatenate(diffs)
    w = np.concatenate(weights)
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=2000)
    model.fit(np.concatenate([x, -x]), np.concatenate([np.ones(len(x)), np.zeros(len(x))]),
              sample_weight=np.concatenate([w, w]) * len(examples))
    return {name: round(float(v), 4) for name, v in zip(columns, model.coef_[0]) if abs(v) >= 1e-4}


def cross_fit(examples: Sequence[Example], columns: Sequence[str], *, folds: int = CROSS_FIT_FOLDS,
              late: bool = False) -> dict[str, Any]:
    """`memolib.LinearRanker` params: weights fitted on every example and, per fold of
    conversations, weights fitted without them. Raises ValueError when fewer than two
    conversations hold examples, or any example has none."""
    if any(not ex.scope for ex in examples):
        raise ValueError("the ranking stage is cross-fitted by conversation, and some examples name none")
    names = sorted({ex.scope for ex in examples})
    if len(names) < 2:
        raise ValueError("the ranking stage needs questions of two or more conversations to cross-fit")
    k = max(2, min(folds, len(names)))
    fold_of = {name: i % k for i, name in enumerate(names)}
    held = [fit_weights([ex for ex in examples if fold_of[ex.scope] != fold], columns) for fold in range(k)]
    ranker = memolib.LinearRanker(fit_weights(examples, columns), tuple(held), fold_of, late=late)
    return dataclasses.replace(ranker, held_out_gain=held_out_gain(examples, columns, held, fold_of)).params()


def held_out_gain(examples: Sequence[Example], columns: Sequence[str], held: Sequence[Mapping[str, float]],
                  fold_of: Mapping[str, int], k: int = EVIDENCE_K) -> float:
    """Mean over the examples of recall@k in the pool ordered by the weights fitted without the
    example's conversation, minus recall@k in the pool ordered by reciprocal-rank fusion of the
    first-stage searches: what the fitted stage is worth on questions it did not see (the
    evidence the generator reads before it composes a ranked recipe)."""
    first = [columns.index(f"{r}_rank") for r in ("bm25", "bm25_window", "dense", "dense_window")]
    gains = []
    for ex in examples:
        weights = held[fold_of[ex.scope]]
        fitted = ex.features @ np.array([weights.get(c, 0.0) for c in columns])
        fused = ex.features[:, first].sum(axis=1)
        gains.append(_recall(fitted, ex.relevant, k) - _recall(fused, ex.relevant, k))
    return round(float(np.mean(gains)), 4) if gains else 0.0


def _recall(scores: np.ndarray, relevant: np.ndarray, k: int) -> float:
    top = np.argsort(-scores, kind="stable")[:k]
    return float(relevant[top].sum() / relevant.sum())


def fit_ranker(episodes: Sequence[Any], questions: Sequence[RankingQuestion], embed_text: Callable,
               dim: int | None, *, embed_tokens: Callable | None = None,
               router: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ranking stage's params for a program, from the train split (host side)."""
    if any(not q.scope for q in questions):  # refused before the costly replay of the train split
        raise ValueError("the ranking stage is cross-fitted by conversation, and some train questions "
                         "name none: no fit (a validation question could be scored by weights fitted on it)")
    examples, columns = ranking_examples(episodes, questions, embed_text, dim, embed_tokens=embed_tokens,
                                         router=router)
    return cross_fit(examples, columns, late=embed_tokens is not None)
