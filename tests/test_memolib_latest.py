"""memolib latest state: a question about a current or final value prefers the latest unit that
states it over the earlier ones a search scores better."""

from __future__ import annotations

from automemo.toolkit.memolib import BM25Index, Unit, latest_state, recency_rerank

TURNS = [Unit("s1", 0, "For baking bread I use a gas oven; the gas oven bakes bread evenly."),
         Unit("s1", 1, "The dough rose well in the warm kitchen."),
         Unit("s1", 2, "I replaced it: baking now happens in an induction oven."),   # planted: the latest state
         Unit("s2", 0, "We talked about the garden and the tomatoes.")]
QUESTION = "Which oven does the user currently use for baking bread?"


def test_the_latest_unit_stating_the_value_ranks_first_where_relevance_and_recency_alone_do_not():
    index = BM25Index()
    index.add_many([u.text for u in TURNS])
    hits = index.search(QUESTION, 4)
    assert hits[0][0] == 0                          # the search prefers the first version
    assert recency_rerank(hits, TURNS, 0.2)[0][0] == 0  # a global recency boost does not change that
    ranked = latest_state(hits, TURNS, floor=0.3)
    assert [r for r, _ in ranked[:2]] == [2, 0]                  # the earlier version right behind
    assert ranked[0][0] == 2
    assert sorted(r for r, _ in ranked) == sorted(r for r, _ in hits)   # nothing dropped


def test_a_high_floor_a_single_hit_and_depth_one_keep_the_order():
    index = BM25Index()
    index.add_many([u.text for u in TURNS])
    hits = index.search(QUESTION, 4)
    assert latest_state(hits, TURNS, floor=0.9) == list(hits)   # the earlier version alone counts
    assert latest_state(hits[:1], TURNS) == list(hits[:1])
    assert latest_state(hits, TURNS, depth=1) == list(hits)


def test_only_a_later_round_of_the_same_session_moves_and_other_sessions_keep_their_places():
    units = [Unit("a", 0, ""), Unit("a", 1, ""), Unit("a", 2, ""), Unit("b", 0, ""), Unit("b", 1, "")]
    hits = [(3, 10.0), (0, 9.0), (2, 8.0), (1, 1.0)]      # b0, a0, a2, a1 (a1 too weak to count)
    assert latest_state(hits, units, floor=0.5) == [(3, 10.0), (2, 9.0), (0, 9.0), (1, 1.0)]
