"""The exceptions that stop a search cleanly, and the stop reason each one records.

A clean stop abandons the step in progress (its files and rows never commit; money it spent stays
in the ledger because it was really spent), lets the actions in flight finish, and selects from
what was committed: `final.json` names the reason and `--resume` continues the run. Any other
exception of an action is a bug or a broken machine and wins over a clean stop when both happen.
"""

from __future__ import annotations

from automemo.failures import InfrastructureFailure
from automemo.llm import BudgetExceeded

# The reason recorded in final.json and the event log, by the exception that stopped the run.
_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (BudgetExceeded, "budget"),
    # The host, not a program, failed beyond its retries (a dead sandbox engine, a host service,
    # too many excluded tasks).
    (InfrastructureFailure, "infrastructure"),
)

CLEAN_STOPS: tuple[type[BaseException], ...] = tuple(kind for kind, _ in _REASONS)


def stop_reason(exc: BaseException) -> str:
    """The recorded reason of a clean stop `exc` (one of `CLEAN_STOPS`)."""
    return next(reason for kind, reason in _REASONS if isinstance(exc, kind))
