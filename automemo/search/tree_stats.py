"""What the search policy reads: one node's and the tree's statistics (`NodeStats`, `TreeStats`),
and the statistics every evaluation regime shares: the standard error of per-question scores,
the paired difference of two nodes on the questions both were scored on, and the best hand design
a selection is held to. Pure data and arithmetic: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from automemo.search.questions import Race

TIE_TOLERANCE = 1e-12
"""Scores closer than this are a tie: sums of the same terms in another order differ in the last
bits, and a tie must go to generate / the older node whatever the float rounding did."""


@dataclass(frozen=True)
class NodeStats:
    """One node as the policy sees it. `first_score` s(c) and `parent_snapshot` s_par(c) are None
    for the root and for a node not evaluated yet; `failed` nodes (generations that never passed
    their exam) are ignored by every formula."""

    id: int
    parent: int | None
    mean: float          # μ(v) over its n full evaluations (0.0 while n = 0)
    n: int               # n(v): full evaluations of v
    m: int               # m(v): evaluated (non-failed) children of v
    first_score: float | None = None
    parent_snapshot: float | None = None
    failed: bool = False
    # Per-task scores of the node's latest evaluation, by task id (empty when not recorded), and
    # whether all its evaluations were exact (deterministic scoring of every task).
    task_scores: Mapping[str, float] = field(default_factory=dict)
    # The benchmark's guard metrics per task (metric -> task id -> value), as task_scores.
    guard_scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    exact: bool = False
    # A seed the sweep transplanted (the root is a hand design too, by being the root). With
    # exact evaluation the best hand design is what the final selection must beat.
    reference: bool = False
    # With a question budget: the validation questions v was asked, and why early stopping
    # ended its scoring ("" when it did not).
    questions: int = 0
    stopped: str = ""
    # The cost figures of its latest evaluation (automemo.evaluation.cost), and why they are
    # outside the search's cost bounds (automemo.evaluation.cost_bounds; "" within them, or no bounds).
    cost: Mapping[str, float] = field(default_factory=dict)
    outside: str = ""


@dataclass(frozen=True)
class TreeStats:
    nodes: tuple[NodeStats, ...]
    total_evaluations: int   # evaluations so far, the root's first one included (N, unsampled)
    # With a question budget: questions per sample and the validation questions there are
    # (0: every evaluation scores every question).
    sample_size: int = 0
    validation_questions: int = 0
    # With a question budget: the one order every node is asked its questions in, and the final
    # confirmation's race once it started (`automemo.search.halving`).
    order: tuple[str, ...] = ()
    race: Race | None = None
    # `search.held_to = "root"`: the selection is held to the root (the program a user already
    # has: a label-free search's, a served memory's), not to the best hand design by μ, and every
    # other node (swept seeds included) is a candidate to replace it (docs/search.md, "What the selection is held to").
    held_to_root: bool = False

    @property
    def sampled(self) -> bool:
        """Whether evaluations score samples that grow (a search with a question budget)."""
        return self.sample_size > 0

    def __post_init__(self) -> None:
        roots = [v for v in self.nodes if v.parent is None and not v.failed]
        if len(roots) != 1:
            raise ValueError(f"the tree needs exactly one root, found {len(roots)}")
        ids = {v.id for v in self.nodes}
        if len(ids) != len(self.nodes):
            raise ValueError("node ids must be unique")
        counted = sum(v.n for v in self.nodes if not v.failed)
        if counted != self.total_evaluations:
            raise ValueError(
                f"N = {self.total_evaluations} but the nodes hold {counted} evaluations"
            )
        for v in self.nodes:
            if v.failed:
                continue
            m = len(evaluated_children(self, v.id))
            if m != v.m:
                raise ValueError(f"node {v.id}: m = {v.m} but it has {m} evaluated children")

    @property
    def root(self) -> NodeStats:
        return next(v for v in self.nodes if v.parent is None and not v.failed)

    def node(self, node_id: int) -> NodeStats:
        for v in self.nodes:
            if v.id == node_id:
                return v
        raise KeyError(f"no node {node_id} in the tree")


def evaluated_children(stats: TreeStats, node_id: int) -> list[NodeStats]:
    return [c for c in stats.nodes if c.parent == node_id and not c.failed and c.n > 0]


def standard_error(scores: Mapping[str, float]) -> float:
    """SE of the mean of per-task scores: sd / sqrt(T); 0 with fewer than two tasks."""
    values = list(scores.values())
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    var = sum((x - mean) ** 2 for x in values) / (len(values) - 1)
    return math.sqrt(var / len(values))


@dataclass(frozen=True)
class PairedDifference:
    """μ_v − μ_w on the tasks both were scored on, with the standard error of that difference
    (the sd of the per-task differences / sqrt(T)): task difficulty, shared by both, cancels."""

    difference: float
    se: float
    tasks: int


def paired(v: NodeStats, w: NodeStats) -> PairedDifference:
    try:
        return paired_scores(v.task_scores, w.task_scores)
    except ValueError:
        raise ValueError(f"nodes {v.id} and {w.id} share no scored task") from None


def paired_scores(a: Mapping[str, float], b: Mapping[str, float]) -> PairedDifference:
    """The paired difference of two programs' per-task values (scores, or a guard metric's)."""
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError("no shared task")
    diffs = {t: a[t] - b[t] for t in shared}
    return PairedDifference(sum(diffs.values()) / len(diffs), standard_error(diffs), len(diffs))


def is_hand_design(v: NodeStats) -> bool:
    """The root or a seed the sweep transplanted: a design the search did not generate."""
    return v.reference or v.parent is None


def fits(v: NodeStats) -> bool:
    """Whether v is within the search's cost bounds (always, without bounds)."""
    return not v.outside


def is_candidate(v: NodeStats, stats: TreeStats, bar: NodeStats) -> bool:
    """Whether the final selection may take v over the bar: evaluated, within the cost bounds,
    not the bar, and generated (held to the root, a swept seed is a candidate too)."""
    if v.failed or v.n == 0 or v.id == bar.id or not fits(v):
        return False
    return stats.held_to_root or not is_hand_design(v)


def reference(stats: TreeStats) -> NodeStats:
    """The bar the selection is held to. Held to the root (`TreeStats.held_to_root`): the root.
    Otherwise the best hand design (root or swept seed) by μ, the older on a tie. With cost
    bounds, the best one within them; when none is, the best of all (the selection then says
    that no hand design fits). Once the final confirmation's race started, the bar it races with
    (asking it more questions moves its μ, and the bar must not change under the race)."""
    if stats.race is not None and any(v.id == stats.race.bar for v in stats.nodes):
        return stats.node(stats.race.bar)
    root = next((v for v in stats.nodes if v.parent is None and not v.failed and v.n > 0), None)
    if stats.held_to_root and root is not None:
        return root
    designs = [v for v in stats.nodes if not v.failed and v.n > 0 and is_hand_design(v)]
    if not designs:
        raise ValueError("no evaluated hand design (root or swept seed) in the tree")
    return max([v for v in designs if fits(v)] or designs, key=lambda v: (v.mean, -v.id))
