"""The UNSAFE backend: the guest runner as a plain subprocess of the host, with no isolation.

Only for `--sandbox unsafe` (programs you trust) and as a speed reference. It shares the
runner, protocol and session code with the real sandboxes and gives the guest a clean
environment, but the program can read and write anything the host user can, and reach the
network.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from automemo.paths import PACKAGE_DIR
from automemo.sandbox.base import HostServices, Limits, Sandbox, Session
from automemo.sandbox.host import (
    SubprocessGuest,
    SessionDirs,
    guest_environment,
    runner_command,
    start_session,
)


class LocalProcessGuest(SubprocessGuest):
    def kill(self) -> None:
        # The runner leads its own process group, but a child may have left it (setsid): collect
        # every descendant while the runner is still there to link them, then kill them all.
        doomed = descendants(self.proc.pid)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.reap()

    def cleanup(self) -> None:
        pass


def descendants(root: int) -> list[int]:
    """Pids of every process below `root`, read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class UnsafeLocalSandbox(Sandbox):
    name = "unsafe"

    def open(self, program_source: str, limits: Limits = Limits(), *,
             services: HostServices | None = None, store_root: Path | None = None) -> Session:
        store = Path(store_root).resolve() if store_root is not None else None

        def launch(dirs: SessionDirs) -> SubprocessGuest:
            log_path = dirs.root / "guest.log"
            env = guest_environment(str(PACKAGE_DIR.parent), str(dirs.state))
            env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    runner_command(sys.executable, str(dirs.socket_path)),
                    env=env, cwd=dirs.state, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )
            return LocalProcessGuest(proc, log_path)

        return start_session(
            launch, source=program_source, limits=limits, services=services,
            guest_state_dir=None, guest_store_root=str(store) if store else "/nonexistent-store",
            owner_uid=None,
        )
