"""The agent bench adapt --feedback plays (automemo/measurements/adaptation/agent_feedback.py): it reports the
returned items that hold the evidence, with seeded misses and false reports, and never an item
the recall did not return."""

import random
from types import SimpleNamespace

import pytest

from automemo.measurements.adaptation.agent_feedback import FeedbackNoise, halves, play, reported


def test_a_perfect_agent_reports_exactly_the_shown_evidence():
    assert reported(["a", "b", "c"], ["c", "z"], FeedbackNoise(), random.Random(0)) == ["c"]  # z was never shown


def test_misses_and_false_reports_come_at_their_rates():
    rng = random.Random(1)
    shown, gold = [f"i{k}" for k in range(10)], {"i0", "i1", "i2", "i3", "i4"}
    kept = falses = 0
    for _ in range(2000):
        out = set(reported(shown, gold, FeedbackNoise(miss=0.3, false=0.1), rng))
        kept += len(out & gold)
        falses += len(out - gold)
    assert kept / (2000 * 5) == pytest.approx(0.7, abs=0.02)
    assert falses / (2000 * 5) == pytest.approx(0.1, abs=0.02)
    with pytest.raises(ValueError, match="--feedback-miss must be a share"):
        FeedbackNoise(miss=1.5)


def test_play_asks_in_order_and_gives_feedback_only_where_something_was_used():
    calls = []

    def post(path, body):
        calls.append((path, body))
        if path == "/v1/recall":
            return 200, {"recall_id": f"r{len(calls)}", "evidence": ["a", "b"]}
        return 200, {"ok": True}

    tasks = [SimpleNamespace(instruction="q1", data={"clues": ["b"], "user": "ana"}),
             SimpleNamespace(instruction="q2", data={"clues": ["z"], "user": "ana"})]
    played = play(post, [("ana", t) for t in tasks], FeedbackNoise())
    assert (played.recalls, played.with_feedback, played.used) == (2, 1, 1)
    assert calls[1] == ("/v1/feedback", {"user": "ana", "recall_id": "r1", "used": ["b"]})
    assert [c[0] for c in calls] == ["/v1/recall", "/v1/feedback", "/v1/recall"]


def test_halves_keep_each_users_order():
    tasks = [SimpleNamespace(data={"user": u}, name=f"{u}{i}") for u, i in
             [("a", 1), ("b", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 2)]]
    first, second = halves(tasks)
    assert [(u, t.name) for u, t in first] == [("a", "a1"), ("a", "a2"), ("b", "b1")]
    assert [t.name for t in second] == ["a3", "a4", "b2"]


def test_bench_adapt_refuses_feedback_noise_without_feedback(tmp_path):
    import subprocess
    import sys

    for flags, words in ((["--feedback-miss", "0.3"], "add --feedback"),
                         (["--feedback", "--feedback-false", "1.5"], "--feedback-false must be a share")):
        done = subprocess.run([sys.executable, "-m", "automemo", "bench", "adapt", "--benchmark", "memgallery",
                               "--option", "path=@mem-gallery-sample", "--workdir", str(tmp_path / "w"), *flags],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and words in done.stderr, done.stderr[-2000:]
