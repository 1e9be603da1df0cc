"""The `Benchmark` interface.

A benchmark hands out deterministic, stratified splits:
- "train": `update` tasks (whose episodes every candidate learns from) and `retrieve` tasks
  (the search-validation batch that scores candidates during search);
- "test": held out, used only by `automemo eval`; it has its own `retrieve` tasks and the
  `update` tasks whose episodes build memory before them (e.g. the test users' sessions in
  Mini-Gallery, or the train update batch in MiniWoB++).

Episodes are produced by `run_episode`: with the fixed agent for interactive benchmarks, or
directly from data for conversation benchmarks (Mini-Gallery sessions need no agent).
`run_episode` is called from several threads at once; a benchmark guards its own resources.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Mapping

from automemo.contract import EpisodeRecorder, MemoryPayload, PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.errors import HostError


@dataclass(frozen=True)
class Task:
    """One benchmark task. `category` stratifies splits and per-category scores (question type,
    site, task family); `data` is the benchmark's own (gold answer, clues, env name, seed...)."""

    task_id: str
    benchmark: str
    category: str
    instruction: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Split:
    name: str
    update: tuple[Task, ...]
    retrieve: tuple[Task, ...]

    @property
    def scored(self) -> tuple[Task, ...]:
        """The retrieve tasks a score is made of: all but a label-free search's guard questions
        (`Task.data["guard"]`), which are asked only to hold a selection to their metric. A
        router or ranking stage fitted on them, or a question budget's samples drawn from
        them, would spend itself on what the score never counts."""
        return tuple(t for t in self.retrieve if not (t.data or {}).get("guard"))


@dataclass(frozen=True)
class TaskScore:
    """A retrieve task's score. `value` in [0, 1] is what the search averages; `metrics` holds
    the benchmark's named metrics (e.g. recall@10, ndcg@10, f1, em); `counted` is False for
    tasks a metric excludes (Mini-Gallery's AR in retrieval mode)."""

    value: float
    metrics: Mapping[str, float] = field(default_factory=dict)
    counted: bool = True
    feedback: str = ""


RETRIEVAL_SEARCH_DEFAULTS: Mapping[str, Any] = {
    # Deterministic scoring: one evaluation over every validation question is exact, so it
    # scores all of them (a sample would make it noisy again) and the search reads uncertainty
    # from the per-task scores (search.uncertainty = "auto" sees the exact evaluations). On
    # Mini-Gallery a per-category half sample (0.5) let the LCB pick nodes whose lead of
    # 0.02-0.05 came from an easy half: over search seeds 0-2 the selection scored 0.814 on the
    # test split against murag's 0.841.
    "evaluation": {"retrieve_fraction": 1.0},
    # The no-memory root cites nothing and scores exactly 0, so the root-relative prior
    # κ·max(0, μ(v) − μ(r)) would credit every node with its whole score: every fresh node would
    # outbid its own children's evidence. Potential comes from observed child gains alone.
    # The seeds are evaluated first (a step each): every hand design is a candidate and the
    # bar the selection is held to, and the generator builds on the strongest.
    "search": {"kappa": 0.0, "seed_sweep": True},
}
"""Search defaults of a benchmark scored in retrieval mode (cited evidence against clues)."""


class InfrastructureError(HostError, RuntimeError):
    """The episode failed for a reason that is not the memo program's or the agent's fault
    (browser crash, page-load failure, API error). The harness retries, then excludes it."""


