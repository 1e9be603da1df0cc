"""`automemo tree RUN`: the generation tree of a run in the terminal — per node the action that
made it, μ with its number of evaluations n, the uncertainty ± the policy used, LCB, and the
one-line change summary, then its cost figures (CPU per remembered turn and per recall counted
cold, recall p95, index size; docs/cost.md; marked "over bounds" when outside the run's cost
bounds); failed generations are shown (marked ✗) and the selected node is marked ★. Under the
tree: the cost bounds the selection was held to, and the cheapest program within one standard
error of the best."""

from __future__ import annotations

import sys
from pathlib import Path



def register(sub) -> None:
    p = sub.add_parser("tree", help="show a run's generation tree")
    p.add_argument("run", type=Path, metavar="RUN", help="a run directory, e.g. runs/<run_id>")
    p.set_defaults(func=run)


def load_view(path: Path):
    """The run's `RunView`; a `RunDirError` (a data error: exit 2) names what is wrong with the folder."""
    from automemo.runs import RunDir
    from automemo.search.view import RunView

    return RunView.load(RunDir.open(path))


# Piped output keeps every character (a log is read with grep, not by eye); a terminal line
# keeps the first characters of a failure, and rich fits the rest to the window.
_TERMINAL_FAILURE_CHARS = 100
_PIPED_WIDTH = 1_000_000


def label(node, view, *, cut: bool = True) -> str:
    from rich.markup import escape

    summary = escape(node.summary)
    if node.failed:
        failure = node.failure[:_TERMINAL_FAILURE_CHARS] if cut else node.failure
        return (f"[red]✗ #{node.id}[/red] [dim]{node.action} (step {node.step}) failed: "
                f"{escape(failure)}[/dim]")
    from automemo.evaluation.cost import cost_line

    star = "[bold yellow]★ [/bold yellow]" if node.selected else ""
    cost = f"\n[dim]{cost_line(node.cost)}[/dim]" if node.cost else ""
    over = " [red](over bounds)[/red]" if node.outside else ""
    return (f"{star}[bold]#{node.id}[/bold] {node.action} (step {node.step}) {view.score_text(node)}{over}  "
            f"{summary}{cost}")


def run(args) -> int:
    from automemo import terminal
    from rich.tree import Tree as RichTree

    view = load_view(args.run)
    piped = not terminal.is_terminal(sys.stdout)
    # Without a terminal there is no width to fit: a tree line is never cut or wrapped.
    console = terminal.console(highlight=False, **({"width": _PIPED_WIDTH} if piped else {}))
    if not view.nodes:
        console.print(f"{view.run.path}: no committed node yet")
        return 0
    root = view.children(None)[0]
    top = RichTree(label(root, view, cut=not piped))

    def add(branch, node_id: int) -> None:
        for child in view.children(node_id):
            add(branch.add(label(child, view, cut=not piped)), child.id)

    add(top, root.id)
    console.print(top)
    failed = sum(n.failed for n in view.nodes)
    steps = view.steps_done
    final = view.final
    if final and final.get("node_id") is not None:
        state = f"selected #{final['node_id']} ({final['stop_reason']})"
    elif view.run.is_running():
        state = "search in progress"
    else:
        state = f"search stopped before finishing; continue with: automemo search --resume {view.run.path}"
    console.print(f"{steps} steps committed, {len(view.nodes)} nodes ({failed} failed), {state}")
    if view.metric:
        console.print(f"ranked by: {view.metric} (μ is its mean over the validation questions)")
    console.print(f"uncertainty: {view.uncertainty_rule}")
    if view.questions_line():
        console.print(view.questions_line())
    for node in view.nodes:
        if node.stopped:
            console.print(f"#{node.id} {node.stopped}")
    if view.lead is not None:
        lead = view.lead
        console.print(f"selection vs #{lead['over']} on {lead['tasks']} shared tasks: "
                      f"{lead['difference']:+.3f} ± {lead['se']:.3f} (paired SE)")
    from rich.markup import escape

    if view.confirmation is not None:
        from automemo.search.view import confirmation_lines

        for line in confirmation_lines(view.confirmation):
            console.print(escape(line))
    from automemo.search.view import bounds_lines

    for line in bounds_lines(view.bounds):
        console.print(escape(line))
    if view.front.sentence():
        console.print(escape(f"cost front: {view.front.sentence()}"))
    return 0
