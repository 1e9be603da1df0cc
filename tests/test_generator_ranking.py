"""The generator's new stages: the rank move brings the fitted ranker (and the run's router) into
a recipe, fitted once per run, off for the run when nothing can be fitted; recombination keeps
RANK with its weights; a route gives a weak type the question-aware stage most of its train
questions ask for; and a recipe with every new stage passes the quick exam in the real sandbox."""

from __future__ import annotations

import dataclasses
import random

import pytest

from automemo.cli.exam_cmd import load_inputs
from automemo.exam import CHECKS, quick_exam
from automemo.meta import MetaConfig
from automemo.meta.base import ScoredProgram, ScoredTask
from automemo.meta.llm.codeblock import check_program
from automemo.meta.offline.generator import CompositionalGenerator, TrainQuestions
from automemo.meta.offline.moves import recombine
from automemo.meta.offline.ranking import fit_ranker
from automemo.meta.source.recipe import Pipeline, Recipe, parse_recipe, render_recipe, with_values
from automemo.paths import EXAMPLE_EPISODES_DIR
from automemo.toolkit.services import MemoServices
from rankingtools import embed, planted
from sandboxtools import sandbox
from seedtools import encoders

ROUTER = {"labels": ["KR", "VS"], "prior": [-0.69, -0.69], "weights": {"^what": [-1.0, -3.0]}}
NEW_STAGES = {"latest": "text", "coverage": "always", "listing": "text", "rank": True}


@pytest.fixture(scope="module")
def ranker():
    episodes, questions = planted()
    return fit_ranker(episodes, questions, embed, 16, model="linear")


def scored(node_id: int, recipe: Recipe, scores: dict[str, list[float]]) -> ScoredProgram:
    tasks = {f"{t}{i}": ScoredTask(t, s) for t, ss in scores.items() for i, s in enumerate(ss)}
    per = {t: sum(ss) / len(ss) for t, ss in scores.items()}
    return ScoredProgram(node_id, render_recipe(recipe), sum(per.values()) / len(per), 1, per, tasks)


def test_the_rank_move_fits_once_and_brings_the_ranker_and_the_router(ranker):
    calls = []

    def fit(router):
        calls.append(router)
        return ranker

    generator = CompositionalGenerator(MetaConfig(), train=TrainQuestions(("q1", "q2"), ("KR", "VS")),
                                       fit_router=lambda *a: dict(ROUTER), fit_ranker=fit)
    moves = generator.structural_moves(Recipe(), None, [], random.Random(0))
    child, move = moves["rank"]()
    assert move.kind == "rank" and child.pipeline.rank and child.ranker == ranker and child.router == ROUTER
    assert parse_recipe(render_recipe(child)) == child
    generator.structural_moves(Recipe(unit="multi"), None, [], random.Random(0))["rank"]()
    # fitted once for the run, given the run's router and the labelled questions each fold refits it on
    assert [(c.router, c.questions, c.labels) for c in calls] == [(ROUTER, ("q1", "q2"), ("KR", "VS"))]
    assert "rank" not in generator.structural_moves(child, None, [], random.Random(0))


def test_a_ranker_that_cannot_be_fitted_makes_nothing_for_the_run_and_is_fitted_once():
    calls = []

    def fit(router):
        calls.append(router)
        raise ValueError("no train question has evidence")

    generator = CompositionalGenerator(MetaConfig(), fit_ranker=fit)
    assert generator.structural_moves(Recipe(), None, [], random.Random(0))["rank"]() is None
    # The move stays in the table (a resumed run, which never tried the fit, must draw the same
    # moves) and keeps making nothing, so the draw goes on among the others; the fit is not retried.
    assert generator.structural_moves(Recipe(), None, [], random.Random(0))["rank"]() is None
    assert len(calls) == 1


def test_recombination_keeps_rank_with_its_weights(ranker):
    ranked = dataclasses.replace(with_values(Recipe(unit="multi"), {"rank": True}), ranker=ranker)
    for seed in range(20):
        child, _ = recombine(Recipe(pipeline=Pipeline(window=1)), ranked, random.Random(seed))
        render_recipe(child)                                      # raises if RANK lost RANKER
        assert not child.pipeline.rank or child.ranker == ranker


def test_a_route_gives_a_weak_type_the_stage_its_questions_ask_for():
    questions = ("What is Maya's current stance on tea?", "What did he finally decide about the car?",
                 "Which picture shows the red kite?", "Which picture shows a dog?")
    generator = CompositionalGenerator(MetaConfig(), train=TrainQuestions(questions, ("KR", "KR", "VS", "VS")),
                                       fit_router=lambda *a: dict(ROUTER))
    parent = scored(1, Recipe(), {"KR": [0.0] * 8, "VS": [1.0] * 8})
    child, move = generator._route(Recipe(), parent, [], ROUTER, ["KR"], random.Random(0))
    assert child.routes == {"KR": {"latest": "always"}}
    assert "LATEST" in move.summary
    child, _ = generator._route(Recipe(), scored(1, Recipe(), {"KR": [1.0] * 8, "VS": [0.0] * 8}), [], ROUTER,
                                ["VS"], random.Random(0))
    assert "latest" not in child.routes["VS"]                      # no cue: a variant to try instead


