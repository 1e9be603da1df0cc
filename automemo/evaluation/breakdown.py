"""Every named metric of an evaluation per question category, over all questions, and over all
but the adversarial ones: the shapes published memory benchmarks quote their figures in.

The mean (`EvaluationResult.metrics`) averages the tasks the score counts; published figures
average every question that has the metric, including questions the score leaves out
(LoCoMo's official evidence recall counts the adversarial category 5 and gives 1 to a question
without evidence). A task reports a metric when its scorer computed it (counted or not); tasks
excluded after infrastructure failures are left out. Which categories are adversarial is the
benchmark's word (`Benchmark.adversarial_categories`), carried in the result's info.
"""

from __future__ import annotations

import collections
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

from automemo.evaluation.result import EvaluationResult, TaskResult

ALL = "all questions"
NON_ADVERSARIAL = "all but adversarial"


@dataclass(frozen=True)
class BreakdownRow:
    name: str                      # a category, ALL or NON_ADVERSARIAL
    questions: int                 # tasks in the row that report at least one metric
    metrics: Mapping[str, float]   # mean of each metric over the row's tasks that report it


@dataclass(frozen=True)
class MetricBreakdown:
    rows: tuple[BreakdownRow, ...]  # categories in order, then ALL, then NON_ADVERSARIAL (if any)
    adversarial: tuple[str, ...]    # the categories left out of NON_ADVERSARIAL

    def row(self, name: str) -> BreakdownRow | None:
        return next((r for r in self.rows if r.name == name), None)

    def to_dict(self) -> dict[str, dict]:
        return {r.name: {"questions": r.questions, **r.metrics} for r in self.rows}


def metric_breakdown(result: EvaluationResult) -> MetricBreakdown:
    adversarial = tuple(result.info.get("adversarial_categories") or ())
    return breakdown_of(result.tasks, adversarial)


def breakdown_of(tasks: Sequence[TaskResult], adversarial: Sequence[str] = ()) -> MetricBreakdown:
    reporting = [t for t in tasks if not t.excluded and t.metrics]
    rows = [_row(c, [t for t in reporting if t.category == c])
            for c in sorted({t.category for t in reporting})]
    rows.append(_row(ALL, reporting))
    if adversarial:
        rows.append(_row(NON_ADVERSARIAL, [t for t in reporting if t.category not in set(adversarial)]))
    return MetricBreakdown(tuple(rows), tuple(sorted(adversarial)))


def _row(name: str, tasks: Sequence[TaskResult]) -> BreakdownRow:
    values: dict[str, list[float]] = collections.defaultdict(list)
    for t in tasks:
        for metric, value in t.metrics.items():
            values[metric].append(value)
    return BreakdownRow(name, len(tasks), {m: statistics.fmean(v) for m, v in sorted(values.items())})
