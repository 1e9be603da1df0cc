"""The generator's session-level stages (memolib's passages: a session, a window or a session
summary ranked beside the turns; session fusion; session diversity): moves reach them, recipes
with them render, parse back and pass the quick exam in bubblewrap, and each changes what a
recipe cites as it should."""

from __future__ import annotations

import random

import pytest

from automemo.cli.exam_cmd import load_inputs
from automemo.contract import EpisodeRecorder, Step
from automemo.exam import CHECKS, quick_exam
from automemo.meta.llm.codeblock import check_program
from automemo.meta.offline.moves import add_stage, pipeline_additions, pipeline_removals, pipeline_swaps, tune_stage
from automemo.meta.source.recipe import Pipeline, Recipe, describe, parse_recipe, render_recipe, with_values
from automemo.paths import EXAMPLE_EPISODES_DIR
from automemo.toolkit.services import MemoServices
from sandboxtools import sandbox
from seedtools import encoders, question, toolkit

STAGES = {
    "passages session": {"passages": "session"},
    "passages window": {"passages": "window"},
    "passages summary": {"passages": "summary", "passage_length": 2},
    "session fusion": {"session_weight": 0.5},
    "session diversity": {"session_spread": 2},
}
ROUTER = {"labels": ["KR", "VS"], "prior": [-0.69, -0.69], "weights": {"^what": [-1.0, -3.0]}}


def session(sid, texts, user="u1"):
    steps = tuple(Step(index=i, observation=text, ref=f"{sid}:{i + 1}") for i, text in enumerate(texts))
    return EpisodeRecorder(task_id=sid, benchmark="conv", instruction=f"Conversation session {sid}",
                           steps=steps, reward=1.0, success=True,
                           metadata={"conversation": True, "user": user, "session_id": sid})


# The Kyoto trip's words are spread over two rounds of D1; one round of D2 repeats "temple visit".
TRIP = [
    session("D1", ["We booked the trip to Kyoto.", "The temple visit is on Friday morning.", "Bring the camera."]),
    session("D2", ["Temple visit, temple visit, the temple visit day: a temple visit every day.", "Laundry again."]),
    session("D3", ["The dentist is on Monday.", "Buy milk."]),
]
TRIP_ASKED = question("Which day is the temple visit on our Kyoto trip?", user="u1")
# One round of D1 says "museum visit" most, but D2 is the session about the Louvre; D3 mentions a
# museum once.
LOUVRE = [
    session("D1", ["When is the museum visit?", "The museum visit is on Friday: museum visit, museum visit."]),
    session("D2", ["Our Louvre trip on Friday.", "The Louvre paintings on our visit day.", "The Louvre cafe was nice.",
                   "Laundry again."]),
    session("D3", ["A museum ticket costs ten euros."]),
]
LOUVRE_ASKED = question("Which day was our Louvre museum visit?", user="u1")
PLAIN = Recipe(pipeline=Pipeline(indexes="bm25"), payload_units=4)


def cited(tmp_path, recipe, episodes, asked):
    namespace: dict = {}
    exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
    memo = namespace["Memo"](toolkit(tmp_path))
    for episode in episodes:
        memo.update(episode)
    return memo.retrieve(asked).metadata["evidence"]


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_recipe_with_each_session_stage_renders_parses_back_and_describes_it(stage):
    recipe = with_values(Recipe(), STAGES[stage])
    source = render_recipe(recipe)
    check_program(source)
    assert parse_recipe(source) == recipe
    assert describe(recipe) != describe(Recipe())


def test_routes_can_give_each_type_its_own_kind_of_passage():
    recipe = Recipe(routes={"KR": {"passages": "summary"}, "VS": {"passages": "window", "passage_length": 2}},
                    router=ROUTER, pipeline=Pipeline(passages="session"))
    assert parse_recipe(render_recipe(recipe)) == recipe


def test_add_remove_swap_and_tune_reach_the_session_stages():
    added = {stage for stage, _ in pipeline_additions(Recipe().pipeline)}
    assert {"passages", "session_fusion", "session_diversity"} <= added
    full = with_values(Recipe(), {"passages": "window", "session_weight": 0.5})
    assert {"passages", "session_fusion"} <= {stage for stage, _ in pipeline_removals(full.pipeline)}
    swaps = dict(pipeline_swaps(full.pipeline))
    assert swaps["session_fusion→session_diversity"] == {"session_weight": 0.0, "session_spread": 2}
    assert swaps["passages summary"] == {"passages": "summary"} and "passages window" not in swaps
    assert swaps["passages→late"] == {"passages": "off", "late": True}
    rng = random.Random(5)
    children = [add_stage(Recipe(), rng)[0].pipeline for _ in range(80)]
    assert any(p.passages == "window" for p in children) and any(p.session_weight == 0.5 for p in children)
    assert any(p.session_spread == 2 for p in children)
    tuned = {tune_stage(full, random.Random(s), 0.5, stage="passages")[0].pipeline for s in range(10)}
    assert any((p.passage_length, p.passage_top, p.passage_weight) != (4, 3, 0.25) for p in tuned)


def test_window_passages_bring_the_trip_round_up_in_a_recipe(tmp_path):
    assert cited(tmp_path / "plain", PLAIN, TRIP, TRIP_ASKED)[0] == "D2:1"
    windows = with_values(PLAIN, {"passages": "window", "passage_length": 2, "passage_top": 1, "passage_weight": 2.0})
    # the best window (D1's first two rounds) stands for its best round
    assert cited(tmp_path / "windows", windows, TRIP, TRIP_ASKED)[0] == "D1:1"


def test_session_fusion_moves_the_best_session_s_turns_up(tmp_path):
    assert cited(tmp_path / "plain", PLAIN, LOUVRE, LOUVRE_ASKED) == ["D2:2", "D1:2", "D1:1", "D2:1"]
    fused = cited(tmp_path / "fused", with_values(PLAIN, {"session_weight": 0.5}), LOUVRE, LOUVRE_ASKED)
    assert fused[:3] == ["D2:2", "D2:1", "D1:2"]


def test_session_diversity_cites_the_third_session_third(tmp_path):
    spread = cited(tmp_path / "spread", with_values(PLAIN, {"session_spread": 3}), LOUVRE, LOUVRE_ASKED)
    assert spread == ["D2:2", "D1:2", "D3:1", "D1:1"]    # D3 was not among the plain four at all


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_recipe_with_each_session_stage_passes_the_quick_exam_in_bubblewrap(stage):
    source = render_recipe(with_values(Recipe(unit="multi"), STAGES[stage]))
    episodes, partials = load_inputs(EXAMPLE_EPISODES_DIR, "update", "retrieve", 5)
    report = quick_exam(source, sandbox("bwrap"), episodes, partials,
                        services=MemoServices(encoders(), None, EXAMPLE_EPISODES_DIR), store_root=EXAMPLE_EPISODES_DIR)
    assert report.passed, report.for_prompt()
    assert report.passed_checks == tuple(CHECKS)
