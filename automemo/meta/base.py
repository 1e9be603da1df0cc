"""The meta agent's interface: diagnose a parent from its evidence and write a child,
repair a child that failed its quick exam, or write a program from nothing.

Two implementations: the LLM meta agent (prompts in `prompts/`) and the offline parameter
mutator. The search loop only sees this interface.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from automemo.errors import AutomemoError
from automemo.evaluation.result import EvaluationResult


@dataclass(frozen=True)
class Improvement:
    """An earlier parent→child step that raised the score: shown to the meta agent as an example."""

    parent_id: int
    child_id: int
    parent_score: float
    child_score: float
    summary: str
    diff: str = ""


@dataclass(frozen=True)
class ChildAttempt:
    """An earlier child of a parent: what was tried and what came of it."""

    node_id: int
    summary: str
    score: float | None     # its first score; None when it failed before being evaluated
    failure: str = ""       # why it failed ("" if it was evaluated)


@dataclass(frozen=True)
class ParentView:
    node_id: int
    source: str
    score: float
    n_evals: int
    evaluation: EvaluationResult | None   # the latest full evaluation, with its evidence
    evidence_dir: str | None = None        # where that evaluation's episodes and images are
    children: tuple[ChildAttempt, ...] = ()  # its earlier children, oldest first


@dataclass(frozen=True)
class ScoredTask:
    """One scored retrieve task of an evaluation: its category and score, and its question text
    when the evidence recorded it (what a question router is fitted on, on the host)."""

    category: str
    score: float
    question: str = ""


@dataclass(frozen=True)
class ScoredProgram:
    """An evaluated program of the tree: its mean over n evaluations, the per-category scores
    of its latest one (what a meta agent needs to pick a partner strong where a parent is weak)
    and, when its evidence could be read, that evaluation's scored tasks by task id (to compare
    two programs question by question)."""

    node_id: int
    source: str
    mean: float
    n: int
    per_category: Mapping[str, float] = field(default_factory=dict)
    tasks: Mapping[str, ScoredTask] = field(default_factory=dict)


def scored_tasks(result: EvaluationResult, questions: Mapping[str, str] | None = None) -> dict[str, ScoredTask]:
    """The tasks of `result` that count toward its mean, by task id, with their question text
    from `questions` (task id -> instruction, e.g. `evidence_questions`) when given."""
    questions = questions or {}
    return {t.task_id: ScoredTask(t.category, t.score, questions.get(t.task_id, "")) for t in result.tasks
            if t.counted and not t.excluded}


def evidence_questions(evidence: Any) -> dict[str, str]:
    """Task id -> the task's instruction, from an evaluation's evidence (`read_evidence`)."""
    return {t.result.task_id: t.episode.instruction for t in evidence.tasks if t.episode is not None}


@dataclass(frozen=True)
class Proposal:
    """A candidate program plus why it was written. `summary` is the one-line change summary the
    tree shows; `diagnosis` the structured analysis (JSON) that led to it; `usage` tokens/cost."""

    source: str
    summary: str
    diagnosis: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)


class MetaError(AutomemoError, RuntimeError):
    """The meta agent could not produce a usable proposal (invalid JSON twice, no code block...).
    The step fails cleanly; the message says why."""


class MetaAgent(abc.ABC):
    @abc.abstractmethod
    def propose(
        self, parent: ParentView, improvements: Sequence[Improvement], *, node_id: int, seed: int
    ) -> Proposal:
        """Analyse `parent` and write a child. `node_id` is the id the child will get (for the
        ledger); `seed` makes offline choices reproducible."""

    @abc.abstractmethod
    def repair(
        self, source: str, exam_report: Mapping[str, Any], attempt: int, *, node_id: int, seed: int
    ) -> Proposal:
        """Fix `source`, which failed the quick exam described by `exam_report`."""

    @abc.abstractmethod
    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        """Write a program from nothing but the task description and the interface."""

    def observe_tree(self, sources: Sequence[str]) -> None:
        """The programs the tree already holds (failed generations included), told by the search
        before each generate action, so that an agent can avoid proposing them again (the
        offline mutator prefers seeds not yet tried). Default: ignored."""

    def observe_scores(self, programs: Sequence[ScoredProgram]) -> None:
        """The tree's evaluated programs with their scores, told before each generate action
        (the offline mutator picks crossover partners and transplants from them). Default:
        ignored."""
