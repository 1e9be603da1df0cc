"""A fitted ranking stage: learning to rank over the signals the other stages compute.

Each stage of a recipe is one ranking (BM25, dense, late interaction, the question's names, its
dates, its speaker, its session) and fusion adds them with fixed weights (reciprocal rank). Once
labelled questions exist, the standard way information-retrieval systems combine such signals is
to learn the combination: learning to rank over fused retrieval features (Liu, "Learning to Rank
for Information Retrieval", 2009). The formulation here is pairwise and linear: RankSVM
(Joachims, KDD 2002), fitted with a logistic loss (RankNet's pairwise cross-entropy with a linear
scorer; Burges et al., ICML 2005): for a question, every relevant candidate should score above
every irrelevant one, and a linear model on the difference of their feature vectors learns by
how much each signal says so. The fit runs on the host at search time (scikit-learn,
`automemo.meta.offline.ranking`); the program carries only the weights, as readable constants,
and scores here with numpy.

Per candidate unit (`SIGNALS`): each ranking's reciprocal rank and min-max normalised score
(0 where it did not rank the unit), whether the unit is an image, its position inside its
session, its recency, whether a turn carries a picture, its length. A question's context adds copies of every signal that only its own
weights read: its text's cues (`time`, `state`, `count`, `list`: memolib's `is_*_question`,
from the text) and its routed type (`type:<label>`, from the program's `QuestionRouter`), so a
time question can weigh the dates ranking and a list question the session's. The labels a
question was fitted with never reach `retrieve`; the routed type is a prediction.

Cross-fitted by conversation like the router: `LinearRanker.folds` are weights fitted without
one group of train conversations each, `fold_of` says which fold held each train conversation
out, and a question of a train conversation is scored with its fold's weights, never with the
weights fitted on all (which saw it). A conversation the fit never saw (test, a deployed user)
gets the weights fitted on all train questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from automemo.toolkit.memolib.bm25 import BM25Index
from automemo.toolkit.memolib.coverage import is_count_question
from automemo.toolkit.memolib.crossfit import held_out
from automemo.toolkit.memolib.dense import DenseIndex
from automemo.toolkit.memolib.entities import PhraseIndex
from automemo.toolkit.memolib.fusion import RRF_K
from automemo.toolkit.memolib.hierarchy import SessionIndex
from automemo.toolkit.memolib.late import TokenIndex
from automemo.toolkit.memolib.latest import is_state_question
from automemo.toolkit.memolib.lazy import LazyDense
from automemo.toolkit.memolib.listing import is_list_question
from automemo.toolkit.memolib.speakers import speaker_ranking
from automemo.toolkit.memolib.temporal import DateIndex, is_time_question
from automemo.toolkit.memolib.units import Unit, indexed_text, windows

RANKINGS = ("bm25", "bm25_window", "dense", "dense_window", "late", "entities", "temporal", "speakers", "session",
            "fused")
"""The rankings a candidate is seen by: BM25 and dense over the unit alone and over the unit read
with its neighbours, MaxSim (late interaction) over the pool, the question's names and phrases,
its dates, its named speaker, its session's BM25 rank among the memory's sessions, and `fused`:
the order of the program the stage sits in, as its own stages made it before the ranking stage
(the `prior` of `RankingSignals.candidates`: a recipe's fusion of the rankings it composes). The
fit sees the reciprocal-rank fusion (k=60) of the four first-stage searches there, which is the
multi-view recipe's own order; a recipe whose stages order better (a date stage, MaxSim, another
fusion) then feeds a better `fused` order to the same weights. The first-stage retrieval score as
a feature of the learnt ranker is the usual cascade of learning to rank (Liu 2009, §1.3; LETOR's
BM25 features; Wang, Lin and Metzler, SIGIR 2011, "A cascade ranking model")."""

SIGNALS = (*(f"{r}_rank" for r in RANKINGS), *(f"{r}_score" for r in RANKINGS), "image", "position", "recency",
           "pictured", "length")
"""Per candidate: every ranking's reciprocal rank 1/(1+rank) and min-max normalised score (0 when
the ranking did not return the unit), image unit or not, place in its session (0 first .. 1
last), recency in the memory (0 oldest .. 1 latest), `pictured`: a turn unit that carries a
picture (its screenshot, or an image id it cites beside its own: a round a photo was shared in),
and `length`: its indexed text's words, log(1 + words) / log(1 + 200) capped at 1 (LETOR's
document-length feature). Both are properties of the unit itself, which no ranking scores: on
the dev data 51 % of the rounds that hold a clue carry a picture against 24 % of the other
candidates (docs/memolib.md)."""

CUES = ("time", "state", "count", "list")
"""What a question's text says about it (memolib's `is_time_question`, `is_state_question`,
`is_count_question`, `is_list_question`): each switches on its own copy of the signals."""

POOL = 30
"""Candidates each of the four first-stage searches (BM25 and dense, two views) adds to the pool."""


def question_cues(question: str) -> list[str]:
    """The `CUES` a question's text shows."""
    tests = {"time": is_time_question, "state": is_state_question, "count": is_count_question,
             "list": is_list_question}
    return [cue for cue in CUES if tests[cue](question)]


