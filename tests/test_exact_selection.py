"""Selection when evaluation is exact (docs/search.md): uncertainty from per-task scores, no
re-evaluation, the paper's rules untouched for stochastic evaluation, and the benchmark's
declared search defaults.

Expected values are worked out by hand: node 1's tasks (1, 0, 1, 0) have mean .5, sd
sqrt(1/3) = .577350, SE = .288675; node 2's (1, 1, 1, 0) mean .75, sd .5, SE .25."""

import math

import pytest

from automemo.search.config import SearchConfig
from automemo.search.policy import (
    NodeStats,
    TreeStats,
    candidates,
    choose_action,
    gen_score,
    lcb,
    paired,
    reference,
    final_by_bound,
    selection_bound,
    standard_error,
    uses_task_uncertainty,
)

TASKS = ("a", "b", "c", "d")


def scores(*values):
    return dict(zip(TASKS, values))


def exact_tree(exact=True):
    return TreeStats(
        nodes=(
            NodeStats(id=0, parent=None, mean=0.0, n=1, m=2, first_score=0.0,
                      task_scores=scores(0, 0, 0, 0), exact=exact),
            NodeStats(id=1, parent=0, mean=0.5, n=1, m=0, first_score=0.5, parent_snapshot=0.0,
                      task_scores=scores(1, 0, 1, 0), exact=exact),
            NodeStats(id=2, parent=0, mean=0.75, n=1, m=0, first_score=0.75, parent_snapshot=0.0,
                      task_scores=scores(1, 1, 1, 0), exact=exact),
        ),
        total_evaluations=3,
    )


CFG = SearchConfig(kappa=0.0)


def test_standard_error_and_paired_difference_by_hand():
    assert standard_error(scores(1, 0, 1, 0)) == pytest.approx(0.288675, abs=1e-6)
    t = exact_tree()
    d = paired(t.node(2), t.node(1))
    # per-task differences (0, 1, 0, 0): mean .25, sd .5, SE .25
    assert (d.difference, d.tasks) == (pytest.approx(0.25), 4)
    assert d.se == pytest.approx(0.25)


def test_exact_evaluation_never_re_evaluates_and_bounds_come_from_tasks():
    t = exact_tree()
    assert uses_task_uncertainty(t, CFG)
    assert all(a.kind == "generate" for a in candidates(t, CFG))
    assert lcb(t.node(1), t, CFG) == pytest.approx(0.5 - 0.288675, abs=1e-6)
    assert lcb(t.node(2), t, CFG) == pytest.approx(0.75 - 0.25)
    # U_gen(2) = .75 + 1·.25 + ĝ (0: no children, κ = 0) + .2·sqrt(ln 3 / 1)
    assert gen_score(t.node(2), t, CFG) == pytest.approx(0.75 + 0.25 + 0.2 * math.sqrt(math.log(3)))
    assert choose_action(t, CFG).kind == "generate"


def _bar_tree(*children, bar_scores=(0.5, 0.5, 0.5, 0.5)):
    """Root (0) with a swept seed (1, the bar) and `children` (task scores) under the root."""
    nodes = [NodeStats(id=0, parent=None, mean=0.0, n=1, m=1 + len(children),
                       task_scores=scores(0, 0, 0, 0), exact=True),
             NodeStats(id=1, parent=0, mean=sum(bar_scores) / 4, n=1, m=0,
                       first_score=sum(bar_scores) / 4, parent_snapshot=0.0,
                       task_scores=scores(*bar_scores), exact=True, reference=True)]
    for i, values in enumerate(children, start=2):
        mu = sum(values) / 4
        nodes.append(NodeStats(id=i, parent=0, mean=mu, n=1, m=0, first_score=mu, parent_snapshot=0.0,
                               task_scores=scores(*values), exact=True))
    return TreeStats(nodes=tuple(nodes), total_evaluations=len(nodes))


def test_the_final_selection_must_beat_the_best_hand_design_on_the_same_tasks():
    # A higher mean whose lead is one lucky task: d = (.5, 0, 0, 0), mean .125, SE .125: the
    # bound .5 + .125 − .125 ties the bar, and a tie stays with the bar.
    t = _bar_tree((1, 0.5, 0.5, 0.5))
    assert reference(t).id == 1
    assert selection_bound(t.node(2), t, CFG) == pytest.approx(0.5)
    assert final_by_bound(t, CFG).id == 1
    # By its own μ − z·SE the lucky node would have won (.625 − .125 = .5 vs the bar's .5 − 0).
    # A consistent lead on every task: d = (.25, .25, .25, .25), SE 0: chosen.
    t = _bar_tree((1, 0.5, 0.5, 0.5), (0.75, 0.75, 0.75, 0.75))
    assert selection_bound(t.node(3), t, CFG) == pytest.approx(0.75)
    assert final_by_bound(t, CFG).id == 3
    # The bar is the best hand design by μ, the root being one: a tree without swept seeds
    # holds its nodes to the root.
    t = _bar_tree(bar_scores=(0, 0, 0, 0))
    assert reference(t).id == 0


