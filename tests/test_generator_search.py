"""The compositional generator inside real pieces: a rendered recipe passes the real quick exam
in the sandbox, and an offline search on Mini-Gallery composes recipes that get evaluated."""

from __future__ import annotations


import pytest

from automemo.cli.exam_cmd import load_inputs
from automemo.paths import EXAMPLE_EPISODES_DIR
from automemo.exam import CHECKS, quick_exam
from automemo.meta.offline.moves import STARTERS
from automemo.meta.source.recipe import Pipeline, Recipe, parse_recipe, render_recipe
from automemo.runs import RunDir
from automemo.toolkit import memolib
from automemo.toolkit.services import MemoServices
from sandboxtools import sandbox
from seedtools import encoders
from tests.searchtools import run_search, write_config

STORE = EXAMPLE_EPISODES_DIR
EPISODES, PARTIALS = load_inputs(STORE, "update", "retrieve", 5)


def _routed() -> Recipe:
    router = memolib.QuestionRouter.fit(["when did we go", "when was it", "what colour is it", "what is it"],
                                        ["T", "T", "F", "F"]).params()
    return Recipe(unit="session", pipeline=Pipeline(window=1, mmr=True, recency=0.2),
                  routes={"T": {"indexes": "bm25", "fusion": "weighted"}}, router=router)


@pytest.mark.bwrap
@pytest.mark.parametrize("recipe", [STARTERS[0], Recipe(unit="multi", pipeline=Pipeline(indexes="bm25", window=1)),
                                    _routed()], ids=["hybrid", "bm25-two-views", "routed"])
def test_a_rendered_recipe_passes_the_quick_exam(recipe):
    source = render_recipe(recipe)
    report = quick_exam(source, sandbox("bwrap"), EPISODES, PARTIALS,
                        services=MemoServices(encoders(), None, STORE), store_root=STORE)
    assert report.passed, report.for_prompt()
    assert report.passed_checks == tuple(CHECKS)


@pytest.mark.slow
@pytest.mark.bwrap
def test_an_offline_search_on_minigallery_evaluates_composed_recipes(tmp_path):
    config = write_config(tmp_path / "search.toml", steps=2, backend="bwrap", seed=1,
                          extra="[meta.offline]\ncompose_rate = 1.0\ntransplant_rate = 0.0\n")
    done = run_search("--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--run-id", "r")
    assert done.returncode == 0, done.stderr[-3000:]
    run = RunDir.open(tmp_path / "runs" / "r")
    evaluated = {e["node_id"] for e in run.evaluations()}
    recipes = [n["id"] for n in run.nodes() if n["id"] in evaluated and n["program_path"]
               and parse_recipe(run.program_source(n["id"])) is not None]
    assert recipes, [(n["id"], n["summary"], n["status"]) for n in run.nodes()]
