"""Fitting the ranking stage on the host, at search time (memolib.ranker holds the model and why).

The train split's update episodes are stored as a recipe stores them (turn units, the same
`RankingSignals` a program builds), each train question's candidate pool gets its signals, and
a candidate is relevant when it cites one of the question's gold clues. Pairs (relevant,
irrelevant) of one question become feature differences; a logistic regression without
intercept on them (scikit-learn) is the pairwise linear ranker (RankSVM's pairs with a logistic
loss). Each question weighs the same in the fit, whatever its number of pairs, as Recall@k
averages questions.

Cross-fitted by conversation: the conversations are dealt into folds as the router's are
(`CROSS_FIT_FOLDS`, over the same train questions: one fold assignment), and each fold's weights
are fitted without its conversations' questions. The cross-fitting is nested: a question's routed
type is one of its signals, and a fold's examples are typed by routers fitted without that fold
(and without the example's own fold, `ExampleRouting`), so nothing of a fold's model, its
examples' types included, saw that fold's labels. No conversation known, or fewer than two: no fit (ValueError), as no validation
score could then be honest. The labels (clues, question types) stay here; the program gets
weights.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from automemo.toolkit import memolib
from automemo.toolkit.memolib.ranker import (CUES, SIGNALS, _forest_scores, _reciprocal_ranks, column,
                                              contexts_of, design, tree_features, tree_matrix)
from automemo.toolkit.memolib.crossfit import CROSS_FIT_FOLDS

log = logging.getLogger(__name__)

RANKER_C = 0.05
"""Inverse L2 strength of the pairwise logistic fit: a few hundred questions against a few hundred
weights (every signal once per context) need the weights held near 0 where evidence is thin.
Chosen on the cross-fitted held-out gain of the default model, the blend (dev data, train
conversations, nested cross-fitting, RRF k = 60 baseline; docs/discovery.md, "Which data informed
each default"): +0.0410 at C 0.05, +0.0405 at the former 0.5, +0.0382 at 0.005, a near tie between
0.05 and 0.5 that the linear half settles (+0.029 at 0.05, +0.013 at 0.5). The former 0.5 was kept after a screen on
the test conversations."""

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

TREE_SIGNALS = SIGNALS
"""The signals the trees split on: all of them, a unit's place in its session and its recency
included. Chosen on the cross-fitted validation of the dev data's train conversations: the trees'
held-out gain +0.039 with those two against +0.024 without (the blend +0.041 against +0.038, C
0.05; docs/discovery.md, "Which data informed each default"), as in the pool figures of
docs/memolib.md (validation 0.891 against 0.880). They were left out before on the test
conversations' figures (0.851 with them, 0.863 without), read as the trees learning where the
train conversations' generator put the evidence."""

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
    """The reciprocal-rank fusion (`memolib.RRF_K`) of the named rankings, as a recipe fuses its stages."""
    return lambda rankings: memolib.rrf([rankings.get(name) or [] for name in names], k=memolib.RRF_K)


@dataclass(frozen=True)
class Example:
    scope: str
    features: np.ndarray     # candidates x columns
    relevant: np.ndarray     # bool per candidate
    tree: np.ndarray | None = None   # candidates x tree features (memolib.ranker.tree_features)
    # The question and its pool's signals (candidates x SIGNALS): what `routed` types the
    # features from again when a fold's fit routes the question with its own router.
    question: str = ""
    values: np.ndarray | None = None


@dataclass(frozen=True)
class ExampleRouting:
    """How the fit routes its examples' questions, nested in its cross-fitting: the labelled train
    questions the run's router was fitted on (`questions`, `labels`, `scopes`) and its folds of
    conversations (`fold_of`, the router's, which the ranker's folds are). A fit that holds a fold
    out types each of its examples with a router fitted without that fold and without the
    example's own fold (`type_of`): the fold's model then never saw the fold's labels, not even
    through the types of the other folds' questions (routed by a router that saw them, a question
    worded like the fold's takes the fold's type into the fold's model), and it is fitted on types
    predicted as the program predicts the questions it ranks, by a router that never saw them. The
    fit on all holds nothing out: each example typed by its fold's router, which is the router's
    held-out table; a held-out fold's own questions, by the router fitted without that fold,
    which is what the program's held-out table gives them."""

    router: Mapping[str, Any]       # the run's memolib.QuestionRouter params (its labels name the columns)
    questions: tuple[str, ...]
    labels: tuple[str, ...]
    scopes: tuple[str, ...]
    _fitted: dict = field(default_factory=dict, init=False, compare=False, repr=False)  # held out -> router

    @functools.cached_property
    def fold_of(self) -> dict[str, int]:
        return memolib.conversation_folds(self.scopes)

    def type_of(self, question: str, scope: str, held: frozenset[str] = frozenset()) -> str:
        """The type a fit that holds the conversations `held` out gives a question of conversation
        `scope`: predicted by the router fitted without `held` and without the question's fold."""
        fold = self.fold_of.get(scope)
        without = held | {s for s, f in self.fold_of.items() if f == fold}
        if without not in self._fitted:
            inside = [i for i, s in enumerate(self.scopes) if s not in without]
            # With two conversations, holding out a fold and the question's own leaves nothing
            # to fit on: the question then gets no type rather than one a router that saw its
            # label would give.
            self._fitted[without] = memolib.QuestionRouter.fit(
                [self.questions[i] for i in inside], [self.labels[i] for i in inside]) if inside else None
        router = self._fitted[without]
        return router.predict(question) if router is not None else ""

    def labels_known(self) -> list[str]:
        return list(memolib.QuestionRouter.from_params(self.router).labels)


def tree_features_of(columns: Sequence[str]) -> list[str]:
    """The tree ranker's features for `columns`: the `TREE_SIGNALS` the fit weighs (its shared
    block's), then the contexts' flags."""
    return tree_features(contexts_in(columns), [s for s in TREE_SIGNALS if column("", s) in columns])


def routed(examples: Sequence[Example], columns: Sequence[str],
           type_of: Callable[[Example], str] | None) -> list[Example]:
    """The examples with the features of their question's type (`type_of`; none: no type)."""
    features = tree_features_of(columns)
    out = []
    for ex in examples:
        contexts = contexts_of(ex.question, type_of(ex) if type_of is not None else "")
        out.append(dataclasses.replace(ex, features=design(ex.values, contexts, columns),
                                       tree=tree_matrix(ex.values, contexts, features)))
    return out


def ranking_examples(episodes: Sequence[Any], questions: Sequence[RankingQuestion], embed_text: Callable,
                     dim: int | None, *, embed_tokens: Callable | None = None,
                     routing: ExampleRouting | None = None,
                     fitted_signals: Sequence[str] = SIGNALS) -> tuple[list[Example], list[str]]:
    """Each question with a relevant and an irrelevant candidate as an `Example`, routed as the fit
    on all routes it (`routing`; none: no routed type), and the columns (weight names) their
    features fill, of `fitted_signals` only."""
    store = memolib.UnitStore()
    signals = memolib.RankingSignals(embed_text, dim, embed_tokens)
    for episode in episodes:
        turns = memolib.episode_units(episode)
        rows = store.add_episode(turns)
        signals.add(episode, turns, len(turns), rows)
    labels = routing.labels_known() if routing is not None else []
    columns = [column(c, s) for c in ["", *CUES, *(f"type:{t}" for t in labels)] for s in fitted_signals]
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
        out.append(Example(q.scope, np.zeros(0), relevant, question=q.question, values=pool.values))
    return routed(out, columns, (lambda ex: routing.type_of(ex.question, ex.scope)) if routing else None), columns


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
              fold_of: Mapping[str, int] | None = None, routing: ExampleRouting | None = None,
              late: bool = False, model: str = RANKER_MODEL) -> dict[str, Any]:
    """The ranker's params (`memolib.LinearRanker` or `memolib.TreeRanker`, `model`): fitted on
    every example and, per fold of conversations (`fold_of`; default: the examples'
    conversations dealt into `folds`), fitted without them. With `routing` each fold's examples,
    those it is fitted on and those its held-out check scores, are typed by routers fitted
    without that fold (`ExampleRouting.type_of`: nested cross-fitting; the examples as given are
    typed as the fit on all types them). Raises ValueError when fewer than two conversations hold
    examples, or any example has none."""
    if model not in ("linear", "trees", "blend", "auto"):
        raise ValueError(f"the ranking stage's model is linear, trees, blend or auto, not {model!r}")
    if any(not ex.scope for ex in examples):
        raise ValueError("the ranking stage is cross-fitted by conversation, and some examples name none")
    try:
        dealt = memolib.conversation_folds((ex.scope for ex in examples), folds)
    except ValueError as exc:
        raise ValueError(f"the ranking stage: {exc}") from None
    fold_of = dict(fold_of) if fold_of is not None else dealt
    if missing := sorted(set(dealt) - set(fold_of)):
        raise ValueError(f"the ranking stage: no fold holds conversations {missing} out")
    k = max(fold_of.values()) + 1
    linear_wanted, trees_wanted = model in ("linear", "blend", "auto"), model in ("trees", "blend", "auto")
    features = tree_features_of(columns)
    held_weights: list[dict[str, float]] = []
    held_trees: list[list[dict[str, list]]] | None = [] if trees_wanted else None
    checked: list[Example] = []   # every example, routed as its fold routes it: the held-out check's
    for fold in range(k):
        # One fold's examples at a time: with routing each is a routed copy of the examples.
        held = frozenset(s for s, f in fold_of.items() if f == fold)
        fit_on = [ex for ex in examples if ex.scope not in held]
        check = [ex for ex in examples if ex.scope in held]
        if routing is not None:
            type_of = lambda ex, held=held: routing.type_of(ex.question, ex.scope, held)  # noqa: E731
            fit_on, check = routed(fit_on, columns, type_of), routed(check, columns, type_of)
        checked += check
        if linear_wanted:
            held_weights.append(fit_weights(fit_on, columns))
        if held_trees is not None:
            try:
                held_trees.append(fit_trees(fit_on, features))
            except ImportError as exc:
                held_trees = _without_trees(exc, model)
    fitted = []
    if linear_wanted:
        linear = memolib.LinearRanker(fit_weights(examples, columns), tuple(held_weights), fold_of, late=late)
        linear = dataclasses.replace(linear, held_out_gain=held_out_gain(checked, columns, linear))
        if model != "blend":
            fitted.append(linear.params())
    if held_trees is not None:
        trees = memolib.TreeRanker(features, fit_trees(examples, features), held_trees, fold_of, late=late)
        trees.held_out_gain = held_out_gain(checked, columns, trees)
        if model != "blend":
            fitted.append(trees.params())
        if model != "trees":
            blend = memolib.BlendRanker(linear, trees)
            blend.held_out_gain = held_out_gain(checked, columns, blend)
            fitted.append(blend.params())
    elif model == "blend":
        fitted.append(linear.params())
    # "auto": the largest held-out gain; the simplest (listed first: linear, trees, blend) on a tie.
    return max(fitted, key=lambda params: params["held_out_gain"])


