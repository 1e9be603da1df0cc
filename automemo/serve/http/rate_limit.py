"""Requests per minute per caller, as token buckets: each caller (a token, or a client address when
the server has no tokens) may send `per_minute` requests a minute on average and a short burst
above that; a request over it is answered 429 with the seconds to wait."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

MAX_CALLERS = 10_000  # buckets kept before idle (full) ones are dropped: a flood of addresses stays bounded


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int = 0  # whole seconds until the next request would be allowed


class RateLimiter:
    """Not thread-safe: it lives in the server's one event loop, which serialises its calls."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1 (0, no limit, means no RateLimiter)")
        self.per_minute = per_minute
        self.rate = per_minute / 60.0  # tokens a second
        # a burst of a tenth of a minute's allowance (at least 5): a client may open with a few
        # calls at once (list tools, remember, recall) without waiting
        self.burst = max(5, per_minute // 10)
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # caller -> (tokens, when counted)

    def take(self, caller: str) -> RateDecision:
        now = self.clock()
        tokens, then = self._buckets.get(caller, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens >= 1.0:
            self._remember(caller, tokens - 1.0, now)
            return RateDecision(True)
        self._remember(caller, tokens, now)
        return RateDecision(False, max(1, math.ceil((1.0 - tokens) / self.rate)))

    def _remember(self, caller: str, tokens: float, now: float) -> None:
        if caller not in self._buckets and len(self._buckets) >= MAX_CALLERS:
            full = self.burst / self.rate  # seconds after which an unused bucket is full again
            self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < full}
        self._buckets[caller] = (tokens, now)
