"""A load beside a served memory while its recall latency is measured: N CPU-bound processes
(burners) at the server's own priority, the same N while idle and while adapting, so that the
ratio of the two p95s says what adaptation takes from recall under that load, not what the load
takes. Several loads are measured in turn (idle: one after another; adapting: in windows that
cycle through them while the rounds run, so that every load sees every stage of a round)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from typing import Callable, Iterator

WINDOW_S = 10.0     # how long one load lasts before the next, while adapting
SETTLE_S = 1.0      # after the burners start, before latencies count
BURN = "while True:\n    pass\n"


def parse_loads(text: str) -> list[int]:
    """`--burner 0,2` as [0, 2]; refused with a sentence when it is not counts."""
    from automemo.cli import UserError

    try:
        loads = [int(part) for part in str(text).split(",") if part.strip()]
    except ValueError:
        loads = []
    if not loads or any(n < 0 for n in loads):
        raise UserError(f"--burner {text!r}: give counts of CPU-bound processes, e.g. 0 or 0,2")
    return list(dict.fromkeys(loads))


@contextlib.contextmanager
def burners(count: int) -> Iterator[None]:
    """`count` CPU-bound processes for the block's length."""
    procs = [subprocess.Popen([sys.executable, "-c", BURN], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(count)]
    try:
        if procs:
            time.sleep(SETTLE_S)
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(10)


class LoadCycle:
    def __init__(self, loads: list[int]) -> None:
        self.loads = loads

    def measure(self, probe: Callable[[], float], *, seconds: float, until: Callable[[], bool] | None = None,
                at_least: int = 0, pause: float = 0.0) -> dict[int, list[float]]:
        """Latencies (ms) of `probe` under each load. Without `until`: `seconds` under each load in
        turn. With it: windows of `WINDOW_S` cycling through the loads until `until()` holds
        (checked after each full cycle, once every load has `at_least` latencies) or `seconds`
        have passed."""
        out: dict[int, list[float]] = {load: [] for load in self.loads}
        if until is None:
            for load in self.loads:
                with burners(load):
                    deadline = time.monotonic() + seconds
                    while time.monotonic() < deadline:
                        out[load].append(probe())
                        time.sleep(pause)
            return out
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for load in self.loads:
                with burners(load):
                    window = time.monotonic() + WINDOW_S
                    while time.monotonic() < min(window, deadline):
                        out[load].append(probe())
                        time.sleep(pause)
            if all(len(v) >= at_least for v in out.values()) and until():
                break
        return out
