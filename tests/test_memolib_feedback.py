"""memolib pseudo-relevance feedback: the first hits' terms reach a unit the question never names."""

from __future__ import annotations

from automemo.toolkit.memolib import BM25Index, expanded_search, feedback_terms

TEXTS = [
    "Maya found a quote in a cookbook at the library: baking is the language of warmth.",
    "The quote from the library cookbook stayed with Maya.",
    "She copied the warmth line onto a card and pinned it above the oven.",          # planted
    "The oven needs cleaning.",
    "A card game with friends.",
]
QUESTION = "Where did Maya put the quote she found?"


def test_feedback_terms_are_the_hits_words_the_question_lacks():
    terms = feedback_terms(QUESTION, TEXTS[:2], terms=5)
    words = [t for t, _ in terms]
    assert "quote" not in words and "maya" not in words and {"cookbook", "library", "warmth"} <= set(words)
    assert abs(sum(w for _, w in terms) - 1.0) < 1e-9 and feedback_terms("x", []) == []


def test_expansion_ranks_the_planted_unit_first_among_those_the_question_does_not_name():
    index = BM25Index()
    index.add_many(TEXTS)
    plain = [r for r, _ in index.search(QUESTION, 5)]
    assert 2 not in plain  # shares no word with the question
    expansion = feedback_terms(QUESTION, [TEXTS[r] for r in plain[:2]], terms=8)
    expanded = [r for r, _ in expanded_search(index, QUESTION, expansion, 5)]
    assert 2 in expanded
    new = [r for r in expanded if r not in plain]
    assert new[0] == 2
    assert [r for r, _ in expanded_search(index, QUESTION, expansion, 5, allowed=[2, 3])] == [2]
