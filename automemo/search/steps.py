"""One action of the search, done: the root's evaluation, a re-evaluation, or a generation
(propose, quick exam, repairs, first evaluation). Each is staged in its step's journal and handed
back uncommitted with its action record; the scheduler commits. Runs on the scheduler's worker
threads: it reads the run directory and the tree snapshot it is given, and changes neither.

Determinism: every random choice is derived from (run seed, step, purpose), never from global
state, so an action restarted after a crash draws what it drew the first time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from automemo.episode_store import atomic_write
from automemo.evaluation.result import EvaluationResult
from automemo.programs import DISCOVERED, ProgramKind, ProgramNotFound, resolve_program
from automemo.runs.journal import StepJournal
from automemo.runs.records import ActionRecord, DiagnosisRecord, EvaluationRecord, NodeRecord, Outcome
from automemo.runs.rundir import RunDir
from automemo.search.collaborators import Collaborators
from automemo.search.config import SearchConfig
from automemo.search.display import SearchDisplay
from automemo.search.generation import Generation, generate_child, transplant_child
from automemo.search.meta_context import MetaContext
from automemo.search.pending import PendingAction
from automemo.search.policy import NodeStats
from automemo.search.question_policy import EarlyStop, early_stop
from automemo.search.questions import load_plan
from automemo.search.stops import CLEAN_STOPS
from automemo.search.tree import Tree


def derive_seed(run_seed: int, step: int, purpose: str) -> int:
    """A 31-bit seed for one purpose of one step: the same on every replay of that step."""
    digest = hashlib.sha256(f"{run_seed}:{step}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class StepRunner:
    def __init__(self, run: RunDir, config: SearchConfig, parts: Collaborators,
                 display: SearchDisplay) -> None:
        self.run = run
        self.config = config
        self.parts = parts
        self.display = display
        self.context = MetaContext(run)
        # Normalised sources proposed by this process's generations: actions in flight together
        # each see the tree they were chosen on, which lacks their siblings' children.
        self._proposed: set[str] = set()
        # The latest proposal of each generate action in flight, by step: what the others are
        # told is being written right now.
        self._in_flight: dict[int, str] = {}
        self._proposed_lock = threading.Lock()

    def evaluate_root(self) -> tuple[StepJournal, ActionRecord]:
        journal = StepJournal(self.run, 0)
        started = time.perf_counter()
        self.display.step_started(0, self.config.steps, f"evaluate the root ({self.config.root})")
        try:
            source = _named_source(self.parts.seeds_dir, self.config.root)
            _write_text(journal.node_dir(0) / "program.py", source)
            plan = load_plan(self.run.path)
            result = self._evaluate(journal, source, 0, 0, plan.next_questions(()) if plan else None)
        except BaseException:
            journal.abandon()
            raise
        journal.add_node(_node_record(0, None, "root", "evaluated", root_summary(self.config.root, self.parts.seeds_dir),
                                      source, None))
        journal.add_evaluation(_evaluation_record(0, 0, result, _guards(self.parts.evaluator)))
        return journal, ActionRecord(
            step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED,
            detail=f"root μ={result.mean:.3f}", wall_s=time.perf_counter() - started,
        )

    def execute(self, action: PendingAction, tree: Tree,
                candidates: list[dict[str, Any]]) -> tuple[StepJournal, ActionRecord]:
        """Do `action`, chosen on the committed `tree`, with the ids it reserved."""
        journal = StepJournal(self.run, action.step)
        started = time.perf_counter()
        widening = f" (widening for #{action.via})" if action.via is not None else ""
        child_id = None
        try:
            if action.kind in ("evaluate", "confirm"):
                asked = f" on {len(action.questions)} more questions" if action.questions else ""
                what = "confirm" if action.kind == "confirm" else "evaluate"
                self.display.step_started(action.step, self.config.steps,
                                          f"{what} #{action.node_id}{asked}")
                outcome, detail = self._evaluate_existing(journal, action.node_id, action.k,
                                                          action.questions)
            elif action.kind == "transplant":
                self.display.step_started(action.step, self.config.steps,
                                          f"transplant seed {action.seed} (sweep)")
                child_id = action.child_id if action.child_id is not None else tree.next_id()
                source = _named_source(self.parts.seeds_dir, action.seed)
                gen = transplant_child(action.seed, source,
                                       exam=self._exam(action.step, child_id))
                # The discovered default is swept as a candidate, not as a hand design: its node
                # says what it is, and no bar is ever made of it (tree.Node.action).
                node_action = "discovered" if action.seed == DISCOVERED else "transplant"
                outcome, detail = self._commit_child(journal, gen, tree, action.node_id,
                                                     child_id, node_action)
            else:
                self.display.step_started(action.step, self.config.steps,
                                          f"generate from #{action.node_id}{widening}")
                child_id = action.child_id if action.child_id is not None else tree.next_id()
                outcome, detail = self._generate(journal, action.step, action.node_id, tree,
                                                 child_id)
        except BaseException:
            journal.abandon()
            raise
        return journal, ActionRecord(
            step=action.step, kind=action.kind, node_id=action.node_id, outcome=outcome,
            detail=f"{detail}{widening}", child_id=child_id, policy_score=action.score,
            candidates=tuple(candidates), wall_s=time.perf_counter() - started,
        )

    # evaluate ----------------------------------------------------------------------------------

    def _sample_seed(self, node_id: int, k: int) -> int:
        """Seed of node `node_id`'s k-th evaluation sample (used when the evaluation scores a
        sample of the retrieve tasks): fixed per evaluation, so a resumed run redraws it."""
        return derive_seed(self.config.seed, 0, f"evaluation sample of #{node_id}, k={k}")

    def _evaluate(self, journal: StepJournal, source: str, node_id: int, k: int,
                  questions: tuple[str, ...] | None = None) -> EvaluationResult:
        """Score `source`: on `questions` (a sample of a search with a question budget), or on
        every validation question."""
        sample = {"questions": questions} if questions is not None else {}
        return self.parts.evaluator.evaluate(
            source, evidence_dir=journal.evaluation_dir(node_id, k), node_id=node_id,
            sample_seed=self._sample_seed(node_id, k), **sample,
        )

    def _evaluate_existing(self, journal: StepJournal, node_id: int, k: int,
                           questions: tuple[str, ...] | None = None) -> tuple[Outcome, str]:
        try:
            result = self._evaluate(journal, self.run.program_source(node_id), node_id, k, questions)
        except CLEAN_STOPS:
            raise
        except Exception as exc:  # infrastructure broke beyond the evaluator's own retries
            return Outcome.EVAL_ERROR, f"evaluation of #{node_id} failed: {exc}"
        journal.add_evaluation(_evaluation_record(node_id, k, result, _guards(self.parts.evaluator)))
        return Outcome.EVALUATED, f"evaluated #{node_id} (k={k}): {result.mean:.3f}"

    # generate ----------------------------------------------------------------------------------

    def _exam(self, step: int, child_id: int):
        """The quick exam of `step`'s child: the same sampled training tasks on every replay."""
        episodes, partials = self.parts.evaluator.sample_for_exam(
            self.config.exam_tasks, seed=derive_seed(self.config.seed, step, "exam")
        )
        services = self.parts.services_factory(child_id) if self.parts.services_factory else None

        def exam(source: str):
            return self.parts.exam(
                source, self.parts.sandbox, episodes, partials, budget=self.parts.budget,
                limits=self.parts.limits, services=services,
                store_root=self.parts.evaluator.store.root,
            )
        return exam

    def _generate(self, journal: StepJournal, step: int, parent_id: int, tree: Tree,
                  child_id: int) -> tuple[Outcome, str]:
        # The meta agent is told this action's tree (the snapshot it was chosen on), never what
        # another action saw: it keeps nothing between calls, so actions in flight call it at once.
        with self._proposed_lock:
            siblings = tuple(src for other, src in sorted(self._in_flight.items()) if other != step)
        context = self.context.generation_context(
            parent_id, tree, node_id=child_id, seed=derive_seed(self.config.seed, step, "propose"),
            siblings_in_flight=siblings, budget=self.parts.budget)

        def proposed(source: str) -> None:
            with self._proposed_lock:
                self._in_flight[step] = source

        try:
            gen = generate_child(
                self.parts.meta, context, exam=self._exam(step, child_id),
                repair_attempts=self.config.repair_attempts,
                repair_seed=lambda a: derive_seed(self.config.seed, step, f"repair-{a}"),
                claim=self._claim, proposed=proposed,
            )
            return self._commit_child(journal, gen, tree, parent_id, child_id, "generate")
        finally:  # staged (the scheduler commits it next) or abandoned: no longer in flight
            with self._proposed_lock:
                self._in_flight.pop(step, None)

    def _claim(self, shape: str) -> bool:
        with self._proposed_lock:
            if shape in self._proposed:
                return False
            self._proposed.add(shape)
            return True

    def _commit_child(self, journal: StepJournal, gen: Generation, tree: Tree, parent_id: int,
                      child_id: int, action: str) -> tuple[Outcome, str]:
        """Stage a child's files and node row; evaluate it first if it passed its exam (with a
        question budget, on the first sample, and early stopping is decided on the tree the
        action was chosen on)."""
        parent = tree.node(parent_id)
        parent_mean = tree.stats().node(parent_id).mean  # μ as the policy reads it (tree.stats)
        _write_generation_files(journal.node_dir(child_id), gen)
        failure, failed_as = gen.failure, gen.failed_as
        result = None
        if gen.passed:
            try:
                first = tree.plan.next_questions(()) if tree.plan is not None else None
                result = self._evaluate(journal, gen.source, child_id, 0, first)
            except CLEAN_STOPS:
                raise
            except Exception as exc:
                failure, failed_as = f"evaluation: {exc}", Outcome.EVAL_ERROR
        status = "evaluated" if result is not None else "failed"
        journal.add_node(dataclasses.replace(
            _node_record(child_id, parent.id, action, status, gen.summary, gen.source, parent_mean),
            repair_attempts=max(0, len(gen.attempts) - 1), failure=failure,
        ))
        if result is None:
            return failed_as, f"#{child_id} from #{parent.id} failed: {failure[:200]}"
        record = _evaluation_record(child_id, 0, result, _guards(self.parts.evaluator))
        stop = self._early_stop(tree, child_id, parent, action, record)
        journal.add_evaluation(dataclasses.replace(record, stopped=stop.reason) if stop else record)
        if stop:
            journal.add_event("early_stop", f"#{child_id} {stop.reason}",
                              {"node_id": child_id, "leader": stop.leader, "bound": stop.bound})
        repairs = len(gen.attempts) - 1
        return (Outcome.EVALUATED, f"#{child_id} from #{parent.id}: {result.mean:.3f}"
                f" ({repairs} repair{'s' if repairs != 1 else ''}) {gen.summary}"
                + (f"; stopped early (below #{stop.leader})" if stop else ""))

    def _early_stop(self, tree: Tree, child_id: int, parent: Any, action: str,
                    record: EvaluationRecord) -> EarlyStop | None:
        if tree.plan is None or not tree.total_evaluations:
            return None
        child = NodeStats(id=child_id, parent=parent.id, mean=record.mean, n=1, m=0,
                          task_scores=record.task_scores, questions=len(record.questions),
                          reference=action == "transplant")
        return early_stop(child, tree.stats(), self.config)


