"""What the report's overview page shows, gathered from a run's `RunView`.

Works on a run in any state: just created (no node yet), in progress (nodes without evaluations,
no final.json), finished. Scores, LCB, the selection and spend all come from the view, so the
report, `automemo tree` and the final selection can never disagree on a number.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Mapping

from automemo.report.charts import ScorePoint, StepAction
from automemo.report.live import LiveStatus, live_status
from automemo.runs import RunDir
from automemo.search.heldout import verdict
from automemo.search.view import NodeView, RoleSpend, RunView


@dataclass(frozen=True)
class RunOverview:
    run_id: str
    benchmark: str
    spend: tuple[RoleSpend, ...]
    caps: Mapping[str, Any]          # max_total_tokens / max_usd as configured (None = no cap)
    retrieval_budget: str            # e.g. "50,000 chars · 2 images"
    last_step: int | None            # last committed step, None before the root's evaluation
    planned_steps: int
    finished: bool
    running: bool                    # a live search is working on it (else unfinished = stopped)
    run_path: str                    # for the resume command a stopped run's report shows
    stop_reason: str
    selected_id: int | None          # final.json's node, or the current LCB leader
    total_evaluations: int
    c_e: float
    uncertainty_rule: str            # how each node's ± was computed (RunView.uncertainty_rule)
    metric: str | None               # what μ is the mean of (RunView.metric)
    lead: Mapping[str, Any] | None   # exact evaluation: the selection's paired lead (RunView.lead)
    config_json: str
    generated_at: str
    live: LiveStatus | None = None   # set while a search is running: the page follows it
    # Exact evaluation: the final confirmation against the best hand design (RunView.confirmation)
    confirmation: Mapping[str, Any] | None = None
    # Validation questions asked, the budget and sample size (RunView.questions), and the nodes
    # stopped early with why
    questions: Mapping[str, Any] | None = None
    stopped: tuple[tuple[int, str], ...] = ()
    # search.heldout_test: final.json's "heldout_test" (the selection and the best hand design on
    # the test split, paired, by question type) with its "verdict" phrase; None until it exists
    heldout: Mapping[str, Any] | None = None

    @property
    def total_tokens(self) -> int:
        return sum(r.prompt_tokens + r.completion_tokens for r in self.spend)

    @property
    def total_usd(self) -> float:
        return sum(r.usd for r in self.spend)


@dataclass(frozen=True)
class RunData:
    view: RunView
    overview: RunOverview
    points: tuple[ScorePoint, ...]
    actions: tuple[StepAction, ...]

    @property
    def nodes(self) -> tuple[NodeView, ...]:
        return self.view.nodes

    def node(self, node_id: int) -> NodeView:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id} in the run")


def gather_run(run: RunDir, *, live: bool = False) -> RunData:
    """`live`: the caller is the running search itself (its report follows the run)."""
    view = RunView.load(run)
    config = view.config
    points = tuple(
        ScorePoint(step=e.step, node_id=e.node_id, k=e.k, score=e.mean)
        for e in view.evaluations
        if e.mean is not None
    )
    running = view.final is None and (live or view.run.is_running())
    overview = RunOverview(
        run_id=run.run_id,
        benchmark=_benchmark_name(config),
        spend=view.spend,
        caps={k: (config.get("llm") or {}).get(k) for k in ("max_total_tokens", "max_usd")},
        retrieval_budget=_budget_text(config),
        last_step=view.steps_done if view.actions else None,
        planned_steps=view.search.steps,
        finished=view.final is not None,
        running=running,
        run_path=str(view.run.path),
        stop_reason=(view.final or {}).get("stop_reason", ""),
        selected_id=view.selected_id,
        total_evaluations=view.total_evaluations,
        c_e=view.search.c_e,
        uncertainty_rule=view.uncertainty_rule,
        metric=view.metric,
        lead=view.lead,
        confirmation=view.confirmation,
        questions=view.questions,
        stopped=tuple((n.id, n.stopped) for n in view.nodes if n.stopped),
        heldout=_heldout(view.final),
        config_json=json.dumps(config, indent=2, sort_keys=True),
        generated_at=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        live=live_status(view, points) if running else None,
    )
    steps = tuple(
        StepAction(step=a.step, kind=a.kind, outcome=a.outcome, node_id=a.node_id,
                   child_id=a.child_id)
        for a in view.actions
    )
    return RunData(view, overview, points, steps)


def _heldout(final: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    doc = (final or {}).get("heldout_test")
    return {**doc, "verdict": verdict(doc)} if doc else None


def _benchmark_name(config: Mapping[str, Any]) -> str:
    bench = config.get("benchmark")
    if isinstance(bench, Mapping):
        return str(bench.get("name") or "—")
    return str(bench or "—")


def _budget_text(config: Mapping[str, Any]) -> str:
    """The retrieval budget wherever the run config keeps it (evaluation.budget or budget)."""
    for section in (config.get("evaluation") or {}, config):
        budget = section.get("budget") if isinstance(section, Mapping) else None
        if isinstance(budget, Mapping) and "max_chars" in budget:
            return f"{budget['max_chars']:,} chars · {budget.get('max_images', '?')} images"
    return "—"
