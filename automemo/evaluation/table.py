"""The results table of `automemo eval`: mean ± std over repeated evaluations of one program.

Each figure is a `Stat` over repeats (sample standard deviation; 0 with a single repeat):
the score, per-category scores, the benchmark's named metrics, tokens, steps per task, wall
time. Rendered with rich for the terminal and as plain JSON for files.
"""

from __future__ import annotations

import collections
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from automemo.evaluation.breakdown import metric_breakdown
from automemo.evaluation.result import EvaluationResult


@dataclass(frozen=True)
class Stat:
    mean: float
    std: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float]) -> Stat:
        values = list(values)
        if not values:
            return cls(0.0, 0.0, 0)
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(statistics.fmean(values), std, len(values))

    def show(self, digits: int = 3) -> str:
        if self.n == 0:
            return "—"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"


@dataclass(frozen=True)
class ResultsTable:
    program: str
    benchmark: str
    split: str
    repeats: int
    score: Stat
    per_category: Mapping[str, Stat]
    metrics: Mapping[str, Stat]
    n_scored: Stat            # tasks that counted, per repeat
    excluded: Stat            # tasks excluded after infrastructure failures, per repeat
    tokens: Stat              # agent/judge tokens, per repeat
    steps: Stat               # mean agent steps per scored task, per repeat
    wall_s: Stat              # wall time of one evaluation
    update_s: Stat            # time in `update` over all update episodes
    errors: Mapping[str, int]  # program failures by kind, summed over repeats
    # The cost figures (automemo.evaluation.cost) over repeats: figure -> Stat; {} if not measured.
    cost: Mapping[str, Stat] = field(default_factory=dict)
    # Every metric per category, over all questions and all but the adversarial ones
    # (automemo.evaluation.breakdown): row -> metric -> Stat; "questions" is the row's size.
    breakdown: Mapping[str, Mapping[str, Stat]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_table(
    results: Sequence[EvaluationResult], *, program: str, benchmark: str, split: str
) -> ResultsTable:
    if not results:
        raise ValueError("a results table needs at least one evaluation")
    categories = sorted({c for r in results for c in r.per_category})
    metric_names = sorted({m for r in results for m in r.metrics})
    errors: collections.Counter[str] = collections.Counter()
    for r in results:
        errors.update(r.errors)
    return ResultsTable(
        program=program,
        benchmark=benchmark,
        split=split,
        repeats=len(results),
        score=Stat.of(r.mean for r in results),
        per_category={
            c: Stat.of(r.per_category[c] for r in results if c in r.per_category) for c in categories
        },
        metrics={m: Stat.of(r.metrics[m] for r in results if m in r.metrics) for m in metric_names},
        n_scored=Stat.of(r.n_scored for r in results),
        excluded=Stat.of(len(r.excluded) for r in results),
        tokens=Stat.of(r.tokens for r in results),
        steps=Stat.of(_mean_steps(r) for r in results),
        wall_s=Stat.of(r.wall_s for r in results),
        update_s=Stat.of(r.update_s for r in results),
        errors=dict(sorted(errors.items())),
        cost={name: Stat.of(float(r.cost[name]) for r in results if r.cost.get(name) is not None)
              for name in COST_FIGURES if any(r.cost.get(name) is not None for r in results)},
        breakdown=_breakdown(results),
    )


COST_FIGURES = {  # the cost figures a table shows, and their labels (docs/cost.md)
    "ingest_cpu_ms_per_turn": "ingest CPU per turn (ms, cold)",
    "recall_cpu_ms": "recall CPU (ms, cold, mean)",
    "recall_p95_ms": "recall wall p95 (ms)",
    "index_bytes_per_1k_turns": "index bytes per 1k turns",
}


def _breakdown(results: Sequence[EvaluationResult]) -> dict[str, dict[str, Stat]]:
    per_repeat = [metric_breakdown(r).to_dict() for r in results]
    rows = list(dict.fromkeys(name for b in per_repeat for name in b))
    return {row: {m: Stat.of(b[row][m] for b in per_repeat if m in b.get(row, {}))
                  for m in dict.fromkeys(m for b in per_repeat for m in b.get(row, {}))}
            for row in rows}


def _mean_steps(result: EvaluationResult) -> float:
    scored = [t.steps for t in result.tasks if t.counted and not t.excluded]
    return statistics.fmean(scored) if scored else 0.0


def render(table: ResultsTable, console: Any = None) -> None:
    """Print the table to `console` (a rich Console; stdout by default)."""
    from rich.table import Table

    if console is None:
        from automemo.terminal import console as make_console

        console = make_console()
    title = (
        f"{table.program} on {table.benchmark} ({table.split} split, "
        f"{table.repeats} repeat{'s' if table.repeats != 1 else ''})"
    )
    out = Table(title=title, show_header=True, header_style="bold")
    out.add_column("figure")
    out.add_column("mean ± std", justify="right")
    out.add_row("[bold]score[/bold]", f"[bold]{table.score.show()}[/bold]")
    for name, stat in table.metrics.items():
        out.add_row(name, stat.show())
    for name, stat in table.per_category.items():
        out.add_row(f"category {name}", stat.show())
    out.add_row("tasks scored", table.n_scored.show(1))
    out.add_row("tasks excluded (infrastructure)", table.excluded.show(1))
    out.add_row("tokens", table.tokens.show(0))
    out.add_row("steps per task", table.steps.show(2))
    out.add_row("update time (s)", table.update_s.show(2))
    out.add_row("wall time (s)", table.wall_s.show(2))
    for name, stat in table.cost.items():
        out.add_row(COST_FIGURES[name], stat.show(0 if name == "index_bytes_per_1k_turns" else 2))
    for kind, count in table.errors.items():
        out.add_row(f"[red]program failures: {kind}[/red]", str(count))
    console.print(out)
    render_breakdown(table, console)


BREAKDOWN_COLUMNS = 4
"""Figures per by-category table: four fit 80 columns beside a long category name."""


def render_breakdown(table: ResultsTable, console: Any) -> None:
    """Every metric per category and over all questions, with and without the adversarial
    category: the figures published benchmarks quote (docs/benchmarks.md says which is which)."""
    from rich.table import Table

    if not table.breakdown:
        return
    metrics = sorted({m for row in table.breakdown.values() for m in row if m != "questions"})
    if not metrics:
        return
    # One repeat: the means alone, so that the table fits a terminal.
    show = (lambda stat: stat.show()) if table.repeats > 1 else (lambda stat: f"{stat.mean:.3f}")
    title = "by category: each figure over the questions that have it" + (
        " (mean ± std over repeats)" if table.repeats > 1 else "")
    # At most BREAKDOWN_COLUMNS figures per table, so that it fits 80 columns (LongMemEval scores 13).
    for start in range(0, len(metrics), BREAKDOWN_COLUMNS):
        shown = metrics[start:start + BREAKDOWN_COLUMNS]
        out = Table(title=title if start == 0 else None, show_header=True, header_style="bold")
        out.add_column("category", no_wrap=True)
        out.add_column("n", justify="right")
        for m in shown:
            out.add_column(m.replace("_", " "), justify="right")  # a header that may wrap: it fits 80 columns
        for name, row in table.breakdown.items():
            size = row.get("questions")
            out.add_row(name, f"{size.mean:.0f}" if size else "—",
                        *[show(row[m]) if m in row else "—" for m in shown])
        console.print(out)
