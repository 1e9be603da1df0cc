"""The compositional generator: recipes render to programs that parse back (and stop being
recipes once edited, while staying tunable), each structural move changes what it claims,
recombination takes stages from both parents, routes follow the per-type evidence, choices are
deterministic under a seed, and what one call is told is its own."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from automemo.meta.config import OfflineMetaConfig
from automemo.meta.context import GenerationContext
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.meta import MetaConfig, ParentView
from automemo.meta.base import MetaAgent, Proposal, ScoredProgram, ScoredTask
from automemo.meta.llm.codeblock import check_program
from automemo.meta.offline.generator import CompositionalGenerator, TrainQuestions
from automemo.meta.mixed import MixedMetaAgent
from automemo.meta.offline.moves import (STARTERS, add_stage, recombine, remove_stage, route, swap_stage,
                                 tune_stage)
from automemo.meta.offline.agent import OfflineMetaAgent
from automemo.meta.source.recipe import KNOBS, Pipeline, Recipe, parse_recipe, render_recipe, value_of
from automemo.meta.source.tunables import apply, parse_tunables

ROUTER = {"labels": ["A", "B"], "prior": [-0.69, -0.69], "weights": {"^when": [-1.0, -3.0]}}


def _fit(questions, labels, scopes=()):
    return dict(ROUTER)


def _values(recipe: Recipe) -> dict:
    return {k.field: value_of(recipe, k) for k in KNOBS}


def _changed_fields(a: Recipe, b: Recipe) -> set[str]:
    va, vb = _values(a), _values(b)
    return {f for f in va if va[f] != vb[f]}


@pytest.mark.parametrize("recipe", [*STARTERS, Recipe(routes={"A": {"indexes": "bm25"}}, router=ROUTER)])
def test_a_rendered_recipe_parses_back_and_declares_its_stages_as_tunables(recipe):
    source = render_recipe(recipe)
    check_program(source)
    assert parse_recipe(source) == recipe
    names = {t.name for t in parse_tunables(source)}
    assert {k.constant for k in KNOBS} <= names


def test_perturbing_a_tunable_keeps_a_recipe_and_an_llm_edit_keeps_it_tunable():
    source = render_recipe(Recipe())
    turned = apply(source, {"WINDOW": 2})
    assert parse_recipe(turned).pipeline.window == 2
    edited = turned.replace("class Memo", "# an LLM's note\nclass Memo")
    assert parse_recipe(edited) is None            # no longer the template's rendering
    assert {"WINDOW", "DEPTH", "INDEXES"} <= {t.name for t in parse_tunables(edited)}


def test_each_structural_move_changes_what_it_claims():
    rng = random.Random(0)
    base = Recipe()
    added, move = add_stage(base, rng)
    assert move.kind == "add_stage" and set(move.changes) == _changed_fields(base, added)
    removed, move = remove_stage(dataclasses.replace(base, pipeline=Pipeline(window=2, mmr=True)), rng)
    assert move.kind == "remove_stage" and _changed_fields(Recipe(pipeline=Pipeline(window=2, mmr=True)),
                                                           removed) == set(move.changes)
    swapped, move = swap_stage(base, rng)
    assert move.kind == "swap_stage" and set(move.changes) == _changed_fields(base, swapped)
    tuned, move = tune_stage(base, rng, 0.25, stage="fusion")
    assert _changed_fields(base, tuned) <= {"rrf_k", "dense_weight"} and _changed_fields(base, tuned)
    for child in (added, removed, swapped, tuned):
        assert parse_recipe(render_recipe(child)) == child


def test_recombination_takes_stages_from_both_parents():
    a = Recipe(unit="turn", pipeline=Pipeline(indexes="bm25", window=2))
    b = Recipe(unit="session", payload_units=5, pipeline=Pipeline(fusion="weighted", mmr=True, recency=0.4))
    for seed in range(8):
        child, move = recombine(a, b, random.Random(seed), name_b="#2")
        sa, sb, sc = a.stages(), b.stages(), child.stages()
        assert all(sc[s] in (sa[s], sb[s]) for s in sc)
        assert any(sc[s] == sa[s] != sb[s] for s in sc) and any(sc[s] == sb[s] != sa[s] for s in sc)
        assert set(move.changes["from_partner"]) == {s for s in sc if sc[s] == sb[s] != sa[s]}


def _scored(node_id: int, recipe: Recipe, scores: dict[str, list[float]]) -> ScoredProgram:
    tasks = {f"{t}{i}": ScoredTask(t, s) for t, ss in scores.items() for i, s in enumerate(ss)}
    per = {t: sum(ss) / len(ss) for t, ss in scores.items()}
    return ScoredProgram(node_id, render_recipe(recipe), sum(per.values()) / len(per), 1, per, tasks)


def scoped_train(conversations: dict[str, str]) -> TrainQuestions:
    """Train questions for task ids `A0`.. / `B0`.. of the given conversations (task id -> conversation)."""
    ids = sorted(conversations)
    return TrainQuestions(tuple(f"q {t}" for t in ids), tuple(t[0] for t in ids),
                          tuple(conversations[t] for t in ids), tuple(ids))


CROSS_FITTED = MetaConfig(offline=OfflineMetaConfig(cross_fit_routes=True))

FOUR = {f"{t}{i}": "uvwx"[i % 4] for t in "AB" for i in range(8)}
"""A and B tasks 0..7, dealt to four conversations."""


def test_a_route_sends_the_weak_type_to_the_recipe_that_beats_the_parent_on_it():
    parent = _scored(1, Recipe(), {"A": [0.0] * 8, "B": [1.0] * 8})
    donor_recipe = Recipe(pipeline=Pipeline(indexes="bm25", window=1))
    donor = _scored(2, donor_recipe, {"A": [1.0] * 8, "B": [0.0] * 8})
    for config in (MetaConfig(), CROSS_FITTED):
        generator = CompositionalGenerator(config, train=scoped_train(FOUR), fit_router=_fit)
        child, move = generator._route(Recipe(), parent, [(donor, donor_recipe)], ROUTER, ["A"], random.Random(0))
        assert move.kind == "route" and child.router == ROUTER
        assert ("held out by conversation: +1.000 per question" in move.summary) is (config is CROSS_FITTED)
    assert child.routes == {"A": {"indexes": "bm25", "window": 1}}
    assert child.pipeline_for("A") == donor_recipe.pipeline and child.pipeline_for("B") == Recipe().pipeline
    assert parse_recipe(render_recipe(child)) == child


def test_structural_moves_are_deterministic_under_a_seed_and_use_the_evidence(seeds_dir):
    tasks = tuple(TaskResult(f"{t}{i}", t, s) for t, s in (("A", 0.0), ("B", 1.0)) for i in range(8))
    evaluation = EvaluationResult(mean=0.5, n_scored=16, per_category={"A": 0.0, "B": 1.0}, metrics={}, tasks=tasks)
    parent = ParentView(1, render_recipe(Recipe()), 0.5, 1, evaluation)
    other = _scored(2, Recipe(unit="window", pipeline=Pipeline(indexes="bm25", window=1)), {"A": [1.0] * 8, "B": [0.5] * 8})
    # the structural moves alone: the other operators are off
    config = MetaConfig(offline=OfflineMetaConfig(perturb_rate=0.0, transplant_rate=0.0, crossover_rate=0.0))

    def agent():
        return OfflineMetaAgent(config, seeds_dir=seeds_dir, train=TrainQuestions(("q1", "q2"), ("A", "B")),
                                fit_router=_fit)

    runs = [[a.propose(GenerationContext.build(parent, node_id=5, seed=s, scored=[other])) for s in range(12)]
            for a in (agent(), agent())]
    assert [p.source for p in runs[0]] == [p.source for p in runs[1]]
    kinds = {p.diagnosis["mutation"]["kind"] for p in runs[0]}
    assert {"route", "recombine"} <= kinds <= {"route", "recombine", "tune_stage", "add_stage", "swap_stage",
                                                "remove_stage"}
    assert all(parse_recipe(p.source) not in (None, Recipe()) for p in runs[0])


def _evaluation(per: dict[str, float]) -> EvaluationResult:
    tasks = tuple(TaskResult(f"{c}{i}", c, s) for c, s in per.items() for i in range(3))
    return EvaluationResult(mean=sum(per.values()) / len(per), n_scored=len(tasks), per_category=per,
                            metrics={}, tasks=tasks)


@pytest.fixture
def seeds_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "seeds"
    folder.mkdir()
    (folder / "no_memory.py").write_text("class Memo:\n    pass\n")
    (folder / "alpha.py").write_text('"""a seed."""\nTOP_K = 5  # tunable: int 1..30\n\n\nclass Memo:\n'
                                     "    def retrieve(self, task):\n        return TOP_K\n")
    return folder


def test_the_mutator_composes_recipes_from_a_non_recipe_parent_and_evolves_recipe_parents(seeds_dir):
    config = MetaConfig(offline=OfflineMetaConfig(compose_rate=1.0, transplant_rate=0.0, perturb_rate=0.0))
    mutator = OfflineMetaAgent(config, seeds_dir=seeds_dir)
    root = ParentView(0, "class Memo:\n    pass\n", 0.1, 1, _evaluation({"A": 0.1, "B": 0.1}))
    first = mutator.propose(GenerationContext.build(root, node_id=1, seed=0, tree_sources=[root.source]))
    assert parse_recipe(first.source) == STARTERS[0] and first.diagnosis["mutation"]["kind"] == "compose"
    second = mutator.propose(GenerationContext.build(root, node_id=2, seed=0,
                                                     tree_sources=[root.source, first.source]))
    assert parse_recipe(second.source) == STARTERS[1]          # untried starters first
    parent = ParentView(1, first.source, 0.5, 1, _evaluation({"A": 0.2, "B": 0.8}))
    child = mutator.propose(GenerationContext.build(parent, node_id=3, seed=0))
    assert parse_recipe(child.source) not in (None, STARTERS[0])
    assert child.diagnosis["mutation"]["kind"] in {"add_stage", "remove_stage", "swap_stage", "tune_stage"}


def test_what_one_call_was_told_stays_its_own(seeds_dir):
    """The mutator keeps nothing between calls: each proposal follows its own context's tree,
    whatever was proposed before it from another tree."""
    mutator = OfflineMetaAgent(MetaConfig(offline=OfflineMetaConfig(compose_rate=1.0, transplant_rate=0.0)), seeds_dir=seeds_dir)
    root = ParentView(0, "class Memo:\n    pass\n", 0.1, 1, None)
    tried = render_recipe(STARTERS[0])
    fresh = GenerationContext.build(root, node_id=5, seed=0, tree_sources=[root.source])
    told = GenerationContext.build(root, node_id=5, seed=0, tree_sources=[root.source, tried])
    results = [mutator.propose(c).source for c in (fresh, told, fresh)]
    assert [parse_recipe(r) for r in results] == [STARTERS[0], STARTERS[1], STARTERS[0]]


class _ScriptedLLMAgent(MetaAgent):
    """Stands in for the LLM meta agent: writes a fixed child and records that it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    def propose(self, context):
        self.asked += 1
        return Proposal("class Memo:\n    pass\n", "llm rewrite")

    def repair(self, context):
        raise AssertionError("not asked in this test")

    def initialize(self, task_description, *, node_id, seed):
        raise AssertionError("not asked in this test")


