"""The search loop: asks the pure policy for an action each step and does the
I/O — full evaluations, generations through the meta agent and the quick exam — committing one
step at a time to the run directory so that `--resume` continues exactly where a crash left off.

Determinism: every random choice is derived from (run seed, step, purpose), never from global
state, and a resumed step starts from the same committed tree; with a deterministic evaluator
and meta agent a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from automemo.contract import Budget
from automemo.episode_store import atomic_write
from automemo.evaluation.evidence import read_evidence
from automemo.evaluation.result import EvaluationResult
from automemo.exam import quick_exam
from automemo.llm import BudgetExceeded
from automemo.meta.base import Improvement, MetaAgent, ParentView, ScoredProgram, ScoredTask, scored_tasks
from automemo.paths import SEEDS_DIR
from automemo.runs.journal import StepJournal, record_event, recover
from automemo.runs.records import ActionRecord, DiagnosisRecord, EvaluationRecord, NodeRecord, Outcome
from automemo.runs.rundir import RunDir
from automemo.sandbox.base import Limits
from automemo.search.config import SearchConfig
from automemo.search.display import SearchDisplay
from automemo.search.generation import Generation, generate_child
from automemo.search.parallel import ParallelSteps
from automemo.search.strategies import strategy_for
from automemo.search.tree import Tree
from automemo.search.view import RunView


def derive_seed(run_seed: int, step: int, purpose: str) -> int:
    """A 31-bit seed for one purpose of one step: the same on every replay of that step."""
    digest = hashlib.sha256(f"{run_seed}:{step}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name
        )
    )


@dataclass
class Collaborators:
    """What the loop drives. `evaluator`: `automemo.evaluation.Evaluator` (or anything with
    `evaluate`, `sample_for_exam` and `store`); `services_factory(node_id)` gives the host
    services of a node's sandbox sessions; `llm` (optional) is asked whether a cap is reached."""

    evaluator: Any
    meta: MetaAgent
    sandbox: Any
    llm: Any = None
    services_factory: Callable[[int], Any] | None = None
    budget: Budget = field(default_factory=Budget)
    limits: Limits = field(default_factory=Limits)
    exam: Callable[..., Any] = quick_exam
    seeds_dir: Path = SEEDS_DIR  # where the root's seed program is read


