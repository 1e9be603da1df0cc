"""Quick examination: before a child costs a full evaluation it must pass, in the
sandbox, on a few sampled training inputs, six checks in order:

    imports         the program compiles, imports and `Memo(toolkit)` constructs
    defines_memo    it defines class `Memo` with `update` and `retrieve` (confirmed by the
                    guest runner's "describe")
    update          `update` runs on every sample update episode
    retrieve        `retrieve` runs on every sample partial recorder
    payload_schema  each payload is a valid MemoryPayload whose images exist in the store
    payload_budget  each payload survives the retrieval budget's cut: text and images beyond the
                    budget are cut here exactly as in the evaluation (the contract prompt says
                    so), but metadata larger than the whole budget would be dropped entirely

The first failure stops the exam. The report names the check, the input that failed and the
traceback tail; its `for_prompt()` text is what the repair prompt receives.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import Budget, ContractError, EpisodeRecorder, MemoryPayload, PartialRecorder
from automemo.prompting import render
from automemo.sandbox.base import (
    BadResult, HostServices, Limits, ProgramLoadError, Sandbox, SandboxError, SandboxUnavailable,
)
from automemo.toolkit.services import raise_host_failure

CHECKS: dict[str, str] = {
    "imports": "the program compiles, imports and Memo(toolkit) constructs",
    "defines_memo": "it defines class Memo with update and retrieve",
    "update": "update runs on the sample update episodes",
    "retrieve": "retrieve runs on the sample partial recorders",
    "payload_schema": "the payload is a valid MemoryPayload whose images exist",
    "payload_budget": "the payload survives the budget's cut (its metadata alone fits the budget)",
}
_INPUT_STRING_CHARS = 1_000  # long observations are clipped in the report, not in the exam
_MEMO_PROBLEMS = ("no class named Memo", "class Memo has no method")


@dataclass(frozen=True)
class ExamReport:
    passed: bool
    failed_check: str | None = None
    failing_input: Mapping[str, Any] | None = None  # {"method", "index", "episode"|"task"}
    error: str = ""
    traceback_tail: str = ""
    timings: Mapping[str, float] = field(default_factory=dict)  # seconds per check reached
    passed_checks: tuple[str, ...] = ()
    n_episodes: int = 0
    n_partials: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["passed_checks"] = list(self.passed_checks)
        return out

    def for_prompt(self) -> str:
        number = list(CHECKS).index(self.failed_check) + 1 if self.failed_check in CHECKS else "?"
        label = ""
        if self.failing_input:
            method, index = self.failing_input.get("method"), self.failing_input.get("index", 0)
            total = self.n_episodes if method == "update" else self.n_partials
            label = f"the {method} call on input {index + 1} of {total}"
        return render(
            "exam_report",
            report=self,
            checks=list(CHECKS),
            check_number=number,
            check_description=CHECKS.get(self.failed_check or "", "the exam machinery"),
            passed_checks=list(self.passed_checks),
            failing_input=json.dumps(self.failing_input, indent=2, ensure_ascii=False) if self.failing_input else "",
            failing_input_label=label,
            n_episodes=self.n_episodes,
            n_partials=self.n_partials,
        )


class _CheckFailed(Exception):
    def __init__(self, check: str, error: str, traceback: str = "", failing_input: dict | None = None):
        super().__init__(error)
        self.check, self.error, self.traceback, self.failing_input = check, error, traceback, failing_input


def quick_exam(
    source: str,
    sandbox: Sandbox,
    episodes: Sequence[EpisodeRecorder],
    partials: Sequence[PartialRecorder],
    *,
    budget: Budget = Budget(),
    limits: Limits = Limits(),
    services: HostServices | None = None,
    store_root: Path | None = None,
) -> ExamReport:
    """Run the six checks on `source`. Never raises for a program's fault (that is the report);
    raises `BudgetExceeded` when a memo LLM call failed because a run cap was reached, since
    that is the run stopping, not the program failing, and an `InfrastructureFailure` when the
    sandbox engine is gone (`SandboxUnavailable`) or a host toolkit service failed during the
    exam (`HostServiceFailed`): neither says anything about the program, so neither may cost it
    a failed check and a repair."""
    timings: dict[str, float] = {}
    passed: list[str] = []
    common = dict(n_episodes=len(episodes), n_partials=len(partials))

    def timed(check: str, started: float) -> None:
        timings[check] = round(timings.get(check, 0.0) + time.perf_counter() - started, 6)

    try:
        started = time.perf_counter()
        try:
            session = sandbox.open(source, limits, services=services, store_root=store_root)
        except ProgramLoadError as exc:
            if any(p in exc.detail for p in _MEMO_PROBLEMS):  # it imported; Memo is what is wrong
                passed.append("imports")
                raise _CheckFailed("defines_memo", exc.detail, exc.traceback) from None
            raise _CheckFailed("imports", exc.detail, exc.traceback) from None
        except SandboxUnavailable:
            raise
        except SandboxError as exc:
            raise _CheckFailed("imports", f"{exc.kind}: {exc.detail}", exc.traceback) from None
        finally:
            timed("imports", started)
        passed.append("imports")
        try:
            _run_checks(session, episodes, partials, budget, limits, store_root, timed, passed)
        finally:
            session.close()
    except _CheckFailed as failure:
        _raise_if_budget_spent(services)
        raise_host_failure(services, "quick exam")
        return ExamReport(
            passed=False, failed_check=failure.check, failing_input=failure.failing_input,
            error=failure.error, traceback_tail=failure.traceback, timings=timings,
            passed_checks=tuple(passed), **common,
        )
    raise_host_failure(services, "quick exam")  # a pass on a fallback the host forced is no pass
    return ExamReport(passed=True, timings=timings, passed_checks=tuple(passed), **common)


def _run_checks(session, episodes, partials, budget, limits, store_root, timed, passed) -> None:
    started = time.perf_counter()
    try:
        described = session.call("describe", {}, limits.timeout("describe"))
    except SandboxError as exc:
        raise _CheckFailed("defines_memo", f"{exc.kind}: {exc.detail}", exc.traceback) from None
    finally:
        timed("defines_memo", started)
    if not isinstance(described, dict) or not described.get("memo_class"):
        raise _CheckFailed("defines_memo", f"the guest reports no loaded Memo instance: {described!r}")
    passed.append("defines_memo")

    for index, episode in enumerate(episodes):
        started = time.perf_counter()
        try:
            session.call("update", {"episode": episode.to_dict()}, limits.timeout("update"))
        except SandboxError as exc:
            raise _CheckFailed("update", f"{exc.kind}: {exc.detail}", exc.traceback,
                               _input("update", index, "episode", episode)) from None
        finally:
            timed("update", started)
    passed.append("update")

    payloads: list[tuple[int, PartialRecorder, Any]] = []
    refused: _CheckFailed | None = None
    for index, task in enumerate(partials):
        started = time.perf_counter()
        try:
            payloads.append((index, task, session.call("retrieve", {"task": task.to_dict()}, limits.timeout("retrieve"))))
        except BadResult as exc:
            # retrieve ran, but the guest found its result outside the contract: a schema failure,
            # reported once every retrieve has run so the checks keep their order.
            refused = refused or _CheckFailed("payload_schema", exc.detail, exc.traceback,
                                              _input("retrieve", index, "task", task))
        except SandboxError as exc:
            raise _CheckFailed("retrieve", f"{exc.kind}: {exc.detail}", exc.traceback,
                               _input("retrieve", index, "task", task)) from None
        finally:
            timed("retrieve", started)
    passed.append("retrieve")

    started = time.perf_counter()
    checked: list[tuple[int, PartialRecorder, MemoryPayload]] = []
    try:
        if refused is not None:
            raise refused
        for index, task, result in payloads:
            try:
                payload = MemoryPayload.from_dict(result, "retrieve() result")
                _check_images_exist(payload, store_root)
            except ContractError as exc:
                raise _CheckFailed("payload_schema", str(exc), "", _input("retrieve", index, "task", task)) from None
            checked.append((index, task, payload))
    finally:
        timed("payload_schema", started)
    passed.append("payload_schema")

    started = time.perf_counter()
    try:
        for index, task, payload in checked:
            # The evaluation truncates an over-budget payload (MemoryPayload.truncated); the exam
            # does the same, and fails only what that cut would wreck: metadata dropped whole.
            if payload.metadata and not payload.truncated(budget).metadata:
                raise _CheckFailed(
                    "payload_budget",
                    "; ".join(payload.violations(budget)) + f": its metadata alone exceeds the budget "
                    f"({budget.max_chars} characters), so the harness would drop all of it",
                    "", _input("retrieve", index, "task", task),
                )
    finally:
        timed("payload_budget", started)
    passed.append("payload_budget")


def _check_images_exist(payload: MemoryPayload, store_root: Path | None) -> None:
    if store_root is None:
        return
    root = Path(store_root).resolve()
    for i, ref in enumerate(payload.images):
        path = (root / ref.path).resolve()
        if root not in path.parents or not path.is_file():
            raise ContractError(
                f"retrieve() result.images[{i}]: {ref.path!r} is not an image of the episode store; "
                "return ImageRefs taken from the episodes (their path is relative to the store root)"
            )


def _input(method: str, index: int, name: str, value: Any) -> dict[str, Any]:
    return {"method": method, "index": index, name: _clip_strings(value.to_dict())}


def _clip_strings(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _INPUT_STRING_CHARS:
        return value[:_INPUT_STRING_CHARS] + f"…[{len(value) - _INPUT_STRING_CHARS} more characters]"
    if isinstance(value, list):
        return [_clip_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _clip_strings(v) for k, v in value.items()}
    return value


def _raise_if_budget_spent(services: Any) -> None:
    client = getattr(services, "llm", None)
    reason = client.exhausted() if client is not None and hasattr(client, "exhausted") else None
    if reason:
        from automemo.llm import BudgetExceeded

        raise BudgetExceeded(f"quick exam stopped: {reason}")