LLM_WRITTEN = ('"""written by an LLM, no recipe."""\nDEPTH = 12  # tunable: int 1..40\n\n\nclass Memo:\n'
               "    def retrieve(self, task):\n        return DEPTH\n")


def test_mixed_mode_tunes_an_llm_written_child_and_leaves_other_parents_to_the_llm(seeds_dir):
    llm = _ScriptedLLMAgent()
    mixed = MixedMetaAgent(llm, OfflineMetaAgent(MetaConfig(), seeds_dir=seeds_dir), rate=1.0)
    tuned = mixed.propose(GenerationContext.build(ParentView(4, LLM_WRITTEN, 0.3, 1, None), node_id=5, seed=0))
    assert llm.asked == 0 and tuned.summary.startswith("perturb DEPTH 12→")
    assert parse_tunables(tuned.source)[0].value != 12
    untunable = mixed.propose(GenerationContext.build(ParentView(0, "class Memo:\n    pass\n", 0.1, 1, None), node_id=6, seed=0))
    assert llm.asked == 1 and untunable.summary == "llm rewrite"
    never = MixedMetaAgent(llm, OfflineMetaAgent(MetaConfig(), seeds_dir=seeds_dir), rate=0.0)
    never.propose(GenerationContext.build(ParentView(4, LLM_WRITTEN, 0.3, 1, None), node_id=5, seed=0))
    assert llm.asked == 2


