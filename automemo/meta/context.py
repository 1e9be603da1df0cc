"""What a meta agent is told for one call: a frozen generation context.

A meta agent keeps nothing between calls. Everything one `propose` needs (the parent, parsed
once; the tree as the action's committed snapshot shows it; the children other actions are
writing right now; the node id and seed that make its choices reproducible; the run's budget)
comes in a `GenerationContext`, and everything a `repair` needs in a `RepairContext`, which
also carries the generation's own context (the original parent a repair may revert to).
So K generate actions in flight are K independent calls: no lock, no shared observation.

Also here, because every meta module reads them the same way: the parent's weak question
types (`weak_types`).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from automemo.content_memo import by_content
from automemo.contract import Budget
from automemo.meta.source import syntax
from automemo.evaluation.cost_bounds import CostBounds
from automemo.evaluation.result import EvaluationResult
from automemo.meta.source.liveness import live_tunables
from automemo.meta.source.recipe import Recipe, parse_recipe
from automemo.meta.source.tunables import Tunable, TunableError, parse_tunables, skeleton

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


def weak_types(per_category: Mapping[str, float], mean: float | None = None,
               limit: int | None = None) -> list[str]:
    """The question types weakest first (ties by name); with `mean`, only those scored below it;
    with `limit`, at most that many."""
    ranked = [c for c, s in sorted(per_category.items(), key=lambda kv: (kv[1], kv[0]))
              if mean is None or s < mean]
    return ranked if limit is None else ranked[:limit]


@dataclass(frozen=True)
class ParsedSource:
    """A program read once: its syntax tree (None when it does not parse), its declared tunables
    (none when its markers are malformed) and its recipe (None when it is not one). Derived
    readings (live tunables, skeleton) are computed from the tree on first use. The tree is
    shared: readers must not change it."""

    source: str
    tree: ast.Module | None = field(compare=False, repr=False)
    tunables: tuple[Tunable, ...]
    recipe: Recipe | None
    malformed: str = ""     # why its tunable markers cannot be read ("" when they can)

    @classmethod
    def of(cls, source: str) -> ParsedSource:
        try:
            tree = syntax.parse(source)
        except (SyntaxError, ValueError):
            tree = None
        tunables: tuple[Tunable, ...] = ()
        malformed = ""
        try:
            tunables = tuple(parse_tunables(source, tree=tree)) if tree is not None else ()
        except TunableError as exc:
            malformed = str(exc)   # a program whose markers are malformed has nothing one may safely turn
        recipe = parse_recipe(source, tree=tree) if tree is not None else None
        return cls(source, tree, tunables, recipe, malformed)

    @functools.cached_property
    def live_tunables(self) -> tuple[Tunable, ...]:
        """The declared tunables that code reachable from the memo class reads."""
        if self.tree is None:
            return self.tunables
        return tuple(live_tunables(self.source, self.tunables, tree=self.tree))

    @functools.cached_property
    def normalised(self) -> str:
        """Its identity for duplicate detection (`syntax.normalised`), from a copy of the tree."""
        if self.tree is None:
            return self.source
        return syntax.normalised(self.source, tree=copy.deepcopy(self.tree))

    @functools.cached_property
    def skeleton(self) -> str:
        """The program with its tunables' values blanked (variants of one design share it)."""
        if self.tree is None:
            return self.source
        return skeleton(self.source, tunables=self.tunables, tree=self.tree)


@by_content
def _skeleton_of(source: str) -> str:
    return ParsedSource.of(source).skeleton


