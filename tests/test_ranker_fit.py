"""The fitted ranking stage (host fit in automemo.meta.offline.ranking, scoring in
memolib.ranker): cross-fitted by conversation, so a validation question is never scored by
weights fitted on its own conversation; a conversation the fit never saw gets the weights fitted
on all. Checked on a planted-label fixture where a leak would score 1.0 (tests/rankingtools.py),
through the rendered program itself."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from automemo.meta.offline.ranking import ExampleRouting, RankingQuestion, fit_ranker
from automemo.meta.source.recipe import Pipeline, Recipe, RecipeError, render_recipe
from automemo.toolkit import memolib
from rankingtools import HashToolkit, ask, embed, planted, session


@pytest.fixture(scope="module")
def fitted():
    episodes, questions = planted()
    return episodes, questions, fit_ranker(episodes, questions, embed, 16, model="linear")


def program(episodes, ranker, extra=(), router=None):
    recipe = Recipe(pipeline=Pipeline(indexes="bm25", rank=True), payload_units=3, ranker=ranker, router=router)
    namespace: dict = {}
    exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
    memo = namespace["Memo"](HashToolkit())
    for episode in [*episodes, *extra]:
        memo.update(episode)
    return memo


def first_hit_share(memo, questions):
    """Recall@1: the share of questions whose first cited round is relevant."""
    return sum(memo.retrieve(ask(q)).metadata["evidence"][0] in q.clues for q in questions) / len(questions)


def test_a_train_conversation_is_scored_by_its_held_out_weights_where_a_leak_would_score_one(fitted):
    episodes, questions, params = fitted
    assert sorted(params["fold_of"]) == ["c2", "c3", "leaky"]
    leaky = [q for q in questions if q.scope == "leaky"]
    # The same conversation under a name the fit never saw: the weights fitted on all answer it,
    # and they learnt "leaky"'s pattern, so a leak would score 1.0.
    memo = program(episodes, params, extra=[session("fresh", k) for k in range(len(leaky))])
    renamed = [RankingQuestion(q.question.replace("topicleaky", "topicfresh"), q.query.replace("topicleaky", "topicfresh"),
                               "fresh", frozenset(c.replace("leaky/", "fresh/") for c in q.clues)) for q in leaky]
    assert first_hit_share(memo, renamed) == 1.0
    # The validation questions of "leaky" itself: its fold's weights, fitted without it.
    assert first_hit_share(memo, leaky) == 0.0


def test_the_ranker_picks_fold_weights_by_conversation_and_refuses_a_missing_fold(fitted):
    _, _, params = fitted
    ranker = memolib.LinearRanker.from_params(params)
    assert ranker.weights_for("leaky") == ranker.folds[params["fold_of"]["leaky"]]
    assert ranker.weights_for("someone-new") == ranker.weights
    assert ranker.weights_for("") == ranker.weights
    broken = dataclasses.replace(ranker, folds=ranker.folds[:1])
    with pytest.raises(ValueError, match="held out by fold"):
        broken.weights_for("leaky" if params["fold_of"]["leaky"] > 0 else "c3")
    assert memolib.LinearRanker.from_params(ranker.params()) == ranker


def test_no_fit_without_conversations_or_with_only_one():
    episodes, questions = planted()
    nameless = [dataclasses.replace(q, scope="") for q in questions]
    with pytest.raises(ValueError, match="by conversation"):
        fit_ranker(episodes, nameless, embed, 16)
    one = [q for q in questions if q.scope == "leaky"]
    with pytest.raises(ValueError, match="two or more conversations"):
        fit_ranker(episodes, one, embed, 16)


def _labelled(leaky_label: str):
    """The planted fixture's questions with types: every "leaky" question `leaky_label`, the other
    conversations' alternately T and U. All questions share their wording ("What about the ...
    garden?"), so a router that saw "leaky"'s twelve questions types the others as "leaky"'s are."""
    episodes, questions = planted()
    labels = tuple(leaky_label if q.scope == "leaky" else "TU"[i % 2] for i, q in enumerate(questions))
    texts, scopes = tuple(q.question for q in questions), tuple(q.scope for q in questions)
    router = memolib.QuestionRouter.cross_fit(texts, labels, scopes).params()
    return episodes, questions, ExampleRouting(router, texts, labels, scopes)


def test_a_fold_s_ranker_never_saw_that_fold_s_labels_not_even_through_the_types_of_the_others():
    """Nested cross-fitting: the other conversations' questions that "leaky"'s fold is fitted on
    are routed by the router fitted without "leaky". Routed by a router that saw "leaky"'s labels
    (as the held-out table of the router fitted on all routes them: each by a router fitted
    without its own conversation, "leaky" included), relabelling "leaky"'s questions retyped the
    others and changed the weights "leaky"'s questions are scored with."""
    fits, routers = [], []
    for leaky_label in ("T", "U"):
        episodes, questions, routing = _labelled(leaky_label)
        fits.append(fit_ranker(episodes, questions, embed, 16, routing=routing, model="linear"))
        routers.append(routing.router)
    fold = fits[0]["fold_of"]["leaky"]
    assert fits[0]["fold_of"] == fits[1]["fold_of"]
    assert fits[0]["folds"][fold] == fits[1]["folds"][fold]
    assert fits[0]["weights"] != fits[1]["weights"]  # the labels do count, in the fit on all
    leaky = [q for q in questions if q.scope == "leaky"]
    answers = [[program(episodes, params, router=router).retrieve(ask(q)).metadata["evidence"] for q in leaky]
               for params, router in zip(fits, routers)]
    assert answers[0] == answers[1]


