"""memolib.QuestionRouter: a question's type predicted from its text alone, fitted on labelled
questions and carried as plain data that rebuilds the same router inside a program."""

from __future__ import annotations

import json

import pytest

from automemo.toolkit.memolib import QuestionRouter, held_out_recall, router_features

TRAIN = [
    ("When did Ann move to Lyon?", "TR"), ("When was the barbecue?", "TR"), ("When did Ben get his dog?", "TR"),
    ("What colour was the bike in the photo?", "VS"), ("What colour is the car in the picture?", "VS"),
    ("What colour were the shoes in the photo?", "VS"),
    ("How many cats does Cleo have?", "CNT"), ("How many times did we go hiking?", "CNT"),
    ("How many sisters does Dan have?", "CNT"),
]


def test_features_keep_question_words_pairs_and_the_opening():
    feats = router_features("How many cats?")
    assert {"how", "many", "cats", "how many", "many cats", "^how", "^how many"} == set(feats)
    assert router_features("") == []


def test_the_router_predicts_unseen_questions_by_their_wording():
    router = QuestionRouter.fit(*zip(*TRAIN))
    assert router.labels == ("CNT", "TR", "VS")
    assert router.accuracy(*zip(*TRAIN)) == 1.0
    assert router.predict("When is the wedding?") == "TR"
    assert router.predict("how many apples did she buy") == "CNT"
    assert router.predict("What colour was the kite in the photo?") == "VS"
    scores = router.scores("When is the wedding?")
    assert set(scores) == set(router.labels) and scores["TR"] == max(scores.values())


def test_params_are_plain_json_and_rebuild_the_same_router():
    router = QuestionRouter.fit(*zip(*TRAIN), max_features=5)
    params = json.loads(json.dumps(router.params()))
    assert len(params["weights"]) == 5  # only the most informative features are kept
    again = QuestionRouter.from_params(params)
    assert again == router
    assert all(again.predict(q) == router.predict(q) for q, _ in TRAIN)


def test_a_feature_seen_once_is_not_kept():
    router = QuestionRouter.fit(["When x?", "When y?", "Where z?", "Where w?"], ["T", "T", "P", "P"])
    assert "x" not in router.weights and "^when" in router.weights


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="2 questions but 1 labels"):
        QuestionRouter.fit(["a", "b"], ["x"])
    with pytest.raises(ValueError, match="no labelled question"):
        QuestionRouter.fit([], [])


def test_held_out_recall_measures_types_on_questions_the_router_did_not_see():
    questions, labels = zip(*TRAIN)
    assert QuestionRouter.fit(questions, labels).accuracy(questions, labels) == 1.0
    recall = held_out_recall(list(questions) + ["Which is it?"], list(labels) + ["ODD"], folds=3)
    assert recall["TR"] == recall["VS"] == recall["CNT"] == 1.0
    assert recall["ODD"] == 0.0  # a type with one question is never seen when that question is held out