# rows and files --------------------------------------------------------------------------------


def _named_source(seeds_dir: Path, name: str) -> str:
    """The program `name` names (`automemo.programs`: a seed under `seeds_dir`, `discovered`, a
    program file, an exported folder): the root, or a program the sweep transplants."""
    try:
        return resolve_program(name, seeds_dir).source
    except ProgramNotFound as exc:
        raise ProgramNotFound(f"search.root: {exc}") from None


def root_summary(name: str, seeds_dir: Path) -> str:
    """The root's line in the tree: what kind of program it is, and which."""
    try:
        kind = resolve_program(name, seeds_dir).kind
    except ProgramNotFound:
        return f"root {name}"
    if kind is ProgramKind.DISCOVERED:
        return "discovered default"
    return f"seed {name}" if kind is ProgramKind.SEED else f"program {name}"


def _write_text(path, text: str) -> None:
    atomic_write(path, text.encode())


def _write_json(path, value: Any) -> None:
    atomic_write(path, json.dumps(value, indent=2, sort_keys=True, default=str).encode())


def _write_generation_files(folder, gen: Generation) -> None:
    if gen.source is not None:
        _write_text(folder / "program.py", gen.source)
    for attempt in gen.attempts:
        if attempt.source is not None:
            _write_text(folder / "attempts" / f"{attempt.attempt}.py", attempt.source)
    _write_json(folder / "exam.json", [a.to_dict() for a in gen.attempts])
    _write_json(folder / "diagnosis.json", DiagnosisRecord(
        summary=gen.summary, diagnosis=gen.diagnosis, usage=gen.usage, failure=gen.failure,
    ).to_dict())


