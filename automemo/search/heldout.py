"""After the search (`search.heldout_test`): the selection and the best hand design scored on the
held-out test split, paired question by question, and said in plain words.

The search never sees the test split; this is what a newcomer (the quickstart) and a user deciding
whether to deploy the selection want to know: did discovery beat the best hand-written design on
conversations it never saw? When the search kept the hand design, the best generated candidate of
the final confirmation is scored too, so the lines say what choosing it would have given.
The result goes into final.json under "heldout_test".
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from automemo.search.view import RunView


def _scores(result: Any) -> dict[str, float]:
    """Task id -> score of the tasks that count (as the search's own means are made)."""
    return {t.task_id: float(t.score) for t in result.tasks if t.counted and not t.excluded}


def _paired(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
    shared = sorted(set(a) & set(b))
    diffs = [a[t] - b[t] for t in shared]
    if not diffs:
        return {"difference": 0.0, "se": 0.0, "tasks": 0}
    mean = sum(diffs) / len(diffs)
    var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1) if len(diffs) > 1 else 0.0
    return {"difference": mean, "se": math.sqrt(var / len(diffs)), "tasks": len(diffs)}


def compare_on_test(view: RunView, evaluator: Any) -> dict[str, Any] | None:
    """Score the selection, the best hand design it was held to and (when the hand design was
    kept) the best generated candidate on the test split. None without a confirmation (the
    search's evaluation was not exact, or nothing was selected)."""
    held = view.confirmation
    if held is None or view.selected_id is None:
        return None
    chosen, bar = view.selected_id, held["bar"]
    # The best candidate: with a race, the one that was never dropped (its winner).
    standing = [c for c in held["candidates"] if c.get("dropped_in") is None]
    rival = standing[0]["node_id"] if chosen == bar and standing else None
    roles = {"selection": chosen, "hand_design": bar, **({"best_candidate": rival} if rival is not None else {})}
    scores: dict[int, dict[str, float]] = {}
    means: dict[int, float] = {}
    programs: dict[str, Any] = {}
    for role, node_id in roles.items():
        if node_id not in scores:  # the kept hand design is the selection: scored once
            result = evaluator.evaluate(view.run.program_source(node_id), split="test")
            scores[node_id], means[node_id] = _scores(result), float(result.mean)
        programs[role] = {"node_id": node_id, "summary": view.node(node_id).summary,
                          "validation": view.node(node_id).mean, "test": means[node_id]}
    out: dict[str, Any] = {"kept_hand_design": chosen == bar, "programs": programs,
                           "questions": len(scores[chosen])}
    if chosen != bar:
        out["selection_vs_hand_design"] = _paired(scores[chosen], scores[bar])
    elif rival is not None:
        out["best_candidate_vs_hand_design"] = _paired(scores[rival], scores[bar])
    return out


def sentences(doc: Mapping[str, Any]) -> list[str]:
    """The comparison in plain words (the last lines of `automemo search` and the quickstart)."""
    p = doc["programs"]
    sel, bar = p["selection"], p["hand_design"]
    name = lambda x: f"#{x['node_id']} ({x['summary'][:70]})"  # noqa: E731
    lines = [f"Held-out test split ({doc['questions']} questions the search never saw):"]
    if not doc["kept_hand_design"]:
        d = doc["selection_vs_hand_design"]
        verdict = ("the discovered program beats the best hand design" if d["difference"] - d["se"] > 0 else
                   "the discovered program does not beat the best hand design by more than one paired SE"
                   if d["difference"] > 0 else "the discovered program does not beat the best hand design")
        lines += [f"  selection {name(sel)}: {sel['test']:.3f} (validation {sel['validation']:.3f})",
                  f"  best hand design {name(bar)}: {bar['test']:.3f} (validation {bar['validation']:.3f})",
                  f"  selection − hand design: {d['difference']:+.3f} ± {d['se']:.3f} (paired SE): {verdict}."]
        return lines
    lines.append(f"  the search kept the best hand design {name(bar)}: {bar['test']:.3f} "
                 f"(validation {bar['validation']:.3f}); no generated program cleared its bound.")
    best = p.get("best_candidate")
    if best is not None:
        d = doc["best_candidate_vs_hand_design"]
        lines.append(f"  the best generated candidate {name(best)} scores {best['test']:.3f}: "
                     f"{d['difference']:+.3f} ± {d['se']:.3f} (paired SE) against it.")
    return lines
