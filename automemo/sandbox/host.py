"""The host side of a sandbox session, shared by every backend.

A backend only knows how to start, kill and inspect a guest process (`GuestProcess`); this
module owns the rest: the listening unix socket, the handshake that loads the program, the call
loop that answers the guest's host-service requests while a call runs, the per-call wall-clock
limit (past it the backend kills the whole guest tree), and turning a dead guest into a
`SessionDead` that says how it died (exit code, signal, out-of-memory kill).
"""

from __future__ import annotations

import abc
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.sandbox import protocol
from automemo.sandbox.base import (
    BadResult,
    CallTimeout,
    HostServices,
    Limits,
    ProgramError,
    ProgramLoadError,
    SandboxError,
    Session,
    SessionDead,
)
from automemo.toolkit.api import ToolkitUnavailable

# Headroom over `max_result_bytes` for the envelope and for host-service requests, which carry
# texts to embed; a frame past it means the guest is misbehaving and the session is killed.
FRAME_SLACK_BYTES = 1 << 20
EXIT_WAIT_S = 5.0
ACCEPT_POLL_S = 0.005
GUEST_UID = 65534  # "nobody" in Debian: the unprivileged user every backend runs the guest as

# Where the isolating backends mount things inside the guest (the rootfs has these mount points).
GUEST_PACKAGE_DIR = "/opt/automemo/automemo"
GUEST_STORE = "/store"
GUEST_STATE = "/state"
GUEST_CHANNEL = "/run/automemo"
GUEST_PYTHON = "/usr/bin/python3"
# The guest's Python starts without the site module (-S), which costs tens of milliseconds per
# session open; these are the paths site would have added in the image.
GUEST_PYTHONPATH = ":".join(["/opt/automemo", "/usr/local/lib/python3.11/dist-packages",
                             "/usr/lib/python3/dist-packages"])
GUEST_TMP_MB = 64  # /tmp for libraries that insist on a temp file; the state dir is the real storage


def guest_environment(pythonpath: str, home: str) -> dict[str, str]:
    """The guest's whole environment: never the host's, so no API key can leak in. One thread
    per numeric library keeps a guest within its pids and CPU limits."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONPATH": pythonpath,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def runner_command(python: str, socket_path: str, *, no_site: bool = False) -> list[str]:
    flags = ["-S", "-s", "-B"] if no_site else ["-s", "-B"]
    return [python, *flags, "-m", "automemo.sandbox.runner", socket_path]


def guest_runner(dirs: SessionDirs) -> list[str]:
    """The runner in an isolating backend's guest (Docker, bubblewrap): the image's Python
    without site, on the session's socket where the backend mounts the channel."""
    return runner_command(GUEST_PYTHON, f"{GUEST_CHANNEL}/{dirs.socket_path.name}", no_site=True)


_ERRORS = {"exception": ProgramError, "bad-result": BadResult, "import": ProgramLoadError}


@dataclass(frozen=True)
class ExitInfo:
    """How a guest ended. `signal` is set when it was killed by one; `oom` when the kernel's
    out-of-memory killer did it (a memory limit was hit)."""

    code: int | None = None
    signal: int | None = None
    oom: bool = False

    def describe(self, limits: Limits) -> str:
        if self.oom:
            return f"was killed for exceeding the memory limit of {limits.memory_mb} MB (out of memory)"
        if self.signal:
            name = signal.Signals(self.signal).name if self.signal in _SIGNALS else str(self.signal)
            hint = {"SIGSEGV": " (segmentation fault)", "SIGKILL": " (killed)",
                    "SIGABRT": " (aborted)", "SIGBUS": " (bus error)"}.get(name, "")
            return f"was killed by signal {name}{hint}"
        if self.code is None:
            return "exited (status unknown)"
        return f"exited with code {self.code}"


_SIGNALS = {s.value for s in signal.Signals}


def exit_info_from_status(status: int | None) -> ExitInfo:
    """From a Popen returncode (negative = signal) or a shell-style 128+N exit status."""
    if status is None:
        return ExitInfo()
    if status < 0:
        return ExitInfo(signal=-status)
    if 128 < status < 128 + 65:
        return ExitInfo(code=status, signal=status - 128)
    return ExitInfo(code=status)


class GuestProcess(abc.ABC):
    """A backend's handle on one running guest."""

    @abc.abstractmethod
    def running(self) -> bool: ...

    @abc.abstractmethod
    def kill(self) -> None:
        """Kill the guest's whole process tree. Idempotent; returns once it is gone or doomed."""

    @abc.abstractmethod
    def exit_info(self, timeout: float) -> ExitInfo:
        """Wait up to `timeout` for the guest to end and say how it ended."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Release what the backend holds (container, cgroup). Called after `kill`."""

    def log_tail(self) -> str:
        """The guest's startup output, for errors before the runner connects."""
        return ""


