"""The offline mutator's diagnosis: rules over the parent's evidence, written in the JSON shape
of the LLM analysis (`analysis.FEEDBACK_SCHEMA`) so that `automemo show` and the report read
one kind of diagnosis whichever meta agent ran.
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping

from automemo.contract import Budget
from automemo.meta.context import ParentView, weak_types
from automemo.meta.config import MetaConfig
from automemo.meta.evidence_excerpts import Trajectory, select_evidence

_EMPTY = "(empty payload"


def rule_based_diagnosis(
    parent: ParentView, mutation: Mapping[str, Any], *, seed: int, config: MetaConfig = MetaConfig(),
    budget: Budget = Budget(),
) -> dict[str, Any]:
    """`budget` is the run's retrieval budget: payload sizes are reported as a share of it."""
    evaluation = parent.evaluation
    evidence = select_evidence(evaluation, parent.evidence_dir, seed=seed, config=config)
    content: list[str] = []
    structural: list[str] = []
    if evaluation is None:
        summary = f"node {parent.node_id} has no evaluation yet; nothing to diagnose"
        weakest: list[tuple[str, float]] = []
    else:
        weakest = [(c, evaluation.per_category[c]) for c in weak_types(evaluation.per_category, limit=3)]
        summary = (
            f"mean {evaluation.mean:.3f} over {evaluation.n_scored} scored tasks "
            f"({evidence.n_successes} successes, {evidence.n_failures} failures)"
        )
        if weakest:
            summary += "; weakest categories: " + ", ".join(f"{c} {s:.3f}" for c, s in weakest)
        content += _payload_findings(evaluation.tasks, budget)
        if evaluation.errors:
            total = sum(evaluation.errors.values())
            kinds = ", ".join(f"{k} x{n}" for k, n in sorted(evaluation.errors.items()))
            structural.append(f"the program failed on {total} task(s): {kinds}")
        failing = sorted(weak_types(evaluation.per_category, evaluation.mean))
        if failing:
            structural.append("below-average categories: " + ", ".join(failing))
    if mutation.get("kind") == "transplant":
        structural.append(mutation.get("why") or f"seed {mutation.get('seed')} is transplanted")
    suggestions = [{"priority": 1, "change": mutation["summary"], "rationale": _rationale(mutation)}]
    for i, (category, score) in enumerate(weakest[:2], start=2):
        suggestions.append(
            {
                "priority": i,
                "change": f"improve what retrieve returns for {category} tasks",
                "rationale": f"{category} scores {score:.3f}, among the lowest categories",
            }
        )
    return {
        "summary": summary,
        "memory_relevance": [_relevance(t) for t in evidence.trajectories if _judged(t)],
        "content_issues": content,
        "structural_issues": structural,
        "suggestions": suggestions,
        "mutation": dict(mutation),
        "evidence": [
            {"task_id": t.task_id, "outcome": t.outcome, "score": t.score} for t in evidence.trajectories
        ],
    }


def _payload_findings(tasks, budget: Budget) -> list[str]:
    payloads = [t.payload for t in tasks if t.counted and not t.excluded and t.payload is not None]
    scored = [t for t in tasks if t.counted and not t.excluded]
    out = []
    empty = sum(1 for t in scored if t.payload is None or t.payload.size_chars() == 0)
    if scored and empty:
        out.append(f"{empty} of {len(scored)} payloads are empty")
    if payloads:
        sizes = [p.size_chars() for p in payloads]
        out.append(
            f"payload size: median {int(statistics.median(sizes))} chars, max {max(sizes)} "
            f"({100 * max(sizes) / budget.max_chars:.0f}% of the {budget.max_chars}-char budget); "
            f"mean images {statistics.fmean(len(p.images) for p in payloads):.1f}"
        )
        no_cites = sum(1 for p in payloads if not p.metadata.get("evidence"))
        if no_cites:
            out.append(f"{no_cites} payload(s) cite no evidence ids in metadata.evidence")
    return out


def _judged(t: Trajectory) -> bool:
    # A success with no memory says nothing about the memory: leave it unlabelled.
    return not (t.outcome == "success" and t.payload.startswith(_EMPTY))


def _relevance(t: Trajectory) -> dict[str, str]:
    empty = t.payload.startswith(_EMPTY)
    if t.outcome == "success":
        label, reason = "helpful", f"the task succeeded (score {t.score:.3f}) with this memory"
    elif empty:
        label, reason = "missing", "nothing was retrieved and the task failed"
    elif t.error:
        label, reason = "missing", f"retrieve failed: {t.error[:200]}"
    else:
        label, reason = "irrelevant", f"memory was retrieved but the task failed (score {t.score:.3f})"
    return {"task_id": t.task_id, "label": label, "reason": reason}


def _rationale(mutation: Mapping[str, Any]) -> str:
    if mutation.get("kind") == "transplant":
        return "a different memory design explores the space before tuning it"
    return "a local move in the program's declared parameter space; the search keeps it if it scores higher"