class Benchmark(abc.ABC):
    name: str = "abstract"
    family: str = "abstract"  # "web" | "visual" | "conversation"

    question_time_keys: frozenset[str] = frozenset()
    """Metadata keys this benchmark's retrieve tasks carry beyond the contract's allow-list
    (`automemo.contract.RETRIEVE_METADATA_KEYS`: user, time, budget), because an application
    knows them at question time too (a web task's site and start URL). The harness drops every
    other key before `retrieve`, with one notice naming the unknown ones: never declare a label."""

    @abc.abstractmethod
    def split(self, name: str) -> Split:
        """The "train" or "test" split. Deterministic for the benchmark's seed."""

    @abc.abstractmethod
    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        """What is known before the first turn (the input of `retrieve`). Images it needs are
        written to `store` so that the sandbox can read them."""

    @abc.abstractmethod
    def run_episode(
        self,
        task: Task,
        agent: Any,
        payload: MemoryPayload | None,
        store: EpisodeStore,
    ) -> EpisodeRecorder:
        """Run `task` with `agent` and memory `payload` (None: no memory). Raises
        `InfrastructureError` for failures that are not the agent's."""

    @abc.abstractmethod
    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        """Score a retrieve task from its episode and the payload it was given."""

    def agent_kind(self) -> str | None:
        """The fixed execution agent this benchmark needs: "web", "visual", or None when it
        scores without one (e.g. retrieval quality of cited evidence). A benchmark of one's own
        overrides it to declare its agent."""
        return "web" if self.family == "web" else "visual"

    def scoring_is_deterministic(self) -> bool:
        """True when a retrieve task's score is a pure function of the payload (no agent, no
        judge, no live site). An evaluation over every task is then exact: a repeat returns the
        same number, and the search takes its uncertainty from the per-task scores instead
        (docs/search.md). Default False: the paper's repeat-based formulas."""
        return False

    def memory_scope(self, task: Task) -> str | None:
        """The scope (`episode.metadata["user"]`) whose update episodes alone make up the memory
        that retrieve task `task` is asked of, when the benchmark's protocol gives each task a
        memory of its own (LongMemEval: each question has its own haystack); None (the default)
        when a task may be answered from every update episode. An evaluation of a sample of the
        tasks then builds only the sampled tasks' memories (`evaluation.harness`)."""
        return None

    @classmethod
    def search_defaults(cls, options: Any) -> Mapping[str, Any]:
        """Run-config keys (nested, as in presets/default.toml) that a search on this benchmark
        with `options` gets by default, e.g. every validation question scored. A class method:
        the config is resolved before the benchmark reads its data. They rank above the
        defaults and below presets, config files and flags, key by key (`automemo.resolution`;
        `automemo config show` prints them with their source)."""
        return {}

    @classmethod
    def metric_names(cls, options: Any) -> tuple[str, ...]:
        """The per-task metrics a benchmark with `options` scores (`TaskScore.metrics`), by
        name, the one its score's value is first. A search ranks programs by the first, or by
        the one the option `metric` names (`ranking_metric`). A class method: the name is
        checked before the benchmark reads its data. Default: none declared (the value only)."""
        return ()

    @classmethod
    def guard_metrics(cls, options: Any) -> tuple[str, ...]:
        """Metrics a selection must not lose to the best hand design on by more than one paired
        standard error, besides the one it ranks by (`automemo.search.policy.guard_checks`): the
        figures a user of this benchmark judges a memory by (LoCoMo's session any-hit,
        LongMemEval's official session recall). A class method, like `metric_names`; a benchmark
        of one's own overrides it to declare its own. Default: none."""
        return ()

    @classmethod
    def ranking_metric(cls, options: Any) -> str:
        """The metric a search on this benchmark ranks programs by: the option `metric` when
        set, else the benchmark's first metric ("value" when it declares none)."""
        chosen = getattr(options, "metric", "") or ""
        return chosen or next(iter(cls.metric_names(options)), "value")

    def ranked_score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        """`score` with the value the search averages set to the option `metric`'s
        (`ranked_by`); the score itself when no metric is chosen. What the harness records."""
        score = self.score(task, episode, payload)
        chosen = getattr(getattr(self, "options", None), "metric", "") or ""
        return ranked_by(score, chosen) if chosen else score

    def adversarial_categories(self) -> frozenset[str]:
        """Categories whose questions are adversarial (their answer was never given: LoCoMo's
        category 5, Mem-Gallery's AR). Published figures are quoted with and without them; the
        breakdown of `automemo eval` and the report show both. Default: none."""
        return frozenset()

    def describe(self) -> dict[str, Any]:
        """Config-like facts for the run record (sizes, seed, scoring mode)."""
        return {"name": self.name, "family": self.family}

    def close(self) -> None:
        """Release browsers, pools, temp dirs."""


def ranked_by(score: TaskScore, metric: str) -> TaskScore:
    """`score` with `metric`'s value as the value a search averages. A task that has no such
    metric (session any-hit of a question without evidence in a session) is not counted, and
    a task its benchmark does not count stays uncounted: the metric changes what is averaged,
    never which questions are labels."""
    if metric not in score.metrics:
        why = f"not counted: no {metric} for this task"
        return TaskScore(0.0, score.metrics, counted=False,
                         feedback="; ".join(f for f in (why, score.feedback) if f))
    return TaskScore(float(score.metrics[metric]), score.metrics, counted=score.counted, feedback=score.feedback)


def check_metric(name: str, cls: type[Benchmark], options: Any) -> None:
    """Refuse an option `metric` the benchmark does not score, naming the ones it does."""
    chosen = getattr(options, "metric", "") or ""
    if not chosen:
        return
    valid = cls.metric_names(options)
    if chosen not in valid:
        raise ValueError(f"benchmark {name!r}: metric {chosen!r} is not one it scores with these options; "
                         f"choose one of: {', '.join(valid) or '(none declared: leave metric unset)'}")
