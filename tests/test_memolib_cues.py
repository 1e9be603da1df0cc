"""What a question's wording asks for, read from its text alone (never a label): a current or
final value (latest state), a count or a series (coverage), a list (session expansion); and
the cues the fitted ranker's per-cue weights read."""

from __future__ import annotations

import pytest

from automemo.toolkit.memolib import is_count_question, is_list_question, is_state_question, question_cues

CASES = {
    is_state_question: (["Which oven does the user currently use for baking bread?",
                         "What is Julian's final stance on robots?", "What is her latest view on AI art?"],
                        ["Which oven did the user buy in May?", ""]),
    is_count_question: (["How many car photos did I share?", "List every session where the oven came up",
                         "Which images did Julian upload in May?"],
                        ["What colour is my car?"]),
    is_list_question: (["List the robot vacuum brands I mentioned.", "What are the ways AI is used in music?"],
                       ["When did I buy the vacuum?"]),
}


@pytest.mark.parametrize("detector", list(CASES), ids=lambda d: d.__name__)
def test_a_question_s_wording_says_what_it_asks_for(detector):
    asks, does_not = CASES[detector]
    assert all(detector(q) for q in asks)
    assert not any(detector(q) for q in does_not)


def test_the_ranker_reads_every_cue_a_question_shows():
    assert question_cues("When did I last change my oven?") == ["time", "state"]
    assert question_cues("List all the cakes I baked") == ["count", "list"]
    assert question_cues("Who is Anna?") == []
