"""The quality / cost front of a run, and the cheapest program within one standard error of the
best (docs/cost.md). Pure: read from the policy's statistics (`TreeStats`), no I/O.

    front = cost_front(stats, z=1.0)
    front.points        # every evaluated node with cost figures: (id, μ, ingest ms/turn, recall ms)
    front.pareto        # the nodes no other node beats on both quality and ingest cost
    front.best          # the best μ
    front.cheapest      # the cheapest (ingest, then recall) whose paired difference with the best
                        # is within z paired SEs

Cost here is the CPU per remembered turn (`ingest_cpu_ms_per_turn`): what grows with a memory's
life; recall CPU breaks ties. The best and the cheapest within one SE are the one-standard-error
rule's two ends (Breiman et al. 1984): a program whose score the questions cannot tell from the
best's, at the least cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from automemo.evaluation.cost_bounds import INGEST, RECALL
from automemo.search.tree_stats import NodeStats, TreeStats, paired, standard_error


@dataclass(frozen=True)
class FrontPoint:
    node_id: int
    mean: float
    ingest_ms: float       # CPU per remembered turn, cold
    recall_ms: float       # CPU per recall, cold
    fits: bool = True      # within the search's cost bounds


@dataclass(frozen=True)
class CostFront:
    points: tuple[FrontPoint, ...]
    pareto: tuple[int, ...]          # node ids, cheapest first
    best: int | None
    cheapest: int | None             # the cheapest within z paired SEs of the best
    z: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"pareto": list(self.pareto), "best": self.best, "cheapest_within_se": self.cheapest, "z": self.z,
                "points": [{"node_id": p.node_id, "mean": p.mean, "ingest_cpu_ms_per_turn": p.ingest_ms,
                            "recall_cpu_ms": p.recall_ms, "fits": p.fits} for p in self.points]}

    def sentence(self) -> str | None:
        """The front's verdict in words, None without a measured node."""
        if self.best is None:
            return None
        by_id = {p.node_id: p for p in self.points}
        best, cheap = by_id[self.best], by_id[self.cheapest]
        if cheap.node_id == best.node_id:
            return (f"the best program, #{best.node_id} (μ {best.mean:.3f}, {best.ingest_ms:.2f} ms/turn), is also "
                    f"the cheapest within {self.z:g} SE of it")
        return (f"cheapest within {self.z:g} paired SE of the best #{best.node_id} (μ {best.mean:.3f}, "
                f"{best.ingest_ms:.2f} ms/turn): #{cheap.node_id} (μ {cheap.mean:.3f}, {cheap.ingest_ms:.2f} ms/turn, "
                f"{_ratio(best.ingest_ms, cheap.ingest_ms)})")


def _ratio(expensive: float, cheap: float) -> str:
    if cheap <= 0:
        return "no measurable ingest CPU"
    return f"{expensive / cheap:.1f}x less ingest CPU"


def _point(v: NodeStats) -> FrontPoint | None:
    if v.failed or v.n == 0 or not v.cost or INGEST not in v.cost:
        return None
    return FrontPoint(v.id, v.mean, float(v.cost[INGEST]), float(v.cost.get(RECALL, 0.0)), not v.outside)


def within(best: NodeStats, v: NodeStats, z: float) -> bool:
    """Whether v's score is within z paired SEs of the best's (on their shared questions; without
    per-question scores, within z SEs of the best's own)."""
    if v.id == best.id:
        return True
    try:
        d = paired(best, v)
        return d.difference <= z * d.se + 1e-12
    except ValueError:
        return best.mean - v.mean <= z * standard_error(best.task_scores) + 1e-12


def cost_front(stats: TreeStats, z: float = 1.0) -> CostFront:
    nodes = {v.id: v for v in stats.nodes}
    points = tuple(p for p in (_point(v) for v in stats.nodes) if p is not None)
    if not points:
        return CostFront((), (), None, None, z)
    cheapest_first = sorted(points, key=lambda p: (p.ingest_ms, p.recall_ms, -p.mean, p.node_id))
    pareto, top = [], float("-inf")
    for p in cheapest_first:
        if p.mean > top + 1e-12:
            pareto.append(p.node_id)
            top = p.mean
    best = max(points, key=lambda p: (p.mean, -p.ingest_ms, -p.node_id))
    close = [p for p in cheapest_first if within(nodes[best.node_id], nodes[p.node_id], z)]
    return CostFront(points, tuple(pareto), best.node_id, close[0].node_id, z)
