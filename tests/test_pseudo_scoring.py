"""How a label-free search's pseudo-questions are scored: a `context` question is answered by
either turn around its source, so citing both (a window of adjacent turns) earns no more than
citing one."""

from __future__ import annotations

from pathlib import Path

from automemo import benchmarks
from automemo.benchmarks.conversation.model import Question
from automemo.benchmarks.pseudo.config import PseudoQuestionConfig
from automemo.benchmarks.pseudo.label_free import make_label_free
from automemo.contract import MemoryPayload
from conversation_data import write_user_logs_many


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
    assert context and all(q.any_clue for q in context)
    two = next(q for q in context if len(q.clues) == 2)
    assert _score(bench, two.question_id, _cited(two.clues[1])).value == 1.0
