"""The generation tree in memory: nodes, their evaluation scores, and the statistics view the
policy reads. The run directory is its durable form (`Tree.from_rundir`); the loop changes the
tree only after a step has been committed there, so memory and disk never disagree."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Literal, Mapping

from automemo.search.policy import NodeStats, TreeStats

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
    action: str = "generate"              # "root" | "generate" | "transplant" (a swept seed)
    # The index k of each score's evaluation, in order. Not always 0..n-1: under a parallel
    # search an evaluation that failed leaves its reserved index unused.
    ks: tuple[int, ...] = ()
    task_scores: Mapping[str, float] = field(default_factory=dict)  # the latest evaluation's
    exact: bool = False                   # every evaluation was exact (deterministic, all tasks)

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
    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self._nodes: dict[int, Node] = {}
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
                    task_scores=(mine[-1].get("task_scores") or {}) if mine else {},
                    exact=bool(mine) and all(e.get("exact") for e in mine),
                )
            )
        return cls(nodes)

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
        """What the policy sees: failed generations are left out entirely."""
        live = [n for n in self.nodes() if not n.failed]
        m = {n.id: 0 for n in live}
        for n in live:
            if n.parent is not None and n.n > 0:
                m[n.parent] += 1
        return TreeStats(
            nodes=tuple(
                NodeStats(
                    id=n.id,
                    parent=n.parent,
                    mean=n.mean,
                    n=n.n,
                    m=m[n.id],
                    first_score=n.first_score,
                    parent_snapshot=n.parent_snapshot,
                    task_scores=n.task_scores,
                    exact=n.exact,
                    reference=n.action == "transplant",
                )
                for n in live
            ),
            total_evaluations=self.total_evaluations,
        )
