"""What the meta agent is told about the tree for a generate action (its `GenerationContext`):
the parent with its latest evaluation's evidence, the committed parent→child gains, and every
evaluated program's scores. Everything is read for one committed `Tree` snapshot (the one the
action was chosen on), so that what an action sees does not depend on what other actions commit
while it runs.
"""

from __future__ import annotations

import difflib
import threading
from typing import Sequence

from automemo.contract import Budget
from automemo.evaluation.evidence import read_evidence
from automemo.evaluation.result import EvaluationResult
from automemo.meta.context import (ChildAttempt, GenerationContext, Improvement, ParentView, ScoredProgram,
                                   ScoredTask, evidence_questions, scored_tasks)
from automemo.runs.records import EvaluationRecord
from automemo.runs.rundir import RunDir
from automemo.search.policy import NodeStats
from automemo.search.tree import Tree


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name
        )
    )


def _scores(tree: Tree) -> dict[int, NodeStats]:
    """Every live node's μ, s(c) and s_par(c) as the policy reads them (`Tree.stats`: with a
    question budget, paired means), so the meta agent is told the numbers the search ranks by."""
    if not tree.total_evaluations:
        return {}
    return {v.id: v for v in tree.stats().nodes}


class MetaContext:
    """Reads a run directory for the meta agent. Safe to share between the scheduler's workers:
    the only state is a cache of evidence that never changes once committed."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self._task_scores: dict[tuple[int, int], dict[str, ScoredTask]] = {}  # (node, k) -> tasks
        self._lock = threading.Lock()

    def generation_context(self, parent_id: int, tree: Tree, *, node_id: int, seed: int,
                           siblings_in_flight: Sequence[str] = (), budget: Budget = Budget()) -> GenerationContext:
        """Everything a propose of a child of `parent_id` is told, read for the committed `tree`
        snapshot the action was chosen on (the parent is parsed here, once)."""
        return GenerationContext.build(
            self.parent_view(parent_id, tree), node_id=node_id, seed=seed,
            improvements=self.improvements(tree), tree_sources=self.sources(tree),
            scored=self.scored_programs(tree), siblings_in_flight=siblings_in_flight, budget=budget,
            bounds=tree.bounds)

    def parent_view(self, node_id: int, tree: Tree) -> ParentView:
        """The parent with its LATEST committed evaluation, found by its index (not by n − 1:
        under a parallel search the indices of a node's evaluations can have gaps)."""
        node = tree.node(node_id)
        k = node.latest_k if node.latest_k is not None else max(node.n - 1, 0)
        evidence = self.run.evaluation_dir(node_id, k)
        evaluation: EvaluationResult | None
        try:
            evaluation = read_evidence(evidence).result
        except FileNotFoundError:
            evaluation = None
        # What was already tried from this parent, so the meta agent does not propose it again.
        stats = _scores(tree)
        children = tuple(
            ChildAttempt(row["id"], row["summary"], stats[row["id"]].first_score if row["id"] in stats else None,
                         row["failure"] or "")
            for row in self.run.nodes() if row["parent"] == node_id and row["id"] in tree)
        return ParentView(node_id=node_id, source=self.run.program_source(node_id),
                          score=stats[node_id].mean, n_evals=node.n, evaluation=evaluation,
                          evidence_dir=str(evidence), children=children)

    def sources(self, tree: Tree) -> list[str]:
        """Every program the tree holds, failed generations included."""
        return [self.run.program_source(n.id) for n in tree.nodes() if n.source_path]

    def improvements(self, tree: Tree) -> list[Improvement]:
        """Every committed parent→child gain, largest first (the meta agent keeps the top few)."""
        out = []
        for child in _scores(tree).values():
            if child.parent is None or child.first_score is None:
                continue
            if child.parent_snapshot is None or child.first_score <= child.parent_snapshot:
                continue
            old = self.run.program_source(child.parent)
            new = self.run.program_source(child.id)
            out.append(Improvement(
                parent_id=child.parent, child_id=child.id, parent_score=child.parent_snapshot,
                child_score=child.first_score, summary=tree.node(child.id).summary,
                diff=unified_diff(old, new, f"node {child.parent}", f"node {child.id}"),
            ))
        out.sort(key=lambda i: (-(i.child_score - i.parent_score), i.child_id))
        return out

    def scored_programs(self, tree: Tree) -> list[ScoredProgram]:
        """The tree's evaluated programs, each with its latest evaluation in `tree`."""
        latest = {n.id: n.latest_k for n in tree.nodes() if not n.failed and n.n > 0}
        records = {}
        for e in (EvaluationRecord.from_row(row) for row in self.run.evaluations()):
            if latest.get(e.node_id) == e.k:
                records[e.node_id] = e
        mean = {v.id: v.mean for v in _scores(tree).values()}
        return [
            ScoredProgram(node_id=n.id, source=self.run.program_source(n.id), mean=mean[n.id], n=n.n,
                          per_category=dict(records[n.id].per_category),
                          tasks=self.scored_tasks(n.id, records[n.id].k))
            for n in tree.nodes() if n.id in records
        ]

    def scored_tasks(self, node_id: int, k: int) -> dict[str, ScoredTask]:
        """The scored tasks of a node's k-th evaluation, read from its evidence once (evidence
        never changes); empty when the evidence is gone."""
        key = (node_id, k)
        with self._lock:
            if key in self._task_scores:
                return self._task_scores[key]
        try:
            evidence = read_evidence(self.run.evaluation_dir(node_id, k))
            tasks = scored_tasks(evidence.result, evidence_questions(evidence))
        except FileNotFoundError:
            tasks = {}
        with self._lock:
            return self._task_scores.setdefault(key, tasks)
