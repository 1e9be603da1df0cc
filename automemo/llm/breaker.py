"""The circuit breaker: a run stops after a few consecutive endpoint failures instead of
spending its every step on an endpoint that is down.

A failed call counts when the endpoint itself failed (refused or broken connection, silence,
5xx) after the call's own retries; a success resets the count, and so does an answer the server
gave (a 4xx is about the request, not about the endpoint being down).
"""

from __future__ import annotations

import threading

from automemo.errors import HostError
from automemo.llm.budget import BudgetExceeded


class EndpointDown(HostError, RuntimeError):
    """The endpoint failed `limit` calls in a row: no new LLM call starts. The host's failure,
    not a spent budget; `stop_reason` is what the search records, and it exits non-zero."""

    stop_reason = "endpoint"


CALLS_STOPPED: tuple[type[Exception], ...] = (BudgetExceeded, EndpointDown)
"""Why no new LLM call starts: a spent cap or a dead endpoint. Neither is a failure of the call
in hand or of a program; both stop the run cleanly (the step in flight is abandoned, the ledger
kept, the final selection made from what was evaluated), so every path that retries, repairs or
charges a failure lets them through: `except CALLS_STOPPED: raise`."""


class CircuitBreaker:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._failures: list[str] = []
        self._lock = threading.Lock()

    def success(self) -> None:
        with self._lock:
            self._failures.clear()

    def failure(self, description: str) -> None:
        """Count one failed call; raise EndpointDown when it is the `limit`-th in a row."""
        with self._lock:
            self._failures.append(description)
            tripped = self.limit > 0 and len(self._failures) >= self.limit
            failures = list(self._failures)
        if tripped:
            raise EndpointDown(self._message(failures))

    def check(self) -> None:
        """Raise EndpointDown once tripped: a call started after that would fail the same way."""
        with self._lock:
            tripped = self.limit > 0 and len(self._failures) >= self.limit
            failures = list(self._failures)
        if tripped:
            raise EndpointDown(self._message(failures))

    def _message(self, failures: list[str]) -> str:
        return (f"{len(failures)} LLM calls in a row failed at the endpoint (llm.breaker_failures = "
                f"{self.limit}); last: {failures[-1]}")
