"""Spending caps in tokens and USD, shared by every role and every thread of a run.

The check happens when a call *starts*: once a cap is reached, no new call begins, which is
what lets the search stop cleanly between actions. Calls already in flight finish
and are counted, so a run can end slightly past its cap (by at most the calls that were running
concurrently) — stopping them midway would waste what they cost.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from automemo.errors import BudgetSpent


class BudgetExceeded(BudgetSpent, RuntimeError):
    """A token or USD cap is reached; no new LLM call starts. Not an `LLMError`: callers that
    retry or repair on LLM errors must let this one through and stop."""

    stop_reason = "budget"  # what the search records as its stop reason


@dataclass(frozen=True)
class Spend:
    tokens: int
    usd: float


class SpendGuard:
    def __init__(
        self,
        max_total_tokens: int | None = None,
        max_usd: float | None = None,
        *,
        already: Spend = Spend(0, 0.0),
    ) -> None:
        self.max_total_tokens = max_total_tokens
        self.max_usd = max_usd
        self._tokens = already.tokens
        self._usd = already.usd
        self._lock = threading.Lock()

    def add(self, tokens: int, usd: float) -> None:
        with self._lock:
            self._tokens += tokens
            self._usd += usd

    @property
    def spent(self) -> Spend:
        with self._lock:
            return Spend(self._tokens, self._usd)

    def exhausted(self) -> str | None:
        """Why no new call may start, or None while under every cap."""
        spent = self.spent
        if self.max_total_tokens is not None and spent.tokens >= self.max_total_tokens:
            return f"token cap reached: {spent.tokens} tokens used, cap is {self.max_total_tokens}"
        if self.max_usd is not None and spent.usd >= self.max_usd:
            return f"USD cap reached: ${spent.usd:.4f} spent, cap is ${self.max_usd:.4f}"
        return None

    def check(self, what: str = "LLM call") -> None:
        reason = self.exhausted()
        if reason:
            raise BudgetExceeded(f"{what} not started: {reason}")
