"""Questions from an agent's feedback on a recall (automemo/benchmarks/conversation/feedback.py):
compared only among the items the recall showed, each used item weighed by the inverse
propensity of its rank, split by time, read from the conversations benchmark's questions file."""

import json
import math

import pytest

from automemo.benchmarks.conversation.feedback import RecallFeedback, propensity, question_line
from automemo.benchmarks.evidence_score import feedback_score
from automemo.contract import MemoryPayload


def cites(*ids):
    return MemoryPayload(text="", metadata={"evidence": list(ids)})


def test_only_shown_items_are_compared_and_an_unshown_one_is_neither_right_nor_wrong():
    shown, used = ("a", "b", "c"), ("b",)
    # The program cites an item no recall showed first: it is passed over, b is still its first shown item.
    assert feedback_score(cites("z", "b"), used, shown, k=1).value == 1.0
    assert feedback_score(cites("a", "b"), used, shown, k=1).value == 0.0      # b is not in its first one
    assert feedback_score(cites("a", "b"), used, shown, k=2).metrics["feedback_recall@2"] == 1.0


def test_the_order_among_shown_items_is_what_a_program_can_win_by():
    """By recall the program that logged the feedback scores 1 on every question (each used item
    was in its own first k), so nothing could beat it; by rank, putting the used item first does."""
    shown, used = ("a", "b", "c"), ("c",)
    logged = feedback_score(cites("a", "b", "c"), used, shown, k=10)
    better = feedback_score(cites("c", "a", "b"), used, shown, k=10)
    assert logged.metrics["feedback_recall@10"] == better.metrics["feedback_recall@10"] == 1.0
    assert logged.value == pytest.approx(0.5) and better.value == 1.0  # 1/log2(4) against 1/log2(2)


def test_used_items_weigh_by_the_inverse_propensity_of_their_rank():
    assert propensity(1) == 1.0 and propensity(4) == 0.25 and propensity(4, eta=0.0) == 1.0
    line = question_line(RecallFeedback("r1", "where is my bike?", "2024-06-01", ("t1", "t2", "t3", "t4"), ("t1", "t4")))
    assert line["weights"] == {"t1": 1.0, "t4": 4.0} and line["evidence"] == ["t1", "t4"]
    # Finding the rank-4 item is worth four times the rank-1 one: (4 / log2 2) / (4 / log2 2 + 1 / log2 3).
    score = feedback_score(cites("t4"), ("t1", "t4"), ("t1", "t2", "t3", "t4"), k=10, weights=(1.0, 4.0))
    assert score.metrics["feedback_recall@10"] == pytest.approx(0.8)
    assert score.value == pytest.approx(4 / (4 + 1 / math.log2(3)))
    assert question_line(RecallFeedback("r2", "q", "", ("t1",), ("t9",))) is None  # nothing shown was used


def test_the_questions_file_carries_shown_and_weights(tmp_path):
    from automemo.benchmarks.conversation.user_logs import UserConversations, UserConversationOptions

    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("\n".join(json.dumps({"id": f"s{i}", "conversation": "ana", "date": f"2024-06-0{i}",
                                              "turns": [{"id": f"t{i}", "text": f"turn {i} about bikes"}]})
                                  for i in range(1, 4)) + "\n")
    questions = tmp_path / "questions.jsonl"
    line = question_line(RecallFeedback("r1", "where is my bike?", "2024-06-04", ("t2", "t1", "t9"), ("t1",)))
    questions.write_text(json.dumps({**line, "conversation": "ana"}) + "\n")
    bench = UserConversations(UserConversationOptions(path=str(sessions), questions=str(questions), block_sessions=10))
    (question,) = bench.data.questions
    assert question.shown == ("ana#1/t2", "ana#1/t1") and question.clues == ("ana#1/t1",)  # t9: forgotten since
    assert question.clue_weights == (2.0,)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "q", "conversation": "ana", "question": "q?", "evidence": ["t3"],
                               "shown": ["t1"]}) + "\n")
    with pytest.raises(Exception, match="not among the shown turns"):
        UserConversations(UserConversationOptions(path=str(sessions), questions=str(bad)))


def _feedback_files(tmp_path, n_questions=4):
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("\n".join(json.dumps({"id": f"s{i}", "conversation": "ana", "date": f"2024-06-0{i}",
                                              "turns": [{"id": f"t{i}", "text": f"turn {i} about bikes"}]})
                                  for i in range(1, 5)) + "\n")
    questions = tmp_path / "questions.jsonl"
    lines = [question_line(RecallFeedback(f"r{i}", f"question {i}?", f"2024-07-0{i}", ("t1", "t2", "t3"), (f"t{1 + i % 3}",)))
             for i in range(1, n_questions + 1)]
    questions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return sessions, questions


def test_questions_from_feedback_fit_on_the_older_half_and_race_on_the_newer_over_every_session(tmp_path):
    from automemo.assembly import load_benchmark
    from automemo.resolution import load_run_config

    sessions, questions = _feedback_files(tmp_path)
    config = load_run_config(None, None, {"benchmark": {
        "name": "conversations", "questions": "feedback",
        "options": {"path": str(sessions), "questions": str(questions), "block_sessions": 2}}})
    assert (config.search.root, config.search.held_to) == ("discovered", "root")
    benchmark = load_benchmark(config, None, tmp_path / "store")
    train, test = benchmark.split("train"), benchmark.split("test")
    assert [t.task_id.split("/")[1] for t in train.retrieve] == ["r1", "r2"]
    assert [t.task_id.split("/")[1] for t in test.retrieve] == ["r3", "r4"]
    assert len(train.update) == len(test.update) == 4  # every session in both: one memory, split by time


def test_feedback_questions_need_feedback(tmp_path):
    from automemo.assembly import AssemblyError, load_benchmark
    from automemo.resolution import load_run_config

    sessions, questions = _feedback_files(tmp_path, n_questions=1)
    config = load_run_config(None, None, {"benchmark": {
        "name": "conversations", "questions": "feedback",
        "options": {"path": str(sessions), "questions": str(questions)}}})
    with pytest.raises(AssemblyError, match="at least 2 are needed"):
        load_benchmark(config, None, tmp_path / "store")