def contexts_of(question: str, question_type: str = "") -> list[str]:
    """The weight blocks a question reads: the shared one (""), its cues, its routed type."""
    return ["", *question_cues(question), *([f"type:{question_type}"] if question_type else [])]


def column(context: str, signal: str) -> str:
    """A weight's name: the signal alone in the shared block, `context|signal` in another."""
    return f"{context}|{signal}" if context else signal


@dataclass(frozen=True)
class Candidates:
    """The pool one question's signals were computed for: `rows` and their `values`
    (len(rows) x len(SIGNALS))."""

    rows: tuple[int, ...]
    values: np.ndarray


class RankingSignals:
    """The indexes the fitted ranker reads, one row per unit the program stores (turns, then
    its pictures, in the store's order), each unit indexed alone and with its neighbours."""

    def __init__(self, embed_text: Callable, dim: int | None = None, embed_tokens: Callable | None = None,
                 vector_index: Any = None, *, lazy: bool = False) -> None:
        """`lazy`: the dense signals embed only the pool's units, when a question first reaches
        them (`LazyDense`), not every unit at update: remembering costs what BM25 costs, the pool
        comes from the two BM25 searches (and `prior`), and the dense rankings order the pool
        alone (docs/cost.md). A ranker fitted on the full signals reads them as they are."""
        self.lexical = [BM25Index(), BM25Index()]
        self.lazy = lazy
        self.dense: list[Any] = ([LazyDense(embed_text) for _ in range(2)] if lazy else
                                 [DenseIndex(embed_text, dim, vector_index=vector_index) for _ in range(2)])
        self.tokens = TokenIndex(embed_tokens) if embed_tokens is not None else None
        self.phrases = PhraseIndex()
        self.dates = DateIndex()
        self.sessions = SessionIndex()
        self.session_of: list[int] = []   # each row's session (SessionIndex row)
        self.place: list[float] = []      # each row's place in its session, 0..1
        self.image: list[float] = []      # 1 for an image unit
        self.pictured: list[float] = []   # 1 for a turn unit that carries a picture
        self.length: list[float] = []     # log(1 + words) / log(1 + 200), capped at 1

    def add(self, episode: Any, stored: Sequence[Unit], turns: int, rows: Sequence[int]) -> None:
        """One episode's stored units (`turns` turn units, then picture units) and the `rows`
        the store gave them; indexed as a recipe indexes them (`indexed_text`)."""
        if not stored:
            return
        texts = [indexed_text(episode, u) for u in stored]
        read_with = [indexed_text(episode, u) for u in windows(list(stored[:turns]), 1)] + texts[turns:]
        self.lexical[0].add_many(list(texts))
        self.lexical[1].add_many(read_with)
        self.dense[0].add_many(list(texts))
        self.dense[1].add_many(read_with)
        if self.tokens is not None:
            self.tokens.add_many(list(texts))
        self.phrases.add_many(list(texts))
        self.dates.add_many(list(texts), [u.time for u in stored])
        session = self.sessions.add("\n".join(texts[:turns]), list(rows[:turns]), stored[0].scope)
        last = max([u.position for u in stored[:turns]] or [0])
        for i, unit in enumerate(stored):
            self.session_of.append(session)
            self.place.append(unit.position / last if last > 0 else 0.0)
            self.image.append(1.0 if i >= turns else 0.0)
            self.pictured.append(1.0 if i < turns and (bool(unit.images) or len(unit.evidence) > 1) else 0.0)
            self.length.append(min(1.0, float(np.log1p(len(texts[i].split())) / np.log1p(200))))

    def candidates(self, question: str, query: str, allowed: Any, store: Any, *, scope: str = "",
                   now: str | None = None, pool: int = POOL,
                   prior: Sequence[tuple[int, float]] | Callable[[Mapping[str, list]], list] | None = None
                   ) -> Candidates:
        """The pool (the first `pool` of BM25 and dense over both views, in first-seen order, then
        the first `pool` of `prior` not among them) and every signal of each of its rows.
        `prior`: the program's own order before the ranking stage, (row, score) best first (the
        `fused` signal); None: the reciprocal-rank fusion of the four searches; a function: the
        order it makes of the pool's rankings (name -> ranking), as the fit composes one."""
        first = [index.search(query, pool, allowed) for index in (self.lexical if self.lazy else (*self.lexical, *self.dense))]
        rows: list[int] = []
        for ranking in [*first, [] if callable(prior) else list(prior or ())[:pool]]:
            rows += [r for r, _ in ranking if r not in rows]
        if self.lazy:  # the dense rankings of the pool, its units embedded now (each once)
            first += [index.rerank(query, rows)[:pool] for index in self.dense]
        if not rows:
            return Candidates((), np.zeros((0, len(SIGNALS))))
        fused = _fused_order(first)
        rankings = dict(zip(RANKINGS[:4], first))
        if self.tokens is not None:
            rankings["late"] = self.tokens.rerank(query, rows)
        rankings["entities"] = self.phrases.search(question, pool, rows, prior=fused)
        rankings["temporal"] = self.dates.search(question, pool, rows, prior=fused, now=now)
        rankings["speakers"] = speaker_ranking(question, fused, store)
        sessions = self.sessions.search(query, self.sessions.size, scope)
        place = {s: i for i, (s, _) in enumerate(sessions)}
        score = dict(sessions)
        rankings["session"] = sorted(((r, score.get(self.session_of[r], 0.0)) for r in rows
                                      if self.session_of[r] in place), key=lambda rs: place[self.session_of[rs[0]]])
        if callable(prior):
            rankings["fused"] = list(prior(rankings))
        else:
            rankings["fused"] = list(prior) if prior is not None else _fused_ranking(first)
        values = np.zeros((len(rows), len(SIGNALS)))
        at = {r: i for i, r in enumerate(rows)}
        for k, name in enumerate(RANKINGS):
            ranking = rankings.get(name) or []
            scores = [s for _, s in ranking]
            low, high = (min(scores), max(scores)) if scores else (0.0, 0.0)
            for rank, (row, s) in enumerate(ranking):
                i = at.get(row)
                if i is None:
                    continue
                values[i, k] = 1.0 / (1.0 + rank) if name != "session" else 1.0 / (1.0 + place[self.session_of[row]])
                values[i, len(RANKINGS) + k] = (s - low) / (high - low) if high > low else 1.0
        base = 2 * len(RANKINGS)
        values[:, base] = [self.image[r] for r in rows]
        values[:, base + 1] = [self.place[r] for r in rows]
        values[:, base + 2] = store.recency_of(rows)
        values[:, base + 3] = [self.pictured[r] for r in rows]
        values[:, base + 4] = [self.length[r] for r in rows]
        return Candidates(tuple(rows), values)


