"""Crossover in the offline mutator: the child program runs both parents and fuses their
retrievals (checked in-process, and through the real quick exam in bubblewrap for two real
seeds), answering a question type with one parent alone where a task-by-task sign test on the
evidence decides it, the type predicted from the question by a router fitted on the scored train
questions (the child never reads a label); the partner is the evaluated program strongest where the parent is weak;
once every seed was tried, a transplant is the seed strongest there."""

from __future__ import annotations

import dataclasses

import pytest

from automemo.meta.config import OfflineMetaConfig
from automemo.meta.context import GenerationContext, weak_types
from automemo.cli.exam_cmd import load_inputs
from automemo.contract import PartialRecorder
from automemo.exam import quick_exam
from automemo.meta import MetaConfig
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.meta.base import ParentView, ScoredProgram, ScoredTask
from automemo.meta.offline.crossover import (Routes, best_partner, cross_fitted_routes, crossover_source, routable,
                                             routes, sign_test)
from automemo.meta.offline.router_fitting import fit_question_router
from automemo.meta.offline.generator import TrainQuestions
from automemo.meta.offline.agent import OfflineMetaAgent
from automemo.meta.source.tunables import parse_tunables
from automemo.toolkit.memolib import QuestionRouter
from automemo.paths import SEEDS_DIR
from automemo.toolkit.services import MemoServices
from sandboxtools import sandbox
from seedtools import encoders
from test_mutator import _parent, _seed, seeds_dir  # noqa: F401 - the fixture is used by name

FIXED = '''from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        self.seen = getattr(self, "seen", 0) + 1

    def retrieve(self, task):
        {body}
'''


def _load(source: str):
    namespace: dict = {"__name__": "crossover_under_test"}
    exec(compile(source, "<crossover>", "exec"), namespace)
    return namespace["Memo"](toolkit=None)


def test_the_child_runs_both_parents_and_fuses_their_evidence():
    a = FIXED.format(body='return MemoryPayload(text="from A", metadata={"evidence": ["a1", "s", "a2"]})')
    b = FIXED.format(body='return MemoryPayload(text="from B", metadata={"evidence": ["s", "b1"]})')
    source = crossover_source(a, b, name_a="A", name_b="B", weight_a=0.6, rrf_k=60)
    assert [t.name for t in parse_tunables(source)] == ["WEIGHT_A", "RRF_K"]
    memo = _load(source)
    memo.update(object())
    assert [p.seen for p in memo.parents] == [1, 1]
    payload = memo.retrieve(PartialRecorder(task_id="q", benchmark="toy", instruction="?"))
    # "s" is cited by both; at weight 0.6 and k 60 A's third (0.6/63) still beats B's second (0.4/62)
    assert payload.metadata["evidence"] == ["s", "a1", "a2", "b1"]
    assert payload.text.index("from A") < payload.text.index("from B")

    # At the default constant and a near-even weight the other parent's best citation
    # outranks the lead's third (0.45/6 > 0.55/8): the fused top-k is not the lead's alone.
    b = FIXED.format(body='return MemoryPayload(text="from B", metadata={"evidence": ["b1", "b2"]})')
    fused = _load(crossover_source(a, b, name_a="A", name_b="B", weight_a=0.55)).retrieve(
        PartialRecorder(task_id="q", benchmark="toy", instruction="?"))
    assert fused.metadata["evidence"] == ["a1", "s", "b1", "a2", "b2"]

    broken = FIXED.format(body='raise RuntimeError("parent B broke")')
    payload = _load(crossover_source(a, broken, name_a="A", name_b="B")).retrieve(
        PartialRecorder(task_id="q", benchmark="toy", instruction="?"))
    assert payload.metadata["evidence"] == ["a1", "s", "a2"] and payload.text == "from A"


@pytest.mark.bwrap
def test_a_crossover_of_two_real_seeds_passes_the_quick_exam():
    from automemo.paths import EXAMPLE_EPISODES_DIR

    store = EXAMPLE_EPISODES_DIR
    episodes, partials = load_inputs(store, "update", "retrieve", 5)
    source = crossover_source((SEEDS_DIR / "murag.py").read_text(),
                              (SEEDS_DIR / "reasoning_bank.py").read_text(),
                              name_a="murag", name_b="reasoning_bank")
    report = quick_exam(source, sandbox("bwrap"), episodes, partials,
                        services=MemoServices(encoders(), None, store), store_root=store)
    assert report.passed, report.for_prompt()


