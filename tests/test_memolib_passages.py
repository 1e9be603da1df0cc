"""memolib passages: a session, a window of turns or a session summary ranked as a document of its
own, then cited by its best turns."""

from __future__ import annotations

import pickle

import pytest

from automemo.toolkit.memolib import BM25Index, PassageIndex, SessionIndex, best_turns, spans

# The question's words are spread over two rounds of session A (the Kyoto trip in one, the temple
# visit in the next); one round of session B says "temple visit" more often than any round of A.
SESSIONS = {
    "A": ["We booked the trip to Kyoto.", "The temple visit is on Friday morning.", "Bring the camera."],
    "B": ["Temple visit, temple visit, the temple visit day: a temple visit every day.", "Laundry again."],
    "C": ["The dentist is on Monday.", "Buy milk."],
}
QUESTION = "Which day is the temple visit on our Kyoto trip?"
PLANTED = 0  # A's first round: the rarest words of the question, in the passage that holds them all


def stored(kind: str, length: int = 2):
    turns, passages = BM25Index(), PassageIndex([BM25Index()], kind, length)
    for texts in SESSIONS.values():
        passages.add(texts, turns.add_many(texts), scope="u1")
    return turns, passages


def test_windows_overlap_by_half_and_the_last_one_ends_the_session():
    assert spans(7, 4) == [range(0, 4), range(2, 6), range(3, 7)]
    assert spans(6, 2) == [range(0, 2), range(1, 3), range(2, 4), range(3, 5), range(4, 6)]
    assert spans(3, 4) == [range(3)] and spans(5, 0) == [range(5)] and spans(0, 4) == []


def test_a_window_holding_the_question_s_words_ranks_first_and_stands_for_the_planted_round():
    turns, passages = stored("window", 2)
    assert turns.search(QUESTION, 1)[0][0] == 3  # the flat search ranks B's "temple visit" round first
    assert passages.turn_rows[:2] == [(0, 1), (1, 2)] and passages.size == 2 + 1 + 1
    ranked = passages.search(QUESTION, 2, scope="u1")
    assert passages.turn_rows[ranked[0][0]] == (0, 1)
    standing = best_turns(ranked, turns.search(QUESTION, 10, passages.rows_in(ranked)), passages)
    assert [row for row, _ in standing][0] == PLANTED
    assert standing[0][1] == ranked[0][1]  # a turn carries its passage's score


@pytest.mark.parametrize("kind", ["session", "summary"])
def test_a_whole_session_or_its_summary_is_one_passage_of_all_its_rounds(kind):
    turns, passages = stored(kind, 3)
    assert passages.turn_rows == [(0, 1, 2), (3, 4), (5, 6)]
    ranked = passages.search(QUESTION, 1, scope="u1")
    assert ranked[0][0] == 0
    assert best_turns(ranked, turns.search(QUESTION, 10, passages.rows_in(ranked)), passages)[0][0] == PLANTED


def test_best_turns_goes_breadth_first_and_cites_a_shared_turn_once():
    groups = SessionIndex()
    for rows in ((0, 1), (1, 2), (7, 8)):
        groups.add("x", rows)
    ranked = [(0, 2.0), (1, 1.0), (2, 0.5)]
    inside = [(1, 0.9), (2, 0.5), (0, 0.1)]  # rows 7 and 8 were not found: passage 2 stands for nothing
    assert best_turns(ranked, inside, groups) == [(1, 2.0), (2, 1.0)]
    assert best_turns(ranked, inside, groups, per_passage=2) == [(1, 2.0), (2, 1.0), (0, 2.0)]
    assert best_turns([], inside, groups) == []


def test_a_passage_index_needs_a_known_kind_and_an_index():
    with pytest.raises(ValueError):
        PassageIndex([BM25Index()], "paragraph")
    with pytest.raises(ValueError):
        PassageIndex([], "session")


def test_a_passage_index_pickles_and_searches_the_same_after():
    _, passages = stored("summary", 2)
    again = pickle.loads(pickle.dumps(passages))
    assert again.search(QUESTION, 3, scope="u1") == passages.search(QUESTION, 3, scope="u1")
    again.add(["The Kyoto temple is closed."], [9], scope="u1")  # the summarizer's counts came along
    assert again.turn_rows[-1] == (9,)
