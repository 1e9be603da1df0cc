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

from automemo.search import halving
from automemo.search.policy import TreeStats
from automemo.search.tree import Tree
from automemo.search.view import RunView


def task_scores(result: Any) -> dict[str, float]:
    """Task id -> score of the tasks that count (as the search's own means are made)."""
    return {t.task_id: float(t.score) for t in result.tasks if t.counted and not t.excluded}


def _types(result: Any) -> dict[str, str]:
    """Task id -> question type (the benchmark's category) of the tasks that count."""
    return {t.task_id: t.category for t in result.tasks if t.counted and not t.excluded}


def _per_type(a: Mapping[str, float], b: Mapping[str, float], types: Mapping[str, str]) -> dict[str, Any]:
    """Question type -> both programs' test means on its shared questions and their paired
    difference: where the discovered program wins and where it loses."""
    out: dict[str, Any] = {}
    for kind in sorted({types[t] for t in set(a) & set(b)}):
        ids = [t for t in sorted(set(a) & set(b)) if types[t] == kind]
        out[kind] = {"a": sum(a[t] for t in ids) / len(ids), "b": sum(b[t] for t in ids) / len(ids),
                     **paired_difference({t: a[t] for t in ids}, {t: b[t] for t in ids})}
    return out


def _mean(values: Mapping[str, float]) -> float | None:
    return sum(values.values()) / len(values) if values else None


