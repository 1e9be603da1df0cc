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
import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from automemo.toolkit import memolib
from automemo.toolkit.memolib.ranker import (CUES, SIGNALS, _forest_scores, _reciprocal_ranks, column,
                                              contexts_of, design, tree_features, tree_matrix)
from automemo.toolkit.memolib.crossfit import CROSS_FIT_FOLDS

log = logging.getLogger(__name__)

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


RANKER_MODEL = "blend"
"""The ranking stage's model: "linear" (pairwise logistic), "trees" (LambdaMART), "blend" (both,
their orders fused by reciprocal rank; the linear one alone when LightGBM is not installed) or
"auto": all three from the same examples and folds, the one with the largest cross-fitted
held-out gain kept (the simplest on a tie). "blend" by default: on the dev data (docs/memolib.md)
the held-out gain ranked the trees above the linear ranker (0.039 against 0.010) while on the
test conversations they scored less (Recall@10 0.780 against 0.789); the blend scored more than
either on both splits (validation 0.836, test 0.797)."""

TREES = 100
"""Boosting rounds of the LambdaMART fit."""

TREE_LEAVES = 8
"""Leaves per tree: interactions of up to a few signals, a tree small enough to read."""

TREE_MIN_LEAF = 50
"""Candidates a leaf must hold: a few hundred questions' pools, a leaf backed by many."""

TREE_RATE = 0.05
"""Shrinkage of each tree's leaf values."""

TREE_SIGNALS = tuple(s for s in SIGNALS if s not in ("position", "recency"))
"""The signals the trees split on: every ranking's, and image or not. Not a unit's place in its
session or its recency: trees cut those into narrow ranges, and on the dev data those ranges
learnt where the train conversations' generator put the evidence (test recall@10 in the pool
0.852 with them against the linear ranker's 0.861; 0.863 without; docs/memolib.md). The linear
ranker, which can only weigh them up or down, keeps them."""

TREE_MONOTONE = 1
"""1: a candidate's score never falls as a ranking ranks it higher or scores it higher (LightGBM's
monotone constraints on every `*_rank` and `*_score` feature), so the trees learn how much each
ranking's word counts, and in which context, not quirks of the train conversations; 0: free."""


MATCH_SIGNALS = tuple(s for s in SIGNALS if s.endswith(("_rank", "_score")))
"""The signals of how well a candidate matches the question (every ranking's rank and score),
without the unit's own properties (image, place, recency, picture, length). What a label-free
search fits on (`benchmark.questions` "self" / "llm"): pseudo-questions emulate a question's match
with the turns that answer it, but where their answers sit and what those turns are like is
where their writer put them (a held-out turn's neighbours, never a turn that shared a picture),
not where a user's questions find theirs."""

FIRST_STAGES = (("bm25", "dense", "bm25_window", "dense_window"), ("bm25", "dense"), ("bm25_window", "dense_window"),
                ("bm25",), ("dense",), ("bm25", "bm25_window"), ("dense", "dense_window"))
"""The first stages a recipe can fuse (`memolib.ranker.RANKINGS`' searches): each unit's
searches over both views (the multi-view recipe), BM25 and dense over one view, one index."""

EXTRA_STAGES = ("temporal", "entities", "session")
"""Rankings a recipe can add to its fusion (TEMPORAL, ENTITIES, SESSIONS), each drawn with
`EXTRA_SHARE`."""

EXTRA_SHARE = 0.25

COMPOSED = True
"""What a train question's `fused` signal is in the fit. True: the reciprocal-rank fusion of a
composition drawn for the question (one of `FIRST_STAGES`, each of `EXTRA_STAGES` with
`EXTRA_SHARE`; seeded by the question's text, so the fit is deterministic), so the model learns
what a recipe's own order is worth beside the signals it fuses, as the recipes the generator
composes will give it; False: always the four first-stage searches fused (the multi-view
recipe's order), where the signal is a fixed function of four others and its weights say only
what that function adds (on the dev data, negative on time questions, so a recipe whose date
stage raised dated rounds in its order saw the ranker push them down)."""