def test_the_fit_types_a_question_as_the_program_s_held_out_table_does():
    """A held-out fold's questions, and every question in the fit on all, are typed by the router
    fitted without the question's fold: the router's held-out table (the same folds, the same
    fits). The other folds' questions, in a fold's fit, by a router fitted without both folds."""
    _, questions, routing = _labelled("T")
    router = memolib.QuestionRouter.from_params(routing.router)
    fold_of = routing.fold_of
    assert fold_of == memolib.conversation_folds(q.scope for q in questions)
    for q in questions:
        own = frozenset(s for s, f in fold_of.items() if f == fold_of[q.scope])
        table = router.predict(q.question, q.scope)
        assert routing.type_of(q.question, q.scope) == routing.type_of(q.question, q.scope, own) == table
    c2 = next(q for q in questions if q.scope == "c2")
    both = frozenset({"c2", "leaky"})
    refit = memolib.QuestionRouter.fit([q.question for q in questions if q.scope not in both],
                                       [label for q, label in zip(questions, routing.labels) if q.scope not in both])
    assert routing.type_of(c2.question, "c2", frozenset({"leaky"})) == refit.predict(c2.question)


def test_a_recipe_with_rank_on_but_no_weights_does_not_render():
    with pytest.raises(RecipeError, match="RANKER"):
        render_recipe(Recipe(pipeline=Pipeline(rank=True)))


def _rounds(user: str) -> list:
    """One session whose rounds BM25 and hashed-word dense put first differently for QUESTION."""
    from automemo.contract import EpisodeRecorder, Step

    # "river" and "lemon" hash to the buckets of "heron" and "garden" (tests/rankingtools.py's
    # 16-bucket word hashes): dense puts round 1 first, BM25 (no shared word) never ranks it.
    texts = ["river lemon", "garden visit garden stone tiger", "heron seen far away ocean",
             "nothing relevant here at all", "the pond was dry ocean tiger"]
    steps = tuple(Step(index=i, observation=t, ref=f"{user}/D0:{i + 1}") for i, t in enumerate(texts))
    return [EpisodeRecorder(task_id=f"{user}-D0", benchmark="conv", instruction="session", steps=steps,
                            reward=1.0, success=True, metadata={"conversation": True, "user": user})]


QUESTION = RankingQuestion("Where was the heron garden pond?", "Where was the heron garden pond?", "u", frozenset())


def _first_cited(recipe: Recipe, episodes) -> str:
    namespace: dict = {}
    exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
    memo = namespace["Memo"](HashToolkit())
    for episode in episodes:
        memo.update(episode)
    return memo.retrieve(ask(QUESTION)).metadata["evidence"][0]


def test_the_ranker_reads_the_recipe_s_own_order_so_a_stage_edit_above_it_counts():
    """The `fused` signal is the order the recipe's stages made before the ranking stage: with a
    ranker that weighs only it, the ranked program cites first what its own first stage put
    first, so a BM25 recipe and a dense one rank differently. Before the signal existed the
    ranker ordered only its own pool (both views of both searches, fused), which the recipe's
    stages never touch: both recipes cited the same first round."""
    episodes = _rounds("u")
    ranker = {"model": "linear", "pool": 30, "late": False, "weights": {"fused_rank": 1.0}}
    firsts = {}
    for indexes in ("bm25", "dense"):
        plain = Recipe(pipeline=Pipeline(indexes=indexes), payload_units=3)
        firsts[indexes] = _first_cited(plain, episodes)
        ranked = dataclasses.replace(plain, pipeline=dataclasses.replace(plain.pipeline, rank=True), ranker=ranker)
        assert _first_cited(ranked, episodes) == firsts[indexes]
    assert firsts["bm25"] != firsts["dense"]


def test_the_recipe_s_candidates_join_the_ranker_s_pool_and_the_fit_sees_the_first_stage_fused():
    episodes = _rounds("u")
    store, signals = memolib.UnitStore(), memolib.RankingSignals(embed, 16)
    for episode in episodes:
        turns = memolib.episode_units(episode)
        signals.add(episode, turns, len(turns), store.add_episode(turns))
    allowed = store.allowed_rows("u")
    fused_rank = memolib.ranker.SIGNALS.index("fused_rank")
    # The fit (no prior): reciprocal-rank fusion of the four first-stage searches, pool size 2.
    fit = signals.candidates(QUESTION.question, QUESTION.query, allowed, store, pool=2)
    expected = memolib.rrf([index.search(QUESTION.query, 2, allowed) for index in (*signals.lexical, *signals.dense)])
    assert [fit.rows[i] for i in np.argsort(-fit.values[:, fused_rank], kind="stable")] == [r for r, _ in expected]
    # A recipe's order: its rows join the pool, its order is the signal.
    outside = next(r for r in range(5) if r not in fit.rows)
    mine = signals.candidates(QUESTION.question, QUESTION.query, allowed, store, pool=2,
                              prior=[(outside, 3.0), (fit.rows[0], 1.0)])
    assert outside in mine.rows
    assert mine.values[mine.rows.index(outside), fused_rank] == 1.0
    assert mine.values[mine.rows.index(fit.rows[0]), fused_rank] == 0.5
    assert all(mine.values[i, fused_rank] == 0.0 for i, r in enumerate(mine.rows) if r not in (outside, fit.rows[0]))


