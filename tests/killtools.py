"""Kill -9 a command at an observed point: what the crash tests (resume, adaptation) share."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping


def kill_when(command: list[str], condition: Callable[[], bool], *, env: Mapping[str, str] | None = None,
              cwd: Path | None = None, timeout: float = 300) -> None:
    """Start `command` in a process group of its own and SIGKILL the group (the command and what it
    started) as soon as `condition()` holds; fail if the command ends before that."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if condition():
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return
            time.sleep(0.01)
        stderr = proc.stderr.read() if proc.poll() is not None else ""
        raise AssertionError(f"{command[:4]} ended (rc={proc.returncode}) before the kill point: {stderr[-2000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
