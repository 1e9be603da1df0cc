"""`automemo bench discovery --question-fraction FRACTION`: the budget taken from the exhaustive
search's run, the flag's check, and the comparison per strategy on hand-made searches."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from automemo.measurements.discovery import Scored, SearchResult, render, summarize
from automemo.measurements.question_budget import (check_fraction, comparison_rows, fraction_label, question_budget,
                                            questions_scored, run_questions_scored)
from automemo.cli import UserError


def _search(seed, strategy, test, *, questions, oracle, budget=None, wall=100.0, stop="steps"):
    return SearchResult(seed, strategy, 1, 20, stop, wall, 4, "x", 0.9, test, 2.0, oracle, 7, 12, 12,
                        questions_scored=questions, question_budget=budget,
                        budget_fraction=None if budget is None else 0.25)


def test_the_budget_is_the_fraction_of_the_questions_the_exhaustive_run_scored(tmp_path):
    from automemo.runs import RunDir
    from automemo.runs.journal import StepJournal
    from automemo.runs.records import ActionRecord, EvaluationRecord, NodeRecord, Outcome

    run = RunDir.create(tmp_path, {"search": {"steps": 1}}, "tree-k1-steps1-seed0")
    step = StepJournal(run, 0)
    (step.node_dir(0) / "program.py").write_text("class Memo: pass\n")
    step.add_node(NodeRecord(id=0, parent=None, action="root", status="evaluated", summary="",
                             program_path="nodes/0/program.py"))
    step.add_evaluation(EvaluationRecord(node_id=0, k=0, mean=0.5, n_scored=3, metrics={},
                                         task_scores={"q1": 1.0, "q2": 0.0, "q3": 0.5}))
    step.commit(ActionRecord(step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED))
    # final.json's questions block is what the budget is taken from ...
    run.write_final({"node_id": 0, "stop_reason": "steps",
                     "questions": {"budget": None, "scored": 401, "validation": 200, "sample_size": None}})
    assert run_questions_scored(run) == 401
    assert question_budget(0.25, run_questions_scored(run)) == 101   # ceil(100.25)
    # ... and a run made before it had one: the evaluations' scored tasks, summed.
    run.write_final({"node_id": 0, "stop_reason": "steps"})
    assert run_questions_scored(run) == 3
    assert questions_scored({}, [{"task_scores": {"a": 1.0}}, {"task_scores": {}}, {"task_scores": None}]) == 1


def test_the_budget_is_a_ceiling_never_zero_and_exact_on_round_products():
    assert question_budget(0.25, 400) == 100      # 0.25 × 400 is 100.00000000000001 in floats
    assert question_budget(0.1, 30) == 3
    assert question_budget(0.001, 10) == 1
    assert question_budget(0.5, 0) == 1          # 0 would mean "no budget"
    assert question_budget(1.0, 777) == 777
    assert (fraction_label(0.25), fraction_label(0.125), fraction_label(1.0)) == ("q25", "q12.5", "q100")


def test_a_fraction_outside_zero_to_one_is_refused():
    assert check_fraction(None) is None and check_fraction(0.25) == 0.25 and check_fraction(1.0) == 1.0
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(UserError, match="0 < FRACTION <= 1"):
            check_fraction(bad)


def test_a_bad_fraction_exits_2_with_a_sentence_before_anything_runs(tmp_path):
    for bad in ("0", "1.5"):
        done = subprocess.run([sys.executable, "-m", "automemo", "bench", "discovery", "--question-fraction", bad,
                               "--workdir", str(tmp_path / "work"), "--out", str(tmp_path / "d.json")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr[-500:]
        assert "--question-fraction" in done.stderr and "0 < FRACTION <= 1" in done.stderr, done.stderr[-500:]
        assert "Traceback" not in done.stderr
        assert not (tmp_path / "work").exists() and not (tmp_path / "d.json").exists()


def test_summary_compares_each_budgeted_strategy_with_its_exhaustive_searches():
    seeds = [Scored("a", 0.9, 0.50, 3.0), Scored("b", 0.7, 0.60, 40.0)]
    searches = [
        _search(0, "tree", 0.70, questions=400, oracle=0.72),
        _search(0, "tree", 0.695, questions=100, oracle=0.70, budget=100, wall=30.0, stop="questions"),
        _search(1, "tree", 0.66, questions=400, oracle=0.66),
        _search(1, "tree", 0.64, questions=98, oracle=0.66, budget=100, wall=20.0),
        _search(0, "random", 0.62, questions=400, oracle=0.65),
        _search(0, "random", 0.58, questions=100, oracle=0.61, budget=100, stop="questions"),
    ]
    summary = summarize(seeds, searches)
    # The per-strategy rows keep budgeted and exhaustive searches apart.
    assert set(summary["strategies"]) == {"tree/k1", "tree/k1/q25", "random/k1", "random/k1/q25"}
    assert summary["strategies"]["tree/k1"]["test"] == pytest.approx((0.68, 0.02))
    assert summary["strategies"]["tree/k1/q25"]["questions_scored"] == 99
    comparison = summary["question_budget"]
    assert comparison["fraction"] == 0.25
    tree = comparison["strategies"]["tree"]
    assert tree["searches"] == 2
    assert tree["exhaustive"]["questions_scored"] == 400 and tree["budgeted"]["questions_scored"] == 99
    assert tree["budgeted"]["questions_share"] == pytest.approx((100 / 400 + 98 / 400) / 2)
    assert tree["budgeted"]["test"][0] == pytest.approx(0.6675)
    assert tree["budgeted"]["minus_best_seed"][0] == pytest.approx(0.0675)
    assert tree["budgeted"]["regret"] == pytest.approx((0.0125, 0.0075))  # 0.005 and 0.02
    assert tree["exhaustive"]["regret"] == pytest.approx((0.01, 0.01))     # 0.02 and 0
    assert tree["budgeted"]["wall_s"] == 25.0 and tree["budgeted"]["stop_reasons"] == ["questions", "steps"]
    assert tree["minus_exhaustive"] == {"0": pytest.approx(-0.005), "1": pytest.approx(-0.02)}
    # The target: the budgeted tree no more than 0.01 below the exhaustive one on any seed.
    assert comparison["tree_worst_minus_exhaustive"] == pytest.approx(-0.02) and not comparison["tree_within_target"]
    assert comparison["strategies"]["random"]["minus_exhaustive"] == {"0": pytest.approx(-0.04)}
    # At equal budget: tree's selection scores 0.6675 against random's 0.58, its regret 0.0125
    # against random's 0.03.
    assert comparison["highest_budgeted_test"] == "tree" and comparison["lowest_budgeted_regret"] == "tree"
    searches[-1] = _search(0, "random", 0.70, questions=100, oracle=0.70, budget=100)
    other = summarize(seeds, searches)["question_budget"]
    assert other["highest_budgeted_test"] == "random" and other["lowest_budgeted_regret"] == "random"
    rows = comparison_rows(comparison)
    assert [r[:2] for r in rows] == [["tree", "exhaustive"], ["tree", "budget q25"],
                                     ["random", "exhaustive"], ["random", "budget q25"]]
    assert rows[1][5:7] == ["99", "25%"] and rows[0][6] == "100%"
    json.dumps(summary)  # written to --out as it is


def test_without_budgeted_searches_the_summary_has_no_comparison():
    seeds = [Scored("a", 0.9, 0.50, 3.0)]
    summary = summarize(seeds, [_search(0, "tree", 0.7, questions=None, oracle=0.7)])
    assert summary["question_budget"] == {} and comparison_rows({}) == []


def test_the_tables_show_the_budgeted_searches_and_the_tree_target():
    from rich.console import Console

    seeds = [Scored("a", 0.9, 0.50, 3.0)]
    searches = [_search(0, "tree", 0.70, questions=400, oracle=0.72),
                _search(0, "tree", 0.695, questions=100, oracle=0.70, budget=100, stop="questions")]
    console = Console(record=True, width=220)
    render(console, seeds, searches, summarize(seeds, searches), "minigallery, 20 steps")
    text = console.export_text()
    assert "tree q25" in text and "budget q25" in text and "questions" in text
    assert "seed 0 -0.005; meets the target" in text
    assert "highest test score: tree; lowest selection regret: tree" in text