def composition(key: str) -> tuple[str, ...]:
    """The rankings a train question's `fused` signal fuses (`COMPOSED`), drawn from `key`."""
    import random

    rng = random.Random(key)
    first = FIRST_STAGES[rng.randrange(len(FIRST_STAGES))]
    return (*first, *(name for name in EXTRA_STAGES if rng.random() < EXTRA_SHARE))


def composed_order(names: Sequence[str]) -> Callable[[Mapping[str, list]], list]:
    """The reciprocal-rank fusion (k=60) of the named rankings, as a recipe fuses its stages."""
    return lambda rankings: memolib.rrf([rankings.get(name) or [] for name in names], k=60)


@dataclass(frozen=True)
class Example:
    scope: str
    features: np.ndarray     # candidates x columns
    relevant: np.ndarray     # bool per candidate
    tree: np.ndarray | None = None   # candidates x tree features (memolib.ranker.tree_features)


def ranking_examples(episodes: Sequence[Any], questions: Sequence[RankingQuestion], embed_text: Callable,
                     dim: int | None, *, embed_tokens: Callable | None = None,
                     router: Mapping[str, Any] | None = None,
                     fitted_signals: Sequence[str] = SIGNALS) -> tuple[list[Example], list[str]]:
    """Each question with a relevant and an irrelevant candidate as an `Example`, and the
    columns (weight names) their features fill, of `signals` only. `router`: the run's
    QuestionRouter params; a train question gets its cross-fitted type, as the program will
    route it."""
    store = memolib.UnitStore()
    signals = memolib.RankingSignals(embed_text, dim, embed_tokens)
    for episode in episodes:
        turns = memolib.episode_units(episode)
        rows = store.add_episode(turns)
        signals.add(episode, turns, len(turns), rows)
    routed = memolib.QuestionRouter.from_params(router) if router else None
    labels = list(routed.labels) if routed is not None else []
    columns = [column(c, s) for c in ["", *CUES, *(f"type:{t}" for t in labels)] for s in fitted_signals]
    tree_signals = [s for s in TREE_SIGNALS if s in fitted_signals]
    out: list[Example] = []
    for q in questions:
        if not q.clues:
            continue
        prior = composed_order(composition(f"{q.scope}|{q.question}")) if COMPOSED else None
        pool = signals.candidates(q.question, q.query, store.allowed_rows(q.scope, without="image"), store,
                                  scope=q.scope, now=q.now, prior=prior)
        relevant = np.array([any(e in q.clues for e in store.units[r].evidence) for r in pool.rows], dtype=bool)
        if not relevant.any() or relevant.all():
            continue
        qtype = routed.predict(q.question, q.scope) if routed is not None else ""
        contexts = contexts_of(q.question, qtype)
        out.append(Example(q.scope, design(pool.values, contexts, columns), relevant,
                           tree_matrix(pool.values, contexts, tree_features(contexts_in(columns), tree_signals))))
    return out, columns


def contexts_in(columns: Sequence[str]) -> list[str]:
    """The contexts (weight blocks) `columns` hold, the shared one ("") first."""
    return list(dict.fromkeys(["", *(c.split("|", 1)[0] for c in columns if "|" in c)]))


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


