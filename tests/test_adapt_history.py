"""A served namespace's history as the sessions file of the `conversations` benchmark
(automemo/adapt/history.py): what the label-free search of an adaptation round reads."""

from __future__ import annotations

import json

from adapttools import chat_sessions
from automemo.adapt.history import read_history, still_live, write_sessions
from automemo.benchmarks.conversation.user_logs import read_logs
from automemo.contract import EpisodeRecorder, Step
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.user_memory import UserMemory


def _logged(tmp_path, episodes):
    state = StateFolder(tmp_path / "state")
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "program.json").write_text(json.dumps({"program_sha256": "x"}))
    memory = UserMemory("ana", state, None)
    memory.add_logged(episodes)
    return state, memory


def test_the_history_is_a_sessions_file_the_conversations_benchmark_reads(tmp_path):
    episodes = chat_sessions("ana", sessions=4, turns=3)
    episodes.append(EpisodeRecorder(task_id="odd", benchmark="conversations", instruction="a web task",
                                    steps=(Step(index=0, observation="", action=""),
                                           Step(index=1, observation="the checkout page", action="click pay")),
                                    metadata={"time": "1:56 pm on 8 May, 2023"}))
    state, _ = _logged(tmp_path, episodes)
    history = read_history(state.user_dir("ana"))
    assert (history.sessions, history.turns) == (5, 13)  # the empty step is no turn
    path = tmp_path / "sessions.jsonl"
    assert write_sessions(path, [(history, "history")]) == 5
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["s1", "s2", "s3", "s4", "s5"]   # log sequence numbers, no task id
    assert "ana-session" not in path.read_text()
    first = lines[0]["turns"][0]
    assert first["id"] == "s1.0" and first["speaker"] == "user" and not first["text"].startswith("user:")
    assert lines[0]["date"] == "2024-05-01" and "date" not in lines[4]   # a date that is not ISO is left out
    assert lines[4]["turns"] == [{"id": "s5.1", "speaker": "user", "text": "the checkout page\nclick pay"}]
    data, _ = read_logs(path, None, block_sessions=2)
    assert len(data.sessions) == 5 and sum(len(s.turns) for s in data.sessions) == 13


def test_still_live_sees_a_forget(tmp_path):
    state, memory = _logged(tmp_path, chat_sessions("ana", sessions=3, turns=2))
    history = read_history(state.user_dir("ana"))
    seqs, born = history.seqs, history.incarnation
    assert born and still_live(state.user_dir("ana"), seqs, born)
    memory.forget("ana-session-1")
    assert not still_live(state.user_dir("ana"), seqs, born)
    assert still_live(state.user_dir("ana"), [seqs[0], seqs[2]], born)


def test_still_live_sees_a_forget_all_whose_sequence_numbers_came_back(tmp_path):
    # what a round read: seqs 1..3 of ana's first life
    episodes = chat_sessions("ana", sessions=4, turns=2)
    state, memory = _logged(tmp_path, episodes[:3])
    history = read_history(state.user_dir("ana"))
    assert history.seqs == (1, 2, 3)
    # ana forgets everything, re-imports an edited export (without session 1) and remembers once more
    assert state.drop("ana")
    UserMemory("ana", state, None).add_logged([episodes[0], episodes[2], episodes[3]])
    assert read_history(state.user_dir("ana")).seqs == (1, 2, 3)   # the same numbers, another life
    assert not still_live(state.user_dir("ana"), history.seqs, history.incarnation)
    assert not still_live(tmp_path / "nobody", (1,), history.incarnation)   # no namespace: nothing is live
