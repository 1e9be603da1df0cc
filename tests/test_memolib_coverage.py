"""memolib coverage: a counting or series question's payload slots go to distinct sessions rather
than near-duplicates of its best hit; session diversity puts the best turn of each of the best
sessions first."""

from __future__ import annotations

from automemo.toolkit.memolib import BM25Index, Unit, coverage, session_diversity

TURNS = [Unit("s1", i, f"Another photo of my red car, the car photo number {i}, car car photo.") for i in range(4)] + [
    Unit("s2", 0, "I shared a photo of a car at the museum."),   # planted: the series' other session
    Unit("s3", 0, "We talked about baking bread.")]
QUESTION = "How many car photos did I share?"


def test_the_other_session_enters_the_payload_only_with_coverage():
    index = BM25Index()
    index.add_many([u.text for u in TURNS])
    rows = [r for r, _ in index.search(QUESTION, 6)]
    k = 3
    assert 4 not in rows[:k]                        # near-duplicates of s1 fill the slots
    covered = coverage(rows, TURNS, k, quota=2)
    assert 4 in covered[:k] and covered[0] == rows[0]
    assert sorted(covered) == sorted(rows)


def test_slots_no_other_session_can_fill_go_back_to_the_best_session():
    rows = [0, 1, 2, 3]
    assert coverage(rows, TURNS, 3, quota=1) == [0, 1, 2, 3]
    assert coverage(rows, TURNS, 0, quota=1) == rows


def test_session_diversity_leads_with_one_turn_of_each_of_the_best_sessions():
    units = [Unit("A", 0, ""), Unit("A", 1, ""), Unit("A", 2, ""), Unit("B", 0, ""), Unit("C", 0, "")]
    rows = [0, 1, 3, 2, 4]                                  # A, A, B, A, C
    assert session_diversity(rows, units, 2) == [0, 3, 1, 2, 4]
    assert session_diversity(rows, units, 3) == [0, 3, 4, 1, 2]
    assert session_diversity(rows, units, 1) == rows == session_diversity(rows, units, 0)
    assert session_diversity(rows, units, 9) == [0, 3, 4, 1, 2]  # fewer sessions than asked: all of them
