"""One writer per namespace when several processes share a state folder (`automemo serve
--engine ray`): a lease with a fencing token.

    STATE/leases/<key>.lock   an exclusive `flock` held by the process that owns the namespace
    STATE/leases/<key>.json   {"token": 7, "holder": "...", "taken": 1764140000.0}

Taking the lease locks the `.lock` file and writes the next token (the previous one plus one,
fsynced) into the `.json` record, so tokens only grow, whoever takes them. Every write to the
namespace (a log append, a log rewrite, a snapshot, dropping the folder) first checks that the
record still carries this holder's token: a holder whose lock was broken behind its back (a lock
lost on a shared file system, a paused process whose lease another took) finds a newer token
and refuses to write (`LeaseLost`) instead of appending beside the new owner. Each log line carries
the token it was written under, so a line that slips between a check and a lost lease is dropped
by readers once the new owner has written (`episode_log.current_writers`).

The kernel releases a `flock` when its process dies (kill -9 included), so a namespace whose
owner died can be taken at once by another process. The leases live beside the users' folders,
not inside them: forgetting a whole user deletes that folder, and a token kept there would start
again from 1 under a writer that still held the old one.

The check and the write that follows it are two system calls, not one: fencing stops a writer
that has lost its lease, it does not make a check-and-append atomic against a lock that is broken
between the two; the `flock` is what keeps two live holders apart."""

from __future__ import annotations

import fcntl
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from automemo.episode_store import atomic_write
from automemo.errors import AutomemoError

LEASES = "leases"
POLL_SECONDS = 0.02  # how often a waiting `acquire` tries the lock again


class LeaseHeld(AutomemoError, RuntimeError):
    """Another process holds the namespace's lease; `holder` says which."""

    def __init__(self, key: str, holder: str) -> None:
        super().__init__(f"the namespace {key} is held by {holder or 'another process'}")
        self.key = key
        self.holder = holder


class LeaseLost(AutomemoError, RuntimeError):
    """This holder's lease is no longer the current one: it must not write."""


@dataclass(frozen=True)
class LeaseRecord:
    token: int       # grows by one at every acquisition, never reused
    holder: str      # who took it (a replica's name and process id), for sentences and logs
    taken: float     # when (epoch seconds)


class NamespaceLease:
    """The lease of one namespace (`key`: its folder name) for one holder."""

    def __init__(self, root: Path, key: str, holder: str) -> None:
        self.folder = Path(root) / LEASES
        self.key = key
        self.holder = holder
        self.token: int | None = None   # set while held
        self._lock_fh: IO[str] | None = None

    @property
    def lock_path(self) -> Path:
        return self.folder / f"{self.key}.lock"

    @property
    def record_path(self) -> Path:
        return self.folder / f"{self.key}.json"

    @property
    def held(self) -> bool:
        return self._lock_fh is not None

    def acquire(self, wait_seconds: float = 0.0) -> int:
        """Take the lease (waiting up to `wait_seconds` for its holder to let go) and return the
        new fencing token; `LeaseHeld` when it stays taken."""
        if self._lock_fh is not None:
            return self.token
        self.folder.mkdir(parents=True, exist_ok=True)
        fh = open(self.lock_path, "a")
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    fh.close()
                    current = self.read()
                    raise LeaseHeld(self.key, current.holder if current else "") from None
                time.sleep(POLL_SECONDS)
        try:
            previous = self.read()
            token = self._record((previous.token if previous else 0) + 1)
        except BaseException:
            fh.close()
            raise
        self._lock_fh = fh
        self.token = token
        return token

    def advance(self, past: int) -> int:
        """Take a token above `past`, under the lease this holder holds: a line of the
        namespace's log carries `past`, which the record no longer reaches (it was deleted and
        began again at 1), and readers drop lines whose token is below one seen before them."""
        self.check()
        self.token = self._record(past + 1)
        return self.token

    def _record(self, token: int) -> int:
        atomic_write(self.record_path, json.dumps(asdict(LeaseRecord(token=token, holder=self.holder,
                                                                     taken=time.time()))).encode(), durable=True)
        return token

    def read(self) -> LeaseRecord | None:
        """The current record (whoever holds it), or None before the first acquisition."""
        try:
            return LeaseRecord(**json.loads(self.record_path.read_text()))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError) as exc:
            # atomic_write never leaves half a record: a bad one was written by something else
            raise LeaseLost(f"the lease record {self.record_path} is unreadable ({exc}); stop every server on "
                            f"this state folder and delete it") from None

    def check(self) -> None:
        """Before every write: raise `LeaseLost` unless this holder's token is the current one."""
        if self._lock_fh is None:
            raise LeaseLost(f"the lease of namespace {self.key} is not held by {self.holder}")
        current = self.read()
        if current is None or current.token != self.token:
            raise LeaseLost(f"the lease of namespace {self.key} moved to "
                            f"{current.holder if current else 'nobody'} (token "
                            f"{current.token if current else 0}, this holder had {self.token})")

    def release(self) -> None:
        """Let go (the record keeps its token: the next holder takes a larger one)."""
        if self._lock_fh is not None:
            self._lock_fh.close()  # closing the file releases the flock
            self._lock_fh = None
            self.token = None
