"""The append-only log of acknowledged `remember` calls: one JSON line per episode, fsynced
before the call is answered, read back in order when the server starts.

A kill in the middle of an append leaves at most one torn last line; reading drops it (that call
was never acknowledged) and truncates the file back to its last whole line, so later appends
start clean."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator


class EpisodeLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self._fh = None

    def read(self) -> Iterator[dict[str, Any]]:
        """Every whole entry in append order; call once, before the first `append`."""
        if not self.path.is_file():
            return
        good_end = 0
        with open(self.path, "rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # a torn last append: never acknowledged
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    break
                good_end += len(line)
                self.count += 1
                yield entry
        if good_end < self.path.stat().st_size:
            with open(self.path, "r+b") as fh:
                fh.truncate(good_end)
                os.fsync(fh.fileno())

    def append(self, entry: dict[str, Any]) -> int:
        """Write one entry and fsync it; returns its sequence number (1-based)."""
        if self._fh is None:
            new = not self.path.exists()
            self._fh = open(self.path, "ab", buffering=0)
            if new:
                _fsync_dir(self.path.parent)
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        self._fh.write(line)
        os.fsync(self._fh.fileno())
        self.count += 1
        return self.count

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """A new file's directory entry is durable only once its directory is synced."""
    fsync_file(path)
