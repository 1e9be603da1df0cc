"""The run's report shows the held-out verdict (`search.heldout_test`): both programs' test scores,
the paired difference with its SE and the per-question-type breakdown, once the comparison has
run; a real `automemo search` writes it into the page after the comparison."""

from __future__ import annotations

import html
import json
import pytest

from automemo.cli import main
from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
from automemo.report.build import build_report
from automemo.search.heldout import _per_type, sentences, verdict


def _doc() -> dict:
    a = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 1.0}
    b = {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}
    types = {"q1": "visual", "q2": "visual", "q3": "temporal", "q4": "temporal"}
    return {"kept_hand_design": False, "questions": 4,
            "programs": {"selection": {"node_id": 5, "summary": "multi-view hybrid", "validation": 0.61, "test": 0.75},
                         "hand_design": {"node_id": 2, "summary": "seed hybrid_rag", "validation": 0.58, "test": 0.25}},
            "selection_vs_hand_design": {"difference": 0.5, "se": 0.2887, "tasks": 4},
            "per_type": _per_type(a, b, types)}


def test_per_type_pairs_each_question_type_on_its_own_questions():
    doc = _doc()["per_type"]
    assert list(doc) == ["temporal", "visual"]
    assert doc["visual"] == pytest.approx({"a": 1.0, "b": 0.5, "difference": 0.5, "se": 0.5, "tasks": 2})
    assert doc["temporal"]["difference"] == pytest.approx(0.5) and doc["temporal"]["tasks"] == 2


def test_the_report_shows_the_verdict_once_the_comparison_exists(tmp_path):
    run = write_synthetic_run(tmp_path / "runs", nodes=6, screenshots_per_task=0)
    final = json.loads((run.path / "final.json").read_text())
    index = build_report(run, quiet=True)
    assert 'id="heldout"' not in index.read_text()  # not compared yet: nothing claimed

    run.write_final({**final, "heldout_test": _doc()})
    page = html.unescape(build_report(run, quiet=True).read_text())
    assert 'id="heldout"' in page and "4 questions the search never saw" in page
    assert "The selected program beats the best hand design." in page
    assert "+0.500 ± 0.289" in page and "0.750" in page and "0.250" in page  # both test scores
    types = page[page.index('id="heldout-types"'):]
    assert "visual" in types and "temporal" in types and "0.500" in types


def test_a_kept_hand_design_shows_the_best_candidate_against_it(tmp_path):
    run = write_synthetic_run(tmp_path / "runs", nodes=6, screenshots_per_task=0)
    final = json.loads((run.path / "final.json").read_text())
    doc = _doc()
    doc.update(kept_hand_design=True, best_candidate_vs_hand_design=doc.pop("selection_vs_hand_design"))
    doc["programs"] = {"selection": doc["programs"]["hand_design"], "hand_design": doc["programs"]["hand_design"],
                      "best_candidate": doc["programs"]["selection"]}
    run.write_final({**final, "heldout_test": doc})
    page = html.unescape(build_report(run, quiet=True).read_text())
    assert verdict(doc).capitalize() in page and "best generated candidate − best hand design" in page


def test_search_writes_the_held_out_verdict_into_its_report(tmp_path, capsys):
    """A real search (two-conversation Mem-Gallery release, retrieval scoring, the real MiniLM
    encoder): the page written when it ends carries the verdict its last lines print."""
    from conversation_data import write_memgallery

    release = write_memgallery(tmp_path / "release")
    (tmp_path / "heldout.toml").write_text("[search]\nheldout_test = true\n")
    code = main(["search", "--benchmark", "memgallery", "--option", f"path={release}", "--option", "mode=retrieval",
                 "--config", str(tmp_path / "heldout.toml"), "--steps", "1", "--sandbox", "unsafe",
                 "--runs-dir", str(tmp_path / "runs")])
    printed = capsys.readouterr()
    assert code == 0, printed.err[-2000:]
    final = json.loads(next((tmp_path / "runs").glob("*/final.json")).read_text())
    doc = final["heldout_test"]
    assert sentences(doc)[-1] in printed.out
    page = html.unescape(next((tmp_path / "runs").glob("*/report/index.html")).read_text())
    assert 'id="heldout"' in page and f"{doc['questions']} questions the search never saw" in page
    assert verdict(doc).capitalize() in page


@pytest.mark.parametrize("asked, ones", [
    (20, {2: 10, 3: 12, 4: 16, 5: 8}),    # the budget ended the race before its first round: all four stand
    (50, {2: 35, 3: 25, 4: 40, 5: 20}),   # ... inside its second: #4 and #2 stand, #3 and #5 were dropped
])
def test_the_best_candidate_is_the_race_s_leader_though_the_budget_ended_it_mid_race(asked, ones):
    """The held-out comparison scores "the best generated candidate" when the hand design was
    kept. Candidates are listed in the order they entered the race (by their bound), so when
    several still stand the first of them is not the race's leader: it is the one with the best
    mean on the questions they all were asked, as the race itself ranks them."""
    from automemo.search import halving
    from automemo.search.config import SearchConfig
    from automemo.search.heldout import best_candidate
    from automemo.search.questions import Race
    from automemo.search.view import confirmation_document
    from tests.test_halving import ORDER, _stats

    def table(k):  # k of the first `asked` questions right
        return [1.0] * k + [0.0] * (len(ORDER) - k)

    tables = {0: table(0), 1: table(len(ORDER)), **{v: table(k) for v, k in ones.items()}}  # #1: the bar
    race = Race(bar=1, arms=(2, 3, 4, 5), prefixes=(50, 100), budget=200)
    stats = _stats(tables, {0: 20, **dict.fromkeys(range(1, 6), asked)}, race)
    doc = confirmation_document(stats, SearchConfig(question_budget=200))
    standing = [c["node_id"] for c in doc["candidates"] if c.get("dropped_in") is None]
    assert doc["kept_hand_design"] and len(standing) > 1 and standing[0] == 2
    assert best_candidate(doc, stats) == 4 == halving.race_state(stats, race, 0).winner