def test_same_mean_no_lead_keeps_the_bar_and_stochastic_selection_is_the_papers():
    t = TreeStats(nodes=(
        NodeStats(id=0, parent=None, mean=0.5, n=1, m=1, task_scores=scores(1, 0, 1, 0), exact=True),
        NodeStats(id=1, parent=0, mean=0.5, n=1, m=0, first_score=0.5, parent_snapshot=0.5,
                  task_scores=scores(0.5, 0.5, 0.5, 0.5), exact=True),
    ), total_evaluations=2)
    assert final_by_bound(t, CFG).id == 0  # no paired lead over the root: the bar stays
    stochastic = SearchConfig(kappa=0.0, uncertainty="repeats")
    assert final_by_bound(t, stochastic).id == 0  # by the paper's LCB it is a tie: the older node


def test_stochastic_evaluations_keep_the_papers_formulas():
    t = exact_tree(exact=False)
    assert not uses_task_uncertainty(t, CFG)
    assert {a.kind for a in candidates(t, CFG)} == {"evaluate", "generate"}
    assert lcb(t.node(2), t, CFG) == pytest.approx(0.75 - 0.2 * math.sqrt(math.log(3)))
    forced = SearchConfig(kappa=0.0, uncertainty="tasks")
    assert uses_task_uncertainty(t, forced)


def test_uncertainty_setting_is_checked():
    from automemo.configtools import ConfigError

    with pytest.raises(ConfigError, match="search.uncertainty"):
        SearchConfig(uncertainty="exact")


def test_retrieval_benchmarks_declare_exact_scoring_and_search_defaults(tmp_path):
    from automemo.benchmarks import benchmark_class, load
    from automemo.resolution import load_run_config

    gallery = load("minigallery", {"users_per_split": 1, "sessions_per_user": 1, "rounds_per_session": 4})
    assert gallery.scoring_is_deterministic()
    qa = benchmark_class("minigallery").Options(mode="qa")
    assert benchmark_class("minigallery").search_defaults(qa) == {}
    for name in ("memgallery", "locomo"):
        config = load_run_config(None, None, {"benchmark": {"name": name, "options": {"path": str(tmp_path)}}})
        assert (config.search.kappa, config.evaluation.retrieve_fraction) == (0.0, 1.0)
    # an explicit key still wins over the benchmark's default
    config = load_run_config(None, None, {"benchmark": {"name": "memgallery", "options": {"path": "x"}},
                                             "search": {"kappa": 0.3}})
    assert config.search.kappa == 0.3
    miniwob = load_run_config(None, None, {"benchmark": {"name": "miniwob"}})
    assert miniwob.search.kappa == SearchConfig().kappa