class SubprocessGuest(GuestProcess):
    """A guest that is a local child process (bubblewrap, unsafe): its status comes from the
    process, its startup output from a log file."""

    def __init__(self, proc: subprocess.Popen, log_path: Path) -> None:
        self.proc = proc
        self.log_path = log_path

    def running(self) -> bool:
        return self.proc.poll() is None

    def reap(self) -> None:
        """Collect the killed runner, so that no zombie outlives the session."""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def exit_info(self, timeout: float) -> ExitInfo:
        try:
            return exit_info_from_status(self.proc.wait(timeout=timeout))
        except subprocess.TimeoutExpired:
            return ExitInfo()

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""


SESSION_DIR_PREFIX = "automemo-sbx-"


def host_pid_alive(pid: int) -> bool:
    """Whether the host process that owned a session still runs (stale-resource sweeps)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_session_dirs() -> None:
    """Remove session dirs whose host process died without closing them (e.g. SIGKILL)."""
    for path in Path(tempfile.gettempdir()).glob(f"{SESSION_DIR_PREFIX}*-*"):
        pid = path.name[len(SESSION_DIR_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not host_pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class SessionDirs:
    """Host-side directories of one session: `channel` holds the socket (mounted into the guest),
    `state` is the writable state dir for backends that bind one, `root` holds both."""

    root: Path
    channel: Path
    state: Path

    @property
    def socket_path(self) -> Path:
        return self.channel / protocol.SOCKET_NAME

    @classmethod
    def create(cls, owner_uid: int | None) -> SessionDirs:
        root = Path(tempfile.mkdtemp(prefix=f"{SESSION_DIR_PREFIX}{os.getpid()}-"))
        channel, state = root / "chan", root / "state"
        channel.mkdir()
        state.mkdir(mode=0o700)
        # The guest runs as another user: it must traverse to the socket and own its state dir.
        os.chmod(root, 0o711)
        os.chmod(channel, 0o711)
        if owner_uid is not None and os.geteuid() == 0:
            os.chown(state, owner_uid, owner_uid)
        return cls(root=root, channel=channel, state=state)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def listen(dirs: SessionDirs) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(dirs.socket_path))
    os.chmod(dirs.socket_path, 0o777)
    listener.listen(1)
    return listener


class ChannelSession(Session):
    """A live guest reached over the session socket. Thread-safe: calls serialise on a lock."""

    _ids = itertools.count(1)

    def __init__(self, guest: GuestProcess, sock: socket.socket, dirs: SessionDirs, limits: Limits,
                 services: HostServices | None, on_close: Callable[[], None] = lambda: None) -> None:
        self.guest = guest
        self.limits = limits
        self.services = services
        self._sock = sock
        self.dirs = dirs
        self._on_close = on_close
        self._lock = threading.Lock()
        self._dead: str | None = None
        self._closed = False
        self._frame_limit = limits.max_result_bytes + FRAME_SLACK_BYTES

    # --- public -------------------------------------------------------------------------

    def call(self, method: str, payload: dict[str, Any], timeout: float | None = None) -> Any:
        timeout = self.limits.timeout(method) if timeout is None else timeout
        with self._lock:
            if self._dead is not None:
                raise SessionDead(f"the session is no longer usable: {self._dead}")
            return self._call(method, payload, timeout)

    @property
    def alive(self) -> bool:
        return self._dead is None and self.guest.running()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._dead = self._dead or "the session was closed"
        try:
            self.guest.kill()
        finally:
            try:
                self._sock.close()
            finally:
                self.guest.cleanup()
                self.dirs.remove()
                self._on_close()

    # --- the call loop ------------------------------------------------------------------

    def _call(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        msg_id = next(self._ids)
        self.last_cpu_ms = None
        deadline = time.monotonic() + timeout
        try:
            protocol.send(self._sock, {"id": msg_id, "method": method, "params": params})
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout
                self._sock.settimeout(remaining)
                message = protocol.recv(self._sock, self._frame_limit)
                if protocol.is_request(message):
                    started = time.monotonic()
                    reply = self._serve(message)
                    # Time the host spends serving (an LLM call) is not the program's time.
                    deadline += time.monotonic() - started
                    self._sock.settimeout(None)
                    protocol.send_frame(self._sock, reply)
                    continue
                if message.get("id") != msg_id:
                    continue  # a late reply to a call abandoned earlier cannot happen; ignore it
                self.last_cpu_ms = _cpu_ms(message.get("cpu_ms"))
                if "error" in message:
                    raise _error_from(message["error"])
                return message.get("result")
        except socket.timeout:
            self._die(f"{method} ran past its {timeout:g} s wall-clock limit and was killed")
            raise CallTimeout(
                f"{method} ran past its {timeout:g} s wall-clock limit; the guest process tree "
                "was killed (an infinite loop or a blocking wait?)"
            ) from None
        except (protocol.ChannelClosed, ConnectionError, BrokenPipeError):
            info = self.guest.exit_info(EXIT_WAIT_S)
            what = info.describe(self.limits)
            self._die(f"the guest {what} during {method}")
            raise SessionDead(f"the guest {what} during {method}",
                              exit_code=info.code) from None
        except (protocol.FrameTooLarge, protocol.ProtocolViolation) as exc:
            self._die(f"the guest broke the protocol during {method}: {exc}")
            raise SessionDead(f"the guest broke the session protocol during {method} ({exc}); "
                              "the guest was killed") from None

    def _serve(self, message: dict[str, Any]) -> bytes:
        msg_id, method = message["id"], str(message.get("method"))
        params = message.get("params")
        if self.services is None:
            reply = protocol.error_message(
                msg_id, "unavailable", f"toolkit.{method}: no host services in this session")
        elif not isinstance(params, dict):
            reply = protocol.error_message(msg_id, "bad-request", "params must be an object")
        else:
            try:
                reply = {"id": msg_id, "result": self.services.handle(method, params)}
            except ToolkitUnavailable as exc:
                reply = protocol.error_message(msg_id, "unavailable", str(exc))
            except Exception as exc:  # forwarded to the program, which may handle it
                reply = protocol.error_message(msg_id, "error", f"{type(exc).__name__}: {exc}")
        try:
            return protocol.encode(reply)
        except (TypeError, ValueError) as exc:
            return protocol.encode(protocol.error_message(
                msg_id, "error", f"the host's answer to {method} is not JSON: {exc}"))

    def _die(self, reason: str) -> None:
        self._dead = reason
        self.guest.kill()


def _cpu_ms(value: Any) -> float | None:
    """The guest's CPU milliseconds for a call as its runner reported them; None when it did not
    (or sent something that is not a non-negative number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return None
    return float(value)


def _error_from(err: Any) -> SandboxError:
    err = err if isinstance(err, dict) else {"message": str(err)}
    kind = str(err.get("kind", "error"))
    cls = _ERRORS.get(kind, SandboxError)
    exc = cls(str(err.get("message", "")), traceback=str(err.get("traceback", "")))
    if cls is SandboxError:
        exc.kind = kind
    return exc


def start_guest_session(launch: Callable[[SessionDirs], GuestProcess], source: str, limits: Limits,
                        services: HostServices | None) -> ChannelSession:
    """`start_session` for an isolating backend: its guest sees the state and the store where
    every such backend mounts them."""
    return start_session(launch, source=source, limits=limits, services=services,
                         guest_state_dir=GUEST_STATE, guest_store_root=GUEST_STORE)


def start_session(
    launch: Callable[[SessionDirs], GuestProcess],
    *,
    source: str,
    limits: Limits,
    services: HostServices | None,
    guest_state_dir: str | None,
    guest_store_root: str,
    owner_uid: int | None = GUEST_UID,
    on_close: Callable[[], None] = lambda: None,
) -> ChannelSession:
    """Create the session's directories and socket, `launch` the guest, accept its connection
    and load `source`. `guest_state_dir` None means the state dir is `dirs.state` as seen by the
    guest at the same path (the unsafe local backend)."""
    if not isinstance(source, str):
        raise TypeError(f"program_source must be the program's text, got {type(source).__name__}")
    dirs = SessionDirs.create(owner_uid)
    listener = None
    guest = None
    try:
        listener = listen(dirs)
        guest = launch(dirs)
        sock = _accept(listener, guest, limits)
        session = ChannelSession(guest, sock, dirs, limits, services, on_close)
    except BaseException:
        if guest is not None:
            guest.kill()
            guest.cleanup()
        dirs.remove()
        raise
    finally:
        if listener is not None:
            listener.close()
    load = {
        "source": source,
        "state_dir": guest_state_dir or str(dirs.state),
        "store_root": guest_store_root,
        "max_result_bytes": limits.max_result_bytes,
    }
    try:
        session.call("load", load, timeout=limits.open_timeout_s)
    except CallTimeout:
        session.close()
        raise ProgramLoadError(
            f"loading the program took longer than {limits.open_timeout_s:g} s (open_timeout_s); "
            "the guest was killed") from None
    except SandboxError as exc:
        session.close()
        if isinstance(exc, ProgramLoadError):
            raise
        raise ProgramLoadError(f"the program did not load: {exc}", traceback=exc.traceback) from None
    except BaseException:
        session.close()
        raise
    return session


def _accept(listener: socket.socket, guest: GuestProcess, limits: Limits) -> socket.socket:
    deadline = time.monotonic() + limits.open_timeout_s
    listener.settimeout(ACCEPT_POLL_S)
    while time.monotonic() < deadline:
        try:
            sock, _ = listener.accept()
            sock.settimeout(None)
            return sock
        except socket.timeout:
            if not guest.running():
                info = guest.exit_info(EXIT_WAIT_S)
                tail = guest.log_tail().strip()
                raise SandboxError(
                    f"the guest {info.describe(limits)} before connecting to the session"
                    + (f"; its output ends with:\n{tail}" if tail else ""))
    raise SandboxError(f"the guest did not connect within {limits.open_timeout_s:g} s "
                       "(open_timeout_s); is the machine overloaded?")
