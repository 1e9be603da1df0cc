"""One mean (issue 38): with a question budget every consumer of a node's score reads the paired
mean of `Tree.stats`, not the raw mean over samples of different questions: the policy's μ and
its improvement term, a child's recorded parent snapshot, the meta agent's context and the run's
view (tree, report, final.json)."""

from __future__ import annotations

import itertools

import pytest

from automemo.search import policy
from automemo.search.config import SearchConfig
from automemo.search.meta_context import MetaContext
from automemo.search.questions import QuestionPlan
from automemo.search.tree import Node, Tree
from automemo.search.view import RunView
from tests.test_question_budget import _search

ORDER = tuple(f"q{j:02d}" for j in range(20))  # the first ten easy, the last ten hard


def _node(i, parent, scores, first=None):
    values = list(scores.values())
    return Node(i, parent, f"nodes/{i}/program.py", f"#{i}", scores=(sum(values) / len(values),),
                task_scores=scores, asked=frozenset(scores), first_task_scores=first or scores,
                parent_snapshot=None if parent is None else 0.0)


def test_raw_and_paired_means_rank_two_nodes_differently_and_the_policy_follows_the_paired_one():
    easy, hard = ORDER[:10], ORDER[10:]
    root = _node(0, None, {**dict.fromkeys(easy, 1.0), **dict.fromkeys(hard, 0.0)})   # μ .5
    a = _node(1, 0, {**dict.fromkeys(easy, 1.0), **dict.fromkeys(hard, 0.5)})         # raw .75
    b = _node(2, 0, dict.fromkeys(easy, 0.9))                                          # raw .9, easy only
    # a child of #1 asked only the easy questions: raw .9 over #1's raw .75 looks like a gain,
    # but on the questions both were asked it is .1 below its parent
    d = _node(3, 1, dict.fromkeys(easy, 0.9))
    tree = Tree([root, a, b, d], plan=QuestionPlan(ORDER, 10))
    assert b.mean > a.mean  # raw: #2 first
    stats = tree.stats()
    assert stats.node(1).mean == pytest.approx(0.75) and stats.node(2).mean == pytest.approx(0.4)
    config = SearchConfig(kappa=0.0)
    assert policy.lcb(stats.node(1), stats, config) > policy.lcb(stats.node(2), stats, config)
    # the improvement term: s(c) − s_par(c) paired on the child's first sample
    assert stats.node(3).parent_snapshot == pytest.approx(0.75)
    assert stats.node(3).first_score == pytest.approx(0.75 - 0.1)
    assert policy.improvement(stats.node(3)) == 0.0
    assert policy.potential(stats.node(1), stats, config) == 0.0  # raw means would give .15 / 2


class _Before:
    """A run directory as it stood when node `child` was made (sequential search: ids and
    evaluation rows are in the order they were committed; step numbers are not, once a resumed
    run's steps follow an earlier confirmation's)."""

    def __init__(self, run, child):
        self.run, self.child, self.path = run, child, run.path
        self.first = min(e["id"] for e in run.evaluations() if e["node_id"] == child)

    def config(self):
        return self.run.config()

    def nodes(self):
        return [r for r in self.run.nodes() if r["id"] < self.child]

    def evaluations(self):
        return [e for e in self.run.evaluations() if e["id"] < self.first]


def test_the_snapshot_the_meta_context_and_the_view_read_the_paired_mean(tmp_path):
    # a search stopped by its budget after its confirmation asked a few nodes more questions, then
    # resumed with more: children are then made from parents whose samples differ in questions
    _search(tmp_path, steps=20, budget=150, sample=10)
    run, _, final, _ = _search(tmp_path, steps=20, budget=600, sample=10)
    tree = Tree.from_rundir(run)
    stats = tree.stats()
    paired = {v.id: v.mean for v in stats.nodes if v.n > 0}
    raw = {n.id: n.mean for n in tree.nodes() if not n.failed and n.n > 0}
    flipped = [(u, v) for u, v in itertools.combinations(paired, 2)
               if (raw[u] - raw[v]) * (paired[u] - paired[v]) < 0]
    assert flipped, "raw and paired means rank no two nodes differently: this test could not fail"
    # the meta agent is told the paired means, and the view (tree, report, final.json) shows them
    scored = {p.node_id: p.mean for p in MetaContext(run).scored_programs(tree)}
    assert scored == pytest.approx(paired)
    view = RunView.load(run)
    assert {n.id: n.mean for n in view.nodes if n.evaluated} == pytest.approx(paired)
    assert final["mean"] == pytest.approx(paired[final["node_id"]])
    # every child's parent snapshot is its parent's paired μ on the tree the step was chosen on
    moved = 0
    for row in run.nodes():
        if row["parent"] is None or row["action"] != "generate" or row["status"] != "evaluated":
            continue
        before = Tree.from_rundir(_Before(run, row["id"]))
        assert row["parent_snapshot"] == pytest.approx(before.stats().node(row["parent"]).mean)
        moved += abs(before.node(row["parent"]).mean - row["parent_snapshot"]) > 1e-9
    assert moved, "no parent's raw mean differed from its paired one: this test could not fail"
