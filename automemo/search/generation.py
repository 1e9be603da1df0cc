"""One generate action: propose a child, quick-examine it, repair it up to
`repair_attempts` times. Pure orchestration over the meta agent and an exam callable; the loop
decides what to write where.

A proposal identical to a program already in the tree (same normalised AST: docstrings,
comments and layout do not count) is rejected before its exam and the draw is retried (proposed
again with another seed, `duplicate_retries` times): a duplicate costs a meta-agent call, never
an exam or an evaluation. A repair that lands on a program of the tree ends the generation the
same way, before its exam. When every draw repeats the tree, the step is spent as a `duplicate`
(its node is recorded, failed, with the repeated program): retrying the step without end would
let a meta agent that can only repeat itself (an offline crossover with one partner left) loop
forever, and the step budget is what bounds a search's calls.

A spent cap or a dead endpoint (`CALLS_STOPPED`) is never caught here: either abandons the step.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from automemo.failures import InfrastructureFailure
from automemo.llm import CALLS_STOPPED
from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.meta.config import MetaConfig
from automemo.meta.context import GenerationContext, RepairContext
from automemo.meta.source.syntax import normalised
from automemo.programs import DISCOVERED
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
    except (*CALLS_STOPPED, InfrastructureFailure):
        raise  # the run stops (or the host failed): not the program's failed attempt
    except Exception as exc:  # the exam machinery itself broke on this program: a failed attempt
        return False, _failed_report("exam-error", exc)
    return bool(report.passed), report.to_dict()


def generate_child(
    meta: MetaAgent,
    context: GenerationContext,
    *,
    exam: Exam,
    repair_attempts: int,
    repair_seed: Callable[[int], int],
    duplicate_retries: int | None = None,
    claim: Callable[[str], bool] | None = None,
    proposed: Callable[[str], None] | None = None,
) -> Generation:
    """A proposal equal to a program of the tree (`context.tree_sources`) is proposed again up
    to `duplicate_retries` times (default: the meta agent's `[meta] duplicate_retries`), from the same
    context with another seed. `claim(normalised source)`, when given, also rejects what a
    sibling action in flight proposed already: it answers False for a program claimed before,
    else records it and answers True. `proposed(source)` is told every proposal drawn (what
    sibling actions are shown as in flight)."""
    if duplicate_retries is None:
        # A meta agent without a MetaConfig (a test double, a plug-in) gets the configured default.
        duplicate_retries = getattr(getattr(meta, "config", None), "duplicate_retries",
                                    MetaConfig().duplicate_retries)
    known = {normalised(s) for s in context.tree_sources}
    usage: list[dict[str, Any]] = []
    duplicates: list[str] = []
    seed = context.seed
    for again in range(duplicate_retries + 1):
        drawn = context if again == 0 else context.reseeded(seed + 7919 * again)
        try:
            proposal: Proposal = meta.propose(drawn)
        except CALLS_STOPPED:
            raise
        except MetaError as exc:
            return Generation(False, None, "meta agent failed", {"duplicates_rejected": duplicates},
                              (), failure=f"meta: {exc}", usage={"calls": usage},
                              failed_as=Outcome.META_ERROR)
        usage.append(dict(proposal.usage))
        if proposed is not None:
            proposed(proposal.source)
        shape = normalised(proposal.source)
        if shape not in known and (claim is None or claim(shape)):
            break
        duplicates.append(proposal.summary)
    else:
        return Generation(False, proposal.source, proposal.summary,
                          {**dict(proposal.diagnosis), "duplicates_rejected": duplicates}, (),
                          failure=f"duplicate: {len(duplicates)} proposal(s) in a row repeated a program "
                                  "of the tree (same code once docstrings and comments are ignored)",
                          usage={"calls": usage}, failed_as=Outcome.DUPLICATE)
    source, summary = proposal.source, proposal.summary
    passed, report = _examine(exam, source)
    attempts = [ExamAttempt(0, source, passed, report, summary)]
    for attempt in range(1, repair_attempts + 1):
        if passed:
            break
        try:
            fixed = meta.repair(RepairContext(source, report, attempt, node_id=context.node_id,
                                              seed=repair_seed(attempt), generation=drawn,
                                              author=proposal.author))
        except CALLS_STOPPED:
            raise
        except MetaError as exc:
            # A repair that produced nothing is a spent attempt; the next one retries the same
            # source with the same exam report.
            attempts.append(ExamAttempt(attempt, None, False, _failed_report("meta", exc)))
            continue
        source = fixed.source
        usage.append(dict(fixed.usage))
        if normalised(source) in known:  # the repair went back to a program of the tree
            attempts.append(ExamAttempt(attempt, source, False, {"passed": False, "failed_check": "duplicate"},
                                        fixed.summary))
            return Generation(False, source, summary, {**dict(proposal.diagnosis), "duplicates_rejected":
                                                       [*duplicates, fixed.summary]}, tuple(attempts),
                              failure="duplicate: a repair repeated a program of the tree (same code once "
                                      "docstrings and comments are ignored); not examined again",
                              usage={"calls": usage}, failed_as=Outcome.DUPLICATE)
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
        diagnosis={**dict(proposal.diagnosis), **({"duplicates_rejected": duplicates} if duplicates else {})},
        attempts=tuple(attempts),
        failure=failure,
        usage={"calls": usage},
        failed_as=None if passed else Outcome.FAILED_EXAM,
    )


def transplant_child(seed_name: str, source: str, *, exam: Exam) -> Generation:
    """A swept seed put under the root (`search.seed_sweep`): examined once like any child, so a
    seed that cannot run on this benchmark is a failed node with its reason, never repaired
    (a hand design is taken as it is)."""
    summary = "discovered default (sweep)" if seed_name == DISCOVERED else f"seed {seed_name} (sweep)"
    passed, report = _examine(exam, source)
    failure = "" if passed else (f"exam: {report.get('failed_check') or 'failed'}: "
                                 f"{str(report.get('error', ''))[:300]}")
    return Generation(passed=passed, source=source, summary=summary,
                      diagnosis={"mutation": {"kind": "transplant", "seed": seed_name, "sweep": True,
                                              "why": "the seed sweep puts every hand design in the tree"}},
                      attempts=(ExamAttempt(0, source, passed, report, summary),), failure=failure,
                      failed_as=None if passed else Outcome.FAILED_EXAM)
