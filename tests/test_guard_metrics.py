"""Guard metrics (Benchmark.guard_metrics): a selection must not lose to the best hand design on a
benchmark's guards by more than one paired SE; otherwise the next candidate is taken, then the
hand design. Each evaluation records the guards per task, and the confirmation, `automemo tree`
and the held-out verdict print them. Expected values by hand."""

from __future__ import annotations

import pytest

from automemo.benchmarks import benchmark_class, checked_options
from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats, confirm_final, guard_checks
from automemo.search.view import confirmation_lines

TASKS = [f"q{i}" for i in range(8)]
BAR = [1, 0, 1, 0, 1, 0, 1, 0]          # the seed's score (μ .5)
BAR_GUARD = [1, 1, 1, 1, 1, 1, 1, 1]    # its session any-hit: every question


def _node(i, parent, scores, guard, **kw) -> NodeStats:
    mean = sum(scores) / len(scores)
    return NodeStats(id=i, parent=parent, mean=mean, n=1, m=0, first_score=mean, parent_snapshot=0.0,
                     task_scores=dict(zip(TASKS, scores)), exact=True,
                     guard_scores={"session_hit@10": dict(zip(TASKS, guard))}, **kw)


def _tree(children: dict[int, tuple[list[float], list[float]]]) -> TreeStats:
    nodes = [NodeStats(id=0, parent=None, mean=0.0, n=1, m=1, task_scores=dict.fromkeys(TASKS, 0.0), exact=True),
             _node(1, 0, BAR, BAR_GUARD, reference=True)]
    for i, (scores, guard) in children.items():
        nodes.append(_node(i, 1, scores, guard))
    nodes[1] = NodeStats(**{**nodes[1].__dict__, "m": len(children)})
    return TreeStats(tuple(nodes), total_evaluations=len(nodes))


ALL_WON = [1, 1, 1, 1, 1, 1, 1, 0]       # d = .375 ± .183: clears the bar (test_final_confirmation)
FIVE_WON = [1, 1, 1, 1, 1, 0, 1, 0]      # d = .25 ± .164: clears too, by less


def test_a_candidate_that_loses_a_guard_is_passed_over_for_the_next_then_the_hand_design():
    # Node 2 leads most but misses the evidence session on three questions: d = −3/8 = −.375,
    # sd = sqrt(.375·.625·8/7) = .5175, SE = .183: it loses by more than one paired SE.
    losing_guard = [1, 0, 1, 0, 1, 0, 1, 1]
    t = _tree({2: (ALL_WON, losing_guard), 3: (FIVE_WON, BAR_GUARD)})
    c = confirm_final(t, SearchConfig(kappa=0.0, select_shallowest=False))
    first = next(x for x in c.candidates if x.node_id == 2)
    assert first.clears and not first.guards_hold and not first.admissible
    (g,) = first.guards
    assert (g.metric, g.tasks) == ("session_hit@10", 8)
    assert g.difference == pytest.approx(-0.375) and g.se == pytest.approx(0.18298, abs=1e-4)
    assert c.chosen == 3
    # With no other candidate, the hand design is kept.
    alone = confirm_final(_tree({2: (ALL_WON, losing_guard)}), SearchConfig(kappa=0.0))
    assert alone.chosen == 1
    lines = "\n".join(confirmation_lines({
        "tasks": c.tasks, "bar": c.bar, "bar_mean": c.bar_mean, "chosen": c.chosen, "kept_hand_design": False,
        "rule": c.rule, "candidates": [{"node_id": x.node_id, "mean": x.mean, "difference": x.difference, "se": x.se,
                                        "bound": x.bound, "complete": x.complete, "clears": x.clears,
                                        "guards": [g.__dict__ for g in x.guards]} for x in c.candidates]}))
    assert "#2" in lines and "clears, but loses on a guard metric" in lines
    assert "guard session_hit@10: paired d -0.375 ± 0.183 on 8 questions: loses by more than one paired SE" in lines


def test_a_loss_within_one_paired_se_holds():
    # One question missed: d = −.125, SE = .125: −.125 + .125 = 0, not more than one SE below.
    t = _tree({2: (ALL_WON, [1, 1, 1, 1, 1, 1, 1, 0])})
    assert confirm_final(t, SearchConfig(kappa=0.0)).chosen == 2
    (g,) = guard_checks(t.node(2), t.node(1), 1.0)
    assert g.holds and g.difference == pytest.approx(-0.125) and g.se == pytest.approx(0.125)


@pytest.mark.parametrize("name, options, guards", [
    ("locomo", {"path": "x"}, ("session_hit@10",)),
    ("locomo", {"path": "x", "k": 5}, ("session_hit@5",)),
    ("longmemeval", {"path": "x"}, ("session_recall_any@5", "session_recall_all@5",
                                     "session_gran_recall_any@5", "session_gran_recall_all@5")),
    ("memgallery", {"path": "x"}, ()),
    ("locomo", {"path": "x", "mode": "qa"}, ()),
])
def test_benchmarks_declare_their_guards_and_each_is_a_metric_they_score(name, options, guards):
    cls, opts = checked_options(name, options)
    assert cls.guard_metrics(opts) == guards
    assert set(guards) <= set(benchmark_class(name).metric_names(opts))


def test_a_search_records_each_guard_per_question_and_prints_it_for_both_programs(tmp_path):
    import json
    import subprocess
    import sys

    from automemo.runs import RunDir
    from conversation_data import write_user_logs_many

    logs = {k: str(v) for k, v in write_user_logs_many(tmp_path, questions=True).items()}
    config = tmp_path / "search.toml"
    config.write_text("[search]\nheldout_test = true\n[embeddings]\ntext = \"minilm_static\"\n")
    done = subprocess.run(
        [sys.executable, "-m", "automemo", "search", "--benchmark", "conversations",
         "--option", f"path={logs['path']}", "--option", f"questions={logs['questions']}",
         "--option", 'guards=["session_hit@10"]', "--no-seed-sweep", "--steps", "3", "--config", str(config),
         "--sandbox", "bwrap", "--runs-dir", str(tmp_path / "runs"), "--run-id", "g", "--no-report"],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    run = RunDir.open(tmp_path / "runs" / "g")
    recorded = [e["guard_scores"] for e in run.evaluations()]
    assert recorded and all(set(g) == {"session_hit@10"} and g["session_hit@10"] for g in recorded)
    final = json.loads((tmp_path / "runs" / "g" / "final.json").read_text())
    assert all("guards" in c for c in final["confirmation"]["candidates"])
    assert "session_hit@10" in final["heldout_test"]["guards"]
    assert "guard session_hit@10:" in done.stdout
