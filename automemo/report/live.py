"""What a report shows of a running search: what is in flight, how long steps take, an estimate of
the time left, and that the page reloads itself until the run ends (`upkeep.ReportUpkeep` keeps
the report current)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from automemo.runs.journal import inflight

REFRESH_S = 10  # how often a live page reloads itself


@dataclass(frozen=True)
class LiveStatus:
    in_flight: tuple[str, ...]       # e.g. "step 7: generate from #3", or "step 7"
    steps_done: int
    planned_steps: int
    mean_step_s: float | None        # mean wall time of the committed steps after the root's
    eta_s: float | None              # remaining steps × mean step time ÷ parallel width
    best_step: int | None            # the step whose evaluation set the best μ so far
    best_mean: float | None
    generated_epoch: float = 0.0     # when the page was written (the page compares it with now)
    refresh_s: int = REFRESH_S

    @property
    def stale_after_s(self) -> int:
        """No new page for this long means the search is probably gone (killed without a word)."""
        return int(max(300.0, 3 * (self.mean_step_s or 0.0)))

    @property
    def eta_text(self) -> str:
        return duration_text(self.eta_s) if self.eta_s is not None else "—"

    @property
    def mean_step_text(self) -> str:
        return duration_text(self.mean_step_s) if self.mean_step_s is not None else "—"


def live_status(view: Any, points: tuple[Any, ...]) -> LiveStatus:
    """The live part of the overview of a running search `view` (a RunView)."""
    done = view.last_step
    planned = view.search.steps
    width = max(1, int(getattr(view.search, "parallel", 1) or 1))
    recorded = [a for a in inflight(view.run) if a.get("step") not in {x.step for x in view.actions}]
    if recorded:
        flight = tuple(_describe(a) for a in recorded)
    elif done is None:
        flight = ("step 0: evaluating the root",)
    elif done < planned:
        flight = (f"step {done + 1}",)
    else:
        flight = ("choosing the final selection",)
    walls = [a.wall_s for a in view.actions if a.step > 0 and a.wall_s > 0]
    mean_step = statistics.fmean(walls) if walls else None
    remaining = max(0, planned - (done or 0))
    eta = mean_step * remaining / width if mean_step is not None else None
    best_step, best_mean = None, None
    for p in points:
        if best_mean is None or p.score > best_mean:
            best_step, best_mean = p.step, p.score
    return LiveStatus(in_flight=flight, steps_done=done or 0, planned_steps=planned, mean_step_s=mean_step,
                      eta_s=eta, best_step=best_step, best_mean=best_mean, generated_epoch=time.time())


def _describe(record: dict[str, Any]) -> str:
    """One in-flight record of the journal: {"step", "action": {"kind", "node_id", ...}, ...}."""
    action = record.get("action") if isinstance(record.get("action"), dict) else record
    kind, node = action.get("kind", ""), action.get("node_id")
    what = {"generate": f"generate from #{node}", "evaluate": f"re-evaluate #{node}",
            "transplant": f"transplant seed {action.get('seed')}"}.get(kind, kind)
    return f"step {record.get('step')}: {what}" if what else f"step {record.get('step')}"


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
