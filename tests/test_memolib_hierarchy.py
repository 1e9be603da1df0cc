"""memolib hierarchical retrieval: the session first, then the turn inside it."""

from __future__ import annotations

from automemo.toolkit.memolib import BM25Index, SessionIndex, hierarchical

SESSIONS = {
    "A": ["We planned a picnic with friends.", "The lakeside spot had shade.",
          "Maya will bring a lemon tart for dessert."],                                  # planted: A's last
    "B": ["Maya ordered dessert at the lakeside cafe, dessert again by the lakeside.", "Rain all day."],
    "C": ["Bring an umbrella.", "Bring water.", "Bring snacks for the kids.", "Nothing else."],
}
QUESTION = "What dessert did Maya bring to the lakeside picnic?"


def indexes():
    turns, sessions = BM25Index(), SessionIndex()
    for texts in SESSIONS.values():
        rows = turns.add_many(texts)
        sessions.add(" ".join(texts), rows, scope="u1")
    return turns, sessions


def test_the_best_session_s_best_turn_comes_first_where_a_flat_search_misses_it():
    turns, sessions = indexes()
    planted = 2
    assert turns.search(QUESTION, 10)[0][0] != planted
    top = sessions.search(QUESTION, 2, scope="u1")
    assert top[0][0] == 0  # session A holds every word of the question
    ranked = hierarchical(top, turns.search(QUESTION, 50, sessions.rows_in(top)), sessions)
    assert ranked[0][0] == planted
    assert {r for r, _ in ranked} <= set(sessions.rows_in(top))
    assert hierarchical([], ranked, sessions) == [] and sessions.search(QUESTION, 2, scope="nobody")


def test_allowed_rows_bound_the_turns():
    turns, sessions = indexes()
    top = sessions.search(QUESTION, 1)
    assert all(r in (0, 1) for r, _ in hierarchical(top, turns.search(QUESTION, 50), sessions, allowed=[0, 1]))
    assert hierarchical(top, turns.search(QUESTION, 50), sessions, allowed=[5]) == []


def groups(*rows):
    index = SessionIndex()
    for turn_rows in rows:
        index.add("x", turn_rows)
    return index


def test_session_fusion_moves_a_turn_of_the_best_session_up_and_keeps_every_hit():
    index = groups((0, 1), (2, 3), (4,))
    sessions = [(0, 5.0), (1, 1.0)]                     # session 2 (row 4) not ranked
    hits = [(2, 1.0), (4, 0.95), (0, 0.9), (3, 0.2)]
    fused = hierarchical(sessions, hits, index, 0.5, outside=True)
    assert [r for r, _ in fused] == [0, 2, 4, 3]        # row 0's session lifts it over rows 2 and 4
    assert [r for r, _ in hierarchical(sessions, hits, index, 0.5)] == [0, 2, 3]  # a filter without `outside`
    assert [r for r, _ in hierarchical([], hits, index, 0.5, outside=True)] == [2, 4, 0, 3]
    assert [r for r, _ in hierarchical(sessions, hits, index, 0.5, allowed=[3, 4], outside=True)] == [4, 3]


def test_a_turn_in_two_ranked_groups_counts_the_better_one():
    index = groups((0, 1), (1, 2))                     # overlapping windows share row 1
    fused = hierarchical([(0, 3.0), (1, 1.0)], [(2, 1.0), (1, 1.0)], index, 0.5)
    assert fused[0] == (1, 1.0) and fused[1] == (2, 0.5)
