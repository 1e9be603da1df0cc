"""Update-then-retrieve evaluation of one memo program.

`Evaluator.evaluate(source)`:
1. the split's update episodes, collected once with the fixed agent and no memory (collect.py);
2. a fresh sandbox session: `update` on every episode in order (timed); memory is then frozen
   (where each task has a memory of its own, only the tasks' episodes, a session for every few
   tasks: memory_groups.py);
3. each retrieve task: `retrieve(partial)` through the session, one at a time in the split's
   task order (so a program that changes state in `retrieve` anyway sees the same sequence on
   every evaluation, whatever the thread timing), payload truncated to the budget; then the
   episode run by the agent with it, `concurrency` at a time behind the executor, and scored.
   Program failures, and the agent's failures on the program's payload, score 0; infrastructure
   failures (transport, host services) are retried, then excluded and reported; a scorer that
   raises fails its task, not the evaluation (see `automemo.failures`);
4. evidence per task as it finishes, and `summary.json` at the end (evidence.py). An evaluation
   that excluded more than `max_excluded_share` of its tasks raises `TooManyExcluded` instead
   of reporting a mean over the few left.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import random
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from automemo.benchmarks.base import Benchmark, Split, Task
from automemo.benchmarks.splits import stratified_split
from automemo.contract import BUDGET_KEY, EpisodeRecorder, MemoryPayload, PartialRecorder, question_time_task
from automemo.episode_store import EpisodeStore
from automemo.evaluation import evidence as evidence_io
from automemo.evaluation.aggregate import summarize, usage_tokens
from automemo.evaluation.collect import Collection, collect_update_episodes
from automemo.evaluation.config import EvaluationConfig
from automemo.evaluation.cost import summarize_cost
from automemo.evaluation.executor import Executor
from automemo.evaluation.executor_factory import make_executor
from automemo.evaluation.memory_groups import memory_groups
from automemo.evaluation.memo_session import MemoCallFailed, MemoSession
from automemo.evaluation.player import EpisodeJob, EpisodeOutcome, EpisodePlayer, elapsed, lost_outcome
from automemo.evaluation.progress import track
from automemo.evaluation.query_warmup import warm_question_embeddings
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.failures import FailureKind, HostServiceFailed, TooManyExcluded
from automemo.sandbox.base import HostServices, Sandbox

ServicesFactory = Callable[[Any], HostServices]

log = logging.getLogger("automemo.evaluation")


class Evaluator:
    """Scores memo programs on one benchmark with one fixed agent. Splits, partial recorders and
    update episodes are computed once and shared by every `evaluate` call."""

    def __init__(
        self,
        benchmark: Benchmark,
        sandbox: Sandbox,
        store: EpisodeStore,
        *,
        agent: Any = None,
        services_factory: ServicesFactory | None = None,
        config: EvaluationConfig = EvaluationConfig(),
        executor: Executor | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.sandbox = sandbox
        self.store = store
        self.agent = agent
        self.config = config
        self._services_factory = services_factory
        self._executor = executor or make_executor(config)
        self._player = EpisodePlayer(benchmark, agent, store, config.infra_retries)
        self._lock = threading.Lock()
        self._splits: dict[str, Split] = {}
        self._partials: dict[str, dict[str, PartialRecorder]] = {}
        self._collections: dict[str, Collection] = {}
        self._shapes: dict[str, tuple[bool, dict[str, float]]] = {}
        self._noticed: set[str] = set()
        self._warm_lock = threading.Lock()  # held while a split's questions are embedded
        self._warmed: set[str] = set()

    def close(self) -> None:
        """Release the executor's workers (a Ray executor's actors and local cluster)."""
        self._executor.close()

    # shared inputs ----------------------------------------------------------------------

    def split(self, name: str) -> Split:
        with self._lock:
            if name not in self._splits:
                self._splits[name] = self.benchmark.split(name)
            return self._splits[name]

    def collection(self, split: str = "train") -> Collection:
        split_obj = self.split(split)
        with self._lock:
            if split not in self._collections:
                self._collections[split] = collect_update_episodes(
                    self.benchmark,
                    split,
                    split_obj.update,
                    self.agent,
                    self.store,
                    executor=self._executor,
                    infra_retries=self.config.infra_retries,
                    quiet=self.config.quiet,
                )
            return self._collections[split]

    def update_episodes(self, split: str = "train") -> list[EpisodeRecorder]:
        """The split's update episodes in order (collected on first use, then from the store)."""
        return list(self.collection(split).episodes)

    def partials(self, split: str = "train") -> dict[str, PartialRecorder]:
        """Partial recorders of the split's retrieve tasks, by task id: what `retrieve` sees. Each
        carries the run's budget (`BUDGET_KEY`) and only the metadata the contract allows
        (`contract.RETRIEVE_METADATA_KEYS` and the benchmark's `question_time_keys`), whatever the
        benchmark, a user's own included; labels stay on the `Task`."""
        tasks = self.split(split).retrieve
        with self._lock:
            if split not in self._partials:
                dropped: set[str] = set()
                self._partials[split] = {t.task_id: self._with_contract_keys(self.benchmark.partial(t, self.store), dropped)
                                         for t in tasks}
                self._notice_dropped(dropped)
            return self._partials[split]

    def _warm_questions(self, split: str, partials: dict[str, PartialRecorder], services: Any) -> None:
        """Once per split: its questions embedded in one batched pass (`query_warmup`), not one
        by one inside the first program's timed retrieve calls."""
        with self._warm_lock:
            if split not in self._warmed and services is not None:
                self._warmed.add(split)
                warm_question_embeddings(getattr(services, "encoders", None), partials.values())

    def _with_contract_keys(self, partial: PartialRecorder, dropped: set[str]) -> PartialRecorder:
        declared = getattr(self.benchmark, "question_time_keys", frozenset())
        shown, unknown = question_time_task(partial, declared, self.config.budget.to_dict())
        dropped.update(unknown)
        return shown

    def _notice_dropped(self, dropped: set[str]) -> None:
        """One warning per key for the evaluator's life (a run's), not one per task or split."""
        fresh = sorted(dropped - self._noticed)
        if not fresh:
            return
        self._noticed.update(fresh)
        name = getattr(self.benchmark, "name", type(self.benchmark).__name__)
        log.warning(
            "benchmark %s puts metadata keys %s in its retrieve tasks that the contract does not allow; "
            "they are dropped before retrieve (declare a key known at question time in the benchmark's "
            "`question_time_keys`)", name, ", ".join(fresh))

    @property
    def guard_metrics(self) -> tuple[str, ...]:
        """The benchmark's guard metrics (`Benchmark.guard_metrics`) other than the one the search
        ranks by, which every evaluation records per task so that the final selection can be held
        to them."""
        benchmark = self.benchmark
        declared = getattr(type(benchmark), "guard_metrics", None)
        options = getattr(benchmark, "options", None)
        if declared is None or options is None:
            return ()
        ranked = type(benchmark).ranking_metric(options) if hasattr(type(benchmark), "ranking_metric") else ""
        # A benchmark whose guards depend on what it asks, not its options alone (a label-free
        # one's guard questions: ConversationBenchmark.guard_metric_names), names them itself.
        named = getattr(benchmark, "guard_metric_names", None)
        return tuple(m for m in (named() if callable(named) else declared(options)) if m != ranked)

    @property
    def exact(self) -> bool:
        """Whether an evaluation is exact: the benchmark scores deterministically and every
        retrieve task of the split is scored (no sample). A benchmark of one's own that does not
        say is taken as stochastic."""
        deterministic = getattr(self.benchmark, "scoring_is_deterministic", lambda: False)()
        return bool(deterministic) and self.config.retrieve_fraction >= 1.0

    def retrieve_tasks(self, split: str = "train", sample_seed: int = 0) -> tuple[Task, ...]:
        tasks = self.split(split).retrieve
        if self.config.retrieve_fraction >= 1.0:
            return tasks
        _, taken = stratified_split(
            tasks, lambda t: t.category, self.config.retrieve_fraction, sample_seed, salt="evaluation"
        )
        return tuple(taken)

    def named_tasks(self, split: str, questions: Sequence[str]) -> tuple[Task, ...]:
        """The split's retrieve tasks named by `questions`, in that order."""
        by_id = {t.task_id: t for t in self.split(split).retrieve}
        unknown = [q for q in questions if q not in by_id]
        if unknown:
            raise ValueError(f"the {split} split has no retrieve task {unknown[0]!r} "
                             f"({len(unknown)} unknown): the question plan was made on other data")
        return tuple(by_id[q] for q in questions)

    def sample_for_exam(
        self, n: int | None = None, seed: int = 0
    ) -> tuple[list[EpisodeRecorder], list[PartialRecorder]]:
        """`n` update episodes and `n` retrieve-task partials of the train split for the quick
        exam, sampled with `seed`; episodes keep their update order."""
        n = n or self.config.exam_tasks
        rng = random.Random(seed)
        episodes = self.update_episodes("train")
        chosen = sorted(rng.sample(range(len(episodes)), min(n, len(episodes))))
        partials = list(self.partials("train").values())
        return [episodes[i] for i in chosen], rng.sample(partials, min(n, len(partials)))

    # evaluation -------------------------------------------------------------------------

    def evaluate(
        self,
        source: str,
        *,
        split: str = "train",
        evidence_dir: Path | None = None,
        node_id: Any = None,
        sample_seed: int = 0,
        questions: Sequence[str] | None = None,
    ) -> EvaluationResult:
        """Score `source` on the split's retrieve tasks: the ones named by `questions`, in that
        order (a search's sample, `automemo.search.questions`), or else every task (a
        per-category sample of them, drawn with `sample_seed`, when `config.retrieve_fraction`
        < 1). Memory is built from every update episode, except where the benchmark gives each
        task a memory of its own (`memory_groups`)."""
        # Shared inputs first, outside the timing: they are computed once for every candidate.
        collection = self.collection(split)
        tasks = (self.retrieve_tasks(split, sample_seed) if questions is None
                 else self.named_tasks(split, questions))
        groups = memory_groups(self.benchmark, collection.episodes, tasks, self.config.memories_per_session,
                               self.config.update_steps_per_session)
        partials = self.partials(split)
        started = time.perf_counter()
        evidence_dir = Path(evidence_dir) if evidence_dir is not None else None
        services = self._services_factory(node_id) if self._services_factory else None
        self._warm_questions(split, partials, services)
        fatal: MemoCallFailed | None = None
        records: list[evidence_io.TaskEvidence] = []
        sessions: list[MemoSession] = []
        phases = {"open_s": 0.0, "retrieve_phase_s": 0.0}
        for number, (episodes, group) in enumerate((g.episodes, g.tasks) for g in groups):
            if fatal is not None:  # the program did not load: it will not for the next tasks
                records += self._failed_all(group, fatal, evidence_dir)
                continue
            memo = MemoSession(
                self.sandbox,
                source,
                limits=self.config.limits,
                services=services,
                store_root=self.store.root,
                max_restarts=self.config.max_session_restarts,
            )
            sessions.append(memo)
            of = f" ({number + 1}/{len(groups)})" if len(groups) > 1 else ""
            try:
                opened = time.perf_counter()
                try:
                    memo.start()
                except MemoCallFailed as exc:
                    fatal = exc
                phases["open_s"] += time.perf_counter() - opened
                if fatal is None:
                    with track(f"updating memory{of}", len(episodes), quiet=self.config.quiet) as bar:
                        memo.load(episodes, bar)
                    retrieving = time.perf_counter()
                    records += self._run_tasks(memo, group, partials, evidence_dir, of)
                    phases["retrieve_phase_s"] += time.perf_counter() - retrieving
            finally:
                memo.close()
            if fatal is not None:
                records += self._failed_all(group, fatal, evidence_dir)
        order = {t.task_id: i for i, t in enumerate(tasks)}
        records.sort(key=lambda r: order[r.result.task_id])
        result = summarize(
            [r.result for r in records],
            update_s=sum(m.update_s for m in sessions),
            wall_s=time.perf_counter() - started,
            update_error_kinds=[f.kind for m in sessions for f in m.update_failures],
            info={**self._info(split, node_id, source, collection, sessions, records, fatal),
                  "n_update": sum(len(g.episodes) for g in groups), "sessions": len(sessions), **phases},
        )
        result = dataclasses.replace(result, exact=self.exact and len(tasks) == len(self.split(split).retrieve)
                                     and not result.excluded, cost=summarize_cost(
                                         (m.cost for m in sessions), getattr(getattr(services, "meter", None), "rates_used", None)).to_dict())
        if evidence_dir is not None:
            evidence_io.write_summary(
                evidence_dir,
                result,
                store_root=self.store.root,
                update_failures=[f.to_dict() for m in sessions for f in m.update_failures],
            )
        self._check_excluded_share(result, node_id)
        return result

    def _failed_all(self, tasks: Sequence[Task], fatal: MemoCallFailed,
                    evidence_dir: Path | None) -> list[evidence_io.TaskEvidence]:
        records = [self._failed(t, fatal, 0.0) for t in tasks]
        for record in records:
            self._write_task(evidence_dir, record)
        return records

    def _check_excluded_share(self, result: EvaluationResult, node_id: Any) -> None:
        total, excluded = len(result.tasks), len(result.excluded)
        if not total or excluded / total <= self.config.max_excluded_share:
            return
        first = next(t for t in result.tasks if t.excluded)
        who = f"node #{node_id}" if node_id is not None else "the program"
        raise TooManyExcluded(
            f"the evaluation of {who} excluded {excluded} of {total} tasks "
            f"({excluded / total:.0%}, the limit is {self.config.max_excluded_share:.0%}) for failures "
            f"that are not the program's, e.g. {first.task_id}: {first.error}; fix what failed (its "
            f"evidence is kept), or raise evaluation.max_excluded_share"
        )

    def _run_tasks(
        self,
        memo: MemoSession,
        tasks: Sequence[Task],
        partials: dict[str, PartialRecorder],
        evidence_dir: Path | None,
        of: str = "",
    ) -> list[evidence_io.TaskEvidence]:
        records = []
        with track(f"retrieve tasks{of}", len(tasks), quiet=self.config.quiet) as bar:
            def done(record: evidence_io.TaskEvidence) -> None:
                # Written as each task finishes, so a crash mid-evaluation keeps what was seen.
                self._write_task(evidence_dir, record)
                records.append(record)
                bar.advance()

            # The memo session stays here: retrieve runs on this thread, in task order, as the
            # executor asks for the next job (frozen memory: a fixed order, never a thread
            # race), and only the episode goes to a worker.
            jobs = self._jobs(memo, tasks, partials, done)
            for outcome in self._executor.map(self._player, jobs, lost=lost_outcome):
                done(self._record(outcome))
        return records

    def _retrieve(self, memo: MemoSession, task: Task,
                  partial: PartialRecorder) -> EpisodeJob | evidence_io.TaskEvidence:
        """The task's job for the player, or its failed record if `retrieve` failed. A host
        service failing during the call is retried (the memory is frozen, so a retrieve can be
        asked again), then the task is excluded."""
        started = time.perf_counter()
        host_errors: list[str] = []
        for _ in range(self.config.infra_retries + 1):
            try:
                raw, retrieve_s = memo.retrieve(partial)
                break
            except MemoCallFailed as exc:
                return self._failed(task, exc, time.perf_counter() - started)
            except HostServiceFailed as exc:
                host_errors.append(str(exc))
        else:
            return self._excluded(task, FailureKind.INFRASTRUCTURE, host_errors[-1],
                                  time.perf_counter() - started, infra_errors=host_errors)
        return EpisodeJob(task, raw.truncated(self.config.budget), retrieve_s, started)

    def _jobs(self, memo, tasks, partials, failed: Callable[[evidence_io.TaskEvidence], None]):
        for task in tasks:
            job = self._retrieve(memo, task, partials[task.task_id])
            if isinstance(job, EpisodeJob):
                yield job
            else:
                failed(job)

    def _record(self, outcome: EpisodeOutcome) -> evidence_io.TaskEvidence:
        job, task, payload = outcome.job, outcome.job.task, outcome.job.payload
        infra_errors = outcome.infra_errors
        if outcome.failed is not None:
            kind, detail, tb = outcome.failed
            if kind.charged_to_program:  # the agent broke on this payload: the program's 0
                return self._failed(task, MemoCallFailed("agent", detail, tb), elapsed(job),
                                    payload=payload, retrieve_s=job.retrieve_s, failure=kind)
            return self._excluded(task, kind, detail, elapsed(job), payload=payload, traceback=tb,
                                  retrieve_s=job.retrieve_s, infra_errors=infra_errors)
        if outcome.episode is None:
            return self._excluded(task, FailureKind.INFRASTRUCTURE, infra_errors[-1], elapsed(job),
                                  payload=payload, retrieve_s=job.retrieve_s, infra_errors=infra_errors)
        episode, score = outcome.episode, outcome.score
        return evidence_io.TaskEvidence(
            result=TaskResult(
                task_id=task.task_id,
                category=task.category,
                score=score.value,
                metrics=dict(score.metrics),
                counted=score.counted,
                payload=payload,
                episode_path=evidence_io.episode_rel_path(task.task_id),
                feedback=score.feedback,
                steps=len(episode.steps) or int(episode.usage.get("steps", 0) or 0),
                tokens=usage_tokens(episode.usage),
                wall_s=elapsed(job),
            ),
            episode=episode,
            retrieve_s=job.retrieve_s,
            attempts=len(infra_errors) + 1,
            infra_errors=tuple(infra_errors),
        )

    def _failed(
        self,
        task: Task,
        exc: MemoCallFailed,
        wall_s: float,
        *,
        payload: MemoryPayload | None = None,
        retrieve_s: float = 0.0,
        failure: FailureKind = FailureKind.PROGRAM,
    ) -> evidence_io.TaskEvidence:
        """A task the program (or the agent on its payload) failed: 0 on every metric. Whether
        it counts, and which metrics it zeroes, is asked of the benchmark's scorer with an
        empty episode, so a failed AR question stays out of a retrieval-mode mean."""
        counted, metrics = self._failure_shape(task)
        return evidence_io.TaskEvidence(
            result=TaskResult(
                task_id=task.task_id,
                category=task.category,
                score=0.0,
                metrics=metrics,
                counted=counted,
                error=f"{exc.kind}: {exc.detail}",
                payload=payload,
                wall_s=wall_s,
                failure=failure,
            ),
            traceback=exc.traceback,
            retrieve_s=retrieve_s,
        )

    @staticmethod
    def _excluded(
        task: Task,
        kind: FailureKind,
        detail: str,
        wall_s: float,
        *,
        payload: MemoryPayload | None = None,
        traceback: str = "",
        retrieve_s: float = 0.0,
        infra_errors: Sequence[str] = (),
    ) -> evidence_io.TaskEvidence:
        """A task that failed for a reason that is not the program's (`kind`: the scorer's or
        the infrastructure's): left out of the mean and reported."""
        return evidence_io.TaskEvidence(
            result=TaskResult(
                task_id=task.task_id,
                category=task.category,
                score=0.0,
                excluded=True,
                error=f"{kind.value}: {detail}",
                payload=payload,
                wall_s=wall_s,
                failure=kind,
            ),
            traceback=traceback,
            retrieve_s=retrieve_s,
            attempts=max(1, len(infra_errors)),
            infra_errors=tuple(infra_errors),
        )

    def _failure_shape(self, task: Task) -> tuple[bool, dict[str, float]]:
        # Cached per category: what counts and which metrics exist depend on the task's kind,
        # and a probe may cost a judge call.
        with self._lock:
            if task.category in self._shapes:
                return self._shapes[task.category]
        empty = EpisodeRecorder(
            task_id=task.task_id, benchmark=task.benchmark, instruction=task.instruction
        )
        try:
            probe = self.benchmark.ranked_score(task, empty, MemoryPayload())
            shape = (probe.counted, {name: 0.0 for name in probe.metrics})
        except Exception:
            shape = (True, {})
        with self._lock:
            self._shapes[task.category] = shape
        return shape

    def _write_task(self, evidence_dir: Path | None, record: evidence_io.TaskEvidence) -> None:
        if evidence_dir is not None:
            evidence_io.write_task(evidence_dir, record)

    def _info(self, split, node_id, source, collection, sessions, records, fatal) -> dict[str, Any]:
        retrieve_times = [r.retrieve_s for r in records if r.retrieve_s > 0]
        return {
            "split": split,
            "node_id": node_id,
            "benchmark": self.benchmark.name,
            "sandbox": self.sandbox.name,
            "program_sha256": hashlib.sha256(source.encode()).hexdigest(),
            "concurrency": self._executor.workers,
            "budget": self.config.budget.to_dict(),
            "update_group": collection.group,
            "n_update_applied": sum(m.applied for m in sessions),
            "update_failures": sum(len(m.update_failures) for m in sessions),
            "update_excluded": list(collection.excluded),
            "session_restarts": sum(m.restarts for m in sessions),
            "replay_s": sum(m.replay_s for m in sessions),
            "retrieve_s_mean": sum(retrieve_times) / len(retrieve_times) if retrieve_times else 0.0,
            "infra_retries": sum(len(r.infra_errors) for r in records),
            "fatal": f"{fatal.kind}: {fatal.detail}" if fatal else None,
            # Read by the breakdown (automemo.evaluation.breakdown): figures with and without them.
            "adversarial_categories": sorted(self.benchmark.adversarial_categories()),
        }
