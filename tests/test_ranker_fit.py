"""The fitted ranking stage (host fit in automemo.meta.offline.ranking, scoring in
memolib.ranker): cross-fitted by conversation, so a validation question is never scored by
weights fitted on its own conversation; a conversation the fit never saw gets the weights fitted
on all. Checked on a planted-label fixture where a leak would score 1.0 (tests/rankingtools.py),
through the rendered program itself."""

from __future__ import annotations

import dataclasses

import pytest

from automemo.meta.offline.ranking import RankingQuestion, fit_ranker
from automemo.meta.source.recipe import Pipeline, Recipe, RecipeError, render_recipe
from automemo.toolkit import memolib
from rankingtools import HashToolkit, ask, embed, planted, session


@pytest.fixture(scope="module")
def fitted():
    episodes, questions = planted()
    return episodes, questions, fit_ranker(episodes, questions, embed, 16, model="linear")


def program(episodes, ranker, extra=()):
    recipe = Recipe(pipeline=Pipeline(indexes="bm25", rank=True), payload_units=3, ranker=ranker)
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


def test_a_recipe_with_rank_on_but_no_weights_does_not_render():
    with pytest.raises(RecipeError, match="RANKER"):
        render_recipe(Recipe(pipeline=Pipeline(rank=True)))
