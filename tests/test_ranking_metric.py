"""The user chooses what a search optimises: a benchmark option `metric` names one of the metrics
the benchmark declares (`Benchmark.metric_names`); the harness then averages it as the value, the
run records it (final.json, `automemo tree`, the report), and an unknown name fails before
anything runs, naming the valid ones."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from automemo.benchmarks import checked_options, load, ranking_metric
from automemo.benchmarks.base import TaskScore, ranked_by
from automemo.configtools import ConfigError
from automemo.contract import MemoryPayload
from automemo.runs import RunDir
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from automemo.search.view import RunView
from conversation_data import write_memgallery
from tests.test_question_budget import PlantedChildren, PlantedQuestions, _pass, program


def test_the_chosen_metric_is_the_value_and_a_task_without_it_is_not_counted():
    score = TaskScore(0.5, {"recall@10": 0.5, "session_hit@10": 1.0}, feedback="gold: a, b")
    assert ranked_by(score, "session_hit@10") == TaskScore(1.0, score.metrics, feedback="gold: a, b")
    missing = ranked_by(TaskScore(0.0, {"locomo_recall@10": 1.0}), "session_hit@10")
    assert not missing.counted and "no session_hit@10" in missing.feedback
    # a task its benchmark does not count stays uncounted, whatever the metric
    refusal = TaskScore(0.0, {"locomo_recall@10": 1.0}, counted=False)
    assert not ranked_by(refusal, "locomo_recall@10").counted


def test_a_conversation_benchmark_declares_its_metrics_and_scores_by_the_chosen_one(tmp_path):
    path = write_memgallery(tmp_path / "mem-gallery")
    assert ranking_metric("memgallery", {"path": str(path)}) == "recall@10"
    assert ranking_metric("memgallery", {"path": str(path), "mode": "qa"}) == "f1"
    bench = load("memgallery", {"path": str(path), "metric": "hit@10"})
    assert "hit@10 (value)" in bench.describe()["metrics"]
    kr = next(t for t in bench.split("test").retrieve if t.category == "KR")
    payload = MemoryPayload(metadata={"evidence": [kr.data["clues"][1], "x/D9:9"]})
    assert bench.score(kr, None, payload).value == 0.5            # recall@10: one clue of two
    assert bench.ranked_score(kr, None, payload).value == 1.0     # hit@10: one clue cited


def test_an_unknown_metric_fails_fast_with_the_valid_names(tmp_path):
    with pytest.raises(ConfigError, match="session_hit@10") as err:
        checked_options("memgallery", {"path": str(tmp_path / "nowhere"), "metric": "recall@5"})
    assert "metric 'recall@5'" in str(err.value)
    done = subprocess.run([sys.executable, "-m", "automemo", "search", "--benchmark", "memgallery",
                           "--option", f"path={tmp_path / 'nowhere'}", "--option", "metric=bogus",
                           "--runs-dir", str(tmp_path / "runs"), "--sandbox", "unsafe", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "metric 'bogus'" in done.stderr and "recall@10, session_hit@10" in done.stderr, done.stderr[-800:]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_run_records_the_metric_in_final_json_the_tree_and_the_report(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "planted_root.py").write_text(program("root", 0.5))
    config = {"benchmark": {"name": "memgallery", "options": {"path": "anywhere", "metric": "session_hit@10"}},
              "search": {"steps": 2}}
    run = RunDir.create(tmp_path / "runs", config, "r")
    parts = Collaborators(evaluator=PlantedQuestions(run.store_root), meta=PlantedChildren(0), sandbox=None,
                          exam=_pass, seeds_dir=seeds)
    final = SearchLoop(run, SearchConfig(steps=2, root="planted_root"), parts, quiet=True).run_search()
    assert final["metric"] == "session_hit@10"
    assert json.loads((run.path / "final.json").read_text())["metric"] == "session_hit@10"
    assert RunView.load(run).metric == "session_hit@10"
    shown = subprocess.run([sys.executable, "-m", "automemo", "tree", str(run.path)], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0 and "ranked by: session_hit@10" in shown.stdout, shown.stderr[-800:]
    reported = subprocess.run([sys.executable, "-m", "automemo", "report", str(run.path)], capture_output=True,
                              text=True, timeout=120)
    assert reported.returncode == 0, reported.stderr[-800:]
    assert "mean session_hit@10 over n evaluations" in (run.path / "report" / "index.html").read_text()
