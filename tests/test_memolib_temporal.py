"""memolib temporal anchoring: relative dates resolved against the session date; time questions
prefer units dated near the date they ask about."""

from __future__ import annotations

from datetime import date

from automemo.toolkit.memolib import BM25Index, DateIndex, date_mentions, is_time_question


def spans(text, anchor=date(2024, 7, 29)):  # a Monday
    return [(s.start.isoformat(), s.end.isoformat()) for s in date_mentions(text, anchor)]


def test_relative_phrases_resolve_against_the_anchor():
    assert spans("I went there yesterday") == [("2024-07-28", "2024-07-28")]
    assert spans("last week we baked") == [("2024-07-22", "2024-07-28")]
    assert spans("two days before the trip") == [("2024-07-27", "2024-07-27")]
    assert spans("we met in May") == [("2024-05-01", "2024-05-31")]
    assert spans("in September") == [("2023-09-01", "2023-09-30")]  # no later than the anchor
    assert spans("last Friday") == [("2024-07-26", "2024-07-26")]
    assert spans("on 8 May, 2023 and July 2024") == [("2023-05-08", "2023-05-08"), ("2024-07-01", "2024-07-31")]
    assert spans("yesterday", None) == []  # nothing to anchor a relative phrase on
    assert spans("You may want to try it") == []


def test_time_questions_are_read_from_the_text():
    assert is_time_question("When did Maya visit the library?")
    assert is_time_question("On which date did she bake? Return in the format YYYY-MM-DD.")
    assert is_time_question("How many days before the party did she buy flour?")
    assert not is_time_question("What did Maya bake for the party?")


def test_a_date_only_the_anchored_yesterday_names_ranks_the_planted_unit_first():
    rows = [
        ("Maya talked about the library books and the library cafe on 2024-07-15.", "2024-07-15"),
        ("Maya: the library has a new reading room and quiet library corners.", "2024-07-15"),
        ("Yesterday I spent a quiet afternoon reading.", "2024-07-29"),          # planted: about 07-28
        ("Today I am planning the next bake.", "2024-07-29"),
    ]
    question = "What did Maya do at the library on 2024-07-28?"
    lexical = BM25Index()
    lexical.add_many([t for t, _ in rows])
    assert 2 not in [r for r, _ in lexical.search(question, 4)]
    dates = DateIndex()
    dates.add_many([t for t, _ in rows], [when for _, when in rows])
    hits = dates.search(question, 4)
    assert hits[0][0] == 2 and hits[1][0] == 3  # the same session's other round: a day off
    assert dates.search("What did Maya bake?", 4, prior=[0, 1]) == []


def test_a_time_question_without_a_date_puts_dated_candidates_first():
    dates = DateIndex()
    dates.add_many(["the library was quiet", "I went to the library last Friday"], ["2024-07-29", "2024-07-29"])
    hits = dates.search("When did Maya go to the library?", 5, prior=[0, 1])
    assert [r for r, _ in hits] == [1]
    relative = dates.search("What did she do yesterday?", 5, now="2024-07-30")
    assert relative[0][0] in (0, 1) and relative[0][1] > 0
