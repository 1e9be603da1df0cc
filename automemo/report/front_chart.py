"""Geometry of the report's quality / cost chart: pure functions from the run's cost front
(automemo.search.cost_front) to coordinates; the template draws them as inline SVG.

Each evaluated node whose cost was measured is a dot at (CPU per remembered turn, μ); the x axis
is logarithmic, since a program that embeds every turn costs a hundred times one that does not.
The Pareto front (no other node is both cheaper and better) is a step line; the best node and
the cheapest within one standard error of it are ringed, nodes outside the run's cost bounds are
hollow, and the ingest bound, when set, is a dashed vertical line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from automemo.report.charts import Tick, score_axis
from automemo.search.cost_front import CostFront

FLOOR_MS = 0.01  # the log axis' lowest value: a program with no measurable ingest CPU sits here


@dataclass(frozen=True)
class FrontDot:
    x: float
    y: float
    node_id: int
    mean: float
    ingest_ms: float
    recall_ms: float
    fits: bool
    role: str        # "best", "cheapest" (within one SE of the best), "both" or ""


@dataclass(frozen=True)
class FrontChart:
    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    dots: tuple[FrontDot, ...]
    pareto_path: str           # SVG path of the front, cheapest first ("" with fewer than 2 points)
    bound_x: float | None      # the ingest bound's x, None without one (or off the axis)
    bound_label: str
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]


def log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten from `lo` to `hi` (both powers of ten)."""
    return [10.0 ** e for e in range(round(math.log10(lo)), round(math.log10(hi)) + 1)]


def front_chart(front: CostFront, *, bound_ms: float = 0.0, width: float = 760, height: float = 260) -> FrontChart:
    left, right, top, bottom = 44.0, width - 12.0, 10.0, height - 30.0
    values = [max(FLOOR_MS, p.ingest_ms) for p in front.points] + ([bound_ms] if bound_ms > 0 else [])
    lo = 10.0 ** math.floor(math.log10(min(values))) if values else 0.1
    hi = 10.0 ** math.ceil(math.log10(max(values))) if values else 100.0
    hi = max(hi, lo * 10)

    def x_of(ms: float) -> float:
        return left + (right - left) * (math.log10(max(FLOOR_MS, ms)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    y_lo, y_hi, labels = score_axis([p.mean for p in front.points])

    def y_of(score: float) -> float:
        return bottom - (bottom - top) * (score - y_lo) / (y_hi - y_lo)

    def role(node_id: int) -> str:
        best, cheap = node_id == front.best, node_id == front.cheapest
        return "both" if best and cheap else "best" if best else "cheapest" if cheap else ""

    dots = tuple(FrontDot(x_of(p.ingest_ms), y_of(p.mean), p.node_id, p.mean, p.ingest_ms, p.recall_ms, p.fits,
                          role(p.node_id)) for p in front.points)
    by_id = {d.node_id: d for d in dots}
    path = ""
    if len(front.pareto) > 1:
        first = by_id[front.pareto[0]]
        parts = [f"M{first.x:.1f},{first.y:.1f}"]
        for node in front.pareto[1:]:
            d = by_id[node]
            parts.append(f"H{d.x:.1f} V{d.y:.1f}")
        path = " ".join(parts)
    return FrontChart(
        width=width, height=height, left=left, right=right, top=top, bottom=bottom, dots=dots, pareto_path=path,
        bound_x=x_of(bound_ms) if bound_ms > 0 else None,
        bound_label=f"bound {bound_ms:g} ms/turn" if bound_ms > 0 else "",
        x_ticks=tuple(Tick(x_of(v), f"{v:g}") for v in log_ticks(lo, hi)),
        y_ticks=tuple(Tick(y_of(v), f"{v:.2f}") for v in labels),
    )
