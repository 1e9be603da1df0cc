"""Up to K search actions in flight (`search.parallel` = K > 1).

The main thread is the only one that chooses and commits; actions run on a pool of K threads
(they spend their time waiting on episodes and LLM calls). Each step:

1. while fewer than K actions run and steps remain: the policy chooses on the committed tree's
   statistics with the running evaluations as virtual visits (pending.py); the action keeps the step
   number at which it was chosen, and reserves its child id or evaluation index; it is recorded
   in flight in the run directory, then started;
2. the first action to finish is committed, under its own step number (completion order).

After a crash, the actions recorded in flight are restarted first, exactly as they were chosen
(same step, node, reserved ids); committed steps are never redone. Caps are checked before an
action starts against committed spend plus an estimate for the actions in flight (the mean spend
of a committed action each), so a cap is overshot by at most what was already running.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from typing import TYPE_CHECKING, Any

from automemo.llm import BudgetExceeded
from automemo.runs.journal import inflight, record_inflight
from automemo.search import policy
from automemo.search.pending import PendingAction, with_pending

if TYPE_CHECKING:
    from automemo.search.loop import SearchLoop


class ParallelSteps:
    def __init__(self, loop: SearchLoop) -> None:
        self.loop = loop
        self.width = loop.config.parallel
        self._candidates: dict[int, list[dict[str, Any]]] = {}  # what each step weighed

    def run(self) -> None:
        """Run every step not yet committed; re-raises `BudgetExceeded` (or the first other
        failure) once the actions already in flight have finished and been committed."""
        loop = self.loop
        committed = {a["step"] for a in loop.run.actions()}
        recorded = [a for a in inflight(loop.run) if a["step"] not in committed]
        restart = [PendingAction.from_dict(a["action"]) for a in recorded]
        self._candidates = {a["step"]: a.get("candidates", []) for a in recorded}
        chosen = committed | {p.step for p in restart}
        todo = [s for s in range(1, loop.config.steps + 1) if s not in chosen]
        running: dict[concurrent.futures.Future, PendingAction] = {}
        stop: BaseException | None = None
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.width,
                                                   thread_name_prefix="automemo-step") as pool:
            while True:
                while stop is None and len(running) < self.width and (restart or todo):
                    try:
                        self._check_caps(len(running))
                    except BudgetExceeded as exc:
                        stop = exc
                        break
                    if restart:  # what was in flight when the run stopped, as it was chosen
                        action = restart.pop(0)
                    else:
                        action = self._choose(todo.pop(0), list(running.values()))
                        record_inflight(loop.run, action.step, {
                            "step": action.step, "action": action.to_dict(),
                            "candidates": self._candidates[action.step]})
                    running[pool.submit(self._perform, action)] = action
                if not running:
                    break
                done, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f].step):
                    action = running.pop(future)
                    try:
                        journal, record = future.result()
                    except BaseException as exc:  # the journal was abandoned by _execute
                        if stop is None or (isinstance(stop, BudgetExceeded)
                                            and not isinstance(exc, BudgetExceeded)):
                            stop = exc
                        continue
                    loop._commit(journal, record)
        if stop is not None:
            raise stop

    def _choose(self, step: int, running: list[PendingAction]) -> PendingAction:
        loop = self.loop
        stats = with_pending(loop.tree.stats(), running)
        action = loop._choose(stats, step)
        self._candidates[step] = loop._candidates(stats)
        child_id = k = None
        if action.kind == "generate":
            reserved = [p.child_id for p in running if p.child_id is not None]
            child_id = max([loop.tree.next_id(), *(c + 1 for c in reserved)])
        else:
            k = loop.tree.node(action.node_id).n + sum(
                1 for p in running if p.kind == "evaluate" and p.node_id == action.node_id)
        return PendingAction(step, action.kind, action.node_id, action.score, action.via,
                             child_id, k)

    def _perform(self, pending: PendingAction) -> tuple[Any, dict[str, Any]]:
        loop = self.loop
        tree = loop.tree  # the committed tree at the start; commits replace, never mutate it
        action = policy.Action(pending.kind, pending.node_id, pending.score, pending.via)
        row_candidates = self._candidates.get(pending.step, [])
        journal, record = loop._execute(pending.step, action, row_candidates, tree,
                                        child_id=pending.child_id, k=pending.k)
        if pending.via is not None:
            record = dataclasses.replace(
                record, detail=f"{record.detail} (widening for #{pending.via})".strip())
        return journal, record

    def _check_caps(self, in_flight: int) -> None:
        llm = self.loop.parts.llm
        if llm is None:
            return
        reason = llm.exhausted()
        if reason is None and in_flight:
            reason = _estimated_overrun(llm, self.loop.run, in_flight)
        if reason:
            raise BudgetExceeded(f"no new action started: {reason}")


def _estimated_overrun(llm: Any, run: Any, in_flight: int) -> str | None:
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
