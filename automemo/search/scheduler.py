"""The one scheduler of the search: it owns the committed tree and runs up to K actions at once
(`search.parallel` = K; the sequential search is K = 1, the same code).

Ask / tell, on the scheduler's thread only:

1. ask: while fewer than K actions run and steps remain, the seed sweep's next transplant if
   one is left (sweep.py), else the strategy (a pure function of tree statistics) chooses on the committed tree, with the actions in flight as virtual visits
   (pending.py); the action keeps its step number, reserves its child id or evaluation index,
   is recorded in flight in the run directory, and starts on the pool of K worker threads with
   the tree snapshot it was chosen on;
2. tell: the first action to finish is committed under its own step number (actions finishing
   together commit in step order); the tree is re-read from the run directory, which now holds
   the step whole, and `on_commit` is told.

Resume: the actions recorded in flight (chosen, never committed) restart first, exactly as they
were chosen (same step, node, reserved ids); committed steps are never redone. With K = 1 the
recorded action is the one the policy would choose again, so a killed and resumed sequential
run equals an uninterrupted one.

Caps are checked before an action starts against committed spend plus an estimate for the
actions in flight (the mean spend of a committed action each), so a cap is overshot by at most
what was already running. An action that raises (a cap reached mid-step, a bug) is abandoned:
no new action starts, the others in flight finish and commit, then the first such exception is
re-raised (anything else wins over a clean stop, `CLEAN_STOPS`).
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import Any, Callable

from automemo.llm import BudgetExceeded
from automemo.runs.journal import StepJournal, inflight, record_event, record_inflight
from automemo.runs.records import SEARCH_STEP_KINDS, ActionRecord, Outcome
from automemo.search import halving, question_policy
from automemo.search.questions import write_race
from automemo.search.pending import PendingAction, reserve, reserve_questions, with_pending
from automemo.search.steps import StepRunner, derive_seed
from automemo.search.stops import CLEAN_STOPS
from automemo.search.sweep import sweep_order, unswept
from automemo.search.tree import Tree
from automemo.search.view import RunView




@dataclass(frozen=True)
class Launch:
    """An action in flight with what it was chosen on."""

    action: PendingAction
    tree: Tree = field(compare=False)
    candidates: list[dict[str, Any]] = field(compare=False)


class Scheduler:
    def __init__(self, runner: StepRunner, strategy: Any, *, width: int, llm: Any = None,
                 on_commit: Callable[[ActionRecord], None] | None = None) -> None:
        if width < 1:
            raise ValueError(f"search.parallel must be at least 1, got {width}")
        self.runner, self.strategy, self.width = runner, strategy, width
        self.llm, self.on_commit = llm, on_commit
        # the run, its config and display are the runner's: one of each per search
        self.run, self.config, self.display = runner.run, runner.config, runner.display
        self.tree = Tree.from_rundir(self.run)
        self.sweep = (sweep_order(runner.parts.seeds_dir, self.config.root, self.config.sweep_discovered)
                      if self.config.seed_sweep else ())

    # the root ----------------------------------------------------------------------------------

    def evaluate_root(self) -> None:
        self._check_caps(0)
        self.tell(*self.runner.evaluate_root())

    # ask / tell --------------------------------------------------------------------------------

    def ask(self, step: int, running: list[PendingAction]) -> Launch:
        """The action for `step` on the committed tree, with `running` as virtual visits; while
        the seed sweep lasts, the next seed's transplant."""
        remaining = unswept(self.sweep, self.tree, running)
        if remaining:
            child_id, _ = reserve(self.tree, running, "transplant", self.tree.root.id)
            return Launch(PendingAction(step, "transplant", self.tree.root.id, 0.0,
                                        child_id=child_id, seed=remaining[0]), self.tree, [])
        stats = with_pending(self.tree.stats(), running)
        choice = self.strategy.choose(stats, seed=derive_seed(self.config.seed, step, "policy"))
        candidates = [{"kind": a.kind, "node_id": a.node_id, "score": a.score, "via": a.via}
                      for a in self.strategy.candidates(stats)]
        child_id, k = reserve(self.tree, running, choice.kind, choice.node_id)
        questions = (reserve_questions(self.tree, running, choice.node_id)
                     if choice.kind == "evaluate" and self.tree.plan is not None else None)
        action = PendingAction(step, choice.kind, choice.node_id, choice.score, choice.via,
                               child_id, k, questions=questions)
        return Launch(action, self.tree, candidates)

    def tell(self, journal: StepJournal, record: ActionRecord) -> None:
        """Commit one finished action; the run directory holds it whole afterwards."""
        message = record.detail or record.outcome.value
        journal.add_event("step", message, {"outcome": record.outcome.value})
        journal.commit(record)
        self.tree = Tree.from_rundir(self.run)
        view = RunView.load(self.run, self.config)
        self.display.step_done(record.step, self.config.steps, message, view.best(),
                               view.spend_totals(), view.questions)
        if self.on_commit is not None:
            self.on_commit(record)

    # the steps ---------------------------------------------------------------------------------

    def run_steps(self) -> str:
        """Run every step not yet committed; re-raises an action's exception (see the module's
        docstring) once the actions already in flight have finished and been committed. Returns
        why no further step started: "steps" (all were run) or "questions" (the question budget,
        less what the final confirmation keeps, would not pay for another)."""
        actions = self.run.actions()
        committed = {a["step"] for a in actions}
        recorded = [a for a in inflight(self.run) if a["step"] not in committed]
        restart = [Launch(PendingAction.from_dict(a["action"]), self.tree,
                          a.get("candidates", [])) for a in recorded]
        chosen = committed | {launch.action.step for launch in restart}
        # Step numbers count search steps; a confirmation's numbers (past `steps`, from an
        # earlier stop) are skipped, not taken from the steps still to run.
        searched = sum(1 for a in actions if a["kind"] in SEARCH_STEP_KINDS)
        searched += sum(1 for launch in restart if launch.action.kind in SEARCH_STEP_KINDS)
        todo = _free_steps(chosen, self.config.steps - searched)
        running: dict[concurrent.futures.Future, Launch] = {}
        stop: BaseException | None = None
        short: str | None = None
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.width,
                                                   thread_name_prefix="automemo-step") as pool:
            while True:
                while stop is None and len(running) < self.width and (restart or todo):
                    try:
                        self._check_caps(len(running))
                    except BudgetExceeded as exc:
                        stop = exc
                        break
                    if not restart:
                        short = self._question_shortfall([r.action for r in running.values()])
                        if short is not None:
                            break
                    if restart:  # what was in flight when the run stopped, as it was chosen
                        launch = restart.pop(0)
                    else:
                        launch = self.ask(todo.pop(0), [r.action for r in running.values()])
                        record_inflight(self.run, launch.action.step, {
                            "step": launch.action.step, "action": launch.action.to_dict(),
                            "candidates": launch.candidates})
                    running[pool.submit(self.runner.execute, launch.action, launch.tree,
                                        launch.candidates)] = launch
                if not running:
                    break
                done, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f].action.step):
                    running.pop(future)
                    try:
                        journal, record = future.result()
                    except BaseException as exc:  # the runner abandoned its journal
                        if stop is None or (isinstance(stop, CLEAN_STOPS)
                                            and not isinstance(exc, CLEAN_STOPS)):
                            stop = exc
                        continue
                    self.tell(journal, record)
        if stop is not None:
            raise stop
        if short is not None:
            record_event(self.run, "questions", short)
            self.display.stopped(short)
            return "questions"
        return "steps"

    # the question budget -----------------------------------------------------------------------

    def _question_shortfall(self, running: list[PendingAction]) -> str | None:
        """Why the question budget cannot pay for one more search step, None while it can: the
        questions asked and in flight, a sample for the step, and what the confirmation keeps."""
        plan, budget = self.tree.plan, self.config.question_budget
        if plan is None or not budget:
            return None
        spent = self.tree.questions_spent
        in_flight = sum(a.cost(plan.sample_size) for a in running)
        stats = with_pending(self.tree.stats(), running)
        kept = question_policy.confirmation_reserve(stats, self.config)
        if spent + in_flight + plan.sample_size + kept <= budget:
            return None
        return (f"question budget: {spent} of {budget} questions asked, {in_flight} in flight; one more "
                f"sample of {plan.sample_size} would eat into the {kept} the final confirmation keeps")

    def confirm(self) -> None:
        """The final confirmation (`question_policy.next_confirmation`): the race of `halving`,
        fixed and recorded in the run directory when it starts (a resume replays it; a resume
        that raised the budget plans a new one), then one node's block of questions per step
        until it is done or the budget is spent. Sequential: each step's target depends on the
        scores the one before committed."""
        plan, budget = self.tree.plan, self.config.question_budget
        if plan is None or not budget or getattr(self.strategy, "selection", "lcb") != "lcb":
            return
        if not self.tree.total_evaluations:
            return
        race = self.tree.race
        if race is None or race.budget != budget:
            race = halving.plan_race(self.tree.stats(), self.config, budget - self.tree.questions_spent)
            write_race(self.run.path, race)
            record_event(self.run, "race", f"final confirmation: candidates {', '.join(f'#{a}' for a in race.arms)} "
                         f"race the hand design #{race.bar} on {list(race.prefixes)} questions, then a duel",
                         race.to_dict())
            self.tree = Tree.from_rundir(self.run)
        while True:
            left = budget - self.tree.questions_spent
            target = question_policy.next_confirmation(self.tree.stats(), self.config, left)
            if target is None:
                return
            self._check_caps(0)
            step = max([self.config.steps, *(a["step"] for a in self.run.actions())]) + 1
            _, k = reserve(self.tree, [], "confirm", target.node_id)
            questions = reserve_questions(self.tree, [], target.node_id, target.questions)
            action = PendingAction(step, "confirm", target.node_id, 0.0, k=k, questions=questions)
            record_inflight(self.run, step, {"step": step, "action": action.to_dict(), "candidates": []})
            journal, record = self.runner.execute(action, self.tree, [])
            self.tell(journal, record)
            if record.outcome is not Outcome.EVALUATED:  # the same step would be chosen again
                record_event(self.run, "race", f"final confirmation ended: {record.detail}")
                return

    def _check_caps(self, in_flight: int) -> None:
        if self.llm is None:
            return
        reason = self.llm.exhausted()
        if reason is None and in_flight:
            reason = estimated_overrun(self.llm, self.run, in_flight)
        if reason:
            raise BudgetExceeded(f"no new action started: {reason}")


def _free_steps(taken: set[int], count: int) -> list[int]:
    """The `count` smallest step numbers from 1 not in `taken`."""
    out, step = [], 1
    while len(out) < count:
        if step not in taken:
            out.append(step)
        step += 1
    return out


def estimated_overrun(llm: Any, run: Any, in_flight: int) -> str | None:
    """A cap that committed spend plus `in_flight` average actions would reach."""
    guard = getattr(llm, "guard", None)
    if guard is None:
        return None
    actions = len(run.actions())
    spent = guard.spent
    if not actions:
        return None
    tokens = spent.tokens + in_flight * spent.tokens / actions
    usd = spent.usd + in_flight * spent.usd / actions
    if guard.max_total_tokens is not None and tokens >= guard.max_total_tokens:
        return (f"token cap would be reached by the {in_flight} actions in flight: about "
                f"{tokens:.0f} tokens, cap is {guard.max_total_tokens}")
    if guard.max_usd is not None and usd >= guard.max_usd:
        return (f"USD cap would be reached by the {in_flight} actions in flight: about "
                f"${usd:.4f}, cap is ${guard.max_usd:.4f}")
    return None