def paired_difference(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
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
    search's evaluation was not exact, or nothing was selected). A label-free search's document
    says what it was scored on and what the test split holds (`label_free`)."""
    held = view.confirmation
    if held is None or view.selected_id is None:
        return None
    chosen, bar = view.selected_id, held["bar"]
    tree = Tree.from_rundir(view.run)
    rival = best_candidate(held, tree.stats()) if chosen == bar else None
    roles = {"selection": chosen, "hand_design": bar, **({"best_candidate": rival} if rival is not None else {}),
             **_beside(tree, view, bar, chosen)}
    scores: dict[int, dict[str, float]] = {}
    guard_values: dict[int, dict[str, dict[str, float]]] = {}
    guards = tuple(getattr(evaluator, "guard_metrics", ()) or ())
    types: dict[str, str] = {}
    means: dict[int, float] = {}
    programs: dict[str, Any] = {}
    for role, node_id in roles.items():
        if node_id not in scores:  # the kept hand design is the selection: scored once
            result = evaluator.evaluate(view.run.program_source(node_id), split="test")
            scores[node_id], means[node_id] = task_scores(result), float(result.mean)
            guard_values[node_id] = result.task_metrics(guards)
            types.update(_types(result))
        programs[role] = {"node_id": node_id, "summary": view.node(node_id).summary,
                          "validation": view.node(node_id).mean, "test": means[node_id]}
    out: dict[str, Any] = {"kept_hand_design": chosen == bar, "programs": programs,
                           "questions": len(scores[chosen]), "bar": _bar_label(tree, view, bar)}
    for role in ("discovered", "best_hand_design"):  # what the selection gained over each, paired
        if role in roles:
            out[f"selection_vs_{role}"] = paired_difference(scores[chosen], scores[roles[role]])
    label_free = getattr(getattr(evaluator, "benchmark", None), "label_free", None)
    if label_free is not None:
        out["label_free"] = label_free.to_dict()
    # "per_type": by question type, "a" is the selection (or, when the hand design was kept, the
    # best generated candidate) and "b" the hand design, paired as the overall difference is.
    compared = chosen if chosen != bar else rival
    if guards and compared is not None:
        # Each guard metric of both programs on test, paired: what a user judges them by besides the score.
        out["guards"] = {g: {"a": _mean(guard_values[compared][g]), "b": _mean(guard_values[bar][g]),
                             **paired_difference(guard_values[compared][g], guard_values[bar][g])}
                         for g in guards}
    if chosen != bar:
        out["selection_vs_hand_design"] = paired_difference(scores[chosen], scores[bar])
        out["per_type"] = _per_type(scores[chosen], scores[bar], types)
    elif rival is not None:
        out["best_candidate_vs_hand_design"] = paired_difference(scores[rival], scores[bar])
        out["per_type"] = _per_type(scores[rival], scores[bar], types)
    return out


def _discovered_node(tree: Tree, view: RunView) -> int | None:
    """The node holding the discovered default: the root when the run was rooted at it, or the
    node the sweep transplanted it as (`Node.action`)."""
    from automemo.programs import DISCOVERED

    if (view.run.config().get("search") or {}).get("root") == DISCOVERED:
        return tree.root.id
    return next((n.id for n in tree.nodes() if n.action == "discovered" and not n.failed and n.n > 0), None)


def _beside(tree: Tree, view: RunView, bar: int, chosen: int) -> dict[str, int]:
    """The programs a verdict shows beside the selection and its bar (docs/label-free.md, "The
    discovered default"): the discovered default, and the best hand design by validation
    μ when the bar is not it (a search held to its root); each only when it is another node."""
    out: dict[str, int] = {}
    found = _discovered_node(tree, view)
    if found is not None and found not in (bar, chosen):
        out["discovered"] = found
    stats = tree.stats()
    designs = [v for v in stats.nodes if v.reference and v.n > 0 and not v.failed]
    if stats.held_to_root and designs:
        best = max(designs, key=lambda v: (v.mean, -v.id)).id
        if best not in (bar, chosen):
            out["best_hand_design"] = best
    return out


def _bar_label(tree: Tree, view: RunView, bar: int) -> str:
    """What the selection was held to, in words: the root (and which), or the best hand design."""
    if not tree.held_to_root:
        return "best hand design"
    return "root (the discovered default)" if _discovered_node(tree, view) == bar else "root"


def best_candidate(confirmation: Mapping[str, Any], stats: TreeStats) -> int | None:
    """The confirmation's best generated candidate: of the candidates never dropped, the one
    with the best paired mean on the questions they all were asked (`halving.leader_among`).
    After a race that ran to its end, the one left; when the budget ended it mid-race, several
    still stand, listed in the order they entered it (by their bound), and the first of them is
    not the leader then; with exact evaluation every candidate was asked every question, and
    it is the best by μ. None without candidates."""
    standing = [stats.node(c["node_id"]) for c in confirmation["candidates"] if c.get("dropped_in") is None]
    return halving.leader_among(standing).id if standing else None


def verdict(doc: Mapping[str, Any]) -> str:
    """The comparison's conclusion in one phrase (the terminal's last line and the report's)."""
    bar = doc.get("bar", "best hand design")
    if doc["kept_hand_design"]:
        if bar != "best hand design":
            return (f"the search kept its {bar}: no candidate won on the scored questions by a paired SE "
                    f"without losing on a guard")
        return "the search kept the best hand design: no generated program cleared its bound" + (
            " (the pseudo-questions did not separate one from it)" if doc.get("label_free") else "")
    d = doc["selection_vs_hand_design"]
    if d["difference"] - d["se"] > 0:
        return f"the selected program beats the {bar}"
    if d["difference"] > 0:
        return f"the selected program does not beat the {bar} by more than one paired SE"
    return f"the selected program does not beat the {bar}"


def _test_questions(doc: Mapping[str, Any]) -> str:
    """What the test split's questions were, said once: a label-free search's are labelled
    questions it never read (or pseudo-questions of the held-out conversations, without any)."""
    free = doc.get("label_free")
    if not free:
        return f"{doc['questions']} questions the search never saw"
    scored = f"the search read no labelled question: it was scored on {free['train_questions']} pseudo-questions"
    if free.get("test_labelled"):
        return f"{doc['questions']} labelled questions; {scored}"
    return (f"{doc['questions']} pseudo-questions of conversations the search never saw, as the data holds no "
            f"labelled question; {scored}")


def sentences(doc: Mapping[str, Any]) -> list[str]:
    """The comparison in plain words (the last lines of `automemo search` and the quickstart)."""
    p = doc["programs"]
    sel, bar = p["selection"], p["hand_design"]
    name = lambda x: f"#{x['node_id']} ({x['summary'][:70]})"  # noqa: E731
    held_to = doc.get("bar", "best hand design")
    lines = [f"Held-out test split ({_test_questions(doc)}):"]
    if not doc["kept_hand_design"]:
        d = doc["selection_vs_hand_design"]
        short = "hand design" if held_to == "best hand design" else "root"
        lines += [f"  selection {name(sel)}: {sel['test']:.3f} (validation {sel['validation']:.3f})",
                  f"  {held_to} {name(bar)}: {bar['test']:.3f} (validation {bar['validation']:.3f})",
                  f"  selection − {short}: {d['difference']:+.3f} ± {d['se']:.3f} (paired SE): {verdict(doc)}."]
        return lines + _beside_lines(doc, "selection") + _guard_lines(doc, "selection")
    why = ("no generated program cleared its bound: the pseudo-questions did not separate one from it"
           if doc.get("label_free") else "no generated program cleared its bound")
    if held_to != "best hand design":
        why = "no candidate won on the scored questions by a paired SE without losing on a guard"
    lines.append(f"  the search kept the {held_to} {name(bar)}: {bar['test']:.3f} "
                 f"(validation {bar['validation']:.3f}); {why}.")
    lines += _beside_lines(doc, "the kept program")
    best = p.get("best_candidate")
    if best is not None:
        d = doc["best_candidate_vs_hand_design"]
        lines.append(f"  the best generated candidate {name(best)} scores {best['test']:.3f}: "
                     f"{d['difference']:+.3f} ± {d['se']:.3f} (paired SE) against it.")
        lines += _guard_lines(doc, "best candidate")
    return lines


def _beside_lines(doc: Mapping[str, Any], who: str) -> list[str]:
    """The discovered default and the best hand design, when neither is the selection or its bar."""
    out = []
    for role, label in (("discovered", "the discovered default"), ("best_hand_design", "the best hand design")):
        x, d = doc["programs"].get(role), doc.get(f"selection_vs_{role}")
        if x is None or d is None:
            continue
        out.append(f"  {label} #{x['node_id']} ({x['summary'][:60]}): {x['test']:.3f} (validation "
                   f"{x['validation']:.3f}); {who} − it: {d['difference']:+.3f} ± {d['se']:.3f} (paired SE)")
    return out


def _guard_lines(doc: Mapping[str, Any], who: str) -> list[str]:
    """One line per guard metric: both programs on test and their paired difference."""
    out = []
    for metric, g in (doc.get("guards") or {}).items():
        if g.get("a") is None or g.get("b") is None:
            continue
        out.append(f"  guard {metric}: {who} {g['a']:.3f}, hand design {g['b']:.3f} "
                   f"({g['difference']:+.3f} ± {g['se']:.3f}, paired SE over {g['tasks']} questions)")
    return out
