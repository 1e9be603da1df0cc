"""memolib session expansion: a list question's best hit is followed by the rounds beside it in
its session, where the rest of the list is said."""

from __future__ import annotations

from automemo.toolkit.memolib import BM25Index, UnitStore, Unit, expand, session_expand

TURNS = [Unit("s1", 0, "Robot vacuum brands: Roomba is the robot vacuum brand I know best."),
         Unit("s1", 1, "Another one is Eufy, cheaper but loud."),   # planted: the list goes on here
         Unit("s1", 2, "We stopped there."),
         Unit("s2", 0, "A robot vacuum review in a magazine."),
         Unit("s3", 0, "The robot vacuum in the hotel was a Roomba brand robot too."),
         Unit("s4", 0, "My brother's robot vacuum.")]
QUESTION = "List the robot vacuum brands I mentioned."


def test_the_next_round_of_the_best_hit_s_session_ranks_second_only_with_session_expansion():
    store = UnitStore()
    store.add_episode(TURNS[:3])
    for unit in TURNS[3:]:
        store.add_episode([unit])
    index = BM25Index()
    index.add_many([u.text for u in TURNS])
    rows = [r for r, _ in index.search(QUESTION, 6)]
    assert rows[0] == 0 and 1 not in rows[:3]
    widened = session_expand(rows, store, radius=1, seeds=1)
    assert widened[:2] == [0, 1]
    assert expand(rows[:1], store, 1) == [0, 1]            # expand would need every hit widened
    assert len(widened) == len(set(widened))


def test_a_list_of_units_works_like_a_store():
    assert session_expand([3, 0], TURNS, radius=2, seeds=1) == [3, 0]
    assert session_expand([0], TURNS, radius=2, seeds=1) == [0, 1, 2]
