"""The search: check its LLM endpoints (preflight), evaluate the root, then let the scheduler run
the steps (scheduler.py) until the step budget or an LLM cap, and write final.json. Every step is
committed to the run directory as it finishes, so `--resume` continues exactly where a crash left
off.
"""

from __future__ import annotations

from typing import Any

from automemo.llm.preflight import EndpointUnreachable, check_endpoints
from automemo.runs.journal import record_event, recover
from automemo.runs.rundir import RunDir
from automemo.search.collaborators import Collaborators
from automemo.search.config import SearchConfig
from automemo.search.display import SearchDisplay
from automemo.search.scheduler import Scheduler
from automemo.errors import UsageError
from automemo.search.questions import QuestionPlan, auto_sample_size, load_plan, stratified_order, write_plan
from automemo.search.steps import StepRunner, derive_seed
from automemo.search.stops import CLEAN_STOPS, stop_reason as clean_stop_reason
from automemo.search.strategies import strategy_for
from automemo.search.view import RunView

__all__ = ["Collaborators", "SearchLoop"]


class SearchLoop:
    def __init__(self, run: RunDir, config: SearchConfig, parts: Collaborators, *,
                 quiet: bool = False, preflight_roles: tuple[str, ...] = ()) -> None:
        """`preflight_roles`: the LLM roles (of `parts.llm`) whose endpoints must answer before
        anything runs; `automemo.assembly` names the ones this run uses."""
        self.run = run
        self.config = config
        self.parts = parts
        self.preflight_roles = preflight_roles
        self.display = SearchDisplay(quiet=quiet)
        self.runner = StepRunner(run, config, parts, self.display)

    def run_search(self) -> dict[str, Any]:
        """Run (or resume) the search to its step budget or an LLM cap; returns final.json."""
        last = recover(self.run)
        self.preflight()
        self.run.mark_running()
        try:
            return self._run_search(last)
        finally:
            self.run.clear_running()

    def preflight(self) -> None:
        """Every LLM endpoint the run uses answers, or the search stops here: before any
        evaluation or event, so the run directory is exactly as resumable as before."""
        if not self.preflight_roles or self.parts.llm is None:
            return
        try:
            check_endpoints(self.parts.llm.config, self.preflight_roles)
        except EndpointUnreachable as exc:
            raise EndpointUnreachable(
                exc.roles, exc.base_url,
                f"{exc.reason}; the search stopped before its next step: once the endpoint answers, "
                f"continue with: automemo search --resume {self.run.path} (--no-preflight skips "
                f"this check)") from None

    def _run_search(self, last: int | None) -> dict[str, Any]:
        self.plan_questions()  # before anything is recorded, and the tree is read with its plan
        self.display.started(str(self.run.path), self.config.steps, last)
        if any(e["kind"] in ("started", "resumed") for e in self.run.events()):
            record_event(self.run, "resumed", f"resumed after committed step {last}")
        else:
            record_event(self.run, "started", f"search of {self.config.steps} steps started")
        scheduler = Scheduler(self.runner, self.parts.strategy or strategy_for(self.config),
                              width=self.config.parallel, llm=self.parts.llm,
                              on_commit=self.parts.on_commit)
        stop_reason = "steps"
        try:
            if last is None:
                scheduler.evaluate_root()
            stop_reason = scheduler.run_steps()
            scheduler.confirm()
        except CLEAN_STOPS as exc:
            # The step in progress is abandoned (its files and rows never commit); the money it
            # spent stays in the ledger because it was really spent.
            stop_reason = clean_stop_reason(exc)
            record_event(self.run, "stopped", str(exc), {"reason": stop_reason}, keep_ledger=True)
            self.display.stopped(str(exc))
        final = self.final(stop_reason)
        self.run.write_final(final)
        self.display.finished(final)
        return final

    def plan_questions(self) -> None:
        """With a question budget, the run's question order and sample size, drawn once (on the
        first start, or on the resume that gives an unbudgeted run a budget) and kept in the run
        directory; every later read uses that file. Raises `UsageError` for a budget below one
        sample. Idempotent: `run_search` calls it first; a command may call it earlier."""
        budget = self.config.question_budget
        if not budget or load_plan(self.run.path) is not None:
            return
        tasks = self.parts.evaluator.split("train").scored  # guard questions are never sampled
        order = stratified_order([(t.task_id, t.category) for t in tasks],
                                 derive_seed(self.config.seed, 0, "question order"))
        size = self.config.sample_questions or auto_sample_size(budget, self.config.steps, len(order))
        size = min(size, len(order))
        if budget < size:
            raise UsageError(
                f"search.question_budget {budget} is below one sample of {size} questions: give at least "
                f"{size} (each of the {self.config.steps} steps and the root scores a sample), or set "
                f"search.sample_questions lower")
        write_plan(self.run.path, QuestionPlan(order, size))

    def final(self, stop_reason: str) -> dict[str, Any]:
        """final.json: the selection over every evaluated node, with all candidates' LCB."""
        return RunView.load(self.run, self.config).final_document(stop_reason)
