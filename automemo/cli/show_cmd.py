"""`automemo show RUN NODE`: one node of a run — its diagnosis, the unified diff against its
parent, its exam attempts, per-task scores of its latest evaluation and sample payloads."""

from __future__ import annotations

import json
from pathlib import Path

from automemo.cli import UserError

SAMPLE_PAYLOADS = 3      # payloads shown; the rest are in the evidence folder
PAYLOAD_CHARS = 600      # each payload's text is cut to this on screen


def register(sub) -> None:
    p = sub.add_parser("show", help="show one node of a run: diagnosis, diff, scores, payloads")
    p.add_argument("run", type=Path, metavar="RUN", help="a run directory, e.g. runs/<run_id>")
    p.add_argument("node", type=int, metavar="NODE", help="node id (see `automemo tree RUN`)")
    p.set_defaults(func=run)


def run(args) -> int:
    from automemo import terminal
    from rich.markup import escape
    from rich.syntax import Syntax
    from rich.table import Table

    from automemo.cli.tree_cmd import load_view
    from automemo.report.node_page import diagnosis_view, transplant_of
    from automemo.evaluation.evidence import read_evidence
    from automemo.search.meta_context import unified_diff
    from automemo.search.view import confirmation_lines

    view = load_view(args.run)
    run_dir = view.run
    try:
        node = view.node(args.node)
    except KeyError as exc:
        raise UserError(str(exc).strip("'\"")) from None
    console = terminal.console(highlight=False)
    console.rule(f"node #{node.id}")
    score = view.score_text(node)
    console.print(f"status {node.status}  action {node.action} (step {node.step})  parent "
                  f"{node.parent if node.parent is not None else '-'}  {score}"
                  + ("  [bold yellow]★ selected[/bold yellow]" if node.selected else ""))
    console.print(f"summary: {escape(node.summary)}")
    if node.evaluated:
        console.print(f"uncertainty: {view.uncertainty_rule}")
    if node.stopped:
        console.print(f"[yellow]{escape(node.stopped)}[/yellow]")
    held = view.confirmation
    if held is not None and (node.selected or node.id == held["bar"]
                             or node.id in {c["node_id"] for c in held["candidates"]}):
        for line in confirmation_lines(held):  # this node was part of the final choice
            console.print(escape(line))
    if node.failure:
        console.print(f"[red]failure:[/red] {escape(node.failure)}")

    diagnosis = run_dir.node_json(node.id, "diagnosis.json")
    console.rule("diagnosis")
    if diagnosis:
        for line in diagnosis_lines(diagnosis_view(diagnosis)):
            console.print(escape(line))
    else:
        console.print("(the root has none)")

    transplant = transplant_of(diagnosis)
    console.rule("diff against the parent")
    if node.parent is None:
        console.print("(the root has no parent)")
    elif not node.program_path:
        console.print("(no program was produced)")
    elif transplant is not None and transplant.discovered:
        console.print("the discovered default (discovered/discovered.py), swept as a candidate; not derived from "
                      "the parent's code")
    elif transplant is not None:
        # A transplant replaces the parent with a seed: a diff between two unrelated files is noise.
        console.print(escape(f"transplanted seed {transplant.seed} ({run_dir.path / transplant.seed_path}), "
                             f"not derived from the parent's code"))
    else:
        diff = unified_diff(run_dir.program_source(node.parent), run_dir.program_source(node.id),
                            f"node {node.parent}", f"node {node.id}")
        console.print(Syntax(diff, "diff", word_wrap=True) if diff else "(identical to the parent)")

    exam = run_dir.node_json(node.id, "exam.json")
    if exam:
        console.rule("quick exam")
        for attempt in exam:
            report = attempt["report"]
            verdict = "[green]passed[/green]" if attempt["passed"] else f"[red]failed[/red] {escape(str(report.get('failed_check')))}"
            console.print(f"attempt {attempt['attempt']}: {verdict} {escape(str(report.get('error', ''))[:200])}")

    evaluations = view.evaluations_of(node.id)
    if not evaluations:
        return 0
    latest = evaluations[-1]
    console.rule(f"evaluation k={latest.k} (of {len(evaluations)}): mean {latest.mean:.3f}")
    evidence = read_evidence(run_dir.path / latest.evidence_dir)
    table = Table("task", "category", "score", "metrics", "error")
    for task in evidence.result.tasks:
        metrics = " ".join(f"{k}={v:.2f}" for k, v in sorted(task.metrics.items()))
        table.add_row(task.task_id, task.category, f"{task.score:.3f}", metrics, escape(task.error or ""))
    console.print(table)
    console.rule("sample payloads")
    shown = [t for t in evidence.result.tasks if t.payload is not None][:SAMPLE_PAYLOADS]
    for task in shown:
        text = task.payload.text
        cut = text[:PAYLOAD_CHARS] + ("…" if len(text) > PAYLOAD_CHARS else "")
        console.print(f"[bold]{task.task_id}[/bold] ({len(text)} chars, {len(task.payload.images)} images, "
                      f"metadata {escape(json.dumps(dict(task.payload.metadata))[:200])})")
        console.print(escape(cut) or "(empty text)")
    return 0


def diagnosis_lines(d) -> list[str]:
    """A `DiagnosisView` as lines a person reads: the move and why, then what was wrong, what to
    change (by priority) and how the parent's memory served each sampled task."""
    lines = []
    if d.move:
        lines.append(f"move: {d.move}" + (f" ({d.move_why})" if d.move_why else ""))
    if d.repair_of:
        lines.append(f"repair after the failed check: {d.repair_of}")
    if d.summary:
        lines.append(f"summary: {d.summary}")
    lines += [f"  - {issue}" for issue in d.issues]
    if d.suggestions:
        lines.append("suggestions:")
        lines += [f"  {s.priority}. {s.change}" + (f" ({s.rationale})" if s.rationale else "")
                  for s in sorted(d.suggestions, key=lambda s: s.priority)]
    if d.relevance:
        lines.append("memory per sampled task:")
        lines += [f"  {r.task_id}: {r.label}" + (f" ({r.reason})" if r.reason else "") for r in d.relevance]
    lines.append(f"meta LLM calls: {d.calls}" if d.calls else "meta LLM calls: none (offline mutator)")
    return lines