def _fused_ranking(rankings: Sequence[Sequence[tuple[int, float]]]) -> list[tuple[int, float]]:
    """The pool by reciprocal rank over the first-stage searches (k=60), (row, score) best first
    (ties in first-seen order, as memolib.rrf)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, (row, _) in enumerate(ranking):
            fused[row] = fused.get(row, 0.0) + 1.0 / (RRF_K + 1 + rank)
    return sorted(fused.items(), key=lambda rs: -rs[1])


def _fused_order(rankings: Sequence[Sequence[tuple[int, float]]]) -> list[int]:
    """The pool by reciprocal rank over the first-stage searches (k=60): the tie order the
    entity, date and speaker rankings keep."""
    return [row for row, _ in _fused_ranking(rankings)]


def design(values: np.ndarray, contexts: Sequence[str], columns: Sequence[str]) -> np.ndarray:
    """The candidates' features in `columns` order: each context in `contexts` copies the
    signals into its own block; blocks of other contexts stay 0."""
    index = {name: i for i, name in enumerate(columns)}
    out = np.zeros((values.shape[0], len(columns)))
    for context in contexts:
        for j, signal in enumerate(SIGNALS):
            i = index.get(column(context, signal))
            if i is not None:
                out[:, i] = values[:, j]
    return out


@dataclass(frozen=True)
class LinearRanker:
    """Weights by name (`column`): `weights` fitted on every train question, `folds` each
    fitted without the train conversations `fold_of` maps to it."""

    weights: Mapping[str, float]
    folds: tuple[Mapping[str, float], ...] = ()
    fold_of: Mapping[str, int] = field(default_factory=dict)
    late: bool = False          # whether the late-interaction signal was there when fitted
    pool: int = POOL
    held_out_gain: float = 0.0  # the fit's check: held-out recall@10, fitted order minus fused order

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> LinearRanker:
        """The ranker `params()` describes (as written into a program's source)."""
        return cls({str(k): float(v) for k, v in params["weights"].items()},
                   tuple({str(k): float(v) for k, v in fold.items()} for fold in params.get("folds") or ()),
                   {str(s): int(i) for s, i in (params.get("fold_of") or {}).items()},
                   bool(params.get("late", False)), int(params.get("pool", POOL)),
                   float(params.get("held_out_gain", 0.0)))

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pool": self.pool, "late": self.late, "weights": dict(self.weights)}
        if self.folds:
            out["folds"] = [dict(f) for f in self.folds]
            out["fold_of"] = dict(sorted(self.fold_of.items()))
            out["held_out_gain"] = self.held_out_gain
        return out

    def weights_for(self, scope: str = "") -> Mapping[str, float]:
        """A train conversation's held-out weights; every other conversation's, the weights
        fitted on all. A fold table that names a fold it does not hold is a broken program:
        it raises rather than scoring that conversation with the weights that saw it."""
        return held_out(scope, self.fold_of, self.folds, self.weights, "LinearRanker")

    def scores(self, candidates: Candidates, question: str, question_type: str = "", scope: str = "") -> np.ndarray:
        weights = self.weights_for(scope)
        total = np.zeros(len(candidates.rows))
        for context in contexts_of(question, question_type):
            vector = np.array([weights.get(column(context, s), 0.0) for s in SIGNALS])
            total += candidates.values @ vector
        return total

    def rank(self, candidates: Candidates, question: str, question_type: str = "", scope: str = "") -> list[tuple[int, float]]:
        """The pool best first by the fitted score (ties in pool order)."""
        scores = self.scores(candidates, question, question_type, scope)
        order = sorted(range(len(candidates.rows)), key=lambda i: (-scores[i], i))
        return [(candidates.rows[i], float(scores[i])) for i in order]


def tree_features(contexts: Sequence[str], signals: Sequence[str] = SIGNALS) -> list[str]:
    """The tree ranker's feature names: the `signals` it splits on (the fit chooses them), then
    one 0/1 flag per context a question can read (its cues, its routed types), so a tree splits
    on "a time question" where the linear ranker needs a copy of every signal per context."""
    return [*signals, *(f"is:{c}" for c in contexts if c)]


def tree_matrix(values: np.ndarray, contexts: Sequence[str], features: Sequence[str]) -> np.ndarray:
    """The candidates' signals in `features` order, with the flags of the question's `contexts` on."""
    at = {name: j for j, name in enumerate(SIGNALS)}
    out = np.zeros((values.shape[0], len(features)))
    for i, name in enumerate(features):
        if name in at:
            out[:, i] = values[:, at[name]]
        elif name.startswith("is:") and name[3:] in contexts:
            out[:, i] = 1.0
    return out


@dataclass(frozen=True)
class Forest:
    """Trees as padded arrays (trees x nodes), walked all at once: a candidate's path through
    every tree advances one level per step, so scoring costs a numpy operation per level, not one
    per tree and level (100 trees of depth up to 7 in a blend: 7 steps instead of 700)."""

    feature: np.ndarray     # trees x nodes; -1 at a leaf and in the padding
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.feature)


