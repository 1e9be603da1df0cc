"""From per-task results to one `EvaluationResult`: score = mean over the tasks that count.

A task counts unless it was excluded after infrastructure failures or its metric leaves it out
(Mini-Gallery's AR in retrieval mode). Program failures are in, at 0: a memo program that crashes
on a task is worse on that task than one that returns nothing.
"""

from __future__ import annotations

import collections
import statistics
from typing import Any, Mapping, Sequence

from automemo.evaluation.result import EvaluationResult, TaskResult


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """Tokens an episode used, from whichever of the usual usage keys the agent filled in."""
    for key in ("tokens", "total_tokens"):
        if isinstance(usage.get(key), (int, float)):
            return int(usage[key])
    total = 0
    for key in ("prompt_tokens", "completion_tokens"):
        if isinstance(usage.get(key), (int, float)):
            total += int(usage[key])
    return total


def error_kind(error: str | None) -> str | None:
    """The label before the colon of a task error ("timeout: retrieve took..." -> "timeout")."""
    if error is None:
        return None
    return error.split(":", 1)[0].strip() or "error"


def summarize(
    tasks: Sequence[TaskResult],
    *,
    update_s: float,
    wall_s: float,
    update_error_kinds: Sequence[str] = (),
    info: Mapping[str, Any] | None = None,
) -> EvaluationResult:
    scored = [t for t in tasks if t.counted and not t.excluded]
    by_category: dict[str, list[float]] = collections.defaultdict(list)
    by_metric: dict[str, list[float]] = collections.defaultdict(list)
    for t in scored:
        by_category[t.category].append(t.score)
        for name, value in t.metrics.items():
            by_metric[name].append(value)
    errors = collections.Counter(error_kind(t.error) for t in tasks if t.error and not t.excluded)
    errors.update(f"update:{kind}" for kind in update_error_kinds)
    return EvaluationResult(
        mean=statistics.fmean(t.score for t in scored) if scored else 0.0,
        n_scored=len(scored),
        per_category={c: statistics.fmean(v) for c, v in sorted(by_category.items())},
        metrics={m: statistics.fmean(v) for m, v in sorted(by_metric.items())},
        tasks=tuple(tasks),
        excluded=tuple(t.task_id for t in tasks if t.excluded),
        update_s=update_s,
        wall_s=wall_s,
        tokens=sum(t.tokens for t in tasks),
        errors=dict(sorted(errors.items())),
        info=dict(info or {}),
    )