def _node_record(node_id: int, parent: int | None, action: str, status: str, summary: str,
                 source: str | None, parent_snapshot: float | None) -> NodeRecord:
    return NodeRecord(
        id=node_id, parent=parent, action=action, status=status,
        summary=summary.strip().splitlines()[0] if summary.strip() else "",
        program_path=f"nodes/{node_id}/program.py" if source is not None else "",
        program_sha256=hashlib.sha256(source.encode()).hexdigest() if source else "",
        parent_snapshot=parent_snapshot,
    )


def _guards(evaluator: Any) -> tuple[str, ...]:
    """The guard metrics an evaluator records (none for an evaluator that declares none)."""
    return tuple(getattr(evaluator, "guard_metrics", ()) or ())


def _evaluation_record(node_id: int, k: int, result: EvaluationResult, guards: tuple[str, ...] = ()) -> EvaluationRecord:
    return EvaluationRecord(
        node_id=node_id, k=k, mean=result.mean, n_scored=result.n_scored,
        metrics=dict(result.metrics), per_category=dict(result.per_category),
        excluded=tuple(result.excluded), errors=dict(result.errors),
        tokens=result.tokens, wall_s=result.wall_s, update_s=result.update_s,
        evidence_dir=f"nodes/{node_id}/evaluations/{k}",
        exact=result.exact, task_scores=result.task_scores(),
        questions=tuple(t.task_id for t in result.tasks), guard_scores=result.task_metrics(guards),
        cost=dict(result.cost),
    )
