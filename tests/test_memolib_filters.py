"""memolib filters: scope, time window, recency, and the time formats episodes state."""

from __future__ import annotations

import pytest

from automemo.toolkit.memolib import Unit, in_scope, in_time, parse_time, recency, recency_rerank


def test_times_in_the_formats_episodes_use():
    assert parse_time("2023-05-08") < parse_time("2023-05-08T13:56") == parse_time("1:56 pm on 8 May, 2023")
    assert parse_time("8 May 2023") == parse_time("2023-05-08")
    assert parse_time("yesterday") is None and parse_time("") is None and parse_time("2023-13-40") is None


def test_scope_filter_keeps_the_owner_or_everything_when_unknown():
    t = [Unit("a", 0, "x", scope="ann"), Unit("b", 0, "y", scope="ben"), Unit("c", 0, "z", scope="ann")]
    assert in_scope(t, "ann") == [0, 2]
    assert in_scope(t, "") == in_scope(t, "cleo") == [0, 1, 2]


def test_time_window_and_recency():
    t = [Unit("a", 0, "x", time="2023-01-01"), Unit("a", 1, "y", time="2023-06-01"), Unit("b", 0, "z", time="?"),
         Unit("b", 1, "w", time="2024-01-01")]
    assert in_time(t, start="2023-03-01", end="2023-12-31") == [1, 2]  # unknown time kept
    assert in_time(t, end=parse_time("2023-01-02")) == [0, 2]
    assert recency(t) == [0.0, 1 / 3, 2 / 3, 1.0]  # one unknown time: insertion order
    dated = [t[0], t[1], t[3]]
    assert recency(dated)[1] == pytest.approx((parse_time("2023-06-01") - parse_time("2023-01-01"))
                                              / (parse_time("2024-01-01") - parse_time("2023-01-01")))
    # Two equally relevant hits: the later one first; a strong relevance lead still wins.
    assert [r for r, _ in recency_rerank([(0, 1.0), (3, 1.0)], t)] == [3, 0]
    assert [r for r, _ in recency_rerank([(0, 1.0), (3, 0.0)], t, weight=0.2)] == [0, 3]
