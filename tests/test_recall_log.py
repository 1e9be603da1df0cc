"""A namespace's recalls and the agent's feedback (automemo/serve/storage/recall_log.py): checked against
the recall, durable, dropped with a forgotten episode, gone with `forget all`."""

import pytest

from automemo.serve.storage.recall_log import FeedbackRefused, RecallLog, episode_item_ids, read_recalls


def test_feedback_is_checked_against_its_recall_and_a_refusal_changes_nothing(tmp_path):
    log = RecallLog(tmp_path / "recalls.jsonl")
    log.record("r1", "where is my bike?", ["s3#0", "s1#2"], date="2024-06-01")
    before = (tmp_path / "recalls.jsonl").read_bytes()
    for call, status in [(lambda: log.feedback("nope", ["s3#0"]), 404),
                         (lambda: log.feedback("r1", ["s9#9"]), 400),
                         (lambda: log.feedback("r1", ["s3#0"], ["s3#0"]), 400),
                         (lambda: log.feedback("r1", "s3#0"), 400)]:
        with pytest.raises(FeedbackRefused) as refused:
            call()
        assert refused.value.status == status
    assert (tmp_path / "recalls.jsonl").read_bytes() == before
    done = log.feedback("r1", ["s1#2"], ["s3#0"])
    assert done.used == ("s1#2",) and done.not_used == ("s3#0",)
    with pytest.raises(FeedbackRefused) as twice:
        log.feedback("r1", ["s3#0"])
    assert twice.value.status == 409
    (again,) = read_recalls(tmp_path / "recalls.jsonl").values()  # a restart reads what was acknowledged
    assert again.used == ("s1#2",) and again.query == "where is my bike?" and again.date == "2024-06-01"


def test_forgetting_an_episode_drops_the_recalls_that_showed_it_from_the_disk(tmp_path):
    log = RecallLog(tmp_path / "recalls.jsonl")
    log.record("r1", "about the bike", ["bike#0", "cat#1"])
    log.feedback("r1", ["bike#0"])
    log.record("r2", "about the cat only", ["cat#1"])
    episode = {"task_id": "bike", "steps": [{"index": 0, "observation": "my bike is red"}]}
    assert log.drop_showing(episode_item_ids(episode)) == 1
    text = (tmp_path / "recalls.jsonl").read_text()
    assert "about the bike" not in text and "bike#0" not in text and "about the cat only" in text
    assert [r.recall_id for r in RecallLog(tmp_path / "recalls.jsonl").entries()] == ["r2"]
    log.clear()
    assert not (tmp_path / "recalls.jsonl").exists() and log.entries() == []


def test_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "recalls.jsonl"
    log = RecallLog(path)
    log.record("r1", "q", ["a"])
    with open(path, "a") as fh:
        fh.write('{"recall": "r2", "query": "half')
    assert list(read_recalls(path)) == ["r1"]


def test_the_ids_a_program_may_cite_for_an_episode():
    episode = {"task_id": "chat-7", "steps": [{"index": 0, "ref": "ana/t1"},
                                              {"index": 1, "metadata": {"round_id": "R2", "image_ids": ["img9"]}}]}
    ids = episode_item_ids(episode)
    assert ids["ana/t1"] == 0 and ids["chat-7#0"] == 0
    assert ids["R2"] == 1 and ids["img9"] == 1 and ids["chat-7#1"] == 1


def test_the_log_keeps_the_newest_recalls_without_feedback_and_every_one_with(tmp_path, monkeypatch):
    from automemo.serve.storage import recall_log

    monkeypatch.setattr(recall_log, "KEPT_RECALLS", 8)
    log = RecallLog(tmp_path / "recalls.jsonl")
    log.record("first", "q", ["a"])
    log.feedback("first", ["a"])
    for i in range(30):
        log.record(f"r{i}", "q", ["a"])
    kept = [r.recall_id for r in read_recalls(tmp_path / "recalls.jsonl").values()]
    assert kept[0] == "first" and kept[-1] == "r29"
    assert 8 <= len(kept) - 1 <= 10 and "r0" not in kept
