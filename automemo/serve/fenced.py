"""A namespace's writes, each checked against its lease first (`lease.NamespaceLease.check`): the
log's appends and rewrites, its snapshots, dropping its folder. A writer whose lease moved gets
`LeaseLost` before a byte is written. Same files, same formats as the single-process server."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from automemo.serve.episode_log import EpisodeLog, LogEntry
from automemo.serve.lease import NamespaceLease
from automemo.serve.state_folder import SnapshotMeta, StateFolder


class FencedEpisodeLog(EpisodeLog):
    def __init__(self, path: Path, lease: NamespaceLease) -> None:
        super().__init__(path)
        self.lease = lease
        self.appended = 0   # entries this writer appended (each checked against the lease)

    def _append(self, entry: LogEntry) -> LogEntry:
        self.lease.check()
        written = super()._append(entry)
        self.appended += 1
        return written

    def rewrite(self, entries: Iterable[LogEntry]) -> None:
        self.lease.check()
        super().rewrite(entries)


class FencedStateFolder(StateFolder):
    """The state folder as one leased namespace writes it."""

    def __init__(self, root: Path, lease: NamespaceLease) -> None:
        super().__init__(root)
        self.lease = lease

    def write_snapshot(self, folder: Path, data: bytes, meta: SnapshotMeta) -> None:
        self.lease.check()
        StateFolder.write_snapshot(folder, data, meta)

    def remove_snapshot(self, folder: Path) -> None:
        self.lease.check()
        StateFolder.remove_snapshot(folder)

    def drop(self, user: str) -> bool:
        self.lease.check()
        return super().drop(user)
