"""The synthetic M-shaped LongMemEval file (`measurements/stand_ins/longmemeval_file.py`): written one
question at a time, it holds the bytes `json.dumps` of the whole list would, has the published
format and the M shape (~480 sessions a question, fillers shared between haystacks), and loads
as the longmemeval benchmark with nothing left out."""

from __future__ import annotations

import json

import pytest

from automemo.measurements.stand_ins.longmemeval_file import (
    SyntheticShape, session, vocabulary, write_synthetic_longmemeval,
)
from automemo.benchmarks import load
from automemo.benchmarks.conversation.longmemeval import iso_date

M_SHAPED = SyntheticShape(questions=6, sessions=480, turns=2, pool=600, words=4)


def test_the_m_shaped_file_has_the_published_format_and_loads_whole(tmp_path, capsys):
    written = write_synthetic_longmemeval(tmp_path / "m.json", M_SHAPED)
    text = written.path.read_text()
    items = json.loads(text)
    assert text == json.dumps(items)  # as json.dumps of the whole list writes it
    assert (written.questions, written.session_references, written.turn_references, written.bytes) == (
        6, 6 * 480, 6 * 480 * 2, len(text.encode()))
    assert written.distinct_sessions == len({s for i in items for s in i["haystack_session_ids"]}) < 6 * 480
    for item in items:
        ids, dates, sessions = item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"]
        assert len(ids) == len(dates) == len(sessions) == 480 and len(set(ids)) == 480
        assert set(item["answer_session_ids"]) <= set(ids)
        asked = iso_date(item["question_date"])
        assert all(iso_date(d) < asked for d in dates)  # every session before its question
        assert {"question_id", "question_type", "question", "answer"} <= set(item)
    bench = load("longmemeval", {"path": str(written.path)})
    assert "left out" not in capsys.readouterr().err and not bench.data.dropped
    assert len(bench.data.questions) == 6 and len(bench.data.sessions) == 6 * 480
    assert (bench.session_references, bench.distinct_sessions) == (6 * 480, written.distinct_sessions)
    answerable = [q for q in bench.data.questions if not q.refusal]
    assert answerable and all(q.clues for q in answerable)


def test_the_s_shape_is_the_default_and_the_same_seed_writes_the_same_file(tmp_path):
    shape = SyntheticShape(questions=4, sessions=5, turns=2, pool=8, words=3)
    a = write_synthetic_longmemeval(tmp_path / "a.json", shape)
    b = write_synthetic_longmemeval(tmp_path / "b.json", shape)
    assert a.path.read_bytes() == b.path.read_bytes()
    assert SyntheticShape().sessions == 50 and SyntheticShape().questions == 500


def test_a_pool_too_small_for_a_haystack_is_refused(tmp_path):
    with pytest.raises(ValueError, match="pool must be at least"):
        write_synthetic_longmemeval(tmp_path / "x.json", SyntheticShape(questions=1, sessions=50, pool=10))


def test_an_evidence_session_marks_its_fact_turn_only():
    import random

    rng = random.Random(0)
    turns = session(rng, vocabulary(rng, 50), 4, 3, fact="My cat is Tom.", fact_role="assistant")
    assert [t["has_answer"] for t in turns].count(True) == 1
    marked = next(t for t in turns if t["has_answer"])
    assert marked["role"] == "assistant" and marked["content"].startswith("My cat is Tom.")
    assert "has_answer" not in session(rng, vocabulary(rng, 50), 2, 3)[0]  # fillers carry no mark


def test_with_fact_words_a_questions_topic_is_in_its_evidence_turns_only(tmp_path):
    """In an M haystack (~5,000 turns) a filler word is in dozens of turns by chance; the M shape's
    facts use words of their own, so a question still names its evidence by its words."""
    import dataclasses

    from automemo.measurements.stand_ins.longmemeval_file import M_SHAPE

    shape = dataclasses.replace(M_SHAPE, questions=4, sessions=40, turns=3, pool=60, words=30)
    items = json.loads(write_synthetic_longmemeval(tmp_path / "m.json", shape).path.read_text())
    topics = set()
    for item in items:
        topic = item["question"].removeprefix("What is my ").removesuffix("?")
        topics.add(topic)
        holding = [(sid, t) for sid, turns in zip(item["haystack_session_ids"], item["haystack_sessions"])
                   for t in turns if topic in t["content"].split()]
        if "_abs" in item["question_id"]:
            continue
        assert holding and all(sid in item["answer_session_ids"] and t.get("has_answer") for sid, t in holding)
    assert len(topics) == len(items)  # each question its own
    plain = dataclasses.replace(shape, fact_words=False)
    a = write_synthetic_longmemeval(tmp_path / "a.json", plain).path.read_text()
    b = write_synthetic_longmemeval(tmp_path / "b.json", shape).path.read_text()
    assert json.loads(a)[0]["haystack_session_ids"] == json.loads(b)[0]["haystack_session_ids"]  # the rest alike
