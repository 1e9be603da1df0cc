"""Geometry of the report's search-progress chart: pure functions from the run's evaluations and
actions to coordinates; the template draws them as inline SVG.

One figure, two aligned parts sharing the step axis:
- a line chart: the best mean score μ so far (a step line: it changes only when an evaluation
  lands) and a dot for every full evaluation's score (filled: a child's first score s(c);
  hollow: a re-evaluation);
- a strip with one cell per search step coloured by what the step did (root evaluation,
  re-evaluation, generation, failed generation), empty for steps not yet run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from automemo.runs.records import Outcome


@dataclass(frozen=True)
class ScorePoint:
    """One full evaluation: node `node_id`'s k-th evaluation ran at `step` and scored `score`."""

    step: int
    node_id: int
    k: int
    score: float


@dataclass(frozen=True)
class BestSoFar:
    step: int
    mean: float      # the best μ over nodes after this step
    node_id: int     # the node holding it


@dataclass(frozen=True)
class StepAction:
    step: int
    kind: str        # "evaluate_root" | "evaluate" | "generate" | "transplant"
    outcome: Outcome
    node_id: int
    child_id: int | None = None


def best_so_far(points: Iterable[ScorePoint]) -> list[BestSoFar]:
    """After each step that ran an evaluation: the best running mean μ(v) over all nodes.

    It can go down: a lucky node re-evaluated lower loses its lead, and the chart should show
    that rather than a monotone record. Ties go to the older node, as in the final selection.
    """
    totals: dict[int, tuple[float, int]] = {}
    out: list[BestSoFar] = []
    by_step: dict[int, list[ScorePoint]] = {}
    for p in points:
        by_step.setdefault(p.step, []).append(p)
    for step in sorted(by_step):
        for p in by_step[step]:
            s, n = totals.get(p.node_id, (0.0, 0))
            totals[p.node_id] = (s + p.score, n + 1)
        best_id = min(totals, key=lambda i: (-totals[i][0] / totals[i][1], i))
        s, n = totals[best_id]
        out.append(BestSoFar(step, s / n, best_id))
    return out


# --- the figure ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tick:
    at: float      # pixel position along its axis
    label: str


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    node_id: int
    step: int
    score: float
    first: bool    # the node's first evaluation, s(c)


@dataclass(frozen=True)
class StripCell:
    x: float
    width: float
    step: int
    css: str       # act-root | act-eval | act-gen | act-fail | act-pending
    label: str     # tooltip text


@dataclass(frozen=True)
class ProgressChart:
    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float          # bottom of the score plot
    strip_y: float
    strip_height: float
    best_path: str         # SVG path data of the best-so-far step line ("" without evaluations)
    best_end: tuple[float, float] | None
    dots: tuple[Dot, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    strip: tuple[StripCell, ...]


def progress_chart(
    points: Sequence[ScorePoint],
    actions: Sequence[StepAction],
    *,
    planned_steps: int,
    width: float = 760,
    plot_height: float = 200,
    strip_height: float = 18,
) -> ProgressChart:
    """Lay out the figure. The step axis runs to `planned_steps` (or further, if the run went on
    after a resume with more steps) so an unfinished run shows how much is left."""
    left, right, top = 44.0, width - 12.0, 10.0
    bottom = top + plot_height
    strip_y = bottom + 26.0
    height = strip_y + strip_height + 18.0
    last = max([planned_steps, *(p.step for p in points), *(a.step for a in actions)])
    span = max(1, last)

    def x_of(step: float) -> float:
        return left + (right - left) * step / span

    lo, hi, score_labels = score_axis([p.score for p in points])

    def y_of(score: float) -> float:
        return bottom - (bottom - top) * (score - lo) / (hi - lo)

    best = best_so_far(points)
    path, end = "", None
    if best:
        parts = [f"M{x_of(best[0].step):.1f},{y_of(best[0].mean):.1f}"]
        for b in best[1:]:
            parts.append(f"H{x_of(b.step):.1f} V{y_of(b.mean):.1f}")
        done = max([b.step for b in best] + [a.step for a in actions])
        parts.append(f"H{x_of(done):.1f}")
        path = " ".join(parts)
        end = (x_of(done), y_of(best[-1].mean))

    dots = tuple(
        Dot(x_of(p.step), y_of(p.score), p.node_id, p.step, p.score, p.k == 0) for p in points
    )
    cell = (right - left) / span if last else min(24.0, right - left)
    done_steps = {a.step: a for a in actions}
    strip = []
    for step in range(last + 1):
        a = done_steps.get(step)
        css, label = _cell_style(a) if a else ("act-pending", f"step {step}: not run yet")
        w = min(24.0, max(2.0, cell * 0.8))  # a short run's steps are marks, not slabs
        strip.append(StripCell(x_of(step) - w / 2, w, step, css, label))
    return ProgressChart(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        strip_y=strip_y,
        strip_height=strip_height,
        best_path=path,
        best_end=end,
        dots=dots,
        x_ticks=tuple(Tick(x_of(s), str(s)) for s in step_ticks(last)),
        y_ticks=tuple(Tick(y_of(v), f"{v:.2f}") for v in score_labels),
        strip=tuple(strip),
    )


def step_ticks(last: int, most: int = 11) -> list[int]:
    """Integer step labels 0..last, thinned to at most `most` at a round stride."""
    if last <= 0:
        return [0]
    stride = 1
    for candidate in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000):
        stride = candidate
        if last // candidate + 1 <= most:
            break
    return list(range(0, last + 1, stride))


def score_axis(scores: Sequence[float], most: int = 6) -> tuple[float, float, list[float]]:
    """(low, high, tick values) of the score axis: from 0 (an honest baseline for rewards) up
    to the best score rounded up to a round stride, so small differences stay visible without
    being blown up, with at most `most` labels."""
    if not scores:
        return 0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    lo = min(0.0, math.floor(min(scores) * 10) / 10)
    top = max(lo + 0.1, math.ceil(max(scores) * 10 - 1e-9) / 10)
    for stride in (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0):
        start = math.floor(lo / stride + 1e-9) * stride
        steps = math.ceil((top - start) / stride - 1e-9)
        if steps + 1 <= most:
            break
    ticks = [round(start + stride * i, 10) for i in range(steps + 1)]
    return ticks[0], ticks[-1], ticks


def _cell_style(a: StepAction) -> tuple[str, str]:
    if a.kind == "evaluate_root":
        return "act-root", f"step {a.step}: first evaluation of the root"
    if a.kind == "evaluate":
        bad = a.outcome is not Outcome.EVALUATED
        return (
            "act-fail" if bad else "act-eval",
            f"step {a.step}: re-evaluate #{a.node_id}" + (f" ({a.outcome})" if bad else ""),
        )
    child = f" → #{a.child_id}" if a.child_id is not None else ""
    verb = "transplant a seed under" if a.kind == "transplant" else "generate from"
    if a.outcome is Outcome.EVALUATED:
        return "act-gen", f"step {a.step}: {verb} #{a.node_id}{child}"
    return "act-fail", f"step {a.step}: {verb} #{a.node_id}{child} failed ({a.outcome})"
