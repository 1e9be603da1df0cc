"""The typed records of a run directory: what one step writes, and what every reader gets back.

The search loop and the synthetic run generator write these (never hand-built dicts), the
journal turns them into rows, and `automemo.search.view.RunView` reads them back. What happened
in a step is an `Outcome`, a type, never the prefix of a message.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

# transplant: a swept seed; discovered: the discovered default, swept as a candidate
NodeAction = Literal["root", "generate", "transplant", "discovered"]
NodeStatus = Literal["evaluated", "failed"]


class Outcome(str, enum.Enum):
    """What a committed step came to. Stored as its value in `actions.outcome`."""

    EVALUATED = "evaluated"      # a full evaluation was committed (root, re-evaluation or child)
    FAILED_EXAM = "failed_exam"  # the child failed its quick exam after every repair attempt
    META_ERROR = "meta_error"    # the meta agent produced no usable program
    EVAL_ERROR = "eval_error"    # the evaluation broke beyond its own retries
    # Every proposal (or a repair) repeated a program of the tree (same normalised syntax tree):
    # nothing was examined or evaluated (search/generation.py says why the step is still spent).
    DUPLICATE = "duplicate"

    @property
    def failed_generation(self) -> bool:
        return self is not Outcome.EVALUATED

    def __str__(self) -> str:
        return self.value


def _from_row(cls: type, row: Mapping[str, Any]) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in row.items() if k in names})


@dataclass(frozen=True)
class NodeRecord:
    """One node: a program in the tree, or a failed generation (status "failed", no scores)."""

    id: int
    parent: int | None
    action: NodeAction
    status: NodeStatus
    summary: str                        # the one-line change summary shown in the tree
    program_path: str = ""              # relative to the run directory; "" if none was produced
    program_sha256: str = ""
    parent_snapshot: float | None = None  # s_par: the parent's μ when this child was generated
    repair_attempts: int = 0
    failure: str = ""                   # why a failed generation failed ("" otherwise)
    step: int = 0
    created_at: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> NodeRecord:
        record = _from_row(cls, row)
        return dataclasses.replace(record, failure=record.failure or "", summary=record.summary or "",
                                   program_path=record.program_path or "",
                                   repair_attempts=record.repair_attempts or 0, step=record.step or 0)

    def to_row(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        for key in ("step", "created_at"):  # the journal stamps them when the step commits
            row.pop(key)
        return row


@dataclass(frozen=True)
class EvaluationRecord:
    """The k-th full evaluation of a node (k = 0 is the first)."""

    node_id: int
    k: int
    mean: float
    n_scored: int = 0
    metrics: Mapping[str, Any] = field(default_factory=dict)
    per_category: Mapping[str, Any] = field(default_factory=dict)
    excluded: tuple[Any, ...] = ()
    errors: Mapping[str, Any] = field(default_factory=dict)
    tokens: int = 0
    wall_s: float = 0.0
    update_s: float = 0.0
    evidence_dir: str = ""              # relative to the run directory
    exact: bool = False                 # deterministic scoring of every task (EvaluationResult.exact)
    task_scores: Mapping[str, float] = field(default_factory=dict)  # counted tasks' scores by id
    # The benchmark's guard metrics per task (metric -> task id -> value; Benchmark.guard_metrics):
    # what the final selection is held to besides the score. Empty before it was recorded.
    guard_scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # Every validation question this evaluation asked, in order (counted or not): what it cost
    # against a question budget, and what a later sample of the node must not ask again. Empty
    # in a run made before it was recorded.
    questions: tuple[str, ...] = ()
    # Early stopping (search with a question budget): why the node's first sample ends its
    # scoring ("" when it goes on); set only on a node's first evaluation.
    stopped: str = ""
    # The program's cost figures (automemo.evaluation.cost; docs/cost.md): empty in a run made
    # before they were recorded.
    cost: Mapping[str, Any] = field(default_factory=dict)
    step: int = 0
    created_at: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> EvaluationRecord:
        record = _from_row(cls, row)
        return dataclasses.replace(record, excluded=tuple(record.excluded or ()),
                                   metrics=record.metrics or {}, per_category=record.per_category or {},
                                   errors=record.errors or {}, exact=bool(record.exact),
                                   task_scores=record.task_scores or {},
                                   questions=tuple(record.questions or ()), stopped=record.stopped or "",
                                   cost=record.cost or {})

    @property
    def asked(self) -> int:
        """Questions this evaluation cost: those recorded, else (an older run) those it scored."""
        return len(self.questions) or len(self.task_scores)

    def to_row(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        row["excluded"] = list(self.excluded)
        row["questions"] = list(self.questions)
        for key in ("step", "created_at"):
            row.pop(key)
        return row


# The kinds of step that count against `search.steps`; the root's evaluation is step 0, and a
# "confirm" step (the final confirmation of a search with a question budget) comes after them.
SEARCH_STEP_KINDS = frozenset({"evaluate", "generate", "transplant"})


@dataclass(frozen=True)
class ActionRecord:
    """One committed step: what the policy chose and what came of it."""

    step: int
    # "evaluate_root" | "evaluate" | "generate" | "transplant" | "confirm"
    kind: str
    node_id: int
    outcome: Outcome
    detail: str = ""                    # one line for the log and the display
    child_id: int | None = None         # the node a generate action made (failed ones too)
    policy_score: float | None = None   # U_eval / U_gen when the action was chosen
    candidates: tuple[Mapping[str, Any], ...] = ()  # every action weighed, with its score
    wall_s: float = 0.0
    ledger_rowid: int = 0
    created_at: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ActionRecord:
        record = _from_row(cls, row)
        return dataclasses.replace(record, outcome=Outcome(record.outcome),
                                   candidates=tuple(record.candidates or ()), detail=record.detail or "",
                                   wall_s=record.wall_s or 0.0)

    def to_row(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        row["outcome"] = self.outcome.value
        row["candidates"] = [dict(c) for c in self.candidates]
        for key in ("step", "ledger_rowid", "created_at"):  # stamped by the journal at commit
            row.pop(key)
        return row


@dataclass(frozen=True)
class DiagnosisRecord:
    """`nodes/<id>/diagnosis.json` of a generated node: what the meta agent saw and changed."""

    summary: str
    diagnosis: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)
    failure: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DiagnosisRecord:
        return _from_row(cls, data)

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "diagnosis": dict(self.diagnosis),
                "usage": dict(self.usage), "failure": self.failure}