def _scored(node_id: int, source: str, mean: float, **per_category: float) -> ScoredProgram:
    return ScoredProgram(node_id=node_id, source=source, mean=mean, n=1, per_category=per_category)


def test_the_partner_is_the_program_strongest_where_the_parent_is_weak():
    parent = _scored(3, "P", 0.4667, FR=0.9, VS=0.05, TR=0.45)
    assert weak_types(parent.per_category, parent.mean) == ["VS", "TR"]
    strong_overall = _scored(5, "S", 0.8, FR=1.0, VS=0.06, TR=0.46)   # leads by 0.02 where it matters
    complementary = _scored(6, "C", 0.3, FR=0.1, VS=0.6, TR=0.2)      # leads by 0.55 on VS
    assert best_partner(parent, [strong_overall, complementary]).node_id == 6
    nowhere = _scored(7, "N", 0.9, FR=1.0, VS=0.0, TR=0.1)
    assert best_partner(parent, [nowhere, parent]) is None


ONLY_CROSSOVER = MetaConfig(offline=OfflineMetaConfig(crossover_rate=1.0, perturb_rate=0.0, transplant_rate=0.0,
                                                      compose_rate=0.0))


def test_the_mutator_crosses_over_with_the_complementary_program(seeds_dir):  # noqa: F811
    mutator = OfflineMetaAgent(ONLY_CROSSOVER, seeds_dir=seeds_dir)
    parent_source = _seed(10, "hybrid")
    partner_source = _seed(5, "dense")
    scored = [_scored(3, parent_source, 0.4667, FR=0.9, VS=0.05, TR=0.45),
              _scored(8, partner_source, 0.5, FR=0.2, VS=0.9, TR=0.5)]
    child = mutator.propose(GenerationContext.build(_parent(parent_source), node_id=9, seed=1, scored=scored))
    mutation = child.diagnosis["mutation"]
    assert mutation["kind"] == "crossover" and mutation["partner"] == 8
    assert child.summary == "crossover with #8, which leads on VS, TR"
    assert repr(parent_source) in child.source and repr(partner_source) in child.source

    no_transplant = MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0, crossover_rate=1.0, transplant_rate=0.0))
    alone = OfflineMetaAgent(no_transplant, seeds_dir=seeds_dir)
    nowhere = [_scored(8, partner_source, 0.5, FR=0.95, VS=0.0, TR=0.1)]
    assert alone.propose(GenerationContext.build(_parent(parent_source), node_id=9, seed=1, scored=nowhere)
                         ).diagnosis["mutation"]["kind"] == "perturb"


def test_once_every_seed_was_tried_the_transplant_is_the_one_strong_where_the_parent_is_weak(seeds_dir):  # noqa: F811
    mutator = OfflineMetaAgent(MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0, crossover_rate=0.0)), seeds_dir=seeds_dir)
    sources = {name: (seeds_dir / f"{name}.py").read_text() for name in ("alpha", "beta", "gamma")}
    scored = [_scored(1, sources["alpha"], 0.5, FR=1.0, VS=0.0, TR=0.5),
              _scored(2, sources["beta"], 0.4, FR=0.1, VS=0.8, TR=0.3),
              _scored(3, sources["gamma"], 0.6, FR=0.9, VS=0.1, TR=0.8)]
    root = (seeds_dir / "no_memory.py").read_text()
    child = mutator.propose(GenerationContext.build(_parent(root, node_id=0), node_id=4, seed=0,
                                                    tree_sources=list(sources.values()), scored=scored))
    assert child.diagnosis["mutation"]["seed"] == "beta"  # VS 0.8 where the parent has 0.05


COUNTING = '''from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    calls = 0

    def update(self, episode):
        pass

    def retrieve(self, task):
        type(self).calls += 1
        return MemoryPayload(text="from {name}", metadata={{"evidence": ["{name}1", "{name}2"]}})
'''


QUESTIONS = {"VS": ["What colour was the bike in the photo?", "What colour is the car in the picture?",
                    "What colour were the shoes in the photo?"],
             "FR": ["Where does Ann work?", "Where does Ben live?", "Where did Cleo study?"],
             "TR": ["When did Ann move?", "When was the party?", "When did Ben start?"]}
