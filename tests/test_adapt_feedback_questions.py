"""A namespace's recalls with feedback as its history's questions file (automemo/adapt/
feedback_questions.py): shown items mapped to the sessions file's turns, forgotten ones left out,
and read back by the conversations benchmark as questions from feedback."""

import json

from automemo.adapt.feedback_questions import feedback_recalls, write_questions
from automemo.adapt.history import History, write_sessions
from automemo.serve.storage.episode_log import LogEntry
from automemo.serve.storage.recall_log import LoggedRecall


def _history(tmp_path):
    episodes = [{"task_id": f"chat-{i}", "steps": [{"index": 0, "observation": f"user: bike note {i}"},
                                                    {"index": 1, "observation": f"user: cat note {i}"}]}
                for i in range(1, 4)]
    return History("key", tmp_path / "store", tuple(LogEntry(seq=i, received=0.0, episode=e)
                                                    for i, e in enumerate(episodes, start=1)))


def test_recalls_become_questions_on_the_sessions_files_turns(tmp_path):
    history = _history(tmp_path)
    def recall(rid, query, shown, date, used=None):
        return LoggedRecall(rid, 0.0, query, shown, date, used)

    recalls = [recall("r1", "which bike note?", ("chat-2#0", "gone#0", "chat-1#1"), "2024-07-01", ("chat-2#0",)),
               recall("r2", "no feedback", ("chat-1#0",), "2024-07-02"),
               recall("r3", "about a forgotten one", ("gone#0",), "2024-07-03", ("gone#0",))]
    (question,) = feedback_recalls(history, recalls, "history")
    assert question.shown == ("s2.0", "s1.1") and question.used == ("s2.0",)
    sessions, questions = tmp_path / "sessions.jsonl", tmp_path / "questions.jsonl"
    write_sessions(sessions, [(history, "history")])
    assert write_questions(questions, [question]) == 1
    line = json.loads(questions.read_text())
    assert line["evidence"] == ["s2.0"] and line["weights"] == {"s2.0": 1.0} and line["date"] == "2024-07-01"

    from automemo.benchmarks.conversation.user_logs import UserConversationOptions, UserConversations

    bench = UserConversations(UserConversationOptions(path=str(sessions), questions=str(questions), block_sessions=10))
    (read,) = bench.data.questions
    assert read.clues == ("history#1/s2.0",) and read.shown == ("history#1/s2.0", "history#1/s1.1")
