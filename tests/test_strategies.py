"""Search strategies as pure policies over TreeStats (hand-computed trees), the simulated
landscape, and every strategy driving the real loop on that landscape with the LLM meta agent
over HTTP (the fake server draws children from the landscape)."""

from __future__ import annotations

import math

import pytest

from automemo.configtools import ConfigError
from automemo.measurements.landscape_search import run_landscape_search
from automemo.measurements.stand_ins.landscape import Landscape
from automemo.search import policy
from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats
from automemo.search.strategies import (
    AlmaStrategy, GreedyStrategy, RandomStrategy, best_mean, final_node, strategy_for,
)

# root 0 (μ 0.2, n 1); child 1 (μ 0.6, n 3); child 2 (μ 0.7, n 1, one lucky evaluation);
# a failed child 3 of node 1; grandchild 4 of node 1 (μ 0.5, n 1)
STATS = TreeStats(nodes=(
    NodeStats(0, None, 0.2, 1, 2),
    NodeStats(1, 0, 0.6, 3, 1, first_score=0.6, parent_snapshot=0.2),
    NodeStats(2, 0, 0.7, 1, 0, first_score=0.7, parent_snapshot=0.2),
    NodeStats(3, 1, 0.0, 0, 0, failed=True),
    NodeStats(4, 1, 0.5, 1, 0, first_score=0.5, parent_snapshot=0.6),
), total_evaluations=6)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_alma_samples_parents_by_softmax_of_its_score():
    alma = AlmaStrategy(SearchConfig(strategy="alma"))
    # visits: node 0 has 2 children, node 1 has 2 (the failed one counts), nodes 2 and 4 none
    scores = {0: _sigmoid(0.0) - 0.5 * math.log(3), 1: _sigmoid(0.4) - 0.5 * math.log(3),
              2: _sigmoid(0.5), 4: _sigmoid(0.3)}
    weights = {k: math.exp(v / 0.5) for k, v in scores.items()}
    total = sum(weights.values())
    got = {a.node_id: a.score for a in alma.candidates(STATS)}
    assert got == pytest.approx({k: w / total for k, w in weights.items()})
    assert all(a.kind == "generate" for a in alma.candidates(STATS))
    # pure: the same seed, the same parent; over many seeds, frequencies follow the weights
    assert alma.choose(STATS, seed=5) == alma.choose(STATS, seed=5)
    draws = [alma.choose(STATS, seed=s).node_id for s in range(4000)]
    for node, w in weights.items():
        assert draws.count(node) / 4000 == pytest.approx(w / total, abs=0.03)


def test_greedy_expands_the_best_mean_and_random_any_evaluated_node():
    assert GreedyStrategy(SearchConfig()).choose(STATS, seed=0).node_id == 2
    rnd = RandomStrategy(SearchConfig())
    assert {rnd.choose(STATS, seed=s).node_id for s in range(200)} == {0, 1, 2, 4}
    assert all(a.score == pytest.approx(0.25) for a in rnd.candidates(STATS))


def test_final_selection_is_lcb_for_tree_and_best_mean_otherwise():
    # node 2's single evaluation of 0.7 beats node 1's mean but not its lower bound over 3 evaluations
    config = SearchConfig(c_e=0.2)
    assert final_node(STATS, config).id == 1
    assert policy.final_by_bound(STATS, config).id == 1
    for name in ("alma", "greedy", "random"):
        assert final_node(STATS, SearchConfig(strategy=name)).id == 2
    tied = TreeStats(nodes=(NodeStats(0, None, 0.5, 2, 1),
                            NodeStats(1, 0, 0.5, 1, 0, first_score=0.5, parent_snapshot=0.5)),
                     total_evaluations=3)
    assert best_mean(tied).id == 0, "a tie goes to the node with more evaluations"


def test_unknown_strategy_fails_fast():
    with pytest.raises(ConfigError, match="search.strategy must be one of tree, alma, greedy, random"):
        SearchConfig(strategy="beam")
    assert strategy_for(SearchConfig()).name == "tree"


def test_landscape_is_a_pure_function_of_seed_and_questions():
    a, b = Landscape(3, noise=0.1, failure_rate=0.3), Landscape(3, noise=0.1, failure_rate=0.3)
    assert [a.child_of(0) for _ in range(20)] == [b.child_of(0) for _ in range(20)]
    assert [a.quality(p) for p in range(a.programs)] == [b.quality(p) for p in range(b.programs)]
    assert a.evaluate(1, 7) == b.evaluate(1, 7) != a.evaluate(1, 8)
    children = [Landscape(s, failure_rate=0.3).child_of(0) for s in range(400)]
    assert children.count(None) / 400 == pytest.approx(0.3, abs=0.07)
    steps = [Landscape(s, gain=0.05, spread=0.02, failure_rate=0.0) for s in range(200)]
    moves = [ls.quality(ls.child_of(0)) - ls.quality(0) for ls in steps]
    assert sum(moves) / len(moves) == pytest.approx(0.05, abs=0.01)
    noisy = Landscape(0, noise=0.2)
    draws = [noisy.evaluate(0, k) for k in range(400)]
    assert sum(draws) / 400 == pytest.approx(0.3, abs=0.04) and all(0 <= d <= 1 for d in draws)
    with pytest.raises(ValueError, match="failure_rate"):
        Landscape(0, failure_rate=1.0)
    with pytest.raises(KeyError, match=f"no program {a.programs} in the landscape"):
        a.quality(a.programs)


