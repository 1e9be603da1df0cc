"""memolib: the shared seed plumbing — units of both episode shapes, budget fitting, evidence."""

from __future__ import annotations

import numpy as np

from automemo.contract import Budget, ImageRef
from automemo.toolkit import memolib

from seedtools import conversation, question, web_episode

PIC = ImageRef(path="images/ab/abc.png", sha256="abc", caption="a red car")


def test_units_read_conversation_rounds_and_web_steps():
    convo = memolib.units(conversation("s", [("U1:S1:R1", "Ben: hi"), ("U1:S1:R2", "Ben: look")],
                                       images={1: ("U1:S1:IMG1", PIC)}))
    assert [u.evidence for u in convo] == [("U1:S1:R1",), ("U1:S1:R2", "U1:S1:IMG1")]
    assert "[images: a red car]" in convo[1].text and convo[1].images == (PIC,)
    web = memolib.units(web_episode("t", "Buy", ["click a", "click b"], errors={1: "boom"}))
    assert [u.evidence for u in web] == [("t#0",), ("t#1",)]
    assert "ACTION: click b" in web[1].text and "ERROR: boom" in web[1].text


def test_budget_comes_from_the_task_or_defaults():
    assert memolib.budget_of(question("q")) == Budget()
    assert memolib.budget_of(question("q", budget={"max_chars": 100, "max_images": 1})) == Budget(100, 1)
    assert memolib.budget_of(question("q", budget={"max_chars": "lots"})) == Budget()


def test_make_payload_fits_text_around_metadata_and_caps_evidence_and_images():
    budget = Budget(max_chars=400, max_images=1)
    payload = memolib.make_payload(["first " * 20, "second " * 100], budget=budget,
                                   images=[PIC, PIC, ImageRef(path="images/x.png", sha256="x")],
                                   evidence=[f"e{i}" for i in range(15)] + ["e0"])
    assert payload.size_chars() <= 400 and not payload.violations(budget)
    assert payload.metadata["evidence"] == [f"e{i}" for i in range(10)]
    assert payload.images == (PIC,)
    assert payload.text.startswith("first")  # the first section survives whole


def test_generalise_and_scoped_index():
    assert memolib.generalise('type "red umbrella" then pick 3') == "type <target item> then pick <number>"
    import faiss

    index = memolib.ScopedIndex(faiss.IndexFlatIP, 2)
    index.add(np.array([[1, 0]], dtype=np.float32), "A")
    index.add(np.array([[0.9, 0.1]], dtype=np.float32), "B")
    assert [r for r, _ in index.search(np.array([1, 0], np.float32), 5, "B")] == [1]
    assert [r for r, _ in index.search(np.array([1, 0], np.float32), 5)] == [0, 1]


def test_units_cite_step_refs_when_the_benchmark_gives_them():
    from automemo.contract import EpisodeRecorder, Step

    steps = (Step(index=0, observation="user: hi", ref="alice/D1:1"),
             Step(index=1, observation="user: look", screenshot=PIC, ref="alice/D1:2",
                  metadata={"image_ids": ["alice/D1:IMG_001"], "time": "2024-06-17"}))
    convo = EpisodeRecorder("alice/D1", "memgallery", "session", steps=steps, metadata={"conversation": True})
    units = memolib.units(convo)
    assert [u.evidence for u in units] == [("alice/D1:1",), ("alice/D1:2", "alice/D1:IMG_001")]
    assert units[1].time == "2024-06-17"
    web = EpisodeRecorder("t", "custom", "do", steps=(Step(index=0, action="click", ref="page-3"),))
    assert memolib.units(web)[0].evidence == ("page-3",)


def test_chronological_lines_follow_time_order_and_show_a_unit_once():
    late, early = memolib.Unit("s2", 1, "Ben: later", evidence=("D2:2",)), memolib.Unit("s1", 0, "Ann: first", evidence=("D1:1",), time="2023-05-08")
    text = memolib.chronological([(late, 1), (early, 0), (late, 1)])
    assert text.splitlines() == ["Relevant memories (chronological):", "[session 1, 2023-05-08 | D1:1] Ann: first",
                                 "[session 2 | D2:2] Ben: later"]


def test_citations_put_every_unit_s_own_id_before_the_picture_ids_it_carries():
    """A picture's id stands for its round, so cited right after it, it would take one of the ten
    counted places: ten units, three of them pictured, would cite only seven rounds."""
    units = [memolib.Unit("e", i, f"turn {i}", evidence=(f"D1:{i}", *((f"img{i}",) if i % 3 == 0 else ())))
             for i in range(10)]
    cited = memolib.citations(units)
    assert cited[:10] == [f"D1:{i}" for i in range(10)]
    assert cited[10:] == ["img0", "img3", "img6", "img9"]
    payload = memolib.make_payload(["x"], budget=Budget(), evidence=cited)
    assert payload.metadata["evidence"] == [f"D1:{i}" for i in range(10)]
    assert memolib.citations([memolib.Unit("e", 0, "no id")]) == []
    # A seed that keeps id lists rather than units (g_memory's graph nodes), or a bare id.
    assert memolib.citations([["D1:1", "img1"], "D1:2", ("D1:3",)]) == ["D1:1", "D1:2", "D1:3", "img1"]
