"""`automemo tree RUN`: the generation tree of a run in the terminal — per node the action that
made it, μ with its number of evaluations n, LCB, and the one-line change summary; failed
generations are shown (marked ✗) and the selected node is marked ★."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from automemo.cli import UserError


def register(sub) -> None:
    p = sub.add_parser("tree", help="show a run's generation tree")
    p.add_argument("run", type=Path, metavar="RUN", help="a run directory, e.g. runs/<run_id>")
    p.set_defaults(func=run)


def open_run(path: Path):
    from automemo.runs import RunDir, RunDirError

    try:
        return RunDir.open(path)
    except RunDirError as exc:
        raise UserError(str(exc)) from None


def node_rows(run) -> dict[int, dict[str, Any]]:
    """Per node: the row plus mean, n, LCB (None for failed or unevaluated nodes), selected."""
    from automemo import configtools
    from automemo.search import policy
    from automemo.search.config import SearchConfig
    from automemo.search.tree import Tree

    tree = Tree.from_rundir(run)
    config = configtools.build(SearchConfig, run.config().get("search", {}))
    final = run.final() or {}
    rows = {}
    stats = tree.stats() if len(tree) else None
    for row in run.nodes():
        node = tree.node(row["id"])
        live = not node.failed and node.n > 0
        rows[node.id] = {
            **row,
            "mean": node.mean if live else None,
            "n": node.n,
            "lcb": policy.lcb(stats.node(node.id), stats, config) if live else None,
            "selected": final.get("node_id") == node.id,
        }
    return rows


def label(row: dict[str, Any]) -> str:
    from rich.markup import escape

    summary = escape(row["summary"] or "")
    if row["status"] == "failed":
        return f"[red]✗ #{row['id']}[/red] [dim]{row['action']} (step {row['step']}) failed: {escape(row['failure'][:100])}[/dim]"
    star = "[bold yellow]★ [/bold yellow]" if row["selected"] else ""
    score = (
        f"μ={row['mean']:.3f} n={row['n']} LCB={row['lcb']:.3f}" if row["mean"] is not None
        else "not evaluated"
    )
    return f"{star}[bold]#{row['id']}[/bold] {row['action']} (step {row['step']}) {score}  {summary}"


def run(args) -> int:
    from automemo import terminal
    from rich.tree import Tree as RichTree

    run_dir = open_run(args.run)
    rows = node_rows(run_dir)
    console = terminal.console(highlight=False)
    if not rows:
        console.print(f"{run_dir.path}: no committed node yet")
        return 0
    children: dict[int | None, list[int]] = {}
    for row in rows.values():
        children.setdefault(row["parent"], []).append(row["id"])
    root_id = children[None][0]
    top = RichTree(label(rows[root_id]))

    def add(branch, node_id: int) -> None:
        for child in sorted(children.get(node_id, [])):
            add(branch.add(label(rows[child])), child)

    add(top, root_id)
    console.print(top)
    final = run_dir.final()
    actions = run_dir.actions()
    failed = sum(r["status"] == "failed" for r in rows.values())
    console.print(
        f"{len(actions) - 1 if actions else 0} steps committed, {len(rows)} nodes ({failed} failed), "
        + (f"selected #{final['node_id']} ({final['stop_reason']})" if final and final.get("node_id") is not None
           else "search not finished")
    )
    return 0
