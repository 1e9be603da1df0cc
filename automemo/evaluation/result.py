"""What an update-then-retrieve evaluation returns. Consumed by the search loop, the
meta agent's evidence selection, `automemo eval` and the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from automemo.contract import MemoryPayload
from automemo.failures import FailureKind


@dataclass(frozen=True)
class TaskResult:
    """One retrieve task of one evaluation.

    `score` counts toward the mean unless `excluded` (an infrastructure failure that survived its
    retries) or not `counted` (a task the metric excludes, e.g. Mini-Gallery AR in retrieval
    mode). `failure` says whose fault a failed task was: the program's or the agent's on its
    payload score 0 (`error` says why), the scorer's or the infrastructure's are excluded.
    `episode_path` is relative to the evaluation's evidence directory.
    """

    task_id: str
    category: str
    score: float
    metrics: Mapping[str, float] = field(default_factory=dict)
    counted: bool = True
    excluded: bool = False
    error: str | None = None
    payload: MemoryPayload | None = None
    episode_path: str | None = None
    feedback: str = ""
    steps: int = 0
    tokens: int = 0
    wall_s: float = 0.0
    failure: FailureKind | None = None


@dataclass(frozen=True)
class EvaluationResult:
    mean: float
    n_scored: int
    per_category: Mapping[str, float]
    metrics: Mapping[str, float]          # mean of each named metric over scored tasks
    tasks: tuple[TaskResult, ...]
    excluded: tuple[str, ...] = ()        # task ids excluded after infrastructure failures
    update_s: float = 0.0                 # time spent in `update` over all update episodes
    wall_s: float = 0.0
    tokens: int = 0
    errors: Mapping[str, int] = field(default_factory=dict)  # program failures by kind
    info: Mapping[str, Any] = field(default_factory=dict)
    # Deterministic scoring of every task of the split, none excluded: a repeat would return the
    # same number (`Evaluator.exact`); the search then takes uncertainty from the task scores.
    exact: bool = False
    # What the program costs to run (evaluation/cost.py, `ProgramCost.to_dict`): CPU per remembered
    # turn and per recall counted cold, recall p95, index bytes per 1,000 turns; {} if not measured.
    cost: Mapping[str, Any] = field(default_factory=dict)

    def task_scores(self) -> dict[str, float]:
        """The score of every task that counts toward the mean, by task id."""
        return {t.task_id: t.score for t in self.tasks if t.counted and not t.excluded}

    def task_metrics(self, names: Iterable[str]) -> dict[str, dict[str, float]]:
        """Metric -> task id -> value, for each of `names`, over the tasks that have it and were
        not excluded (a guard metric's own exclusions are its absence: LongMemEval's official
        figures skip a question without a user has_answer turn)."""
        return {name: {t.task_id: float(t.metrics[name]) for t in self.tasks
                       if not t.excluded and name in t.metrics} for name in names}
