"""One namespace's append-only log: a JSON line per acknowledged `remember` and per `forget`,
fsynced before the call is answered, read back in order when the namespace opens.

    {"seq": 7, "received": 1764140000.0, "episode": {...},     a remembered episode, with the
     "keys": ["3fa1...", ...]}                                 embedding cache keys its update asked for
    {"seq": 8, "received": 1764140009.5, "forget": "chat-17"}  a tombstone: the episodes with
                                                               that task_id logged before it
    {"seq": 9, "received": ..., "token": 4, "episode": ...}    written under a lease (the Ray
                                                               engine's replicas): its fencing token

A tombstone makes forgetting durable the moment it is acknowledged; the namespace then rewrites
the log without the forgotten episodes (`rewrite`), so their text leaves the disk too.

A kill in the middle of an append leaves a torn last line (that call was never acknowledged).
Reading skips it and never writes: the bytes after the last newline may also be another
writer's append still in flight (a replica reading a log whose lease it lost), and cutting them
would tear that line. The log's own writer cuts a torn tail before its first append (for a
leased namespace, after checking its lease: only the holder repairs its log), so its lines start
clean. A whole line that does not parse (a torn append another append continued) is skipped.

A leased writer checks its lease before each append, but the check and the write are two system
calls: a writer that loses its lease between them (paused, its lock expired) still appends. So
each of its lines carries its token, and reading drops a line whose token is smaller than one
already seen earlier in the file (`current_writers`): the old holder's lines before the new
holder's first line are kept (the lease moved, then the new holder wrote: a legitimate sequence),
its lines after that are dropped. Lines without a token (the single-process server, which holds
the whole folder, and logs from before tokens) are always kept, so one format serves both engines."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable


@dataclass(frozen=True)
class LogEntry:
    seq: int
    received: float
    episode: dict[str, Any] | None = None   # the episode's JSON (EpisodeRecorder.to_dict())
    forget: str | None = None               # or: the task_id a tombstone forgets
    # the embedding cache entries the episode's update asked for; None: not recorded (a log from
    # before they were, or a memory whose cache is not the service's)
    keys: tuple[str, ...] | None = None
    token: int | None = None   # the lease's fencing token its writer held; None: written without a lease

    @property
    def task_id(self) -> str:
        return self.forget if self.episode is None else str(self.episode.get("task_id"))

    def to_dict(self) -> dict[str, Any]:
        head = {"seq": self.seq, "received": self.received}
        if self.token is not None:
            head["token"] = self.token
        if self.episode is None:
            return {**head, "forget": self.forget}
        return {**head, "episode": self.episode, **({"keys": list(self.keys)} if self.keys is not None else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LogEntry:
        return cls(seq=int(data["seq"]), received=float(data.get("received", 0.0)),
                   episode=data.get("episode"), forget=data.get("forget"),
                   keys=tuple(data["keys"]) if isinstance(data.get("keys"), list) else None,
                   token=int(data["token"]) if data.get("token") is not None else None)


def current_writers(entries: Iterable[LogEntry]) -> list[LogEntry]:
    """The entries, in log order, without those of a writer whose lease had already moved on: a
    line whose token is smaller than a token seen earlier in the log. Lines without a token are
    kept and move nothing."""
    kept, newest = [], 0
    for entry in entries:
        if entry.token is not None:
            if entry.token < newest:
                continue  # appended by a former holder after the next holder's first line
            newest = entry.token
        kept.append(entry)
    return kept


def live_episodes(entries: Iterable[LogEntry]) -> list[LogEntry]:
    """The remembered episodes no later tombstone forgot, in log order."""
    entries = list(entries)
    forgotten_before: dict[str, int] = {}
    for entry in entries:
        if entry.forget is not None:
            forgotten_before[entry.forget] = entry.seq
    return [e for e in entries if e.episode is not None and e.seq > forgotten_before.get(e.task_id, 0)]


class EpisodeLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.last_seq = 0
        self.newest_token: int | None = None   # the largest fencing token in the log as read and appended
        self._fh = None

    def read(self) -> list[LogEntry]:
        """Every whole entry in append order, a former lease holder's late lines left out
        (`current_writers`), the file left as it is; call before the first `append`."""
        entries: list[LogEntry] = []
        if not self.path.is_file():
            return entries
        with open(self.path, "rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # a torn last line: never acknowledged, or an append still in flight
                try:
                    entries.append(LogEntry.from_dict(json.loads(line)))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    continue  # never acknowledged: a torn append glued to the next one
        entries = current_writers(entries)
        self.last_seq = max((e.seq for e in entries), default=self.last_seq)
        self.newest_token = max((e.token for e in entries if e.token is not None), default=self.newest_token)
        return entries

    def append_episode(self, episode: dict[str, Any], received: float, keys: Iterable[str] | None = None) -> LogEntry:
        return self._append(LogEntry(seq=self.last_seq + 1, received=received, episode=episode,
                                     keys=None if keys is None else tuple(sorted(keys))))

    def append_forget(self, task_id: str, received: float) -> LogEntry:
        return self._append(LogEntry(seq=self.last_seq + 1, received=received, forget=task_id))

    def _append(self, entry: LogEntry) -> LogEntry:
        """Write one entry and fsync it before returning."""
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            self._fh = open(self.path, "a+b", buffering=0)
            if new:
                fsync_file(self.path.parent)  # a new file's name is durable once its folder is synced
            _cut_torn_tail(self._fh)
        self._fh.write(_line(entry))
        os.fsync(self._fh.fileno())
        self.last_seq = entry.seq
        if entry.token is not None:
            self.newest_token = max(self.newest_token or 0, entry.token)
        return entry

    def rewrite(self, entries: Iterable[LogEntry]) -> None:
        """Replace the log by `entries` atomically: a kill leaves the old log or the new one."""
        self.close()
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as fh:
            for entry in entries:
                fh.write(_line(entry))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        fsync_file(self.path.parent)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _cut_torn_tail(fh: Any) -> None:
    """Truncate the file open as `fh` after its last newline: a torn last line, which the next
    append would otherwise continue into one line that parses as neither."""
    size = end = fh.seek(0, os.SEEK_END)
    while end > 0:
        start = max(0, end - 65536)
        fh.seek(start)
        newline = fh.read(end - start).rfind(b"\n")
        if newline >= 0:
            end = start + newline + 1
            break
        end = start
    if end < size:
        os.ftruncate(fh.fileno(), end)
        os.fsync(fh.fileno())


def _line(entry: LogEntry) -> bytes:
    return json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def fsync_file(path: Path) -> None:
    """fsync a file or a folder (a folder's sync makes the names in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