def _compiled(trees: Sequence[Mapping[str, Sequence[float]]]) -> Forest:
    width = max((len(t["feature"]) for t in trees), default=1)

    def padded(key: str, dtype: type, fill: float) -> np.ndarray:
        out = np.full((len(trees), width), fill, dtype=dtype)
        for i, t in enumerate(trees):
            out[i, :len(t[key])] = t[key]
        return out

    return Forest(padded("feature", int, -1), padded("threshold", float, 0.0), padded("left", int, -1),
                  padded("right", int, -1), padded("value", float, 0.0))


def _forest_scores(x: np.ndarray, forest: Forest) -> np.ndarray:
    """The sum of the trees' leaf values for each row of `x`: each tree walked from node 0, left
    when the node's feature is <= its threshold, until a leaf (feature -1); the leaf values added
    tree by tree, in the trees' order."""
    total = np.zeros(len(x))
    if not len(forest) or not len(x):
        return total
    trees = np.arange(len(forest))[None, :]
    rows = np.arange(len(x))[:, None]
    node = np.zeros((len(x), len(forest)), dtype=int)
    while True:
        feature = forest.feature[trees, node]
        inner = feature >= 0
        if not inner.any():
            break
        go_left = x[rows, np.where(inner, feature, 0)] <= forest.threshold[trees, node]
        node = np.where(inner, np.where(go_left, forest.left[trees, node], forest.right[trees, node]), node)
    leaves = forest.value[trees, node]
    for t in range(len(forest)):
        total += leaves[:, t]
    return total


