"""What the report's overview page shows, gathered from a run directory through `RunDir`.

Works on a run in any state: just created (no node yet), in progress (nodes without evaluations,
no final.json), finished. The LCB of every node is recomputed with the search's own policy
functions, so the report and the final selection can never disagree on a formula.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Mapping

from automemo.llm.config import ROLES
from automemo.report.charts import ScorePoint, StepAction
from automemo.runs import RunDir
from automemo.search import policy
from automemo.search.config import SearchConfig
from automemo.search.tree import Tree


@dataclass(frozen=True)
class NodeCard:
    """One node as the tree and the node list show it."""

    id: int
    parent: int | None
    step: int
    action: str                  # "root" | "generate"
    status: str                  # "evaluated" | "failed"
    summary: str
    scores: tuple[float, ...]    # one mean score per full evaluation
    lcb: float | None            # None while the node has no evaluation (or it failed)
    failure: str = ""
    repair_attempts: int = 0
    parent_snapshot: float | None = None   # s_par: the parent's μ when this node was generated
    selected: bool = False

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None

    @property
    def failed(self) -> bool:
        return self.status == "failed"


@dataclass(frozen=True)
class RoleSpend:
    role: str
    model: str                   # "" when the role is not configured
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0


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
    config_json: str
    generated_at: str

    @property
    def total_tokens(self) -> int:
        return sum(r.prompt_tokens + r.completion_tokens for r in self.spend)

    @property
    def total_usd(self) -> float:
        return sum(r.usd for r in self.spend)


@dataclass(frozen=True)
class RunData:
    overview: RunOverview
    nodes: tuple[NodeCard, ...]
    points: tuple[ScorePoint, ...]
    actions: tuple[StepAction, ...]

    def node(self, node_id: int) -> NodeCard:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id} in the run")


def gather_run(run: RunDir) -> RunData:
    config = run.config()
    search = config.get("search") or {}
    c_e = float(search.get("c_e", SearchConfig.c_e))
    rows = run.nodes()
    evaluations = run.evaluations()
    actions = run.actions()
    final = run.final()

    tree = Tree.from_rundir(run)
    lcbs = _lcbs(tree, c_e)
    if final is not None:
        selected = final.get("node_id")
    else:
        selected = max(lcbs, key=lambda i: (lcbs[i], -i)) if lcbs else None

    cards = tuple(
        NodeCard(
            id=row["id"],
            parent=row["parent"],
            step=row["step"] or 0,
            action=row["action"] or "generate",
            status=row["status"] or "evaluated",
            summary=row["summary"] or "",
            scores=tree.node(row["id"]).scores,
            lcb=lcbs.get(row["id"]),
            failure=row["failure"] or "",
            repair_attempts=row["repair_attempts"] or 0,
            parent_snapshot=row["parent_snapshot"],
            selected=row["id"] == selected,
        )
        for row in rows
    )
    overview = RunOverview(
        run_id=run.run_id,
        benchmark=_benchmark_name(config),
        spend=_spend(config, run.ledger_totals()),
        caps={k: (config.get("llm") or {}).get(k) for k in ("max_total_tokens", "max_usd")},
        retrieval_budget=_budget_text(config),
        last_step=run.last_step(),
        planned_steps=int(search.get("steps", SearchConfig.steps)),
        finished=final is not None,
        running=final is None and run.is_running(),
        run_path=str(run.path),
        stop_reason=(final or {}).get("stop_reason", ""),
        selected_id=selected,
        total_evaluations=tree.total_evaluations,
        c_e=c_e,
        config_json=json.dumps(config, indent=2, sort_keys=True),
        generated_at=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    )
    points = tuple(
        ScorePoint(step=e["step"], node_id=e["node_id"], k=e["k"], score=e["mean"])
        for e in evaluations
        if e["mean"] is not None
    )
    steps = tuple(
        StepAction(
            step=a["step"],
            kind=a["kind"] or "",
            outcome=a["outcome"] or "",
            node_id=a["node_id"],
            child_id=a["child_id"],
        )
        for a in actions
    )
    return RunData(overview, cards, points, steps)


def _lcbs(tree: Tree, c_e: float) -> dict[int, float]:
    """LCB of every evaluated node with the policy's own formula; empty before any evaluation."""
    if tree.total_evaluations == 0:
        return {}
    stats = tree.stats()
    config = SearchConfig(c_e=c_e)
    return {v.id: policy.lcb(v, stats, config) for v in stats.nodes if v.n > 0}


def _benchmark_name(config: Mapping[str, Any]) -> str:
    bench = config.get("benchmark")
    if isinstance(bench, Mapping):
        return str(bench.get("name") or "—")
    return str(bench or "—")


def _spend(config: Mapping[str, Any], totals: Mapping[str, Mapping[str, Any]]) -> tuple[RoleSpend, ...]:
    llm = config.get("llm") or {}
    roles = list(ROLES) + sorted(set(totals) - set(ROLES))
    out = []
    for role in roles:
        t = totals.get(role, {})
        model = (llm.get(role) or {}).get("model", "") if isinstance(llm.get(role), Mapping) else ""
        out.append(
            RoleSpend(
                role=role,
                model=model or "",
                calls=int(t.get("calls", 0)),
                prompt_tokens=int(t.get("prompt_tokens", 0)),
                completion_tokens=int(t.get("completion_tokens", 0)),
                usd=float(t.get("usd", 0.0)),
            )
        )
    return tuple(out)


def _budget_text(config: Mapping[str, Any]) -> str:
    """The retrieval budget wherever the run config keeps it (evaluation.budget or budget)."""
    for section in (config.get("evaluation") or {}, config):
        budget = section.get("budget") if isinstance(section, Mapping) else None
        if isinstance(budget, Mapping) and "max_chars" in budget:
            return f"{budget['max_chars']:,} chars · {budget.get('max_images', '?')} images"
    return "—"
