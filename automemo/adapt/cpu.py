"""An adaptation round's CPU: the lowest priority, and a budget in CPU seconds over the round's
process and every process it starts (sandbox guests, encoders).

The budget is read from /proc: the time of this process and of every live descendant, each with
the time of the children it reaped (so a finished guest still counts, and a reading only falls
when a descendant exits unreaped). A watchdog thread checks it every second and, past the budget, stops the
whole process group (the round runs in a group of its own, `lowest_priority`): nothing of an
unfinished round is installed (`round.py` installs in one rename at the end)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")
# A round's thread pools at one thread each (numpy's BLAS, torch's intra-op pool, the tokenizers'):
# at SCHED_IDLE a spinning pool thread yields the CPU, yet a pool as wide as the machine still
# fills every core's cache and memory bandwidth that a recall then waits on. One thread on the
# cores `round_cpus` leaves the others whole for the server.
ROUND_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                    "TOKENIZERS_PARALLELISM": "false", "RAYON_NUM_THREADS": "1"}


def round_cpus() -> set[int]:
    """The cores a round may run on: every core this process may use but the first, so that one
    core is never a round's (on one core: that core, at SCHED_IDLE)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set()
    return set(cores[1:] or cores)


def lowest_priority() -> None:
    """This process (and what it starts) at the lowest CPU priority Linux has: SCHED_IDLE runs
    only when nothing else wants the core (nice 19 still takes a share from nice 0), on the cores
    `round_cpus` leaves it, in a session and process group of its own, killed when its parent
    dies. For `subprocess.Popen(preexec_fn=...)`, with `ROUND_THREAD_ENV` in its environment."""
    try:
        os.setsid()
    except OSError:
        pass  # already a group leader (a foreground command)
    try:  # a round dies with the server that started it (a kill -9 included): never an orphan
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 19)
    except OSError:
        pass
    try:  # inherited by every process it starts: its sandbox guests, their encoders
        cores = round_cpus()
        if cores:
            os.sched_setaffinity(0, cores)
    except (AttributeError, OSError):
        pass
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        pass  # not Linux: nice 19 is the lowest there is


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a live process."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # fields[11:15]: utime, stime, cutime, cstime
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / _TICKS


def tree_cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds of process `pid` (default this one) and all its live descendants, each with
    what the children it reaped used."""
    pid = pid or os.getpid()
    return sum((_stat(p) or (0, 0.0))[1] for p in [pid, *descendants(pid)])


class CpuBudget:
    """A watchdog over this process tree's CPU seconds: past `seconds`, it writes why to
    `reason_file` (when given) and kills the process group."""

    def __init__(self, seconds: float, reason_file: Path | None = None, poll_s: float = 1.0) -> None:
        self.seconds = seconds
        self.reason_file = reason_file
        self.start = tree_cpu_seconds()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(poll_s,), daemon=True, name="adapt-cpu-budget")

    def used(self) -> float:
        return tree_cpu_seconds() - self.start

    def __enter__(self) -> CpuBudget:
        if self.seconds > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _watch(self, poll_s: float) -> None:
        while not self._stop.wait(poll_s):
            used = self.used()
            if used > self.seconds:
                message = (f"the round used {used:.0f} CPU seconds, past its budget of {self.seconds:g}; "
                           f"it was stopped and installed nothing")
                if self.reason_file is not None:
                    self.reason_file.write_text(message)
                print(f"automemo adapt: {message}", file=sys.stderr, flush=True)
                stop_tree()


def stop_tree() -> None:
    """Kill this process and everything it started: its group when it leads one (a round the
    server started, a command of a shell), else its descendants, then itself."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(3)


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            found = _stat(int(entry.name))
            if found is not None:
                children.setdefault(found[0], []).append(int(entry.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out