class TreeRanker:
    """Gradient-boosted regression trees fitted with the LambdaMART objective (LambdaRank's
    gradients on boosted trees: Burges, "From RankNet to LambdaRank to LambdaMART: An Overview",
    Microsoft Research TR-2010-82; the boosting is Friedman's gradient boosting, Annals of
    Statistics 2001). Where the linear ranker adds one weight per signal (per context), trees
    score interactions: "ranked high by dates AND a time question", "BM25 says nothing but the
    session is the best one". The fit runs on the host (LightGBM's `lambdarank` objective,
    `automemo.meta.offline.ranking`); the program carries the trees as readable constants, one
    dict per tree: for each node its `feature` (an index into `features`, -1 at a leaf), its
    `threshold` (left when the feature is <= it), its `left` and `right` children and, at a
    leaf, its `value`; a candidate's score is the sum of its leaves' values. Cross-fitted by
    conversation exactly as `LinearRanker` is (`folds`, `fold_of`)."""

    kind = "trees"

    def __init__(self, features: Sequence[str], trees: Sequence[Mapping[str, Any]],
                 folds: Sequence[Sequence[Mapping[str, Any]]] = (), fold_of: Mapping[str, int] | None = None,
                 late: bool = False, pool: int = POOL, held_out_gain: float = 0.0) -> None:
        self.features = tuple(features)
        self.trees = tuple(dict(t) for t in trees)
        self.folds = tuple(tuple(dict(t) for t in fold) for fold in folds)
        self.fold_of = dict(fold_of or {})
        self.late, self.pool, self.held_out_gain = late, pool, held_out_gain
        self._forest = _compiled(self.trees)
        self._fold_forests = tuple(_compiled(f) for f in self.folds)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TreeRanker:
        return cls([str(f) for f in params["features"]], params["trees"],
                   [fold["trees"] for fold in params.get("folds") or ()],
                   {str(s): int(i) for s, i in (params.get("fold_of") or {}).items()},
                   bool(params.get("late", False)), int(params.get("pool", POOL)),
                   float(params.get("held_out_gain", 0.0)))

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.kind, "pool": self.pool, "late": self.late,
                               "features": list(self.features), "trees": [dict(t) for t in self.trees]}
        if self.folds:
            out["folds"] = [{"trees": [dict(t) for t in fold]} for fold in self.folds]
            out["fold_of"] = dict(sorted(self.fold_of.items()))
            out["held_out_gain"] = self.held_out_gain
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeRanker) and self.params() == other.params()

    def forest_for(self, scope: str = "") -> Forest:
        """A train conversation's held-out trees; every other conversation's, the trees fitted
        on all (a fold table naming a fold it does not hold raises, as `LinearRanker`'s does)."""
        return held_out(scope, self.fold_of, self._fold_forests, self._forest, "TreeRanker")

    def scores(self, candidates: Candidates, question: str, question_type: str = "", scope: str = "") -> np.ndarray:
        if not candidates.rows:
            return np.zeros(0)
        x = tree_matrix(candidates.values, contexts_of(question, question_type), self.features)
        return _forest_scores(x, self.forest_for(scope))

    def rank(self, candidates: Candidates, question: str, question_type: str = "", scope: str = "") -> list[tuple[int, float]]:
        """The pool best first by the trees' score (ties in pool order)."""
        scores = self.scores(candidates, question, question_type, scope)
        order = sorted(range(len(candidates.rows)), key=lambda i: (-scores[i], i))
        return [(candidates.rows[i], float(scores[i])) for i in order]