def test_search_on_exact_evaluations_spends_no_step_on_a_repeat(tmp_path):
    """The loop with doubles: an exact evaluator (per-task scores, `exact` set) and a scripted
    meta agent. Every step generates; the run view and final.json show the task-based ±."""
    import re

    from automemo.evaluation.result import EvaluationResult, TaskResult
    from automemo.runs import RunDir
    from automemo.search.loop import Collaborators, SearchLoop
    from automemo.search.view import RunView
    from tests.test_search_loop import ScriptedMeta, exam_double

    class ExactEvaluator:
        def __init__(self, root):
            self.store = type("Store", (), {"root": root})()

        def evaluate(self, source, *, split="train", evidence_dir=None, node_id=None, sample_seed=0):
            m = re.search(r"HITS = (\d+)", source)
            hits = int(m.group(1)) if m else 0
            tasks = tuple(TaskResult(f"q{i}", "x", 1.0 if i < hits else 0.0) for i in range(8))
            return EvaluationResult(mean=hits / 8, n_scored=8, per_category={}, metrics={}, tasks=tasks,
                                    exact=True)

        def sample_for_exam(self, n=5, seed=0):
            return [], []

    run = RunDir.create(tmp_path / "runs", {"search": {"steps": 4, "kappa": 0.0}}, "r")
    meta = ScriptedMeta([f"HITS = {h}" for h in (4, 6, 5, 7)])
    parts = Collaborators(evaluator=ExactEvaluator(run.store_root), meta=meta, sandbox=None, exam=exam_double)
    # select_shallowest off: 7/8 leads a shallower 6/8 by one question, one paired SE,
    # and the one-SE rule would take the shallower (tests/test_final_confirmation.py)
    config = SearchConfig(steps=4, root="murag", kappa=0.0, select_shallowest=False)
    final = SearchLoop(run, config, parts, quiet=True).run_search()
    assert [a["kind"] for a in run.actions()] == ["evaluate_root", "generate", "generate", "generate", "generate"]
    assert all(c["kind"] == "generate" for a in run.actions()[1:] for c in a["candidates"])
    assert final["uncertainty_source"] == "tasks" and final["mean"] == 7 / 8
    # SE of (1,1,1,1,1,1,1,0): sd = sqrt(1/8) → SE = sqrt(1/8)/sqrt(8) = 1/8
    assert final["uncertainty"] == pytest.approx(0.125)
    assert final["lead"]["over"] != final["node_id"] and final["lead"]["tasks"] == 8
    # The final confirmation: the three best children by μ paired with the root (the only hand
    # design; its source has no HITS, so it scores 0) on all 8 questions; 7 hits: d = .875,
    # SE = .125, bound .75 > 0, the highest.
    held = final["confirmation"]
    assert held["bar"] == 0 and held["tasks"] == 8 and held["chosen"] == final["node_id"]
    assert [c["mean"] for c in held["candidates"]] == [7 / 8, 6 / 8, 5 / 8]
    assert held["candidates"][0]["bound"] == pytest.approx(0.75)
    assert all(c["clears"] for c in held["candidates"]) and not held["kept_hand_design"]
    view = RunView.load(run)
    assert view.uncertainty_source == "tasks" and "SE" in view.uncertainty_rule
    # search.heldout_test: the selection and the bar scored on the test split, paired per question
    from automemo.search.heldout import compare_on_test

    test = compare_on_test(view, ExactEvaluator(run.store_root))
    assert test["programs"]["selection"]["node_id"] == final["node_id"] and test["programs"]["hand_design"]["node_id"] == 0
    assert test["selection_vs_hand_design"]["difference"] == pytest.approx(7 / 8) and test["questions"] == 8
    assert view.node(final["node_id"]).lcb == pytest.approx(7 / 8 - 0.125)
    # ... and the tree command and the report print that ± and the paired lead
    import subprocess
    import sys

    shown = subprocess.run([sys.executable, "-m", "automemo", "tree", str(run.path)],
                           capture_output=True, text=True, check=True).stdout
    assert "±0.125 LCB=0.750" in shown and "SE of the per-task scores" in shown and "paired SE" in shown
    assert "final confirmation on 8 search questions against the best hand design #0" in shown
    assert f"chosen: #{final['node_id']}" in shown and "bound 0.750 vs 0.000: clears" in shown
    # (the doubled evaluator writes no evidence, which `show` reads after the selection lines)
    node = subprocess.run([sys.executable, "-m", "automemo", "show", str(run.path), str(final["node_id"])],
                          capture_output=True, text=True).stdout
    assert "final confirmation on 8 search questions" in node
    from automemo.report.build import build_report

    build_report(run, tmp_path / "report", quiet=True)
    index = (tmp_path / "report" / "index.html").read_text()
    assert "SE of the per-task scores" in index and 'id="paired-lead"' in index
    assert 'id="confirmation"' in index and "clears" in index


def test_real_data_search_with_bad_data_says_what_to_change(tmp_path):
    """No scenario under the path, or a split without questions (one scenario file: every
    conversation lands in test): a sentence, a non-zero exit, and no run directory left."""
    import subprocess
    import sys

    from conversation_data import write_memgallery

    release = write_memgallery(tmp_path / "release")
    (tmp_path / "empty").mkdir()
    cases = {"empty": (tmp_path / "empty", "no JSON files"),
             "one file": (release / "dialog" / "alice.json", "the train split holds no question")}
    for what, (path, said) in cases.items():
        done = subprocess.run(
            [sys.executable, "-m", "automemo", "search", "--benchmark", "memgallery", "--option",
             f"path={path}", "--sandbox", "unsafe", "--runs-dir", str(tmp_path / "runs"), "--quiet"],
            capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and said in done.stderr, (what, done.stderr[-500:])
        assert not any((tmp_path / "runs").glob("*/config.json")), what


def test_discovery_summary_compares_with_the_best_seed_and_best_of_seeds():
    from automemo.measurements.discovery import Scored, SearchResult, WallClockCap, summarize

    seeds = [Scored("a", 0.9, 0.50, 3.0), Scored("b", 0.7, 0.60, 40.0), Scored("c", 0.9, 0.55, 1.0)]
    searches = [SearchResult(s, "tree", 1, 10, "steps", 60.0, 4, "x", 0.95, test, 2.0)
                for s, test in ((0, 0.65), (1, 0.59))]
    summary = summarize(seeds, searches)
    assert summary["best_seed"]["name"] == "b"            # best on test
    assert summary["best_of_seeds"]["name"] == "a"        # best on validation; tie → first seed
    row = summary["strategies"]["tree/k1"]
    assert row["minus_best_seed"][0] == pytest.approx(0.02) and row["min_minus_best_seed"] == pytest.approx(-0.01)
    assert summary["slowest_seed_retrieve_ms"] == 40.0

    class Client:
        def exhausted(self):
            return None

    assert WallClockCap(Client(), deadline=float("inf")).exhausted() is None
    assert "wall-clock" in WallClockCap(Client(), deadline=0.0).exhausted()
