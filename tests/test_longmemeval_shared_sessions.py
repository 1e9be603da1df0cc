"""A haystack session that many questions' haystacks hold (most of LongMemEval M's) is parsed once,
keyed by its id and content; each question's memory still refers to it under its own refs; a
session id reused with other text is another session; dirt in a shared session is said for each
haystack; and on an M-shaped file every distinct turn text is encoded once across questions and
splits (the encoder's calls counted)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from automemo.benchmarks import load
from automemo.benchmarks.conversation import longmemeval
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.measurements.stand_ins.longmemeval_file import SyntheticShape, write_synthetic_longmemeval
from automemo.paths import SEEDS_DIR
from automemo.sandbox import get_sandbox
from longmemeval_data import longmemeval_items, write_longmemeval

SMALL_M = SyntheticShape(questions=8, sessions=30, turns=4, pool=40, words=6)


def _counting_parses(monkeypatch) -> list[int]:
    calls = [0]
    real = longmemeval._Reader._parse

    def counted(self, turns):
        calls[0] += 1
        return real(self, turns)

    monkeypatch.setattr(longmemeval._Reader, "_parse", counted)
    return calls


def test_a_shared_session_is_parsed_once_and_each_question_refers_to_it(tmp_path, monkeypatch):
    path = write_synthetic_longmemeval(tmp_path / "m.json", SMALL_M).path
    items = json.loads(path.read_text())
    parses = _counting_parses(monkeypatch)
    bench = load("longmemeval", {"path": str(path)})
    held = Counter(sid for item in items for sid in item["haystack_session_ids"])
    assert parses[0] == len(held) == bench.distinct_sessions < bench.session_references == sum(held.values())
    assert max(held.values()) > 1  # the file does share sessions
    assert bench.describe()["haystack_sessions"] == {"references": sum(held.values()), "distinct": len(held)}
    # Each question's memory: its own sessions, its own refs, the file's text.
    sessions = {s.session_id: s for s in bench.data.sessions}
    for item in items:
        qid = item["question_id"]
        for sid, turns in zip(item["haystack_session_ids"], item["haystack_sessions"]):
            session = sessions[f"{qid}/{sid}"]
            assert session.scope == qid
            assert [(t.ref, t.text) for t in session.turns] == [
                (f"{qid}/{sid}:{n}", f"{t['role']}: {t['content']}") for n, t in enumerate(turns, 1)]
    shared = next(sid for sid, n in held.items() if n > 1)
    texts = [tuple(t.text for t in s.turns) for s in bench.data.sessions if s.session_id.endswith(f"/{shared}")]
    assert len(texts) == held[shared] and all(a is b for a, b in zip(texts[0], texts[1]))  # one string each


def test_a_session_id_reused_for_other_text_is_another_session(tmp_path, monkeypatch):
    items = longmemeval_items()
    changed = items[1]
    at = changed["haystack_session_ids"].index("sharegpt_fill_1")
    changed["haystack_sessions"][at] = [{"role": "user", "content": "Not the photosynthesis question at all."}]
    parses = _counting_parses(monkeypatch)
    bench = load("longmemeval", {"path": str(write_longmemeval(tmp_path / "s.json", items=items))})
    distinct_ids = {sid for item in items for sid in item["haystack_session_ids"]}
    assert parses[0] == bench.distinct_sessions == len(distinct_ids) + 1
    turns = {s.session_id: s.turns for s in bench.data.sessions}
    assert [t.text for t in turns[f"{changed['question_id']}/sharegpt_fill_1"]] == [
        "user: Not the photosynthesis question at all."]
    assert turns[f"{items[0]['question_id']}/sharegpt_fill_1"][0].text.startswith("user: Can you explain")


def test_dirt_in_a_shared_session_is_said_for_every_haystack_that_holds_it(tmp_path):
    items = longmemeval_items()
    for item in items:
        at = item["haystack_session_ids"].index("sharegpt_fill_1")
        item["haystack_sessions"][at] = [{"role": "user", "content": "  "}] + item["haystack_sessions"][at][1:]
    bench = load("longmemeval", {"path": str(write_longmemeval(tmp_path / "s.json", items=items))})
    said = [d.where for d in bench.data.dropped if d.what == "a turn without text"]
    assert len(said) == len(items) and all("sharegpt_fill_1" in w and w.endswith("turn 1") for w in said)
    assert all(len(s.turns) == 1 and s.turns[0].ref.endswith(":2")
               for s in bench.data.sessions if s.session_id.endswith("/sharegpt_fill_1"))


def test_on_an_m_shaped_file_each_distinct_turn_is_encoded_once(tmp_path, torch_cpu_shim, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from automemo.assembly import services_factory
    from automemo.toolkit.embedding import default_encoders

    encoders = default_encoders()
    model, embedded = encoders.text.encoder, []

    class Counting:  # the real MiniLM, with a tally of every text it is asked to encode
        name, dim = model.name, model.dim

        def encode(self, texts, **kw):
            embedded.extend(texts)
            return model.encode(texts, **kw)

    encoders.text.encoder = Counting()
    path = write_synthetic_longmemeval(tmp_path / "m.json", SMALL_M).path
    bench = load("longmemeval", {"path": str(path)})
    store = EpisodeStore(tmp_path / "s")
    evaluator = Evaluator(bench, get_sandbox("unsafe"), store, config=EvaluationConfig(quiet=True),
                          services_factory=services_factory(encoders, store.root, None))
    try:
        for split in ("train", "test"):
            assert not evaluator.evaluate((SEEDS_DIR / "hybrid_rag.py").read_text(), split=split).errors
    finally:
        evaluator.close()
    turns = [t.text for s in bench.data.sessions for t in s.turns]
    assert len(turns) == SMALL_M.questions * SMALL_M.sessions * SMALL_M.turns  # every reference was fed
    assert len(embedded) == len(set(embedded))  # nothing twice, across questions and splits
    assert set(turns) <= set(embedded) and len(set(turns)) < len(turns) / 3