ROUTER = QuestionRouter.fit([q for qs in QUESTIONS.values() for q in qs],
                            [c for c, qs in QUESTIONS.items() for _ in qs])


def _ask(memo, question="?", **metadata):
    return memo.retrieve(PartialRecorder(task_id="q", benchmark="toy", instruction=question, metadata=metadata))


def test_a_routed_crossover_answers_a_question_type_with_the_parent_chosen_for_it():
    source = crossover_source(COUNTING.format(name="a"), COUNTING.format(name="b"), name_a="A", name_b="B",
                              weight_a=0.55, routes={"VS": 0.0, "FR": 1.0}, router=ROUTER)
    assert "ROUTES = {'FR': 1.0, 'VS': 0.0}" in source and "QuestionRouter.from_params(" in source
    memo = _load(source)
    a, b = (type(p) for p in memo.parents)
    # The type comes from the question's text: no label in the task, a category key is ignored.
    vs = _ask(memo, "What colour was the kite in the photo?", category="FR")
    assert vs.metadata["evidence"] == ["b1", "b2"] and vs.text == "from b" and (a.calls, b.calls) == (0, 1)
    fr = _ask(memo, "Where does Dan work?")
    assert fr.metadata["evidence"] == ["a1", "a2"] and fr.text == "from a" and (a.calls, b.calls) == (1, 1)
    # A type no route names fuses both (0.55/7 for a2 just beats 0.45/6 for b1).
    fused = _ask(memo, "When did Dan leave?")
    assert fused.metadata["evidence"] == ["a1", "a2", "b1", "b2"] and "from a" in fused.text and "from b" in fused.text
    with pytest.raises(ValueError, match="route weights"):
        crossover_source("A", "B", name_a="A", name_b="B", routes={"VS": 1.5}, router=ROUTER)
    with pytest.raises(ValueError, match="question router"):
        crossover_source("A", "B", name_a="A", name_b="B", routes={"VS": 1.0})


def test_only_types_the_router_recognises_on_questions_it_was_not_fitted_on_are_routed():
    tasks = {f"{c}{i}": ScoredTask(c, 1.0, q) for c, qs in QUESTIONS.items() for i, q in enumerate(qs)}
    lead = ScoredProgram(1, "P1", 0.5, 1, tasks=tasks)
    # A type whose questions the router does not recognise is not routed.
    confused = dict(tasks, odd=ScoredTask("KR", 1.0, "When did Ann move?"))
    assert routable({"VS": 0.0, "KR": 1.0}, ROUTER, [ScoredProgram(1, "P1", 0.5, 1, tasks=confused)]) == {"VS": 0.0}
    assert routable({"VS": 0.0}, None, [lead]) == {}


def _with_tasks(node_id: int, mean: float, scores: dict[str, list[float]]) -> ScoredProgram:
    tasks = {f"{c}{i}": ScoredTask(c, s, _question(c, i)) for c, values in scores.items() for i, s in enumerate(values)}
    per_category = {c: sum(v) / len(v) for c, v in scores.items()}
    return ScoredProgram(node_id=node_id, source=f"P{node_id}", mean=mean, n=1, per_category=per_category, tasks=tasks)


def _question(category: str, i: int) -> str:
    return {"VS": "What colour was thing {} in the photo?", "FR": "Where does person {} work?",
            "TR": "When did event {} happen?", "KR": "Which hobby does friend {} share?"}[category].format(i)


def test_a_category_is_routed_only_on_a_significant_task_by_task_lead():
    assert sign_test(5, 0) == pytest.approx(1 / 32) and sign_test(2, 0) == 0.25 and sign_test(0, 0) == 1.0
    lead = _with_tasks(1, 0.5, {"VS": [0, 0, 0, 0, 0, 0.5], "FR": [1, 1, 1, 1, 1, 1], "TR": [0, 0, 1, 1, 1, 1],
                                "KR": [0.5, 0.5, 0.5, 0.5]})
    partner = _with_tasks(2, 0.5, {"VS": [1, 1, 1, 1, 1, 0.5], "FR": [0, 0, 0, 0, 0, 1], "TR": [1, 1, 1, 1, 1, 1],
                                   "KR": [1, 1, 0, 0]})
    # VS: the partner wins 5 tasks, loses none (p 1/32); FR: the lead wins 5; TR: the partner
    # leads by a third on the category mean, but on 2 tasks only (p 0.25): noise, so fused; KR: 2-2.
    assert routes(lead, partner, 0.05) == {"VS": 0.0, "FR": 1.0}
    assert routes(lead, partner, 0.25) == {"VS": 0.0, "FR": 1.0, "TR": 0.0}
    assert routes(lead, ScoredProgram(3, "P3", 0.9, 1, {"VS": 1.0}), 0.05) == {}  # no tasks, no routes


