"""The generation tree in memory: nodes, their evaluation scores, and the statistics view the
policy reads. The run directory is its durable form (`Tree.from_rundir`); the loop changes the
tree only after a step has been committed there, so memory and disk never disagree."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Literal, Mapping

from automemo.evaluation.cost_bounds import CostBounds
from automemo.search.policy import NodeStats, TreeStats
from automemo.search.question_policy import paired_means
from automemo.search.questions import QuestionPlan, Race, load_plan, load_race

NodeStatus = Literal["evaluated", "failed"]


@dataclass(frozen=True)
class Node:
    id: int
    parent: int | None
    source_path: str                      # program.py, relative to the run directory
    summary: str                          # one-line change summary shown in the tree
    scores: tuple[float, ...] = ()        # one mean score per full evaluation, in order
    parent_snapshot: float | None = None  # s_par: the parent's μ when this child was generated
    status: NodeStatus = "evaluated"
    created_step: int = 0
    action: str = "generate"              # "root" | "generate" | "transplant" (a swept seed) | "discovered"
    # The index k of each score's evaluation, in order. Not always 0..n-1: under a parallel
    # search an evaluation that failed leaves its reserved index unused.
    ks: tuple[int, ...] = ()
    # Per-question scores over every evaluation, a later one's score of a question replacing an
    # earlier one's: with samples that grow, the union of the samples; with full evaluations,
    # the latest one's.
    task_scores: Mapping[str, float] = field(default_factory=dict)
    exact: bool = False                   # every evaluation was exact (deterministic, all tasks)
    asked: frozenset[str] = frozenset()   # every validation question any evaluation asked
    spent: int = 0                        # questions its evaluations cost (repeats counted)
    stopped: str = ""                     # why early stopping ended its scoring ("": it did not)
    first_task_scores: Mapping[str, float] = field(default_factory=dict)  # its first evaluation's
    # Guard metrics per task (metric -> task -> value), merged over evaluations as task_scores are.
    guard_scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    cost: Mapping[str, float] = field(default_factory=dict)  # its latest evaluation's cost figures

    @property
    def first_score(self) -> float | None:
        return self.scores[0] if self.scores else None

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def latest_k(self) -> int | None:
        """The index of the latest committed evaluation (None before the first)."""
        return max(self.ks) if self.ks else None

    @property
    def failed(self) -> bool:
        return self.status == "failed"


class Tree:
    """`plan`: the run's question plan when it has a question budget (samples that grow), else
    None (every evaluation scores every validation question)."""

    def __init__(self, nodes: Iterable[Node] = (), plan: QuestionPlan | None = None,
                 race: Race | None = None, bounds: CostBounds = CostBounds(),
                 held_to_root: bool = False) -> None:
        self._nodes: dict[int, Node] = {}
        self.held_to_root = held_to_root  # search.held_to = "root": the root is the bar
        self.plan = plan
        self.bounds = bounds  # the run's cost bounds: which nodes the final selection may take
        self.race = race  # the final confirmation's race once it started (halving.py)
        for node in nodes:
            self.add(node)

    @classmethod
    def from_rundir(cls, run) -> Tree:
        """Rebuild the tree from a run directory's committed rows (`automemo.runs.RunDir`)."""
        evaluations: dict[int, list[dict]] = {}
        for ev in run.evaluations():
            evaluations.setdefault(ev["node_id"], []).append(ev)
        nodes = []
        for row in run.nodes():
            mine = sorted(evaluations.get(row["id"], []), key=lambda e: e["k"])
            task_scores: dict[str, float] = {}
            guard_scores: dict[str, dict[str, float]] = {}
            asked: set[str] = set()
            for e in mine:
                scores = e.get("task_scores") or {}
                task_scores.update(scores)
                for metric, values in (e.get("guard_scores") or {}).items():
                    guard_scores.setdefault(metric, {}).update(values)
                asked.update(e.get("questions") or scores)
            nodes.append(
                Node(
                    id=row["id"],
                    parent=row["parent"],
                    source_path=row["program_path"],
                    summary=row["summary"],
                    scores=tuple(e["mean"] for e in mine),
                    parent_snapshot=row["parent_snapshot"],
                    status=row["status"],
                    created_step=row["step"],
                    action=row["action"],
                    ks=tuple(e["k"] for e in mine),
                    task_scores=task_scores,
                    exact=bool(mine) and all(e.get("exact") for e in mine),
                    asked=frozenset(asked),
                    spent=sum(len(e.get("questions") or e.get("task_scores") or ()) for e in mine),
                    stopped=next((e["stopped"] for e in mine if e.get("stopped")), ""),
                    first_task_scores=(mine[0].get("task_scores") or {}) if mine else {},
                    guard_scores=guard_scores,
                    cost=next((e["cost"] for e in reversed(mine) if e.get("cost")), {}),
                )
            )
        try:
            search = run.config().get("search") or {}
            bounds = CostBounds.from_search(search)
        except (OSError, ValueError):  # a run folder without its config (a test's): no bounds
            search, bounds = {}, CostBounds()
        return cls(nodes, plan=load_plan(run.path), race=load_race(run.path), bounds=bounds,
                   held_to_root=search.get("held_to") == "root")

    # access ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node_id: int) -> bool:
        return node_id in self._nodes

    def node(self, node_id: int) -> Node:
        try:
            return self._nodes[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id} in the tree") from None

    def nodes(self) -> list[Node]:
        return [self._nodes[k] for k in sorted(self._nodes)]

    @property
    def root(self) -> Node:
        return next(n for n in self.nodes() if n.parent is None and not n.failed)

    def next_id(self) -> int:
        """Ids count failed generations too, so a node's id says when it was made."""
        return max(self._nodes, default=-1) + 1

    @property
    def total_evaluations(self) -> int:
        return sum(n.n for n in self.nodes() if not n.failed)

    @property
    def questions_spent(self) -> int:
        """Validation questions every committed evaluation asked, together."""
        return sum(n.spent for n in self.nodes())

    # changes -----------------------------------------------------------------------------------

    def add(self, node: Node) -> None:
        if node.id in self._nodes:
            raise ValueError(f"node {node.id} already exists")
        if node.parent is not None and node.parent not in self._nodes:
            raise ValueError(f"node {node.id}: parent {node.parent} is not in the tree")
        self._nodes[node.id] = node

    def add_score(self, node_id: int, score: float) -> Node:
        old = self.node(node_id)
        k = old.latest_k + 1 if old.ks else len(old.scores)
        node = dataclasses.replace(old, scores=old.scores + (score,), ks=old.ks + (k,))
        self._nodes[node_id] = node
        return node

    # the policy's view -------------------------------------------------------------------------

    def stats(self) -> TreeStats:
        """What the policy sees: failed generations are left out entirely. The one place a
        node's score is made: every consumer (the policy's terms, a child's parent snapshot, the
        meta agent's context, the run's view and report) reads μ, s(c) and s_par(c) from here."""
        live = [n for n in self.nodes() if not n.failed]
        m = {n.id: 0 for n in live}
        for n in live:
            if n.parent is not None and n.n > 0:
                m[n.parent] += 1
        sampled = self.plan is not None
        paired = paired_means({n.id: n.task_scores for n in live if n.n > 0}) if sampled else {}
        mean = {n.id: paired.get(n.id, n.mean) for n in live}
        gains = {n.id: self._paired_gain(n, mean) for n in live} if sampled else {}
        return TreeStats(
            nodes=tuple(
                NodeStats(
                    id=n.id,
                    parent=n.parent,
                    # With samples that grow, μ comes from every question the node was scored
                    # on, paired with the node scored on the most (question_policy.paired_means).
                    mean=mean[n.id],
                    n=n.n,
                    questions=len(n.asked),
                    stopped=n.stopped,
                    m=m[n.id],
                    # With samples that grow, s(c) − s_par(c) is the child's first sample paired
                    # with its parent on the questions both were asked, on the parent's μ: a
                    # child asked easier questions than its parent does not gain by that.
                    first_score=gains[n.id][0] if gains.get(n.id) else n.first_score,
                    parent_snapshot=gains[n.id][1] if gains.get(n.id) else n.parent_snapshot,
                    task_scores=n.task_scores,
                    guard_scores=n.guard_scores,
                    exact=n.exact,
                    reference=n.action == "transplant",
                    cost=n.cost,
                    outside="; ".join(self.bounds.violations(n.cost)) if n.n > 0 else "",
                )
                for n in live
            ),
            total_evaluations=self.total_evaluations,
            sample_size=self.plan.sample_size if sampled else 0,
            validation_questions=self.plan.total if sampled else 0,
            order=self.plan.order if sampled else (),
            race=self.race if sampled else None,
            held_to_root=self.held_to_root,
        )

    def _paired_gain(self, child: Node, mean: Mapping[int, float]) -> tuple[float, float] | None:
        """(s(c), s_par(c)) with samples that grow: (μ(par) + d, μ(par)), d the mean difference of
        the child's first evaluation and its parent on the questions both were scored on; None
        for the root, a node not evaluated, or no shared question."""
        if child.parent is None or child.parent not in mean or not child.first_task_scores:
            return None
        parent = self._nodes[child.parent]
        shared = [q for q in child.first_task_scores if q in parent.task_scores]
        if not shared:
            return None
        d = sum(child.first_task_scores[q] - parent.task_scores[q] for q in shared) / len(shared)
        return mean[parent.id] + d, mean[parent.id]