@dataclass(frozen=True)
class GenerationContext:
    """One propose call's world, read from the committed tree snapshot its action was chosen on.

    `tree_sources`: every program the tree holds, failed generations included; `scored`: its
    evaluated programs; `siblings_in_flight`: the programs other actions in flight have proposed
    so far (the tree lacks them until they commit); `node_id`: the child's id; `seed`: what
    every choice derives from; `budget`: the run's retrieval budget."""

    parent: ParentView
    parsed: ParsedSource
    node_id: int
    seed: int
    improvements: tuple[Improvement, ...] = ()
    tree_sources: tuple[str, ...] = ()
    scored: tuple[ScoredProgram, ...] = ()
    siblings_in_flight: tuple[str, ...] = ()
    budget: Budget = Budget()
    scored_parent: ScoredProgram | None = None   # the parent as a scored program (its latest evaluation)
    weak: tuple[str, ...] = ()                   # its question types below its mean, weakest first
    # The search's cost bounds (search.max_ingest_ms_per_turn, max_recall_ms): a parent over one
    # is offered cheaper stages (`over_bounds`).
    bounds: CostBounds = CostBounds()

    @classmethod
    def build(cls, parent: ParentView, *, node_id: int, seed: int,
              improvements: Sequence[Improvement] = (), tree_sources: Sequence[str] = (),
              scored: Sequence[ScoredProgram] = (), siblings_in_flight: Sequence[str] = (),
              budget: Budget = Budget(), bounds: CostBounds = CostBounds()) -> GenerationContext:
        """The context of a propose of a child of `parent`: the parent is parsed here, once."""
        scored_parent = None
        weak: tuple[str, ...] = ()
        if parent.evaluation is not None:
            scored_parent = ScoredProgram(node_id=parent.node_id, source=parent.source, mean=parent.score,
                                          n=parent.n_evals, per_category=dict(parent.evaluation.per_category),
                                          tasks=scored_tasks(parent.evaluation))
            weak = tuple(weak_types(parent.evaluation.per_category, parent.score))
        return cls(parent=parent, parsed=ParsedSource.of(parent.source), node_id=node_id, seed=seed,
                   improvements=tuple(improvements), tree_sources=tuple(tree_sources), scored=tuple(scored),
                   siblings_in_flight=tuple(siblings_in_flight), budget=budget,
                   scored_parent=scored_parent, weak=weak, bounds=bounds)

    @property
    def parent_cost(self) -> Mapping[str, Any]:
        """The cost figures of the parent's latest evaluation ({} when not measured)."""
        return dict(self.parent.evaluation.cost) if self.parent.evaluation is not None else {}

    @property
    def over_bounds(self) -> str:
        """Why the parent is over the search's cost bounds ("" within them, no bounds, or a
        parent whose cost was not measured: nothing says it is over)."""
        if not self.bounds.active or not self.parent_cost:
            return ""
        return "; ".join(self.bounds.violations(self.parent_cost))

    def reseeded(self, seed: int) -> GenerationContext:
        """The same context with another seed (a proposal rejected as a duplicate is re-drawn)."""
        return dataclasses.replace(self, seed=seed)

    def read(self, source: str) -> ParsedSource:
        """`source` parsed: the parent's own reading when it is the parent."""
        return self.parsed if source == self.parsed.source else ParsedSource.of(source)

    @functools.cached_property
    def tree_programs(self) -> tuple[ParsedSource, ...]:
        """The tree's programs, each parsed (once per context; the parent's reading reused)."""
        return tuple(self.read(s) for s in self.tree_sources)

    @functools.cached_property
    def tree_recipes(self) -> tuple[Recipe, ...]:
        """The recipes among the tree's programs (each text read once per run: `parse_recipe`)."""
        return tuple(r for s in self.tree_sources for r in [parse_recipe(s)] if r is not None)

    @functools.cached_property
    def tried_skeletons(self) -> frozenset[str]:
        """The skeletons of the tree's programs (variants of a design the tree holds), each text
        read once per run."""
        return frozenset(self.parsed.skeleton if s == self.parsed.source else _skeleton_of(s)
                         for s in self.tree_sources)


@dataclass(frozen=True)
class RepairContext:
    """One repair call's world: `source` failed the quick exam `exam_report` describes;
    `attempt` counts repairs from 1; `generation` is the propose context of the child
    (its parent is the original parent, what a repair may revert to); `author` says which agent
    wrote the proposal ("llm", "offline"; "" unknown); `node_id` and `seed` as for a propose."""

    source: str
    exam_report: Mapping[str, Any]
    attempt: int
    node_id: int
    seed: int
    generation: GenerationContext | None = None
    author: str = ""

    @property
    def original(self) -> ParsedSource | None:
        """The original parent of the failing program, parsed; None when unknown."""
        return self.generation.parsed if self.generation is not None else None
