"""What `automemo export` ships: a program's fits on all train questions, without the tables
cross-fitted by conversation (automemo.meta.source.fitted). A served user whose name equals a
train conversation's id (`conv-26`) used to be looked up in the router's held-out table and got
`memolib.UnheldQuestion` on every recall; the exported program now answers that user as it
answers anyone, with the fits on all train questions, and names no train conversation and no
train question's hash. A program without such tables is shipped byte for byte."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from automemo.episode_store import EpisodeStore
from automemo.export import export_node
from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
from automemo.meta.offline.crossover import Routes, crossover_source
from automemo.meta.offline.ranking import ExampleRouting, RankingQuestion, fit_ranker
from automemo.meta.source.fitted import deployable_source
from automemo.meta.source.recipe import Pipeline, Recipe, parse_recipe, render_recipe
from automemo.paths import SEEDS_DIR
from automemo.toolkit import memolib
from rankingtools import ROUNDS, HashToolkit, ask, embed, session

TRAIN = (("conv-26", 6, ROUNDS), ("conv-30", 4, 3), ("conv-41", 4, 3))
"""Train conversations: (id, sessions, the round that holds each session's clue)."""


def _train():
    """(episodes, questions, labels): one question per session, about a topic word of its own
    (no question names its conversation), every other one a time question."""
    episodes, questions, labels = [], [], []
    for user, sessions, target in TRAIN:
        for k in range(sessions):
            topic = f"topic{len(episodes)}"
            episodes.append(session(user, k, topic))
            when = k % 2 == 0
            text = f"When did we talk about the {topic} garden?" if when else f"What about the {topic} garden?"
            questions.append(RankingQuestion(text, text, user, frozenset({f"{user}/D{k}:{target}"})))
            labels.append("time" if when else "other")
    return episodes, questions, labels


@pytest.fixture(scope="module")
def fitted():
    """The routed and ranked recipe a search scores (cross-fitted router and ranker), and the same
    recipe built from the fits on all train questions alone."""
    episodes, questions, labels = _train()
    texts, scopes = [q.question for q in questions], [q.scope for q in questions]
    router = memolib.QuestionRouter.cross_fit(texts, labels, scopes).params()
    routing = ExampleRouting(router, tuple(texts), tuple(labels), tuple(scopes))
    ranker = fit_ranker(episodes, questions, embed, 16, routing=routing, model="blend")
    scored = Recipe(pipeline=Pipeline(indexes="bm25", rank=True), routes={"time": {"depth": 20}},
                    router=router, ranker=ranker, payload_units=3)
    full_router = memolib.QuestionRouter.fit(texts, labels).params()
    linear, trees = (memolib.LinearRanker.from_params(ranker["linear"]),
                     memolib.TreeRanker.from_params(ranker["trees"]))
    full_ranker = memolib.BlendRanker(memolib.LinearRanker(linear.weights, late=linear.late, pool=linear.pool),
                                      memolib.TreeRanker(trees.features, trees.trees, late=trees.late,
                                                         pool=trees.pool)).params()
    all_train = dataclasses.replace(scored, router=full_router, ranker=full_ranker)
    return questions, render_recipe(scored), render_recipe(all_train)


SERVED = [session("conv-26", k, f"served{k}") for k in range(3)]
"""A served user named like a train conversation, with memories of its own."""

ASKED = ["When did we talk about the served1 garden?", "What about the served2 garden?"]


def _answers(source: str) -> list[dict]:
    """What a fresh memory of the program tells the served user conv-26, question by question."""
    namespace: dict = {}
    exec(compile(source, "program.py", "exec"), namespace)
    memo = namespace["Memo"](HashToolkit())
    for episode in SERVED:
        memo.update(episode)
    tasks = [RankingQuestion(q, q, "conv-26", frozenset()) for q in ASKED]
    return [memo.retrieve(ask(t)).to_dict() for t in tasks]


def _with_program(tmp_path: Path, source: str) -> tuple[Path, int]:
    """A finished run whose selected node is `source`, with the update collection an export ships."""
    run = write_synthetic_run(tmp_path / "runs", nodes=3)
    node = run.final()["node_id"]
    (run.path / "nodes" / str(node) / "program.py").write_text(source)
    store = EpisodeStore(run.store_root)
    episodes, _, _ = _train()
    for episode in episodes:
        store.put_episode("update-train-x", episode)
    store.put_json("collections/update-train-x.json", {"task_ids": [e.task_id for e in episodes]})
    return run.path, node


def _names_no_train_conversation_or_question(text: str, questions) -> None:
    for user, _, _ in TRAIN:
        assert user not in text, f"the program names train conversation {user}"
    for q in questions:
        assert memolib.router.question_key(q.question) not in text


def test_a_served_user_named_like_a_train_conversation_recalls_through_the_exported_program(fitted, tmp_path):
    questions, scored, all_train = fitted
    with pytest.raises(memolib.UnheldQuestion):  # the program as the search scored it
        _answers(scored)
    run, node = _with_program(tmp_path, scored)
    exported = (export_node(run, out_dir=tmp_path / "export") / "program.py").read_text()
    answers = _answers(exported)
    assert answers == _answers(all_train)
    assert all(a["metadata"]["evidence"] for a in answers)
    _names_no_train_conversation_or_question(exported, questions)
    # The run keeps what was scored; the export is still a recipe, with the fits on all.
    assert (run / "nodes" / str(node) / "program.py").read_text() == scored
    recipe = parse_recipe(exported)
    assert recipe is not None and "held_out" not in recipe.router
    blend = memolib.ranker_from_params(recipe.ranker)
    assert blend.linear.folds == () and blend.trees.folds == () and not blend.linear.fold_of


def test_a_crossover_ships_without_its_per_fold_routes_and_its_parents_tables(fitted):
    questions, scored, all_train = fitted
    plain = render_recipe(Recipe(pipeline=Pipeline(indexes="bm25"), payload_units=3))
    router = memolib.QuestionRouter.from_params(parse_recipe(scored).router)
    full = memolib.QuestionRouter.from_params(parse_recipe(all_train).router)
    routes = Routes({"time": 1.0}, ({"time": 1.0}, {"other": 0.0}, {}), {"conv-26": 0, "conv-30": 1, "conv-41": 2})
    child = crossover_source(scored, plain, name_a="node 1", name_b="node 2", routes=routes, router=router)
    deployable = deployable_source(child)
    assert _answers(deployable) == _answers(crossover_source(all_train, plain, name_a="node 1", name_b="node 2",
                                                             routes=Routes({"time": 1.0}), router=full))
    _names_no_train_conversation_or_question(deployable, questions)


def test_a_program_without_cross_fitted_tables_is_shipped_byte_for_byte(tmp_path):
    programs = [path.read_text() for path in sorted(SEEDS_DIR.glob("*.py"))]
    plain = render_recipe(Recipe(unit="multi"))
    programs += [plain, crossover_source(plain, programs[0], name_a="a", name_b="b"),
                 "def broken(:\n", "X = 1\r\nY = 'é'\r\n"]
    for source in programs:
        assert deployable_source(source) == source
    run, node = _with_program(tmp_path, plain.replace("\n", "\r\n"))
    out = export_node(run, out_dir=tmp_path / "export")
    assert (out / "program.py").read_bytes() == (run / "nodes" / str(node) / "program.py").read_bytes()


def test_the_deployable_form_is_a_fixed_point(fitted):
    _, scored, _ = fitted
    once = deployable_source(scored)
    assert once != scored and deployable_source(once) == once
