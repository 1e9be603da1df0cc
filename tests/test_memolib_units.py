"""memolib units at three granularities: the turn, the round with its neighbours, the session."""

from __future__ import annotations

from automemo.contract import ImageRef
from automemo.toolkit import memolib
from seedtools import conversation

PIC = ImageRef(path="images/ab/abc.png", sha256="abc", caption="a red car")
ROUNDS = [("s/D1:1", "Ann: I moved to Lyon"), ("s/D1:2", "Ben: nice"), ("s/D1:3", "Ann: here is my car"),
          ("s/D1:4", "Ben: shiny")]


def test_turns_carry_their_scope_and_citations():
    turns = memolib.units(conversation("s", ROUNDS, images={2: ("s/D1:IMG_1", PIC)}, user="ann"))
    assert [u.evidence for u in turns][2] == ("s/D1:3", "s/D1:IMG_1")
    assert {u.scope for u in turns} == {"ann"}


def test_a_window_is_a_round_with_its_neighbours_centre_cited_first():
    turns = memolib.units(conversation("s", ROUNDS, images={2: ("s/D1:IMG_1", PIC)}))
    other = memolib.units(conversation("t", [("t/D1:1", "Cleo: hello")]))
    wins = memolib.windows(turns + other, radius=1)
    assert len(wins) == 5
    assert wins[0].text == "Ann: I moved to Lyon\nBen: nice" and wins[0].evidence == ("s/D1:1", "s/D1:2")
    assert wins[1].evidence == ("s/D1:2", "s/D1:1", "s/D1:3", "s/D1:IMG_1") and wins[1].images == (PIC,)
    assert wins[4].text == "Cleo: hello" and wins[4].evidence == ("t/D1:1",)  # never across episodes
    assert memolib.windows(turns, radius=0) == turns


def test_a_session_is_the_whole_episode_as_one_unit():
    episode = conversation("s", ROUNDS, images={2: ("s/D1:IMG_1", PIC)}, user="ann")
    whole = memolib.session(episode)
    assert whole.text.splitlines()[0] == "Ann: I moved to Lyon" and "[images: a red car]" in whole.text
    assert whole.evidence == ("s/D1:1", "s/D1:2", "s/D1:3", "s/D1:IMG_1", "s/D1:4")
    assert whole.scope == "ann" and whole.images == (PIC,)


def test_an_episode_without_steps_is_one_unit_of_its_instruction_and_web_steps_index_with_it():
    from automemo.contract import EpisodeRecorder
    from seedtools import web_episode

    empty = EpisodeRecorder(task_id="t9", benchmark="web", instruction="Buy milk", metadata={"user": "ann"})
    assert memolib.episode_units(empty) == [memolib.Unit("t9", 0, "Buy milk", evidence=("t9",), scope="ann")]
    web = web_episode("t", "Buy a lamp", ["click a"])
    assert memolib.indexed_text(web, memolib.episode_units(web)[0]).startswith("Buy a lamp\n")
    talk = conversation("s", ROUNDS)
    assert memolib.indexed_text(talk, memolib.units(talk)[0]) == "Ann: I moved to Lyon"


def test_image_units_cite_the_image_and_expansion_keeps_to_the_turns():
    turns = memolib.units(conversation("s", ROUNDS, images={2: ("s/D1:IMG_1", PIC)}, user="ann"))
    pictures = memolib.image_units(turns)
    assert len(pictures) == 1
    assert pictures[0].evidence == ("s/D1:IMG_1",) and pictures[0].images == (PIC,)
    assert pictures[0].text.startswith("[image] a red car\n") and pictures[0].scope == "ann"
    # Stored after the turns at the same position, an image unit is never a turn's neighbour.
    rows = [*turns, *pictures]
    assert memolib.expand([1], rows, 1) == [1, 0, 2]
    assert memolib.neighbours(rows, 1)[3] == [2]