def test_a_route_that_takes_a_ranked_donor_s_stages_brings_its_ranker(ranker):
    """A route sends a weak type to the retrieve stages of a ranked recipe that beats the parent
    on it; the route switches RANK on, so the donor's fitted constants come with it (a dev-data
    budgeted search crashed there: "RANK is on but the recipe carries no fitted ranker")."""
    ids = [f"{t}{i}" for t in ("KR", "VS") for i in range(8)]
    train = TrainQuestions(tuple(f"q {t}" for t in ids), tuple(t[:2] for t in ids),
                           tuple("uvwx"[int(t[2:]) % 4] for t in ids), tuple(ids))
    generator = CompositionalGenerator(MetaConfig(), train=train, fit_router=lambda *a: dict(ROUTER))
    parent = scored(1, Recipe(unit="multi"), {"KR": [0.0] * 8, "VS": [1.0] * 8})
    donor_recipe = dataclasses.replace(with_values(Recipe(unit="multi"), {"rank": True}), ranker=ranker)
    donor = scored(2, donor_recipe, {"KR": [1.0] * 8, "VS": [1.0] * 8})
    child, move = generator._route(Recipe(unit="multi"), parent, [(donor, donor_recipe)], ROUTER, ["KR"],
                                   random.Random(0))
    assert move.kind == "route" and child.routes["KR"].get("rank") is True
    assert child.ranker == ranker and parse_recipe(render_recipe(child)) == child


def test_a_recipe_with_every_new_stage_passes_the_quick_exam_in_bubblewrap(ranker):
    recipe = dataclasses.replace(with_values(Recipe(unit="multi"), NEW_STAGES), ranker=ranker, router=ROUTER)
    source = render_recipe(recipe)
    check_program(source)
    assert parse_recipe(source) == recipe
    episodes, partials = load_inputs(EXAMPLE_EPISODES_DIR, "update", "retrieve", 5)
    report = quick_exam(source, sandbox("bwrap"), episodes, partials,
                        services=MemoServices(encoders(), None, EXAMPLE_EPISODES_DIR), store_root=EXAMPLE_EPISODES_DIR)
    assert report.passed, report.for_prompt()
    assert report.passed_checks == tuple(CHECKS)


@pytest.mark.parametrize("gain, ranked", [(0.04, True), (-0.01, False)])
def test_compose_gives_the_first_starter_the_ranker_only_when_its_held_out_check_gains(ranker, gain, ranked):
    generator = CompositionalGenerator(MetaConfig(), train=TrainQuestions(("q1", "q2"), ("KR", "VS")),
                                       fit_router=lambda *a: dict(ROUTER),
                                       fit_ranker=lambda router: {**ranker, "held_out_gain": gain})
    first, move = generator.compose(random.Random(0), [])
    assert first.pipeline.rank is ranked and move.kind == "compose"
    assert (first.ranker is not None) is ranked
    second, _ = generator.compose(random.Random(0), [first])
    assert not second.pipeline.rank or not ranked                  # one ranked starter, then plain ones


def test_the_held_out_gain_compares_each_question_s_fold_order_with_the_fused_order():
    import numpy as np

    from automemo.meta.offline.ranking import Example, held_out_gain
    from automemo.toolkit.memolib import LinearRanker

    columns = ["bm25_rank", "bm25_window_rank", "dense_rank", "dense_window_rank", "position"]
    # Two candidates: fusion puts the irrelevant one first; "position" marks the relevant one.
    features = np.array([[1.0, 1.0, 1.0, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5, 1.0]])
    example = Example("a", features, np.array([False, True]))
    # The fold that held "a" out scores it; the weights fitted on all (here the opposite) do not.
    up, down = {"position": 10.0}, {"position": -10.0}
    assert held_out_gain([example], columns, LinearRanker(down, (up,), {"a": 0}), k=1) == 1.0
    assert held_out_gain([example], columns, LinearRanker(up, (down,), {"a": 0}), k=1) == 0.0


def test_the_held_out_gain_is_measured_against_the_fusion_the_recipes_use_rrf_at_k_60():
    """The compose move gives its starter the ranker when the ranker beats the first stage fused
    as a recipe fuses it (RRF_K 60). A sum of the reciprocal ranks (k = 0) puts a candidate one
    search ranks first ahead of one that two searches rank third; at k = 60 the second leads."""
    import numpy as np

    from automemo.meta.offline.ranking import FIRST_STAGE, Example, fused_first_stage, held_out_gain
    from automemo.toolkit import memolib

    assert Pipeline().rrf_k == memolib.RRF_K == 60
    columns = [*(f"{name}_rank" for name in FIRST_STAGE), "position"]
    alone, agreed = [1.0, 0.0, 0.0, 0.0, 1.0], [0.0, 1 / 3, 1 / 3, 0.0, 0.0]
    features = np.array([alone, agreed])
    assert list(np.argsort(-fused_first_stage(features, columns))) == [1, 0]
    fused = [key for key, _ in memolib.rrf([[7], [3, 4, 9], [5, 6, 9], []])]   # memolib.rrf agrees
    assert fused.index(9) < fused.index(7)
    # The relevant candidate is the one a single search ranks first; the fold's model says so.
    example = Example("a", features, np.array([True, False]))
    ranker = memolib.LinearRanker({}, ({"position": 1.0},), {"a": 0})
    assert held_out_gain([example], columns, ranker, k=1) == 1.0
