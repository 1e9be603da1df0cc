"""memolib session summaries: a session's most salient sentences and terms by tf-idf within its
conversation, no model."""

from __future__ import annotations

from automemo.toolkit.memolib import SessionSummarizer, sentences

FIRST = ["user: My garden is my joy. The garden roses bloom in June.\nassistant: Garden roses love sun."]
SECOND = ["user: The garden needs water again, the garden is dry.",
          "assistant: Sure!\nuser: The orchid collection from Borneo arrived, rare orchid species in clay pots."]


def test_sentences_are_cut_at_their_ends_and_lines_without_the_speaker():
    assert sentences("user: Hi there. How are you?\nassistant: Fine!  Thanks") == [
        "Hi there.", "How are you?", "Fine!", "Thanks"]


def test_a_session_s_summary_keeps_what_sets_it_apart_from_the_conversation():
    summarizer = SessionSummarizer(sentences=1, terms=3)
    summarizer.add(FIRST, scope="u1")
    summary = summarizer.add(SECOND, scope="u1").splitlines()
    # the garden sentence repeats a word the first session holds too; the orchid one is new
    assert summary[0].startswith("The orchid collection from Borneo")
    terms = summary[1].split()
    assert terms[0] == "orchid" and terms.index("orchid") < terms.index("garden")
    assert "Sure!" not in summary  # too few terms to be a summary sentence


def test_conversations_count_their_own_sessions():
    summarizer = SessionSummarizer(sentences=1, terms=3)
    summarizer.add(FIRST, scope="u1")
    alone = summarizer.add(SECOND, scope="u2").splitlines()
    # in u2 nothing else was said: "garden", said twice in the sentence, weighs most
    assert "garden" in alone[1].split()


def test_redundant_sentences_are_skipped():
    summarizer = SessionSummarizer(sentences=2, terms=0)
    text = ["Kyoto temple visit Friday morning.", "Kyoto temple visit Friday again.", "Bring camera batteries charged."]
    assert summarizer.add(text).splitlines() == ["Kyoto temple visit Friday morning.", "Bring camera batteries charged."]