def _train(scoped: bool) -> TrainQuestions:
    """The train split's questions as the search hands them over: VS and FR questions of two
    conversations, or of none (`scoped` False: a benchmark whose tasks name no conversation)."""
    rows = [(_question(c, i), c, ("ann", "ben")[i % 2] if scoped else "", f"{c}{i}") for c in ("VS", "FR") for i in range(6)]
    return TrainQuestions(*(tuple(column) for column in zip(*rows)))


def test_the_mutator_routes_its_crossover_by_the_evidence(seeds_dir):  # noqa: F811
    mutator = OfflineMetaAgent(ONLY_CROSSOVER, seeds_dir=seeds_dir, train=_train(scoped=True),
                               fit_router=fit_question_router)
    parent_source, partner_source = _seed(10, "hybrid"), _seed(5, "dense")
    vs = [TaskResult(f"VS{i}", "VS", 0.0) for i in range(5)]  # the parent's evaluation: no question text
    fr = [TaskResult(f"FR{i}", "FR", 1.0) for i in range(5)]
    evaluation = EvaluationResult(mean=0.5, n_scored=10, per_category={"VS": 0.0, "FR": 1.0}, metrics={},
                                  tasks=(*vs, *fr))
    partner = _with_tasks(8, 0.5, {"VS": [1, 1, 1, 1, 1], "FR": [1, 1, 1, 1, 0]})
    child = mutator.propose(GenerationContext.build(ParentView(3, parent_source, 0.5, 1, evaluation), node_id=9, seed=1,
                                                    scored=[dataclasses.replace(partner, source=partner_source)]))
    mutation = child.diagnosis["mutation"]
    assert mutation["kind"] == "crossover" and mutation["routes"] == {"VS": 0.0}  # FR: 1 task, undecided
    assert mutation["fold_routes"] == []  # `cross_fit_routes` off: one table for every question
    assert child.summary == "crossover with #8, which leads on VS; VS answered by #8 alone"
    assert "ROUTES = {'VS': 0.0}" in child.source
    # The child carries the run's router, cross-fitted by conversation, and routes a new VS
    # question to #8.
    assert set(QuestionRouter.from_params(mutator.generator.router()).held_out) == {"ann", "ben"}
    memo = _load(child.source.replace(repr(parent_source), repr(FIXED.format(body='return MemoryPayload(text="P")')))
                  .replace(repr(partner_source), repr(FIXED.format(body='return MemoryPayload(text="Q")'))))
    assert _ask(memo, "What colour was thing 9 in the photo?").text == "Q"


def test_a_crossover_is_not_routed_where_the_train_questions_name_no_conversation(seeds_dir):  # noqa: F811
    """Nothing could hold such a question out of the router that would route it: a router fitted
    on it would score it with its own label, so the crossover fuses both parents instead."""
    mutator = OfflineMetaAgent(ONLY_CROSSOVER, seeds_dir=seeds_dir, train=_train(scoped=False),
                               fit_router=fit_question_router)
    evaluation = EvaluationResult(mean=0.5, n_scored=10, per_category={"VS": 0.0, "FR": 1.0}, metrics={},
                                  tasks=tuple(TaskResult(f"{c}{i}", c, float(c == "FR")) for c in ("VS", "FR") for i in range(5)))
    partner = _with_tasks(8, 0.5, {"VS": [1, 1, 1, 1, 1], "FR": [1, 1, 1, 1, 0]})
    child = mutator.propose(GenerationContext.build(ParentView(3, _seed(10, "hybrid"), 0.5, 1, evaluation), node_id=9,
                                                    seed=1, scored=[dataclasses.replace(partner, source=_seed(5, "dense"))]))
    assert mutator.generator.router() is None
    assert child.diagnosis["mutation"]["kind"] == "crossover" and child.diagnosis["mutation"]["routes"] == {}
    assert "QuestionRouter.from_params(" not in child.source