def _without_trees(missing: ImportError, model: str) -> None:
    """What a fit that wants trees does without LightGBM: "trees" fails, "blend" is the linear
    ranker alone (with a warning), "auto" chooses among the others."""
    if model == "trees":
        raise missing
    if model == "blend":
        log.warning("the ranking stage's trees need LightGBM (%s): the linear ranker alone", missing)
    return None


def held_out_gain(examples: Sequence[Example], columns: Sequence[str], ranker: Any, k: int = EVIDENCE_K) -> float:
    """Mean over the examples of recall@k in the pool ordered by the ranker fitted without the
    example's conversation (its fold; the example routed as that fold routes it), minus recall@k
    in the pool ordered by reciprocal-rank fusion of the first-stage searches
    (`fused_first_stage`): what the fitted stage is worth on questions it did not see (the
    evidence the generator reads before it composes a ranked recipe)."""
    gains = []
    for ex in examples:
        fitted = held_out_scores(ranker, ex, columns)
        gains.append(_recall(fitted, ex.relevant, k) - _recall(fused_first_stage(ex.features, columns), ex.relevant, k))
    return round(float(np.mean(gains)), 4) if gains else 0.0


FIRST_STAGE = ("bm25", "bm25_window", "dense", "dense_window")
"""The four searches a multi-view recipe fuses first (BM25 and dense over each view)."""