def test_the_router_fitted_for_children_predicts_held_out_questions():
    from automemo.meta import fit_question_router
    from automemo.toolkit import memolib

    things = ["the red kite", "my sister's bike", "the old camera", "our garden", "the new sofa", "that poster"]
    asked = {"TR": "When did I first mention {}?", "VS": "Which picture shows {}?", "CD": "Did I ever say I liked {}?"}
    train = [(q.format(t), label) for label, q in asked.items() for t in things[:4]]
    params = fit_question_router([q for q, _ in train], [l for _, l in train], ["ann", "ben"] * (len(train) // 2))
    router = memolib.QuestionRouter.from_params(params)
    held_out = [(q.format(t), label) for label, q in asked.items() for t in things[4:]]
    assert all(router.predict(q, "a new user") == label for q, label in held_out)
    assert parse_recipe(render_recipe(Recipe(router=params, routes={"TR": {"recency": 0.5}}))).router == params


def test_a_recipe_with_image_units_cites_the_pictures_id_and_routes_can_leave_them_out(tmp_path):
    from automemo.episode_store import EpisodeStore
    from automemo.contract import ImageRef
    from seedtools import conversation, question, toolkit

    pic = ImageRef(path="images/ab/abc.png", sha256="abc", caption="a zorblat, a striped teapot creature")
    rounds = [("s/D1:1", "Ann: look at this"), ("s/D1:2", "Ben: what is it?"), ("s/D1:3", "Ann: a zorblat")]

    def memory(recipe):
        namespace: dict = {}
        exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
        memo = namespace["Memo"](toolkit(tmp_path, EpisodeStore(tmp_path / "store").root))
        memo.update(conversation("s", rounds, images={0: ("s/D1:IMG_1", pic)}, user="ann"))
        return memo

    ask = question("Which picture showed a striped teapot creature?", user="ann")
    with_images = memory(Recipe(pipeline=Pipeline(indexes="bm25", images=True), payload_units=3))
    assert with_images.retrieve(ask).metadata["evidence"][0] == "s/D1:IMG_1"
    without = memory(Recipe(pipeline=Pipeline(indexes="bm25"), payload_units=3))
    assert without.retrieve(ask).metadata["evidence"][:2] == ["s/D1:1", "s/D1:IMG_1"]
    # Images on for one routed type only: the default settings leave the image units out.
    routed = Recipe(pipeline=Pipeline(indexes="bm25"), payload_units=3, routes={"TTL": {"images": True}})
    assert memory(routed).retrieve(ask).metadata["evidence"][:2] == ["s/D1:1", "s/D1:IMG_1"]


def test_a_route_is_not_taken_where_only_the_conversations_it_was_chosen_on_support_it():
    """`meta.offline.cross_fit_routes`: the donor beats the parent on all six of conversation u's A questions and ties on v's and
    w's: 6-0 on every question, significant; but left out conversation by conversation, the rule
    routes u's questions nowhere (v and w show no lead) and v's and w's to the donor, where it
    gains nothing: a held-out gain of 0, so the donor is not taken. The same donor leading on
    every conversation is taken (above)."""
    conversations = {**{f"A{i}": ("u" if i < 6 else "v" if i < 9 else "w") for i in range(12)},
                     **{f"B{i}": "uvw"[i % 3] for i in range(6)}}
    parent = _scored(1, Recipe(), {"A": [0.0] * 12, "B": [1.0] * 6})
    donor_recipe = Recipe(pipeline=Pipeline(indexes="bm25", window=1))
    donor = _scored(2, donor_recipe, {"A": [1.0] * 6 + [0.0] * 6, "B": [1.0] * 6})
    generator = CompositionalGenerator(CROSS_FITTED, train=scoped_train(conversations), fit_router=_fit)
    child, move = generator._route(Recipe(), parent, [(donor, donor_recipe)], ROUTER, ["A"], random.Random(0))
    assert move.kind == "route" and child.pipeline_for("A") != donor_recipe.pipeline
    assert "beats the parent" not in move.summary
    # `cross_fit_routes` off (the default): the sign test on every question takes the donor.
    generator = CompositionalGenerator(MetaConfig(), train=scoped_train(conversations), fit_router=_fit)
    child, move = generator._route(Recipe(), parent, [(donor, donor_recipe)], ROUTER, ["A"], random.Random(0))
    assert child.pipeline_for("A") == donor_recipe.pipeline
