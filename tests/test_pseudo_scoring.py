"""How a label-free search's pseudo-questions are scored: a `context` question is answered by
either turn around its source, so citing both (a window of adjacent turns) earns no more than
citing one; guard questions of other kinds are asked in the train split, not counted in its mean,
and carry the guard metric the search holds a selection to; without guard kinds nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from automemo import benchmarks
from automemo.benchmarks.conversation.model import Question
from automemo.benchmarks.pseudo.config import PseudoQuestionConfig
from automemo.benchmarks.pseudo.label_free import make_label_free
from automemo.configtools import ConfigError
from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore
from automemo.evaluation.harness import Evaluator
from automemo.sandbox import get_sandbox
from conversation_data import write_user_logs_many

GUARD = "guard_recall@10"


def _logs(tmp_path: Path) -> dict[str, str]:
    return {k: str(v) for k, v in write_user_logs_many(tmp_path).items()}


def _cited(*refs: str) -> MemoryPayload:
    return MemoryPayload(metadata={"evidence": list(refs)})


def _score(bench, question_id: str, payload: MemoryPayload):
    task = next(t for name in ("train", "test") for t in bench.split(name).retrieve if t.task_id == question_id)
    return bench.score(task, None, payload)


def test_a_context_question_is_found_by_either_neighbour_and_a_labelled_one_by_all_its_clues(tmp_path):
    bench = benchmarks.load("conversations", _logs(tmp_path))
    scope = sorted(bench.split_scopes("train"))[0]
    session = next(s for s in bench.data.sessions if s.scope == scope)
    before, after, other = session.turns[2].ref, session.turns[4].ref, session.turns[7].ref
    context = Question(f"{scope}/P001", scope, "context", "what did we discuss around the lake trip?", "",
                       (before, after), any_clue=True)
    labelled = Question(f"{scope}/Q001", scope, "FR", "what did we discuss around the lake trip?", "",
                        (before, after))
    bench.use_questions([context, labelled])
    one, both, none = _cited(other, after), _cited(before, after), _cited(other)
    assert _score(bench, context.question_id, one).value == 1.0
    assert _score(bench, context.question_id, both).value == 1.0      # the block earns what one neighbour does
    assert _score(bench, context.question_id, none).value == 0.0
    assert _score(bench, labelled.question_id, one).value == 0.5      # a labelled question: recall
    assert _score(bench, labelled.question_id, both).value == 1.0
    # The other figures stay beside the value: recall@10 still says one of two was cited.
    found = _score(bench, context.question_id, one)
    assert found.metrics["recall@10"] == 0.5 and found.metrics["hit@10"] == 1.0 and found.counted
    assert "missed clues" not in found.feedback


def test_context_questions_written_for_a_label_free_search_are_any_clue_questions(tmp_path):
    bench = benchmarks.load("conversations", _logs(tmp_path))
    make_label_free(bench, "self", PseudoQuestionConfig())
    context = [q for q in bench.data.questions if q.qtype == "context"]
    assert context and all(q.any_clue and not q.guard for q in context)
    two = next(q for q in context if len(q.clues) == 2)
    assert _score(bench, two.question_id, _cited(two.clues[1])).value == 1.0


def test_a_label_free_train_split_asks_guard_questions_that_are_not_counted_and_carry_the_guard_metric(tmp_path):
    bench = benchmarks.load("conversations", _logs(tmp_path))
    # Guards take the candidates the fitting draw leaves: the small fixture has some left at 2 a session.
    record = make_label_free(bench, "self", PseudoQuestionConfig(per_session=2.0))
    train = bench.split("train").retrieve
    guards = [t for t in train if t.data.get("guard")]
    scored = [t for t in train if not t.data.get("guard")]
    assert guards and record.guard_questions == len(guards) and record.guard_metric == GUARD
    assert all(t.task_id.split("/")[1].startswith("G") for t in guards)
    assert {t.category for t in guards} <= {"guard:refer", "guard:cloze", "guard:date", "guard:picture"}
    assert sum(record.guard_by_kind.values()) == len(guards)
    assert not any(t.data.get("guard") for t in bench.split("test").retrieve)  # the test split is unchanged
    # The counts reported before guards existed hold the scored questions alone.
    assert record.train_questions == len(scored) and all(t.category == "context" for t in scored)
    described = bench.describe()  # a label-free search's task: no labelled question's type or count in it
    assert "questions" not in described and described["label_free"]["train_questions"] == len(scored)
    assert described["label_free"]["guard_questions"] == len(guards)
    # Neither a fitting question nor a scored one is asked again as a guard.
    asked = {t.instruction for t in guards}
    assert not asked & {q.question for q in bench.fitting_questions}
    assert not asked & {t.instruction for t in scored}
    # Scored: not counted, their recall as the guard metric and no other metric.
    guard = guards[0]
    hit = _score(bench, guard.task_id, _cited(*guard.data["clues"]))
    assert not hit.counted and dict(hit.metrics) == {GUARD: 1.0}
    missed = _score(bench, guard.task_id, _cited())
    assert not missed.counted and dict(missed.metrics) == {GUARD: 0.0}
    # The guard metric is named where the evaluator asks for the benchmark's guards.
    assert GUARD in bench.guard_metric_names()
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "store"))
    assert GUARD in evaluator.guard_metrics


def test_without_guard_kinds_nothing_changes(tmp_path):
    logs = _logs(tmp_path)
    guarded, plain = benchmarks.load("conversations", logs), benchmarks.load("conversations", logs)
    with_guards = make_label_free(guarded, "self", PseudoQuestionConfig(per_session=2.0))
    without = make_label_free(plain, "self", PseudoQuestionConfig(per_session=2.0, guard_kinds={}))
    assert with_guards.guard_questions > 0
    assert without.guard_questions == 0 and without.guard_metric == ""
    assert not any(t.data.get("guard") for name in ("train", "test") for t in plain.split(name).retrieve)
    assert plain.guard_metric_names() == type(plain).guard_metrics(plain.options)
    assert GUARD not in Evaluator(plain, get_sandbox("unsafe"), EpisodeStore(tmp_path / "store")).guard_metrics
    # The scored, fitting and test questions and the memory are the same with guards or without.
    asked = lambda b: [(t.task_id, t.instruction, tuple(t.data["clues"])) for name in ("train", "test")  # noqa: E731
                       for t in b.split(name).retrieve if not t.data.get("guard")]
    assert asked(guarded) == asked(plain)
    assert [q.question for q in guarded.fitting_questions] == [q.question for q in plain.fitting_questions]
    assert guarded.data.sessions == plain.data.sessions
    assert guarded.describe()["label_free"]["train_questions"] == plain.describe()["label_free"]["train_questions"]
    assert {k: v for k, v in with_guards.to_dict().items() if not k.startswith("guard")} == \
        {k: v for k, v in without.to_dict().items() if not k.startswith("guard")}


def test_a_scored_kind_is_not_guarded_again_and_an_unknown_guard_kind_is_refused():
    assert PseudoQuestionConfig(kinds={"context": 1.0, "refer": 1.0}).guarded_kinds == \
        {"cloze": 1.0, "date": 1.0, "picture": 1.0}
    with pytest.raises(ConfigError, match="guard_kinds: unknown kind"):
        PseudoQuestionConfig(guard_kinds={"riddle": 1.0})
    with pytest.raises(ConfigError, match="guard_kinds: weights must be >= 0"):
        PseudoQuestionConfig(guard_kinds={"refer": -1.0})
