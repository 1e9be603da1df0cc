"""The sandbox seam: `Sandbox.open(program_source, limits) -> Session`, `Session.call(...)`.

Memo programs are untrusted, LLM-written code. Every `update`/`retrieve` runs behind this
interface, whose backends (Docker, bubblewrap, and an explicitly unsafe local process) differ
only in how they isolate the guest process; the guest runner and its JSON-RPC protocol are shared.

Host services (the toolkit's llm / embed_text / embed_image) are answered by a `HostServices`
object on the host side of the channel, so no API key or model ever enters the guest.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from automemo.errors import AutomemoError
from automemo.failures import InfrastructureFailure


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox session. Defaults suit a memo program on a 2-core machine
    running up to 8 evaluations side by side. The time limits are the only ones per call kind:
    the quick exam, the evaluation, a deployment and the contract prompt all read them here."""

    memory_mb: int = 1024          # address space / cgroup memory of the whole guest
    cpus: float = 1.0              # CPU quota (Docker); bubblewrap relies on prlimit + timeouts
    pids: int = 64                 # process/thread cap: a fork bomb hits this, not the host
    # Wall-clock limits per call kind, the only ones: the quick exam, the evaluation, a deployment
    # and the contract prompt the meta agent reads all use these; the guest's process tree is
    # killed past them. An update past its limit is skipped (the session reopens with the updates
    # that succeeded); a retrieve past its limit scores 0.
    update_timeout_s: float = 60.0
    retrieve_timeout_s: float = 30.0
    call_timeout_s: float = 60.0   # any other call (the guest's describe)
    open_timeout_s: float = 30.0   # how long the guest may take to import the program
    # saving or loading a served memory's snapshot (automemo serve), which grows with the memory
    snapshot_timeout_s: float = 300.0
    max_result_bytes: int = 4_000_000  # a reply larger than this is a failure, not a host OOM
    state_mb: int = 512            # size of the writable state dir (tmpfs in Docker)

    def __post_init__(self) -> None:
        times = (self.call_timeout_s, self.update_timeout_s, self.retrieve_timeout_s, self.open_timeout_s,
                 self.snapshot_timeout_s)
        if min(times) <= 0:
            raise ValueError("call_timeout_s, update_timeout_s, retrieve_timeout_s, open_timeout_s and "
                             "snapshot_timeout_s must be positive seconds")

    def timeout(self, method: str) -> float:
        """The wall-clock limit of one call of `method` ("update", "retrieve", "save_state",
        "load_state", anything else)."""
        return {"update": self.update_timeout_s, "retrieve": self.retrieve_timeout_s,
                "save_state": self.snapshot_timeout_s, "load_state": self.snapshot_timeout_s}.get(
            method, self.call_timeout_s)


class SandboxError(AutomemoError, RuntimeError):
    """Base class: something went wrong running a program in the sandbox. `kind` is a short
    machine-readable label (e.g. "timeout", "crash", "exception", "bad-result", "import"),
    `detail` the human-readable part, `traceback` the guest's traceback tail if any."""

    kind = "error"

    def __init__(self, detail: str, *, traceback: str = "", exit_code: int | None = None):
        super().__init__(detail)
        self.detail = detail
        self.traceback = traceback
        self.exit_code = exit_code


class ProgramError(SandboxError):
    """The program raised an exception; the session is still alive."""

    kind = "exception"


class CallTimeout(SandboxError):
    """A call ran past its wall-clock limit; the whole guest process tree was killed."""

    kind = "timeout"


class SessionDead(SandboxError):
    """The guest process is gone (exit, crash, OOM kill, earlier timeout). Open a new session."""

    kind = "crash"


class BadResult(SandboxError):
    """The guest answered with something the contract does not allow (too large, not JSON,
    wrong type). The session is still alive."""

    kind = "bad-result"


class ProgramLoadError(SandboxError):
    """The program did not load (syntax error, import error, no `Memo` class, `__init__`
    raised, or loading ran past `open_timeout_s`). No session was opened."""

    kind = "import"


class SandboxUnavailable(SandboxError, InfrastructureFailure):
    """The backend cannot run here (no engine, no image, no bubblewrap). The message says how
    to fix it (e.g. `automemo sandbox build`). An infrastructure failure: no program is to
    blame, so it is never an exam's "imports" failure nor a task's 0."""

    kind = "unavailable"


class HostServices(Protocol):
    """Answers the guest's requests for host-side toolkit services.

    `handle("embed_text", {"texts": [...]})` etc. returns a JSON-serialisable result or raises
    an exception whose message is sent back to the guest as the call's error.
    """

    def handle(self, method: str, params: dict[str, Any]) -> Any: ...


class Session(abc.ABC):
    """One program's live memory: its update and retrieve calls share process state.
    Thread-safe: concurrent `call`s are serialised."""

    # The guest's CPU milliseconds spent on the last call, as its runner reported them (host
    # services it waited for not included); None when not reported (a session of another kind).
    last_cpu_ms: float | None = None

    @abc.abstractmethod
    def call(self, method: str, payload: dict[str, Any], timeout: float | None = None) -> Any:
        """Call `method` ("update" or "retrieve", or the runner's "ping"/"describe") with a
        JSON payload and return the JSON result. Raises a `SandboxError` subclass."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop the guest and release everything it held. Idempotent."""

    @property
    @abc.abstractmethod
    def alive(self) -> bool: ...

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Sandbox(abc.ABC):
    """A backend that opens sessions."""

    name: str = "abstract"

    @abc.abstractmethod
    def open(
        self,
        program_source: str,
        limits: Limits = Limits(),
        *,
        services: HostServices | None = None,
        store_root: Path | None = None,
    ) -> Session:
        """Start a guest, load `program_source` (which must define `class Memo`), and return a
        session. `store_root` is the episode store, mounted read-only so that `ImageRef.path`
        resolves inside the guest. Raises `SandboxError` (kind "import") if the program does not
        load, with the guest's traceback tail."""
