"""One generate action: propose a child, quick-examine it, repair it up to
`repair_attempts` times. Pure orchestration over the meta agent and an exam callable; the loop
decides what to write where.

`BudgetExceeded` is never caught here: a cap reached mid-generation abandons the step.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from automemo.failures import InfrastructureFailure
from automemo.llm import BudgetExceeded
from automemo.meta.base import Improvement, MetaAgent, MetaError, ParentView, Proposal
from automemo.runs.records import Outcome

Exam = Callable[[str], Any]
"""source -> ExamReport (passed, failed_check, error, ..., `to_dict()`)."""


@dataclass(frozen=True)
class ExamAttempt:
    attempt: int              # 0 = the proposal, 1.. = repairs
    source: str | None        # None when the meta agent produced no program this attempt
    passed: bool
    report: Mapping[str, Any]
    summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "passed": self.passed,
            "summary": self.summary,
            "source_sha256": hashlib.sha256(self.source.encode()).hexdigest() if self.source else None,
            "report": dict(self.report),
        }


@dataclass(frozen=True)
class Generation:
    """What came of one generate action. `source` is the program that passed (or the last one
    tried, for a failed generation); `failure` says why it failed ("" if it passed) and
    `failed_as` what kind of failure that was (None if it passed)."""

    passed: bool
    source: str | None
    summary: str
    diagnosis: Mapping[str, Any]
    attempts: tuple[ExamAttempt, ...]
    failure: str = ""
    usage: Mapping[str, Any] = field(default_factory=dict)
    failed_as: Outcome | None = None


def _failed_report(kind: str, error: BaseException) -> dict[str, Any]:
    return {
        "passed": False,
        "failed_check": kind,
        "error": f"{type(error).__name__}: {error}",
        "traceback_tail": traceback.format_exc(limit=-3),
    }


def _examine(exam: Exam, source: str) -> tuple[bool, dict[str, Any]]:
    try:
        report = exam(source)
    except (BudgetExceeded, InfrastructureFailure):
        raise  # the run stops (or the host failed): not the program's failed attempt
    except Exception as exc:  # the exam machinery itself broke on this program: a failed attempt
        return False, _failed_report("exam-error", exc)
    return bool(report.passed), report.to_dict()


def generate_child(
    meta: MetaAgent,
    parent: ParentView,
    improvements: Sequence[Improvement],
    *,
    node_id: int,
    seed: int,
    exam: Exam,
    repair_attempts: int,
    repair_seed: Callable[[int], int],
) -> Generation:
    try:
        proposal: Proposal = meta.propose(parent, improvements, node_id=node_id, seed=seed)
    except BudgetExceeded:
        raise
    except MetaError as exc:
        return Generation(False, None, "meta agent failed", {}, (), failure=f"meta: {exc}",
                          failed_as=Outcome.META_ERROR)
    source, summary = proposal.source, proposal.summary
    usage = [dict(proposal.usage)]
    passed, report = _examine(exam, source)
    attempts = [ExamAttempt(0, source, passed, report, summary)]
    for attempt in range(1, repair_attempts + 1):
        if passed:
            break
        try:
            fixed = meta.repair(source, report, attempt, node_id=node_id, seed=repair_seed(attempt))
        except BudgetExceeded:
            raise
        except MetaError as exc:
            # A repair that produced nothing is a spent attempt; the next one retries the same
            # source with the same exam report.
            attempts.append(ExamAttempt(attempt, None, False, _failed_report("meta", exc)))
            continue
        source = fixed.source
        usage.append(dict(fixed.usage))
        passed, report = _examine(exam, source)
        attempts.append(ExamAttempt(attempt, source, passed, report, fixed.summary))
    failure = ""
    if not passed:
        last = attempts[-1].report
        failure = f"exam: {last.get('failed_check') or 'failed'}: {str(last.get('error', ''))[:300]}"
    return Generation(
        passed=passed,
        source=source,
        summary=summary,
        diagnosis=dict(proposal.diagnosis),
        attempts=tuple(attempts),
        failure=failure,
        usage={"calls": usage},
        failed_as=None if passed else Outcome.FAILED_EXAM,
    )
