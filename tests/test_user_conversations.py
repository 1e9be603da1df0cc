"""`conversations`: a user's own logs in the documented JSON-lines format, written at test time
(a real JPG, a URL image, a missing image): refs, dates and their order, speakers, captions,
splits by conversation, one conversation cut into blocks with each question in its evidence's
block, retrieval scoring, errors that name the line and the field, and `automemo eval` on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from automemo.benchmarks import load
from automemo.benchmarks.conversation.model import REFUSAL, DatasetError
from automemo.benchmarks.conversation.user_logs import block_sizes
from automemo.cli import main
from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore
from conversation_data import USER_LOG_QUESTIONS, USER_LOG_SESSIONS, jsonl, write_user_logs


@pytest.fixture
def logs(tmp_path) -> dict[str, Path]:
    return write_user_logs(tmp_path)


def _load(logs: dict[str, Path], **options):
    return load("conversations", {**{k: str(v) for k, v in logs.items()}, **options})


def _task(bench, task_id: str):
    return next(t for name in ("train", "test") for split in [bench.split(name)]
                for t in split.update + split.retrieve if t.task_id == task_id)


def test_sessions_keep_refs_speakers_captions_and_date_order(logs, tmp_path, capsys):
    bench = _load(logs)
    err = capsys.readouterr().err
    assert err.count("2 of 3 images are missing, not image files, or only a URL") == 1
    assert "holds one conversation" not in err  # two conversations: no blocks
    data = bench.data
    assert data.scopes == ("ana", "ben")
    assert [s.session_id for s in data.sessions] == ["ana/s1", "ana/s2", "ana/s3", "ben/s1", "ben/s3"]
    assert [s.date for s in data.sessions] == ["2024-05-01", "2024-05-03", "", "2024-06-01T10:00:00+02:00",
                                               "2024-06-01T09:00:00Z"]  # as given
    ana_s1 = data.sessions[0]
    assert [(t.ref, t.speaker, t.text) for t in ana_s1.turns] == [
        ("ana/t1", "user", "user: I left my bike at the station"), ("ana/t2", "assistant", "assistant: Noted.")]
    bike, cat = ana_s1.turns[0].images
    assert bike.file is not None and bike.caption == "a red bike" and bike.image_id == "ana/t1:IMG1"
    assert cat.file is None and cat.caption == "a grey cat"  # a URL is never fetched
    assert data.sessions[2].turns[0].images[0].file is None  # a missing file keeps its caption
    assert data.sessions[3].turns[0].speaker == "Ben" and [t.ref for t in data.sessions[3].turns] == ["ben/t1"]
    assert (data.images_total, data.images_missing) == (3, 2)
    assert [d.what for d in data.dropped] == ["a turn without text or a captioned image",
                                              "a session with no usable turn (turns is empty)"]
    assert data.dropped[0].where.endswith("sessions.jsonl line 9: turns[1] (t2)")  # blank lines count
    assert data.dropped[1].where.endswith("sessions.jsonl line 11 (session s2)")
    store = EpisodeStore(tmp_path / "store")
    episode = bench.run_episode(_task(bench, "ana/s1"), None, None, store)
    assert episode.metadata["time"] == "2024-05-01" and episode.steps[0].ref == "ana/t1"
    assert store.image_bytes(episode.steps[0].screenshot)[:3] == b"\xff\xd8\xff"
    # The URL image has no pixels: its caption is written into the turn's text, the JPG's is not.
    assert "a grey cat" in episode.steps[0].observation and "a red bike" not in episode.steps[0].observation
    assert episode.steps[0].metadata["image_captions"] == ["a red bike", "a grey cat"]


def test_questions_split_by_conversation_with_types_dates_and_refusals(logs, tmp_path):
    bench = _load(logs)
    train, test = bench.split("train"), bench.split("test")
    scopes = [{t.task_id.split("/")[0] for t in split.update} for split in (train, test)]
    assert sorted(map(len, scopes)) == [1, 1] and scopes[0] | scopes[1] == {"ana", "ben"}
    for split, scope in zip((train, test), scopes):
        assert {t.data["user"] for t in split.retrieve} == scope  # questions follow their conversation
    q1, q2 = (_task(bench, f"ana/{q}") for q in ("q1", "q2"))
    assert (q1.category, q1.data["clues"], q1.data["answer"]) == ("FR", ["ana/t1"], "at the station")
    assert bench.partial(q1, EpisodeStore(tmp_path / "s")).metadata == {"user": "ana", "time": "2024-06-01"}
    assert q2.data["refusal"] and q2.data["answer"] == REFUSAL and q2.category == "refusal"
    assert bench.adversarial_categories() == {"refusal"}
    assert _task(bench, "ben/q4").data["clues"] == ["ben/t3"]
    assert [(d.where, d.clue) for d in bench.data.dropped_clues] == [(f"{logs['questions']} line 4: evidence", "t9")]
    with pytest.raises(DatasetError, match=r"questions\.jsonl line 4: evidence: clue 't9' names no turn of "
                                           r"conversation 'ben'"):
        _load(logs, unknown_clues="error")


def test_citing_the_evidence_scores_recall_one_in_retrieval_mode(logs):
    bench = _load(logs)
    q1 = _task(bench, "ana/q1")
    assert bench.score(q1, None, MemoryPayload(metadata={"evidence": ["ana/t1"]})).value == 1.0
    assert bench.score(q1, None, MemoryPayload(metadata={"evidence": ["ana/t1:IMG1"]})).value == 1.0  # its image
    assert bench.score(q1, None, MemoryPayload(metadata={"evidence": ["ana/t3", "ben/t1"]})).value == 0.0
    assert not bench.score(_task(bench, "ana/q2"), None, MemoryPayload()).counted  # a refusal


def test_without_a_questions_file_the_sessions_load_with_no_question(logs):
    bench = _load({"path": logs["path"]})
    assert bench.data.questions == () and len(bench.data.sessions) == 5
    assert all(bench.split(s).update and not bench.split(s).retrieve for s in ("train", "test"))


@pytest.mark.parametrize("sessions, blocks", [(24, [10, 14]), (25, [10, 10, 5]), (20, [10, 10]), (7, [7])])
def test_block_sizes_join_a_remainder_under_half_a_block_to_the_last(sessions, blocks):
    assert block_sizes(sessions, 10) == blocks


def _one_person(tmp_path: Path, sessions: int) -> Path:
    """One conversation, no conversation field (named as the file: `me`), written newest first."""
    records = [{"id": f"s{i}", "date": f"2024-03-{i:02d}",
                "turns": [{"id": f"t{i}", "text": f"On day {i} I planted {i} tulips."}]}
               for i in range(1, sessions + 1)]
    return jsonl(tmp_path / "me.jsonl", records[::-1])


def test_one_conversation_is_cut_into_blocks_and_a_question_follows_its_evidence(tmp_path, capsys):
    questions = jsonl(tmp_path / "q.jsonl", [
        {"id": "late", "question": "How many tulips on day 12?", "answer": "12", "evidence": ["t12"]},
        {"id": "both", "question": "Tulips on days 1 and 20?", "evidence": ["t1", "t20"]},
        {"id": "never", "question": "What colour is my car?", "refusal": True},
    ])
    bench = load("conversations", {"path": str(_one_person(tmp_path, 24)), "questions": str(questions)})
    err = capsys.readouterr().err
    assert err.count("holds one conversation, 'me' (24 sessions): read as 2 block(s)") == 1
    assert "left out 1 unusable part" in err and "its evidence lies in me#1, me#2" in err
    assert "block_sessions" in bench.data.dropped[0].what and "conversation field" in bench.data.dropped[0].what
    assert bench.data.scopes == ("me#1", "me#2")
    first, second = ([s.session_id for s in bench.data.sessions if s.scope == b] for b in bench.data.scopes)
    assert first == [f"me#1/s{i}" for i in range(1, 11)] and second == [f"me#2/s{i}" for i in range(11, 25)]
    assert {q.question_id: q.clues for q in bench.data.questions} == {"me#2/late": ("me#2/t12",), "me#2/never": ()}
    # The blocks split like conversations: the question goes wherever its block goes.
    held = next(name for name in ("train", "test") if any(t.task_id == "me#2/s11" for t in bench.split(name).update))
    assert {t.task_id for t in bench.split(held).retrieve} == {"me#2/late", "me#2/never"}
    late = _task(bench, "me#2/late")
    assert bench.score(late, None, MemoryPayload(metadata={"evidence": ["me#2/t12"]})).value == 1.0
    load("conversations", {"path": str(_one_person(tmp_path, 6))})
    assert "one block leaves nothing to hold out: set block_sessions to 4 or less" in capsys.readouterr().err


def test_block_sessions_under_two_is_refused(tmp_path):
    with pytest.raises(ValueError, match="block_sessions must be at least 2"):
        load("conversations", {"path": str(_one_person(tmp_path, 4)), "block_sessions": 1})


GOOD = json.dumps({k: v for k, v in USER_LOG_SESSIONS[2].items() if k != "conversation"})  # conversation 'sessions'
BAD_SESSIONS = [
    (['{"id": "s9", "turns": [}'], r"sessions\.jsonl line 2: not valid JSON \(Expecting value, column 24\)"),
    (["[1, 2]"], r"sessions\.jsonl line 2: expected one session, a JSON object"),
    (['{"turns": [{"id": "t9", "text": "x"}]}'],
     r"line 2: id: missing; every session needs an id unique within its conversation"),
    (['{"id": "s9"}'], r"line 2: turns: missing; every session needs a list of turns"),
    (['{"id": "s9", "turns": [{"id": "t8", "text": "x"}, {"text": "y"}]}'],
     r"line 2: turns\[1\]\.id: missing; every turn needs an id unique within its conversation"),
    (['{"id": "s9", "turns": [{"id": "t9", "text": "x", "speaker": 7}]}'], r"line 2: turns\[0\]\.speaker: expected a string"),
    (['{"id": "s9", "turns": [{"id": "t9", "text": "x"}]}', '{"id": "s9", "turns": [{"id": "t8", "text": "y"}]}'],
     r"line 3: id: session 's9' is also on line 2 \(conversation 'sessions'\); session ids must be unique"),
    (['{"id": "s9", "turns": [{"id": "t9", "text": "x"}, {"id": "t1", "text": "y"}]}'],
     r"line 2: turns\[1\]\.id: turn 't1' is also turns\[0\] on line 1 \(conversation 'sessions'\)"),
    (['{"id": "s9", "date": "05/01/2024", "turns": [{"id": "t9", "text": "x"}]}'],
     r"line 2: date: '05/01/2024' is not an ISO date or datetime"),
    (['{"id": "s9", "turns": [{"id": "t9", "text": "x", "images": [{"caption": "c"}]}]}'],
     r'line 2: turns\[0\]\.images\[0\]: needs "path" .* or "url"'),
    (['{"id": "s9", "conversation": "a/b", "turns": [{"id": "t9", "text": "x"}]}'],
     r"line 2: conversation: 'a/b' holds a '/'"),
]


@pytest.mark.parametrize("lines, message", BAD_SESSIONS)
def test_a_bad_sessions_file_is_refused_naming_the_line_and_the_field(lines, message, tmp_path):
    sessions = jsonl(tmp_path / "sessions.jsonl", [GOOD, *lines])
    with pytest.raises(DatasetError, match=message):
        load("conversations", {"path": str(sessions)})


BAD_QUESTIONS = [
    ('{"id": "q1", "question": "Where?"', r"questions\.jsonl line 1: not valid JSON"),
    ('{"id": "q1", "conversation": "zoe", "question": "Where?", "evidence": ["t1"]}',
     r"line 1: conversation: 'zoe' is no conversation of the sessions file; it holds 'ana', 'ben'"),
    ('{"id": "q1", "question": "Where?", "evidence": ["t1"]}',
     r"line 1: conversation: missing; the sessions file holds 2 conversations \('ana', 'ben'\)"),
    ('{"id": "q1", "conversation": "ana", "question": "Where?"}', r"line 1: evidence: missing; give the ids of the turns"),
    ('{"id": "q1", "conversation": "ana", "question": "Where?", "evidence": []}', r"line 1: evidence: empty; give"),
    ('{"id": "q1", "conversation": "ana", "question": "Where?", "evidence": "t1"}',
     r"line 1: evidence: expected a list of turn ids"),
    ('{"id": "q1", "conversation": "ana", "evidence": ["t1"]}', r"line 1: question: missing"),
    ('{"conversation": "ana", "question": "Where?", "evidence": ["t1"]}', r"line 1: id: missing"),
    ('{"id": "q1", "conversation": "ana", "question": "Where?", "refusal": "yes"}', r"line 1: refusal: expected true or false"),
]


@pytest.mark.parametrize("line, message", BAD_QUESTIONS)
def test_a_bad_questions_file_is_refused_naming_the_line_and_the_field(line, message, logs):
    logs["questions"].write_text(line + "\n")
    with pytest.raises(DatasetError, match=message):
        _load(logs)


def test_a_repeated_question_id_names_both_lines_and_many_conversations_are_listed_five(logs, tmp_path):
    logs["questions"].write_text("\n".join(json.dumps(USER_LOG_QUESTIONS[0]) for _ in range(2)) + "\n")
    with pytest.raises(DatasetError, match=r"line 2: id: question 'q1' is also on line 1 \(conversation 'ana'\)"):
        _load(logs)
    many = jsonl(tmp_path / "many.jsonl", [{"id": "s", "conversation": f"c{i}", "turns": [{"id": "t", "text": "x"}]}
                                            for i in range(7)])
    logs["questions"].write_text('{"id": "q", "conversation": "c9", "question": "?", "evidence": ["t"]}\n')
    with pytest.raises(DatasetError, match=r"'c9' is no .* holds 'c0', 'c1', 'c2', 'c3', 'c4', \.\.\. \(7 in all\)"):
        load("conversations", {"path": str(many), "questions": str(logs["questions"])})


def test_missing_files_name_the_option_to_set(logs, tmp_path):
    with pytest.raises(DatasetError, match=r"nowhere\.jsonl does not exist; set the option `path`"):
        load("conversations", {"path": str(tmp_path / "nowhere.jsonl")})
    with pytest.raises(DatasetError, match=r"nowhere\.jsonl does not exist; set the option `questions`"):
        _load({"path": logs["path"], "questions": tmp_path / "nowhere.jsonl"})


def test_eval_scores_a_seed_on_your_own_conversations(logs, tmp_path, torch_cpu_shim, monkeypatch, capsys):
    """The command line end to end, as the released conversation benchmarks' eval tests run it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "results.json"
    code = main(["eval", "bm25_rag", "--benchmark", "conversations", "--option", f"path={logs['path']}",
                 "--option", f"questions={logs['questions']}", "--split", "test", "--repeats", "1",
                 "--sandbox", "unsafe", "--quiet", "--out", str(out), "--workdir", str(tmp_path / "w"),
                 "--store", str(tmp_path / "store")])
    assert code == 0
    assert "bm25_rag on conversations (test split" in capsys.readouterr().out
    table = json.loads(out.read_text())["table"]
    assert table["score"]["mean"] == 1.0 and table["errors"] == {}
    assert "FR" in table["per_category"] and "refusal" not in table["per_category"]