class SearchLoop:
    def __init__(self, run: RunDir, config: SearchConfig, parts: Collaborators, *,
                 quiet: bool = False) -> None:
        self.run = run
        self.config = config
        self.parts = parts
        self.display = SearchDisplay(quiet=quiet)
        self.tree = Tree()
        self.strategy = strategy_for(config)
        self._task_scores: dict[tuple[int, int], dict[str, ScoredTask]] = {}  # (node, k) -> its tasks

    # the loop ----------------------------------------------------------------------------------

    def run_search(self) -> dict[str, Any]:
        """Run (or resume) the search to its step budget or an LLM cap; returns final.json."""
        last = recover(self.run)
        self.run.mark_running()
        try:
            return self._run_search(last)
        finally:
            self.run.clear_running()

    def _run_search(self, last: int | None) -> dict[str, Any]:
        self.display.started(str(self.run.path), self.config.steps, last)
        if any(e["kind"] in ("started", "resumed") for e in self.run.events()):
            record_event(self.run, "resumed", f"resumed after committed step {last}")
        else:
            record_event(self.run, "started", f"search of {self.config.steps} steps started")
        self.tree = Tree.from_rundir(self.run)
        stop_reason = "steps"
        try:
            if last is None:
                self._check_caps()
                self._evaluate_root()
            if self.config.parallel > 1:
                ParallelSteps(self).run()
            else:
                for step in range((last or 0) + 1, self.config.steps + 1):
                    self._check_caps()
                    self._step(step)
        except BudgetExceeded as exc:
            # The step in progress is abandoned (its files and rows never commit); the money it
            # spent stays in the ledger because it was really spent.
            stop_reason = "budget"
            record_event(self.run, "stopped", str(exc), {"reason": "budget"}, keep_ledger=True)
            self.display.stopped(str(exc))
        final = self.final(stop_reason)
        self.run.write_final(final)
        self.display.finished(final)
        return final

    def _check_caps(self) -> None:
        reason = self.parts.llm.exhausted() if self.parts.llm is not None else None
        if reason:
            raise BudgetExceeded(f"no new action started: {reason}")

    def _step(self, step: int) -> None:
        stats = self.tree.stats()
        action = self._choose(stats, step)
        journal, record = self._execute(step, action, self._candidates(stats), self.tree)
        self._commit(journal, record)

    def _choose(self, stats: policy.TreeStats, step: int) -> policy.Action:
        """The strategy's action for `step`; a sampling strategy draws from (run seed, step)."""
        return self.strategy.choose(stats, seed=derive_seed(self.config.seed, step, "policy"))

    def _candidates(self, stats: policy.TreeStats) -> list[dict[str, Any]]:
        return [
            {"kind": a.kind, "node_id": a.node_id, "score": a.score, "via": a.via}
            for a in self.strategy.candidates(stats)
        ]

    def _execute(self, step: int, action: policy.Action, candidates: list[dict[str, Any]],
                 tree: Tree, *, child_id: int | None = None,
                 k: int | None = None) -> tuple[StepJournal, ActionRecord]:
        """Do one chosen action against the committed `tree` it was chosen on, staged in its
        step's journal; the caller commits. `child_id` / `k` are the ids a parallel search
        reserved for it (by default the next free ones of `tree`)."""
        journal = StepJournal(self.run, step)
        started = time.perf_counter()
        try:
            if action.kind == "evaluate":
                self.display.step_started(step, self.config.steps, f"evaluate #{action.node_id}")
                outcome, detail = self._evaluate_existing(journal, action.node_id, tree, k)
                child_id = None
            else:
                widening = f" (widening for #{action.via})" if action.via is not None else ""
                self.display.step_started(
                    step, self.config.steps, f"generate from #{action.node_id}{widening}"
                )
                outcome, detail, child_id = self._generate(journal, step, action.node_id, tree,
                                                           child_id)
        except BaseException:
            journal.abandon()
            raise
        return journal, ActionRecord(
            step=step, kind=action.kind, node_id=action.node_id, outcome=outcome, detail=detail,
            child_id=child_id, policy_score=action.score, candidates=tuple(candidates),
            wall_s=time.perf_counter() - started,
        )

    def _commit(self, journal: StepJournal, action: ActionRecord) -> None:
        message = action.detail or action.outcome.value
        journal.add_event("step", message, {"outcome": action.outcome.value})
        journal.commit(action)
        self.tree = Tree.from_rundir(self.run)
        view = RunView.load(self.run, self.config)
        self.display.step_done(action.step, self.config.steps, message, view.best(), view.spend_totals())

    # evaluate ----------------------------------------------------------------------------------

    def _evaluate_root(self) -> None:
        journal = StepJournal(self.run, 0)
        started = time.perf_counter()
        self.display.step_started(0, self.config.steps, f"evaluate the root ({self.config.root})")
        try:
            source = _seed_source(self.parts.seeds_dir, self.config.root)
            _write_text(journal.node_dir(0) / "program.py", source)
            result = self.parts.evaluator.evaluate(
                source, evidence_dir=journal.evaluation_dir(0, 0), node_id=0,
                sample_seed=self._sample_seed(0, 0),
            )
        except BaseException:
            journal.abandon()
            raise
        journal.add_node(_node_record(0, None, "root", "evaluated", f"seed {self.config.root}",
                                      source, None))
        journal.add_evaluation(_evaluation_record(0, 0, result))
        self._commit(journal, ActionRecord(
            step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED,
            detail=f"root μ={result.mean:.3f}", wall_s=time.perf_counter() - started,
        ))

    def _sample_seed(self, node_id: int, k: int) -> int:
        """Seed of node `node_id`'s k-th evaluation sample (used when the evaluation scores a
        sample of the retrieve tasks): fixed per evaluation, so a resumed run redraws it."""
        return derive_seed(self.config.seed, 0, f"evaluation sample of #{node_id}, k={k}")

    def _evaluate_existing(self, journal: StepJournal, node_id: int, tree: Tree,
                           k: int | None = None) -> tuple[Outcome, str]:
        k = tree.node(node_id).n if k is None else k
        source = self.run.program_source(node_id)
        try:
            result = self.parts.evaluator.evaluate(
                source, evidence_dir=journal.evaluation_dir(node_id, k), node_id=node_id,
                sample_seed=self._sample_seed(node_id, k),
            )
        except BudgetExceeded:
            raise
        except Exception as exc:  # infrastructure broke beyond the evaluator's own retries
            return Outcome.EVAL_ERROR, f"evaluation of #{node_id} failed: {exc}"
        journal.add_evaluation(_evaluation_record(node_id, k, result))
        return Outcome.EVALUATED, f"evaluated #{node_id} (k={k}): {result.mean:.3f}"

    # generate ----------------------------------------------------------------------------------

    def _generate(self, journal: StepJournal, step: int, parent_id: int, tree: Tree,
                  child_id: int | None = None) -> tuple[Outcome, str, int]:
        child_id = tree.next_id() if child_id is None else child_id
        parent = tree.node(parent_id)
        episodes, partials = self.parts.evaluator.sample_for_exam(
            self.config.exam_tasks, seed=derive_seed(self.config.seed, step, "exam")
        )
        services = self.parts.services_factory(child_id) if self.parts.services_factory else None
        observe = getattr(self.parts.meta, "observe_tree", None)
        if observe is not None:  # lets the offline mutator avoid re-proposing a known program
            observe([self.run.program_source(n.id) for n in tree.nodes() if n.source_path])
        observe_scores = getattr(self.parts.meta, "observe_scores", None)
        if observe_scores is not None:  # lets it pick partners strong where a parent is weak
            observe_scores(self._scored_programs(tree))

        def exam(source: str):
            return self.parts.exam(
                source, self.parts.sandbox, episodes, partials, budget=self.parts.budget,
                limits=self.parts.limits, services=services,
                store_root=self.parts.evaluator.store.root,
            )

        gen = generate_child(
            self.parts.meta, self._parent_view(parent_id, tree), self._improvements(tree),
            node_id=child_id, seed=derive_seed(self.config.seed, step, "propose"), exam=exam,
            repair_attempts=self.config.repair_attempts,
            repair_seed=lambda a: derive_seed(self.config.seed, step, f"repair-{a}"),
        )
        folder = journal.node_dir(child_id)
        _write_generation_files(folder, gen)
        failure, failed_as = gen.failure, gen.failed_as
        result = None
        if gen.passed:
            try:
                result = self.parts.evaluator.evaluate(
                    gen.source, evidence_dir=journal.evaluation_dir(child_id, 0), node_id=child_id,
                    sample_seed=self._sample_seed(child_id, 0),
                )
            except BudgetExceeded:
                raise
            except Exception as exc:
                failure, failed_as = f"evaluation: {exc}", Outcome.EVAL_ERROR
        status = "evaluated" if result is not None else "failed"
        journal.add_node(dataclasses.replace(
            _node_record(child_id, parent_id, "generate", status, gen.summary, gen.source, parent.mean),
            repair_attempts=max(0, len(gen.attempts) - 1), failure=failure,
        ))
        if result is not None:
            journal.add_evaluation(_evaluation_record(child_id, 0, result))
            repairs = len(gen.attempts) - 1
            return (Outcome.EVALUATED,
                    f"#{child_id} from #{parent_id}: {result.mean:.3f}"
                    f" ({repairs} repair{'s' if repairs != 1 else ''}) {gen.summary}", child_id)
        return failed_as, f"#{child_id} from #{parent_id} failed: {failure[:200]}", child_id

    def _scored_programs(self, tree: Tree) -> list[ScoredProgram]:
        latest: dict[int, EvaluationRecord] = {}
        for e in (EvaluationRecord.from_row(row) for row in self.run.evaluations()):
            if e.node_id in tree and (e.node_id not in latest or e.k > latest[e.node_id].k):
                latest[e.node_id] = e
        return [
            ScoredProgram(node_id=n.id, source=self.run.program_source(n.id), mean=n.mean, n=n.n,
                          per_category=dict(latest[n.id].per_category),
                          tasks=self._scored_tasks(n.id, latest[n.id].k))
            for n in tree.nodes() if not n.failed and n.n > 0 and n.id in latest
        ]

    def _scored_tasks(self, node_id: int, k: int) -> dict[str, ScoredTask]:
        """The scored tasks of a node's k-th evaluation, read from its evidence once (evidence
        never changes); empty when the evidence is gone."""
        key = (node_id, k)
        if key not in self._task_scores:
            try:
                self._task_scores[key] = scored_tasks(read_evidence(self.run.evaluation_dir(node_id, k)).result)
            except FileNotFoundError:
                self._task_scores[key] = {}
        return self._task_scores[key]

    def _parent_view(self, node_id: int, tree: Tree) -> ParentView:
        node = tree.node(node_id)
        evidence = self.run.evaluation_dir(node_id, node.n - 1)
        evaluation: EvaluationResult | None
        try:
            evaluation = read_evidence(evidence).result
        except FileNotFoundError:
            evaluation = None
        return ParentView(node_id=node_id, source=self.run.program_source(node_id),
                          score=node.mean, n_evals=node.n, evaluation=evaluation,
                          evidence_dir=str(evidence))

    def _improvements(self, tree: Tree) -> list[Improvement]:
        """Every committed parent→child gain, largest first (the meta agent keeps the top few)."""
        out = []
        for child in tree.nodes():
            if child.failed or child.parent is None or child.first_score is None:
                continue
            if child.parent_snapshot is None or child.first_score <= child.parent_snapshot:
                continue
            old = self.run.program_source(child.parent)
            new = self.run.program_source(child.id)
            out.append(Improvement(
                parent_id=child.parent, child_id=child.id, parent_score=child.parent_snapshot,
                child_score=child.first_score, summary=child.summary,
                diff=unified_diff(old, new, f"node {child.parent}", f"node {child.id}"),
            ))
        out.sort(key=lambda i: (-(i.child_score - i.parent_score), i.child_id))
        return out

    # reporting ---------------------------------------------------------------------------------

    def final(self, stop_reason: str) -> dict[str, Any]:
        """final.json: the selection over every evaluated node, with all candidates' LCB."""
        return RunView.load(self.run, self.config).final_document(stop_reason)


# rows and files --------------------------------------------------------------------------------


def _seed_source(seeds_dir: Path, name: str) -> str:
    path = seeds_dir / (name if name.endswith(".py") else f"{name}.py")
    if not path.exists():
        known = sorted(p.stem for p in seeds_dir.glob("*.py") if not p.name.startswith("_"))
        raise FileNotFoundError(f"search.root: no seed {name!r} in {seeds_dir}; seeds: {', '.join(known)}")
    return path.read_text()


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


def _evaluation_record(node_id: int, k: int, result: EvaluationResult) -> EvaluationRecord:
    return EvaluationRecord(
        node_id=node_id, k=k, mean=result.mean, n_scored=result.n_scored,
        metrics=dict(result.metrics), per_category=dict(result.per_category),
        excluded=tuple(result.excluded), errors=dict(result.errors),
        tokens=result.tokens, wall_s=result.wall_s, update_s=result.update_s,
        evidence_dir=f"nodes/{node_id}/evaluations/{k}",
        exact=result.exact, task_scores=result.task_scores(),
    )