def fit_trees(examples: Sequence[Example], features: Sequence[str], *, seed: int = 0) -> list[dict[str, list]]:
    """LambdaMART (LightGBM's `lambdarank` objective, NDCG@10's gradients) on the examples'
    tree features, one query per question: the trees as `memolib.TreeRanker` reads them."""
    import lightgbm

    x = np.concatenate([ex.tree for ex in examples])
    y = np.concatenate([ex.relevant.astype(int) for ex in examples])
    model = lightgbm.LGBMRanker(objective="lambdarank", n_estimators=TREES, learning_rate=TREE_RATE,
                                num_leaves=TREE_LEAVES, min_child_samples=TREE_MIN_LEAF, reg_lambda=1.0,
                                lambdarank_truncation_level=2 * EVIDENCE_K, random_state=seed,
                                deterministic=True, force_row_wise=True, n_jobs=1, verbose=-1,
                                monotone_constraints=[TREE_MONOTONE if f.endswith(("_rank", "_score")) else 0
                                                      for f in features])
    model.fit(x, y, group=[len(ex.relevant) for ex in examples], eval_at=[EVIDENCE_K])
    return [_flat_tree(info["tree_structure"]) for info in model.booster_.dump_model()["tree_info"]]


def _flat_tree(root: Mapping[str, Any]) -> dict[str, list]:
    """A LightGBM tree (nested dicts, `x <= threshold` goes left) as parallel lists, node 0 the
    root, a leaf's feature -1."""
    tree: dict[str, list] = {"feature": [], "threshold": [], "left": [], "right": [], "value": []}

    def add(node: Mapping[str, Any]) -> int:
        at = len(tree["feature"])
        for key in tree:
            tree[key].append(-1 if key in ("feature", "left", "right") else 0.0)
        if "leaf_value" in node or "split_feature" not in node:
            tree["value"][at] = round(float(node.get("leaf_value", 0.0)), 6)
            return at
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"a tree split of kind {node.get('decision_type')!r} (only <= is read)")
        tree["feature"][at] = int(node["split_feature"])
        tree["threshold"][at] = round(float(node["threshold"]), 6)  # midway between two values seen
        tree["left"][at] = add(node["left_child"])
        tree["right"][at] = add(node["right_child"])
        return at

    add(root)
    return tree


def cross_fit(examples: Sequence[Example], columns: Sequence[str], *, folds: int = CROSS_FIT_FOLDS,
              late: bool = False, model: str = RANKER_MODEL) -> dict[str, Any]:
    """The ranker's params (`memolib.LinearRanker` or `memolib.TreeRanker`, `model`): fitted on
    every example and, per fold of conversations, fitted without them. Raises ValueError when
    fewer than two conversations hold examples, or any example has none."""
    if model not in ("linear", "trees", "blend", "auto"):
        raise ValueError(f"the ranking stage's model is linear, trees, blend or auto, not {model!r}")
    if any(not ex.scope for ex in examples):
        raise ValueError("the ranking stage is cross-fitted by conversation, and some examples name none")
    try:
        fold_of = memolib.conversation_folds((ex.scope for ex in examples), folds)
    except ValueError as exc:
        raise ValueError(f"the ranking stage: {exc}") from None
    k = max(fold_of.values()) + 1
    fitted = []
    if model in ("linear", "blend", "auto"):
        held = [fit_weights([ex for ex in examples if fold_of[ex.scope] != fold], columns) for fold in range(k)]
        linear = memolib.LinearRanker(fit_weights(examples, columns), tuple(held), fold_of, late=late)
        linear = dataclasses.replace(linear, held_out_gain=held_out_gain(examples, columns, linear))
        if model != "blend":
            fitted.append(linear.params())
    if model in ("trees", "blend", "auto"):
        try:
            features = tree_features(contexts_in(columns), [s for s in TREE_SIGNALS
                                                            if any(c.split("|")[-1] == s for c in columns)])
            held_trees = [fit_trees([ex for ex in examples if fold_of[ex.scope] != fold], features) for fold in range(k)]
            trees = memolib.TreeRanker(features, fit_trees(examples, features), held_trees, fold_of, late=late)
            trees.held_out_gain = held_out_gain(examples, columns, trees)
            if model != "blend":
                fitted.append(trees.params())
            if model != "trees":
                blend = memolib.BlendRanker(linear, trees)
                blend.held_out_gain = held_out_gain(examples, columns, blend)
                fitted.append(blend.params())
        except ImportError as exc:
            if model == "trees":
                raise
            if model == "blend":
                log.warning("the ranking stage's trees need LightGBM (%s): the linear ranker alone", exc)
                fitted.append(linear.params())
    # "auto": the largest held-out gain; the simplest (listed first: linear, trees, blend) on a tie.
    return max(fitted, key=lambda params: params["held_out_gain"])


