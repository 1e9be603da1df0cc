"""Cross-fitting of the question router: when the search scores a routed program on a train
question, the type it routes by comes from a router fitted without that question's conversation;
any other question (a test conversation's, a deployed user's) is routed by the router fitted on
all train questions."""

from __future__ import annotations

import json

import pytest

from automemo.host_fitting import train_questions
from automemo.meta import fit_question_router
from automemo.meta.base import ScoredProgram, ScoredTask
from automemo.meta.offline.generator import CompositionalGenerator, TrainQuestions
from automemo.meta.config import MetaConfig
from automemo.meta.source.recipe import parse_recipe, render_recipe, Recipe
from automemo.toolkit.memolib import QuestionRouter, UnheldQuestion

# Three conversations. In "carol" the timing questions are worded as nowhere else ("blorp"), so a
# router fitted on carol's questions routes them right while one fitted without carol cannot.
ROWS = [
    ("When did Ann move to Lyon?", "TR", "ann"), ("When was the barbecue?", "TR", "ann"),
    ("What colour was the bike in the photo?", "VS", "ann"), ("What colour is the car in the picture?", "VS", "ann"),
    ("When did Ben get his dog?", "TR", "ben"), ("When was the wedding?", "TR", "ben"),
    ("What colour were the shoes in the photo?", "VS", "ben"), ("What colour was the kite in the photo?", "VS", "ben"),
    ("Blorp the photo of the red kite?", "TR", "carol"), ("Blorp the photo of the blue car?", "TR", "carol"),
    ("What colour was the hat in the photo?", "VS", "carol"), ("When did Cleo visit?", "TR", "carol"),
]
QUESTIONS, LABELS, SCOPES = (list(x) for x in zip(*ROWS))


def _without(scope: str) -> QuestionRouter:
    keep = [i for i, s in enumerate(SCOPES) if s != scope]
    return QuestionRouter.fit([QUESTIONS[i] for i in keep], [LABELS[i] for i in keep])


def test_no_question_is_predicted_by_a_router_fitted_on_its_own_conversation():
    router = QuestionRouter.cross_fit(QUESTIONS, LABELS, SCOPES)
    for question, _, scope in ROWS:
        assert router.predict(question, scope) == _without(scope).predict(question)
    # The memorised wording: the router fitted on everything routes carol's "blorp" questions as
    # TR; held out, they look like photo questions, and the search must see that.
    blorp = "Blorp the photo of the red kite?"
    assert QuestionRouter.fit(QUESTIONS, LABELS).predict(blorp) == "TR"
    assert router.predict(blorp, "carol") == "VS"


def test_other_questions_and_other_conversations_get_the_router_fitted_on_everything():
    router = QuestionRouter.cross_fit(QUESTIONS, LABELS, SCOPES)
    full = QuestionRouter.fit(QUESTIONS, LABELS)
    blorp = "Blorp the photo of the red kite?"
    assert (router.labels, router.prior, dict(router.weights)) == (full.labels, full.prior, dict(full.weights))
    assert router.predict(blorp, "a test user") == full.predict(blorp) == "TR"
    assert router.predict("Blorp the photo of a new thing?", "a test user") == full.predict("Blorp the photo of a new thing?")


def test_the_cross_fitted_router_is_plain_data_that_rebuilds_in_a_program():
    params = json.loads(json.dumps(fit_question_router(QUESTIONS, LABELS, SCOPES)))
    assert set(params["held_out"]) == {"ann", "ben", "carol"}
    again = QuestionRouter.from_params(params)
    assert all(again.predict(q, s) == _without(s).predict(q) for q, _, s in ROWS)
    # A routed recipe carries it through render and parse unchanged, and routes by conversation.
    recipe = Recipe(routes={"TR": {"window": 1}}, router=params)
    source = render_recipe(recipe)
    assert parse_recipe(source) == recipe
    assert "self.router.predict(task.instruction, memolib.scope_of(task))" in source
    # Without conversations there is nothing to hold out by: no router at all.
    with pytest.raises(ValueError, match="conversation"):
        fit_question_router(QUESTIONS, LABELS)
    with pytest.raises(ValueError, match="no conversation"):
        QuestionRouter.cross_fit(QUESTIONS, LABELS, SCOPES[:-1] + [""])


def test_a_single_conversation_cannot_be_cross_fitted_and_routing_is_then_off():
    with pytest.raises(ValueError, match="two or more conversations"):
        QuestionRouter.cross_fit(QUESTIONS, LABELS, ["ann"] * len(QUESTIONS))
    generator = CompositionalGenerator(
        MetaConfig(), train=TrainQuestions(tuple(QUESTIONS), tuple(LABELS), ("ann",) * len(QUESTIONS)),
        fit_router=fit_question_router)
    assert generator.router() is None
    generator = CompositionalGenerator(
        MetaConfig(), train=TrainQuestions(tuple(QUESTIONS), tuple(LABELS), tuple(SCOPES)),
        fit_router=fit_question_router)
    assert set(generator.router()["held_out"]) == {"ann", "ben", "carol"}


def test_a_train_question_never_falls_back_to_the_router_that_saw_its_label():
    router = QuestionRouter.cross_fit(QUESTIONS, LABELS, SCOPES)
    blorp = "Blorp the photo of the red kite?"
    # Asked without its conversation, a train question still gets its held-out prediction.
    assert router.predict(blorp) == router.predict(blorp, "carol") == "VS"
    # A question of a train conversation the table lacks (its text changed between the fit and
    # retrieve) is an error, not the plain router's answer.
    with pytest.raises(UnheldQuestion, match="carol"):
        router.predict(blorp + " (with a caption)", "carol")


def test_the_search_fits_on_each_train_question_with_its_conversation(tmp_path, capsys):
    from conversation_data import write_memgallery
    from automemo.benchmarks.conversation.benchmark import ConversationOptions
    from automemo.benchmarks.conversation.memgallery import MemGallery

    bench = MemGallery(ConversationOptions(path=str(write_memgallery(tmp_path / "mg"))))

    class Evaluator:
        def split(self, name):
            return bench.split(name)

    rows = train_questions(Evaluator())
    train = set(bench.describe()["conversations"]["train"])
    assert rows and {scope for _, _, scope, _ in rows} == train
    assert all(task_id for *_, task_id in rows)
