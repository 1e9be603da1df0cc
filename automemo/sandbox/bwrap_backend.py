"""The bubblewrap backend, for machines without Docker (e.g. clusters).

The guest sees the SAME root filesystem as the Docker image (the debootstrap rootfs of
`automemo sandbox build`), mounted read-only as `/`; new pid, network, ipc and uts namespaces
(no network at all); a fresh /dev and /proc; size-limited tmpfs for /tmp and the state dir; the
automemo package and the episode store read-only; an empty environment; uid/gid 65534.

Run as root (this project's machines), bwrap creates no user namespace, so the guest's uid
65534 is the host's nobody rather than a mapped root, and `setpriv` inside drops every
capability before Python starts. Run as another user, bwrap maps 65534 in a user namespace.
Memory, pids and CPU are bounded by a per-session cgroup when cgroups are writable, otherwise by
rlimits (RLIMIT_AS, RLIMIT_NPROC). A timeout kills bwrap, whose pid namespace takes
every guest process down with it, and then everything left in the cgroup.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

from automemo.paths import PACKAGE_DIR
from automemo.sandbox import image
from automemo.sandbox.base import HostServices, Limits, Sandbox, SandboxUnavailable, Session
from automemo.sandbox import cgroups
from automemo.sandbox.cgroups import SessionCgroup
from automemo.sandbox.host import (
    GUEST_CHANNEL,
    GUEST_PACKAGE_DIR,
    GUEST_PYTHONPATH,
    GUEST_STATE,
    GUEST_STORE,
    GUEST_TMP_MB,
    GUEST_UID,
    ExitInfo,
    SubprocessGuest,
    SessionDirs,
    guest_environment,
    host_pid_alive,
    guest_runner,
    start_guest_session,
    sweep_stale_session_dirs,
)

DROP_PRIVILEGES = [  # run inside the sandbox, as root, right before the runner
    "/usr/bin/setpriv", f"--reuid={GUEST_UID}", f"--regid={GUEST_UID}", "--clear-groups",
    "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--",
]


class BubblewrapGuest(SubprocessGuest):
    def __init__(self, proc: subprocess.Popen, cgroup: SessionCgroup | None, log_path: Path):
        super().__init__(proc, log_path)
        self.cgroup = cgroup

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.cgroup is not None:
            self.cgroup.kill_all()
        self.reap()

    def exit_info(self, timeout: float) -> ExitInfo:
        info = super().exit_info(timeout)
        if info != ExitInfo() and self.cgroup is not None and self.cgroup.oom_killed():
            return ExitInfo(code=info.code, signal=info.signal, oom=True)
        return info

    def cleanup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()
            self.cgroup.remove()


class BubblewrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self, rootfs: Path | None = None) -> None:
        self.bwrap = shutil.which("bwrap")
        if self.bwrap is None:
            raise SandboxUnavailable("bubblewrap is not installed (apt-get install bubblewrap)")
        self.prlimit = shutil.which("prlimit")
        if self.prlimit is None:
            raise SandboxUnavailable("prlimit is not installed (apt-get install util-linux)")
        self.rootfs = rootfs or image.rootfs_path()
        if self.rootfs is None:
            raise SandboxUnavailable(
                "the sandbox root filesystem is not built; run `automemo sandbox build`")
        self.privileged = os.geteuid() == 0
        # A host killed mid-session (SIGKILL) cannot clean up; its leftovers go now.
        cgroups.sweep_stale(host_pid_alive)
        sweep_stale_session_dirs()

    def command(self, limits: Limits, dirs: SessionDirs, store_root: Path | None) -> list[str]:
        env = guest_environment(GUEST_PYTHONPATH, GUEST_STATE)
        cmd = [self.bwrap, "--die-with-parent", "--new-session", "--clearenv",
               "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try", "--hostname", "sandbox"]
        if not self.privileged:
            cmd += ["--unshare-user", "--uid", str(GUEST_UID), "--gid", str(GUEST_UID)]
        cmd += ["--ro-bind", str(self.rootfs), "/", "--dev", "/dev", "--proc", "/proc",
                "--perms", "01777", "--size", str(GUEST_TMP_MB << 20), "--tmpfs", "/tmp",
                "--perms", "01777", "--size", str(limits.state_mb << 20), "--tmpfs", GUEST_STATE,
                "--ro-bind", str(PACKAGE_DIR), GUEST_PACKAGE_DIR,
                "--bind", str(dirs.channel), GUEST_CHANNEL, "--chdir", GUEST_STATE]
        if store_root is not None:
            cmd += ["--ro-bind", str(Path(store_root).resolve()), GUEST_STORE]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        runner = guest_runner(dirs)
        if self.privileged:
            cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", *DROP_PRIVILEGES]
        else:
            cmd += ["--"]
        return cmd + runner

    def open(self, program_source: str, limits: Limits = Limits(), *,
             services: HostServices | None = None, store_root: Path | None = None) -> Session:
        def launch(dirs: SessionDirs) -> SubprocessGuest:
            cgroup = SessionCgroup.create(f"s-{os.getpid()}-{uuid.uuid4().hex[:12]}", limits)
            log_path = dirs.root / "guest.log"
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [*confinement(cgroup, limits, self.prlimit),
                     *self.command(limits, dirs, store_root)],
                    env={}, cwd="/", stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )
            return BubblewrapGuest(proc, cgroup, log_path)

        return start_guest_session(launch, program_source, limits, services)


# Joins the cgroups named before `--` (writing the shell's own pid, which exec keeps), then execs
# the rest. A shell rather than a Python `preexec_fn`: with one, CPython runs its before-fork
# handlers in the forking thread (logging's lock, then the import lock), which deadlocks against
# any other thread of a parallel search that is importing while it holds the import lock.
JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def confinement(cgroup: SessionCgroup | None, limits: Limits, prlimit: str) -> list[str]:
    """The command prefix that puts bwrap, before it starts any guest process, into the session's
    cgroup or, without one, under rlimits that the guest inherits. No core dumps either way."""
    rlimits = [prlimit, "--core=0"]
    if cgroup is None:
        # RLIMIT_NPROC counts every process of the uid on the host, so it is looser than a
        # cgroup; it still stops a fork bomb.
        rlimits += [f"--as={limits.memory_mb << 20}", f"--nproc={limits.pids}"]
    rlimits.append("--")
    if cgroup is None:
        return rlimits
    return ["/bin/sh", "-c", JOIN_CGROUPS, "automemo-confine", *cgroup.procs_files, "--", *rlimits]