def held_out_gain(examples: Sequence[Example], columns: Sequence[str], ranker: Any, k: int = EVIDENCE_K) -> float:
    """Mean over the examples of recall@k in the pool ordered by the ranker fitted without the
    example's conversation (its fold), minus recall@k in the pool ordered by reciprocal-rank
    fusion of the first-stage searches: what the fitted stage is worth on questions it did not
    see (the evidence the generator reads before it composes a ranked recipe)."""
    first = [columns.index(f"{r}_rank") for r in ("bm25", "bm25_window", "dense", "dense_window")]
    gains = []
    for ex in examples:
        fitted = held_out_scores(ranker, ex, columns)
        fused = ex.features[:, first].sum(axis=1)
        gains.append(_recall(fitted, ex.relevant, k) - _recall(fused, ex.relevant, k))
    return round(float(np.mean(gains)), 4) if gains else 0.0


def held_out_scores(ranker: Any, ex: Example, columns: Sequence[str]) -> np.ndarray:
    """The example's candidates scored by the ranker's fold that held its conversation out."""
    if isinstance(ranker, memolib.BlendRanker):
        return (_reciprocal_ranks(held_out_scores(ranker.linear, ex, columns))
                + _reciprocal_ranks(held_out_scores(ranker.trees, ex, columns)))
    if isinstance(ranker, memolib.TreeRanker):
        return _forest_scores(ex.tree, ranker.forest_for(ex.scope))
    weights = ranker.weights_for(ex.scope)
    return ex.features @ np.array([weights.get(c, 0.0) for c in columns])


def _recall(scores: np.ndarray, relevant: np.ndarray, k: int) -> float:
    top = np.argsort(-scores, kind="stable")[:k]
    return float(relevant[top].sum() / relevant.sum())


def fit_ranker(episodes: Sequence[Any], questions: Sequence[RankingQuestion], embed_text: Callable,
               dim: int | None, *, embed_tokens: Callable | None = None,
               router: Mapping[str, Any] | None = None, model: str = RANKER_MODEL,
               signals: Sequence[str] = SIGNALS, gain_on: Sequence[RankingQuestion] = ()) -> dict[str, Any]:
    """The ranking stage's params for a program, from the train split (host side), over
    `signals` (`MATCH_SIGNALS` for pseudo-questions). With `gain_on` (a label-free search's
    validation questions, when it fits on questions of other kinds), the params' `held_out_gain`
    is measured on those questions instead: what the stage is worth on questions written by
    another generator than the one it was fitted on, which is all a label-free search can know
    of how it will do on a user's own questions."""
    if any(not q.scope for q in questions):  # refused before the costly replay of the train split
        raise ValueError("the ranking stage is cross-fitted by conversation, and some train questions "
                         "name none: no fit (a validation question could be scored by weights fitted on it)")
    examples, columns = ranking_examples(episodes, questions, embed_text, dim, embed_tokens=embed_tokens,
                                         router=router, fitted_signals=signals)
    params = cross_fit(examples, columns, late=embed_tokens is not None, model=model)
    if gain_on:
        judged, judged_columns = ranking_examples(episodes, gain_on, embed_text, dim, embed_tokens=embed_tokens,
                                                  router=router, fitted_signals=signals)
        assert judged_columns == columns  # the same router and signals make the same columns
        params["held_out_gain"] = held_out_gain(judged, columns, memolib.ranker_from_params(params))
    return params