BLEND_K = 60
"""The reciprocal-rank constant of the blend (Cormack et al., SIGIR 2009's k)."""


def _reciprocal_ranks(scores: np.ndarray) -> np.ndarray:
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    out = np.zeros(len(scores))
    for rank, i in enumerate(order):
        out[i] = 1.0 / (BLEND_K + rank)
    return out


class BlendRanker:
    """The linear ranker and the trees, both fitted on the same examples and folds, their two
    orders fused by reciprocal rank (k = `BLEND_K`): an ensemble of two learners that err
    differently (the linear model cannot score interactions, the trees overfit narrow ranges), as
    rank fusion of several rankers is standard in IR (Cormack, Clarke and Buettcher, SIGIR 2009).
    RANKER holds both models' params under "linear" and "trees"."""

    kind = "blend"

    def __init__(self, linear: LinearRanker, trees: TreeRanker, held_out_gain: float = 0.0) -> None:
        self.linear, self.trees, self.held_out_gain = linear, trees, held_out_gain
        self.late, self.pool = linear.late or trees.late, max(linear.pool, trees.pool)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> BlendRanker:
        return cls(LinearRanker.from_params(params["linear"]), TreeRanker.from_params(params["trees"]),
                   float(params.get("held_out_gain", 0.0)))

    def params(self) -> dict[str, Any]:
        return {"model": self.kind, "pool": self.pool, "late": self.late, "held_out_gain": self.held_out_gain,
                "linear": self.linear.params(), "trees": self.trees.params()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlendRanker) and self.params() == other.params()

    def scores(self, candidates: Candidates, question: str, question_type: str = "", scope: str = "") -> np.ndarray:
        return (_reciprocal_ranks(self.linear.scores(candidates, question, question_type, scope))
                + _reciprocal_ranks(self.trees.scores(candidates, question, question_type, scope)))

    def rank(self, candidates: Candidates, question: str, question_type: str = "", scope: str = "") -> list[tuple[int, float]]:
        """The pool best first by the fused order (ties in pool order)."""
        scores = self.scores(candidates, question, question_type, scope)
        order = sorted(range(len(candidates.rows)), key=lambda i: (-scores[i], i))
        return [(candidates.rows[i], float(scores[i])) for i in order]


def ranker_from_params(params: Mapping[str, Any]) -> LinearRanker | TreeRanker | BlendRanker:
    """The fitted ranker a program's RANKER describes: its "model" ("linear", the default,
    "trees" or "blend")."""
    kind = params.get("model", "linear")
    if kind == "trees":
        return TreeRanker.from_params(params)
    if kind == "blend":
        return BlendRanker.from_params(params)
    if kind == "linear":
        return LinearRanker.from_params(params)
    raise ValueError(f"RANKER: unknown model {kind!r} (linear, trees or blend)")
