"""memolib speaker-aware ranking: units carry their speaker; a question naming one ranks theirs up."""

from __future__ import annotations

from automemo.contract import EpisodeRecorder, Step
from automemo.toolkit.memolib import BM25Index, Unit, named_speakers, rrf, speaker_ranking, units, windows


def test_units_and_windows_carry_the_round_speaker():
    episode = EpisodeRecorder(task_id="s1", benchmark="b", instruction="session", reward=1.0, success=True,
                              steps=(Step(0, "hi", metadata={"speaker": "Caroline"}),
                                     Step(1, "hello", metadata={"speaker": "Melanie"})),
                              metadata={"conversation": True, "user": "conv-1"})
    turns = units(episode)
    assert [u.speaker for u in turns] == ["Caroline", "Melanie"]
    assert [u.speaker for u in windows(turns)] == ["Caroline", "Melanie"]


def test_named_speakers_match_full_or_first_names_as_whole_words():
    assert named_speakers("What did caroline paint?", {"Caroline", "Melanie"}) == {"Caroline"}
    assert named_speakers("What did Jon Snow say?", {"Jon Snow", "Jonathan"}) == {"Jon Snow"}
    assert named_speakers("What did they say?", {"Caroline"}) == set()


def test_the_named_speaker_s_turn_ranks_first_when_fused_with_the_lexical_ranking():
    turns = [Unit("s1", 0, "the painting, the painting of the lake painting", speaker="Melanie"),
             Unit("s1", 1, "I finished the painting", speaker="Caroline"),                 # planted
             Unit("s1", 2, "the lake was cold", speaker="Melanie")]
    question = "What did Caroline say about the painting?"
    lexical = BM25Index()
    lexical.add_many([u.text for u in turns])
    first = lexical.search(question, 3)
    assert first[0][0] == 0
    ranked = speaker_ranking(question, first, turns)
    assert [r for r, _ in ranked] == [1]
    assert rrf([first, ranked])[0][0] == 1
    assert speaker_ranking("What about the painting?", first, turns) == []
    assert speaker_ranking("What did Caroline and Melanie paint?", first, turns) == []