def test_the_fit_shows_the_model_the_orders_recipes_compose_not_one_fixed_fusion(monkeypatch):
    """A train question's `fused` signal in the fit is the reciprocal-rank fusion of a recipe
    composition drawn for it (ranking.composition, seeded by the question: deterministic), so
    the model learns what a recipe's own order is worth beside the signals it fuses."""
    from automemo.meta.offline import ranking

    drawn = [ranking.composition(f"u|question {i}") for i in range(200)]
    assert drawn == [ranking.composition(f"u|question {i}") for i in range(200)]
    assert {first for first in ranking.FIRST_STAGES} <= {tuple(n for n in c if n not in ranking.EXTRA_STAGES) for c in drawn}
    assert any("temporal" in c for c in drawn) and not all("temporal" in c for c in drawn)
    episodes, questions = planted()
    columns_of = lambda cols, name: cols.index(name)  # noqa: E731
    monkeypatch.setattr(ranking, "composition", lambda key: ("bm25",))
    examples, columns = ranking.ranking_examples(episodes, questions, embed, 16)
    fused, bm25 = columns_of(columns, "fused_rank"), columns_of(columns, "bm25_rank")
    assert examples and all(np.array_equal(ex.features[:, fused], ex.features[:, bm25]) for ex in examples)
    monkeypatch.setattr(ranking, "COMPOSED", False)   # the four searches fused, whatever is drawn
    examples, _ = ranking.ranking_examples(episodes, questions, embed, 16)
    assert not all(np.array_equal(ex.features[:, fused], ex.features[:, bm25]) for ex in examples)


def test_the_ranker_sees_whether_a_round_carries_a_picture_and_its_length():
    """`pictured` (a turn that cites an image id beside its own, or has a screenshot) and
    `length` are the unit's own properties, which no ranking scores: a ranker that weighs only
    `pictured` cites first the one round a photo was shared in."""
    from automemo.contract import EpisodeRecorder, Step

    steps = tuple(Step(index=i, observation="we talked about the garden" + " and more" * i, ref=f"u/D0:{i + 1}",
                       metadata={"image_ids": ["u/img7"]} if i == 3 else {}) for i in range(6))
    episode = EpisodeRecorder(task_id="u-D0", benchmark="conv", instruction="session", steps=steps, reward=1.0,
                              success=True, metadata={"conversation": True, "user": "u"})
    store, signals = memolib.UnitStore(), memolib.RankingSignals(embed, 16)
    turns = memolib.episode_units(episode)
    signals.add(episode, turns, len(turns), store.add_episode(turns))
    pool = signals.candidates("the garden?", "the garden", store.allowed_rows("u", without="image"), store)
    pictured, length = memolib.ranker.SIGNALS.index("pictured"), memolib.ranker.SIGNALS.index("length")
    assert [store.units[r].evidence[0] for i, r in enumerate(pool.rows) if pool.values[i, pictured] == 1.0] == ["u/D0:4"]
    by_position = sorted(range(len(pool.rows)), key=lambda i: store.units[pool.rows[i]].position)
    assert list(pool.values[by_position, length]) == sorted(pool.values[:, length]) and pool.values[:, length].max() <= 1.0
    ranker = {"model": "linear", "pool": 30, "late": False, "weights": {"pictured": 1.0}}
    recipe = Recipe(pipeline=Pipeline(indexes="bm25", rank=True), payload_units=3, ranker=ranker)
    namespace: dict = {}
    exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
    memo = namespace["Memo"](HashToolkit())
    memo.update(episode)
    assert memo.retrieve(ask(RankingQuestion("the garden?", "the garden", "u", frozenset()))).metadata["evidence"][0] == "u/D0:4"


def test_with_two_conversations_a_held_out_fits_questions_get_no_type_instead_of_failing():
    from automemo.meta.offline.ranking import ExampleRouting
    from automemo.toolkit.memolib import QuestionRouter

    questions = ("when did we go", "what did we eat", "when did it rain", "what was served")
    labels, scopes = ("time", "food", "time", "food"), ("a", "a", "b", "b")
    router = QuestionRouter.cross_fit(questions, labels, scopes).params()
    routing = ExampleRouting(router, questions, labels, scopes)
    # Fold "a" held out: a question of "b" would need a router fitted without both: none.
    assert routing.type_of("when did we go", "b", frozenset({"a"})) == ""
    # The fit on all types a question by the router fitted without its own fold.
    assert routing.type_of("when did it rain", "b") in {"time", "food"}
