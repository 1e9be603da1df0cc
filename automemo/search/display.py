"""The search's terminal display: one line per step as it starts and ends (step, action, node,
scores, spend). Plain lines rather than a live panel, because the evaluator draws its own
transient progress bars in between and rich allows one live display at a time."""

from __future__ import annotations

from typing import Any, Mapping


class SearchDisplay:
    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self._console = None
        if not quiet:
            from automemo.terminal import console

            self._console = console(stderr=True, highlight=False)

    def _print(self, text: str) -> None:
        if self._console is not None:
            self._console.print(text)

    def started(self, run_path: str, steps: int, resumed_after: int | None) -> None:
        if resumed_after is None:
            self._print(f"[bold]search[/bold] {run_path}: {steps} steps after the root's evaluation")
        else:
            self._print(
                f"[bold]search[/bold] {run_path}: resuming after committed step {resumed_after}"
            )

    def step_started(self, step: int, steps: int, what: str) -> None:
        self._print(f"[cyan]{_label(step, steps)}[/cyan] {what} …")

    def step_done(self, step: int, steps: int, outcome: str, best: Mapping[str, Any] | None,
                  spend: Mapping[str, float], questions: Mapping[str, Any] | None = None) -> None:
        rule = "LCB" if not best or best.get("selection", "lcb") == "lcb" else "mean"
        best_text = (
            f"best {rule} #{best['node_id']} μ={best['mean']:.3f} n={best['n']} LCB={best['lcb']:.3f}"
            + (f" (±{best['uncertainty']:.3f})" if best.get("uncertainty") is not None else "")
            if best else "no evaluated node"
        )
        if best and best.get("questions") is not None:
            best_text += f" on {best['questions']} questions"
        asked = ""
        if questions and questions.get("budget"):
            asked = f"{questions['scored']}/{questions['budget']} questions | "
        self._print(
            f"[cyan]{_label(step, steps)}[/cyan] {outcome} | {best_text} | {asked}"
            f"{int(spend.get('tokens', 0))} tokens ${spend.get('usd', 0.0):.4f}"
        )

    def stopped(self, reason: str) -> None:
        self._print(f"[yellow]stopped:[/yellow] {reason}")

    def finished(self, final: Mapping[str, Any]) -> None:
        if final.get("node_id") is None:
            self._print("[red]no program was evaluated; nothing to select[/red]")
            return
        self._print(
            f"[bold green]selected node {final['node_id']}[/bold green] μ={final['mean']:.3f} "
            f"n={final['n']} LCB={final['lcb']:.3f} ({final['program_path']})"
        )


def _label(step: int, steps: int) -> str:
    """A search step as "step i/S"; past S, a step of the final confirmation."""
    return f"step {step}/{steps}" if step <= steps else "confirmation"