@pytest.mark.parametrize("strategy", ["tree", "alma", "greedy", "random"])
def test_every_strategy_drives_the_loop_on_a_landscape(strategy, fake_llm, tmp_path):
    out = run_landscape_search(strategy, seed=2, steps=6, noise=0.05, fake=fake_llm, workdir=tmp_path)
    if strategy != "tree":
        assert out.generations == 6, "only the tree search re-evaluates"
    assert out.evaluations == 1 + 6 - out.failed_generations, "one full evaluation per step"
    assert out.meta_calls == 2 * out.generations, "analysis + generate per generation, none per re-evaluation"
    assert out.meta_tokens > 0


@pytest.mark.parametrize("strategy", ["tree", "alma", "greedy", "random"])
def test_with_exact_scores_every_strategy_selects_the_best_program_it_evaluated(strategy, fake_llm, tmp_path):
    # The oracle: without noise a program's score is its true quality, so the best mean is the
    # best program evaluated, and with every node evaluated once (no re-evaluation: nothing is
    # uncertain to the tree search either) the LCB orders nodes as their means do. Every child
    # gains about 0.1 over its parent, so a selection of any other node costs a visible regret.
    out = run_landscape_search(strategy, seed=2, steps=6, noise=0.0, gain=0.1, spread=0.02,
                               failure_rate=0.0, fake=fake_llm, workdir=tmp_path)
    assert out.generations == 6 and out.evaluations == 7, "every node evaluated once"
    assert out.best_quality >= 0.3 + 0.1, "the search climbed above the root (quality 0.3)"
    assert out.regret == 0 and out.selected_quality == out.best_quality


def test_bench_strategies_prints_the_table_and_writes_the_chart(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "automemo", "bench", "strategies", "--seeds", "1", "--steps", "3",
         "--noise", "0.05", "--strategies", "tree,alma", "--gallery-seeds", "0", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("| tree") or line.startswith("| alma")]
    assert len(rows) == 2 and all("| 0.05 |" in r for r in rows)
    assert (tmp_path / "strategies.svg").read_text().startswith("<svg")
    bad = subprocess.run([sys.executable, "-m", "automemo", "bench", "strategies", "--strategies", "beam"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown strategy beam" in bad.stderr


def test_a_parallel_landscape_search_and_the_regret_shared_by_both_benches(fake_llm, tmp_path):
    from automemo.measurements.landscape_search import regrets

    out = run_landscape_search("tree", seed=2, steps=6, parallel=3, eval_latency_s=0.05,
                               fake=fake_llm, workdir=tmp_path)
    assert out.parallel == 3 and out.wall_s >= 0.05
    reevaluations = 6 - out.generations
    assert out.evaluations == 1 + reevaluations + out.generations - out.failed_generations
    assert out.meta_calls == 2 * out.generations
    sequential = run_landscape_search("tree", seed=2, steps=6, fake=fake_llm, workdir=tmp_path)
    both = regrets([out, sequential])
    best = max(out.best_quality, sequential.best_quality)
    assert both == [best - out.selected_quality, best - sequential.selected_quality]


def test_the_shared_regret_compares_searches_on_the_same_landscape_only():
    from automemo.measurements.landscape_search import LandscapeOutcome, regrets

    def outcome(seed: int, selected: float, best: float) -> LandscapeOutcome:
        return LandscapeOutcome(strategy="tree", seed=seed, selected_quality=selected, best_quality=best,
                                regret=best - selected, meta_calls=0, meta_tokens=0, evaluations=1,
                                generations=0, failed_generations=0)

    # Seed 0: the best any search found is 0.7, so the second search's own regret of 0 becomes
    # 0.1; seed 1 is another landscape, whose 0.9 must not count against seed 0's searches.
    found = regrets([outcome(0, 0.5, 0.7), outcome(0, 0.6, 0.6), outcome(1, 0.2, 0.9)])
    assert found == pytest.approx([0.2, 0.1, 0.7])


def test_a_parallel_search_makes_concurrent_meta_requests(fake_llm, tmp_path):
    """With a slow meta model, generations in flight wait on the model together: the server
    answers several meta requests at once (one lock around the meta agent would keep it at 1)."""
    out = run_landscape_search("tree", seed=0, steps=4, parallel=4, llm_latency_s=0.5, fake=fake_llm,
                               workdir=tmp_path)
    assert out.generations >= 2 and out.max_meta_in_flight >= 2
    sequential = run_landscape_search("tree", seed=0, steps=2, llm_latency_s=0.05, fake=fake_llm,
                                      workdir=tmp_path)
    assert sequential.max_meta_in_flight == 1


def test_bench_scale_prints_the_parallel_search_table():
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "automemo", "bench", "scale", "--skip", "ray", "--skip", "meta", "--steps", "2",
         "--seeds", "1", "--eval-latency", "0"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split("│")[1].strip() for line in result.stdout.splitlines() if line.count("│") > 3]
    assert rows[:3] == ["1", "2", "4"] and rows[3] == "target", result.stdout
    assert "regret" in result.stdout and "speed-up" in result.stdout
