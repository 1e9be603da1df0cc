"""`automemo bench discovery`'s oracle (the best test score among the programs a search
evaluated) and selection regret (oracle − selection): which programs are scored, the bound,
the cache, and the summary per strategy."""

from __future__ import annotations

import pytest

from automemo.measurements.discovery import Scored, SearchResult, summarize
from automemo.measurements.oracle import Candidate, evaluated_candidates, search_oracle


class FakeRun:
    """A run directory's nodes and evaluations, as RunDir returns them."""

    def __init__(self, nodes):
        self._nodes = nodes  # (id, status, program, [validation means])

    def nodes(self):
        return [{"id": i, "status": status, "program_path": f"nodes/{i}/program.py" if program else ""}
                for i, status, program, _ in self._nodes]

    def evaluations(self, node_id):
        return [{"mean": m} for i, _, _, means in self._nodes if i == node_id for m in means]

    def program_source(self, node_id):
        return next(program for i, _, program, _ in self._nodes if i == node_id)


def test_candidates_are_the_distinct_evaluated_programs_best_validation_first():
    run = FakeRun([(0, "evaluated", "root", [0.0]), (1, "evaluated", "a", [0.5, 0.7]),
                   (2, "failed", "", []), (3, "evaluated", "b", [0.8]), (4, "evaluated", "a", [0.2])])
    assert evaluated_candidates(run) == [Candidate(3, "b", 0.8), Candidate(1, "a", pytest.approx(0.6)),
                                         Candidate(0, "root", 0.0)]


def test_the_oracle_is_the_best_test_score_and_each_program_is_scored_once():
    candidates = [Candidate(3, "b", 0.8), Candidate(1, "a", 0.6), Candidate(0, "root", 0.0)]
    test = {"b": 0.55, "a": 0.70, "root": 0.0}
    scored = []

    def score(source):
        scored.append(source)
        return test[source]

    oracle = search_oracle(candidates, score, limit=60, selected="b")
    assert (oracle.test, oracle.node_id, oracle.scored, oracle.evaluated, oracle.complete) == (0.70, 1, 3, 3, True)
    assert sorted(scored) == ["a", "b", "root"]
    # Bounded: the best by validation, and the selection always; the oracle is then a lower bound.
    bounded = search_oracle(candidates, test.__getitem__, limit=1, selected="root")
    assert (bounded.test, bounded.scored, bounded.complete) == (0.55, 2, False)
    assert search_oracle(candidates, test.__getitem__, limit=0, selected="a").test == 0.70
    # A program scored already (a swept seed) costs nothing and does not use up the limit.
    free = search_oracle(candidates, test.__getitem__, limit=1, selected="b", cached=lambda s: s == "root")
    assert (free.test, free.scored, free.complete) == (0.70, 3, True)
    with pytest.raises(ValueError):
        search_oracle([], test.__getitem__, limit=5)


def test_summary_reports_oracle_and_regret_per_strategy_with_mean_and_se():
    seeds = [Scored("a", 0.9, 0.50, 3.0), Scored("b", 0.7, 0.60, 40.0)]
    searches = [SearchResult(0, "tree", 1, 10, "steps", 60.0, 4, "x", 0.95, 0.65, 2.0, 0.70, 7, 12, 12),
                SearchResult(1, "tree", 1, 10, "steps", 60.0, 4, "x", 0.95, 0.59, 2.0, 0.69, 5, 12, 12),
                SearchResult(0, "random", 1, 10, "steps", 60.0, 4, "x", 0.95, 0.61, 2.0, 0.61, 4, 9, 11)]
    assert searches[0].regret == pytest.approx(0.05)
    summary = summarize(seeds, searches)
    assert summary["best_of_seeds_regret"] == pytest.approx(0.10)  # a (validation 0.9) against b's 0.60
    tree = summary["strategies"]["tree/k1"]
    assert tree["oracle"] == pytest.approx((0.695, 0.005))
    assert tree["regret"] == pytest.approx((0.075, 0.025))  # regrets 0.05 and 0.10
    assert tree["oracle_complete"] and not summary["strategies"]["random/k1"]["oracle_complete"]
    assert summary["strategies"]["random/k1"]["regret"] == pytest.approx((0.0, 0.0))


def test_test_scores_keep_the_published_figures_and_score_each_program_once(tmp_path):
    import json

    from automemo.evaluation.aggregate import summarize as summarize_tasks
    from automemo.evaluation.result import TaskResult
    from automemo.measurements.discovery import TestScores

    calls = []

    class Evaluator:
        def evaluate(self, source, split):
            calls.append((source, split))
            tasks = [TaskResult("q1", "FR", 0.5, {"recall@10": 0.5, "session_hit@10": 1.0, "locomo_recall@10": 0.5}),
                     TaskResult("q2", "AR", 0.0, {"locomo_recall@10": 1.0}, counted=False)]
            return summarize_tasks(tasks, update_s=0.0, wall_s=0.0,
                                   info={"adversarial_categories": ["AR"], "retrieve_s_mean": 0.002})

    cache = tmp_path / "scores.json"
    scores = TestScores(Evaluator(), cache, {"benchmark": "x"})
    assert scores.score("program", "test") == (0.5, 2.0)
    assert scores.figures("program", "test") == {  # every metric, the published ones among them
        "all questions": {"locomo_recall@10": 0.75, "recall@10": 0.5, "session_hit@10": 1.0},
        "all but adversarial": {"locomo_recall@10": 0.5, "recall@10": 0.5, "session_hit@10": 1.0}}
    assert len(calls) == 1
    # A second bench over the same folder scores nothing; an entry cached before the figures
    # were kept ([mean, ms]) is scored once more.
    assert TestScores(Evaluator(), cache, {"benchmark": "x"}).score("program", "test") == (0.5, 2.0)
    assert len(calls) == 1
    old = {key: value[:2] for key, value in json.loads(cache.read_text()).items()}
    cache.write_text(json.dumps(old))
    again = TestScores(Evaluator(), cache, {"benchmark": "x"})
    assert again.figures("program", "test")["all questions"]["locomo_recall@10"] == 0.75 and len(calls) == 2
