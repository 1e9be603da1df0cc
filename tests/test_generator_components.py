"""The offline generator's recipe stages for memolib's retrieval components (late interaction,
entities, sessions-then-turns, RM3 feedback, temporal anchoring, speakers, passages; the
session-level stages: tests/test_generator_sessions.py): moves reach them,
recipes with them render, parse back and run, and a stage changes what a recipe retrieves."""

from __future__ import annotations

import random

import pytest

from automemo.contract import EpisodeRecorder, Step
from automemo.meta.llm.codeblock import check_program
from automemo.meta.offline.moves import (add_stage, pipeline_additions, pipeline_removals, pipeline_swaps, remove_stage,
                                 swap_stage)
from automemo.meta.source.recipe import Pipeline, Recipe, describe, parse_recipe, render_recipe, with_values
from seedtools import question, toolkit

COMPONENTS = {"late": {"late": True}, "entities": {"entities": True}, "hierarchy": {"sessions": 2},
              "feedback": {"feedback": True}, "temporal": {"temporal": True}, "speakers": {"speakers": True},
              "passages": {"passages": "window"}}


def session(sid, date, rounds, user="u1"):
    steps = tuple(Step(index=i, observation=text, ref=f"{sid}:{i + 1}",
                       metadata={"speaker": speaker, "time": date})
                  for i, (speaker, text) in enumerate(rounds))
    return EpisodeRecorder(task_id=sid, benchmark="conv", instruction=f"Conversation session {sid} ({date})",
                           steps=steps, reward=1.0, success=True,
                           metadata={"conversation": True, "user": user, "session_id": sid, "time": date})


EPISODES = [
    session("D1", "2024-07-15", [("Maya", "Maya talked about the library books and the library cafe."),
                                 ("Sam", "The library has a new reading room and quiet library corners.")]),
    session("D2", "2024-07-29", [("Maya", "Yesterday I spent a quiet afternoon reading."),
                                 ("Sam", "Today I am planning the next bake.")]),
]


def memory(tmp_path, recipe):
    namespace: dict = {}
    exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
    memo = namespace["Memo"](toolkit(tmp_path))
    for episode in EPISODES:
        memo.update(episode)
    return memo


def test_add_and_remove_stage_reach_every_component():
    base = Recipe()
    added = {stage for stage, _ in pipeline_additions(base.pipeline)}
    assert set(COMPONENTS) <= added
    full = with_values(base, {k: v for changes in COMPONENTS.values() for k, v in changes.items()})
    assert set(COMPONENTS) <= {stage for stage, _ in pipeline_removals(full.pipeline)}
    rng = random.Random(3)
    seen = set()
    for _ in range(60):
        child, move = add_stage(base, rng)
        seen |= {stage for stage, changes in COMPONENTS.items() if all(getattr(child.pipeline, k) == v
                                                                         for k, v in changes.items())}
    assert seen == set(COMPONENTS)
    child, move = remove_stage(full, random.Random(0))
    assert move.kind == "remove_stage" and child != full


def test_swap_stage_trades_a_component_the_recipe_has_for_one_it_lacks():
    recipe = with_values(Recipe(), {"temporal": True})
    swaps = dict(pipeline_swaps(recipe.pipeline))
    assert swaps["temporal→late"] == {"temporal": False, "late": True}
    assert len([s for s in swaps if s.startswith("temporal→")]) == len(COMPONENTS) - 1
    assert not [s for s in dict(pipeline_swaps(Recipe().pipeline)) if "→" in s]
    rng = random.Random(1)
    traded = [swap_stage(recipe, rng)[0] for _ in range(40)]
    assert any(not r.pipeline.temporal and r.pipeline.late for r in traded)


@pytest.mark.parametrize("stage", sorted(COMPONENTS))
def test_a_recipe_with_each_component_renders_parses_back_and_describes_it(stage):
    recipe = with_values(Recipe(), COMPONENTS[stage])
    source = render_recipe(recipe)
    check_program(source)
    assert parse_recipe(source) == recipe
    assert describe(recipe) != describe(Recipe())


def test_routes_can_switch_a_component_on_for_one_type():
    recipe = Recipe(routes={"TR": {"temporal": True}},
                    router={"labels": ["A", "TR"], "prior": [-0.69, -0.69], "weights": {"^when": [-3.0, -0.1]}})
    assert parse_recipe(render_recipe(recipe)) == recipe


def test_every_component_runs_in_a_recipe_and_temporal_anchoring_brings_in_the_planted_round(tmp_path):
    everything = with_values(Recipe(payload_units=3), {k: v for c in COMPONENTS.values() for k, v in c.items()})
    ask = question("What did Maya do at the library on 2024-07-28?", user="u1")
    assert memory(tmp_path / "all", everything).retrieve(ask).metadata["evidence"]
    plain = Recipe(pipeline=Pipeline(indexes="bm25"), payload_units=3)
    assert "D2:1" not in memory(tmp_path / "plain", plain).retrieve(ask).metadata["evidence"]
    dated = with_values(plain, {"temporal": True})
    # Fused by reciprocal rank, the anchored "yesterday" joins the lexical hits (and leads the
    # date ranking itself: tests/test_memolib_temporal.py).
    assert "D2:1" in memory(tmp_path / "dated", dated).retrieve(ask).metadata["evidence"]


def test_a_named_speaker_moves_their_round_up_in_a_recipe(tmp_path):
    ask = question("What did Sam say about the library?", user="u1")
    plain = Recipe(pipeline=Pipeline(indexes="bm25"), payload_units=3)
    assert memory(tmp_path / "plain", plain).retrieve(ask).metadata["evidence"][0] == "D1:1"
    aware = with_values(plain, {"speakers": True})
    assert memory(tmp_path / "aware", aware).retrieve(ask).metadata["evidence"][0] == "D1:2"
