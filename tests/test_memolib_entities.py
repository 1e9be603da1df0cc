"""memolib entity and quoted-phrase matching: whole names and phrases from the question."""

from __future__ import annotations

from automemo.toolkit.memolib import BM25Index, PhraseIndex, query_phrases, rrf


def test_query_phrases_reads_names_and_quotes_not_sentence_openers_or_calendar_words():
    q = 'What did Lisa Park say about "the cake is a lie" in New York in May? Return it as YYYY-MM-DD.'
    assert query_phrases(q) == ["the cake is a lie", "lisa park", "new york"]
    assert query_phrases("Which book did Maya read?") == ["maya"]
    assert query_phrases("what did she read on Monday?") == []
    assert query_phrases('How many photos did Maya share? Please answer using an Arabic numeral (e.g., "Two").') == ["maya"]


def test_a_full_name_ranks_the_planted_unit_first_where_bm25_does_not():
    texts = [
        "Lisa loved the park. The park near Lisa's house, a park and a park again.",   # distractor
        "I met Lisa Park at the conference; she recommended a book.",                  # planted
        "The park was closed, Lisa said.",
        "We walked in the park.",
    ]
    question = "What did Lisa Park recommend at the park?"
    lexical = BM25Index()
    lexical.add_many(texts)
    assert lexical.search(question, 4)[0][0] != 1  # "Lisa" and "park" are everywhere
    names = PhraseIndex()
    names.add_many(texts)
    hits = names.search(question, 4, max_share=0.5)
    assert hits[0][0] == 1 and 0 not in [r for r, _ in hits] and 3 not in [r for r, _ in hits]
    assert rrf([lexical.search(question, 4), hits])[0][0] == 1
    assert names.search("what was recommended?", 4) == []
    assert names.search(question, 4, allowed=[0, 2, 3], max_share=0.5) == []
    assert names.search(question, 4) == []  # on 4 rows, the default 20% share leaves no phrase


def test_a_quoted_phrase_matches_only_in_its_word_order():
    texts = ["a lie about the cake, the cake and the lie", 'she wrote "the cake is a lie" on the board']
    names = PhraseIndex()
    names.add_many(texts)
    assert [r for r, _ in names.search('Who wrote "the cake is a lie"?', 5, max_share=0.5)] == [1]


def test_a_name_most_rounds_say_is_left_out_and_ties_follow_the_prior():
    names = PhraseIndex()
    names.add_many([f"Maya said thing {i}" for i in range(8)] + ["Maya met Jon Snow", "Jon Snow and Maya", "x"])
    assert [r for r, _ in names.search("What did Maya tell Jon Snow?", 5)] == [8, 9]
    assert [r for r, _ in names.search("What did Maya tell Jon Snow?", 5, prior=[9, 8])] == [9, 8]