def fused_first_stage(features: np.ndarray, columns: Sequence[str]) -> np.ndarray:
    """Each candidate's score in the reciprocal-rank fusion of the `FIRST_STAGE` searches at
    `memolib.RRF_K`, the constant the recipes fuse with, read from their reciprocal-rank
    features (1/(1 + rank), 0 unranked): the order a multi-view recipe's first stage gives the
    pool. (Until 2026-11-29 the held-out check summed those features, the sum of 1/rank:
    reciprocal-rank fusion at k = 0, where a candidate one search ranks first outranks one that
    two searches rank third, a baseline no recipe uses.)"""
    out = np.zeros(len(features))
    for name in FIRST_STAGE:
        rr = features[:, columns.index(f"{name}_rank")]
        ranked = rr > 0
        out[ranked] += 1.0 / (memolib.RRF_K + 1.0 / rr[ranked])   # 1/rr: the rank, from 1
    return out


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
               routing: ExampleRouting | None = None, model: str = RANKER_MODEL,
               signals: Sequence[str] = SIGNALS, gain_on: Sequence[RankingQuestion] = ()) -> dict[str, Any]:
    """The ranking stage's params for a program, from the train split (host side), over `signals`
    (`MATCH_SIGNALS` for pseudo-questions). `routing`: the run's router and the labelled questions
    it was fitted on (None: no routed type). The folds deal every train question's conversation,
    as the router's do, so a train question's fold is the same for both. With `gain_on` (a
    label-free search's scored questions, when it fits on questions of other kinds), the params'
    `held_out_gain` is measured on those questions instead: what the stage is worth on questions
    written by another writer than the one it was fitted on, which is all a label-free search can
    know of how it will do on a user's own questions."""
    if any(not q.scope for q in questions):  # refused before the costly replay of the train split
        raise ValueError("the ranking stage is cross-fitted by conversation, and some train questions "
                         "name none: no fit (a validation question could be scored by weights fitted on it)")
    try:
        fold_of = memolib.conversation_folds(q.scope for q in questions)
    except ValueError as exc:
        raise ValueError(f"the ranking stage: {exc}") from None
    examples, columns = ranking_examples(episodes, questions, embed_text, dim, embed_tokens=embed_tokens,
                                         routing=routing, fitted_signals=signals)
    params = cross_fit(examples, columns, fold_of=fold_of, routing=routing, late=embed_tokens is not None,
                       model=model)
    if gain_on:
        judged, judged_columns = ranking_examples(episodes, gain_on, embed_text, dim, embed_tokens=embed_tokens,
                                                  routing=routing, fitted_signals=signals)
        if judged_columns != columns:
            raise ValueError("the ranking stage: the judged questions' columns differ from the fit's")
        params["held_out_gain"] = held_out_gain(judged, columns, memolib.ranker_from_params(params))
    return params