def _planted() -> tuple[TrainQuestions, ScoredProgram, ScoredProgram]:
    """Three train conversations; on VS the partner beats the lead on all six of ann's questions
    and ties on ben's and cal's: a route to the partner that looks right on the questions it was
    chosen on, and that nothing outside ann's own conversation supports."""
    scope = {**{f"VS{i}": ("ann" if i < 6 else "ben" if i < 9 else "cal") for i in range(12)},
             **{f"FR{i}": ("ann", "ben", "cal")[i % 3] for i in range(6)}}
    lead = _with_tasks(3, 0.5, {"VS": [0.0] * 12, "FR": [1.0] * 6})
    partner = _with_tasks(8, 0.5, {"VS": [1.0] * 6 + [0.0] * 6, "FR": [1.0] * 6})
    rows = [(_question(t[:2], int(t[2:])), t[:2], scope[t], t) for t in sorted(scope)]
    return TrainQuestions(*(tuple(column) for column in zip(*rows))), lead, partner


def test_a_route_that_only_its_own_conversation_supports_is_not_taken_for_that_conversation():
    """Routes are cross-fitted by conversation like the router: on all the tasks the partner's VS
    lead is significant (6-0), so a test or deployed conversation's VS question goes to the
    partner; but ann's own questions are routed by what ben's and cal's said (no lead: fused),
    so the child's validation score on them is not the better parent's picked after the fact."""
    train, lead, partner = _planted()
    scope_of = dict(zip(train.task_ids, train.scopes))
    decided = cross_fitted_routes(lead, partner, 0.05, scope_of)
    assert routes(lead, partner, 0.05) == decided.fitted == {"VS": 0.0}
    assert decided.fold_of == {"ann": 0, "ben": 1, "cal": 2}
    assert decided.folds == ({}, {"VS": 0.0}, {"VS": 0.0})
    # A task whose conversation is unknown cannot be held out: nothing is routed.
    assert cross_fitted_routes(lead, partner, 0.05, {**scope_of, "VS0": ""}) == Routes()


CROSS_FITTED = MetaConfig(offline=dataclasses.replace(ONLY_CROSSOVER.offline, cross_fit_routes=True))


def test_the_mutator_routes_a_train_conversations_questions_by_the_other_conversations_evidence(seeds_dir):  # noqa: F811
    """`meta.offline.cross_fit_routes`: the planted crossover routed by held-out tables."""
    train, lead, partner = _planted()
    mutator = OfflineMetaAgent(CROSS_FITTED, seeds_dir=seeds_dir, train=train, fit_router=fit_question_router)
    parent_source, partner_source = _seed(10, "hybrid"), _seed(5, "dense")
    evaluation = EvaluationResult(mean=0.5, n_scored=18, per_category=dict(lead.per_category), metrics={},
                                  tasks=tuple(TaskResult(t, task.category, task.score) for t, task in lead.tasks.items()))
    child = mutator.propose(GenerationContext.build(ParentView(3, parent_source, 0.5, 1, evaluation), node_id=9, seed=1,
                                                    scored=[dataclasses.replace(partner, source=partner_source)]))
    mutation = child.diagnosis["mutation"]
    assert mutation["kind"] == "crossover" and mutation["routes"] == {"VS": 0.0}
    assert mutation["fold_routes"] == [{}, {"VS": 0.0}, {"VS": 0.0}]
    assert child.summary.endswith("(routes held out by conversation: 2 of 3 folds agree)")
    memo = _load(child.source.replace(repr(parent_source), repr(FIXED.format(body='return MemoryPayload(text="P")')))
                  .replace(repr(partner_source), repr(FIXED.format(body='return MemoryPayload(text="Q")'))))
    # ann's own VS question: both parents fused; ben's: the partner alone (ann's six wins, held
    # out of ben's fold, decide it); a conversation the search never saw: the partner alone.
    assert _ask(memo, _question("VS", 0), user="ann").text not in ("Q", "P")
    assert _ask(memo, _question("VS", 6), user="ben").text == "Q"
    assert _ask(memo, "What colour was thing 99 in the photo?", user="zed").text == "Q"
