"""The exceptions that stop a search cleanly, and the stop reason each one records.

A clean stop abandons the step in progress (its files and rows never commit; money it spent stays
in the ledger because it was really spent), lets the actions in flight finish, and selects from
what was committed: `final.json` names the reason and `--resume` continues the run. Any other
exception of an action is a bug or a broken machine and wins over a clean stop when both happen.
"""

from __future__ import annotations

from automemo.failures import InfrastructureFailure
from automemo.llm import BudgetExceeded
from automemo.llm.breaker import EndpointDown

# The reason recorded in final.json and the event log, by the exception that stopped the run.
# First match wins. A dead endpoint and a spent cap stop the run the same way on their way up
# (`automemo.llm.CALLS_STOPPED`), but the run records (and exits non-zero for) the dead server.
_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (EndpointDown, "endpoint"),
    (BudgetExceeded, "budget"),
    # The host, not a program, failed beyond its retries (a dead sandbox engine, a host service,
    # too many excluded tasks).
    (InfrastructureFailure, "infrastructure"),
)

CLEAN_STOPS: tuple[type[BaseException], ...] = tuple(kind for kind, _ in _REASONS)


def stop_reason(exc: BaseException) -> str:
    """The recorded reason of a clean stop `exc` (one of `CLEAN_STOPS`)."""
    return next(reason for kind, reason in _REASONS if isinstance(exc, kind))
