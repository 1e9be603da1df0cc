"""A content-hash cache of embeddings, so that the same text or image is embedded once per run.

Every candidate program of a run re-embeds the same update episodes; with the cache that costs a
dictionary lookup. Keys are SHA-256 digests of the encoder's name plus the content (for images,
the file's bytes — never the `sha256` a guest claims, which a program could forge to poison the
cache for the other candidates). An optional sqlite file makes the cache survive a resume.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np


def content_key(encoder_name: str, content: bytes) -> str:
    return hashlib.sha256(encoder_name.encode() + b"\0" + content).hexdigest()


class EmbeddingCache:
    def __init__(self, path: str | Path | None = None) -> None:
        self._memory: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.hits = 0
        self.misses = 0
        self._recording: set[str] | None = None  # `recording()`: the keys asked for meanwhile
        self._transient = False                  # `transient()`: nothing new reaches the file
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
            # A served memory drops a forgotten episode's vectors (`drop`): zero the freed space,
            # or the file keeps their bytes until SQLite happens to reuse the page (the upstream
            # default is off; some distributions' builds turn it on, not all)
            self._conn.execute("PRAGMA secure_delete = ON")
            with self._conn:
                self._conn.execute(
                    "create table if not exists embeddings (key text primary key, dim int, vector blob)"
                )
                # Token matrices (late interaction): float16, a variable number of rows per text.
                self._conn.execute(
                    "create table if not exists token_embeddings (key text primary key, rows int, dim int, matrix blob)"
                )
        self._matrices: dict[str, np.ndarray] = {}

    @contextmanager
    def recording(self) -> Iterator[set[str]]:
        """The keys asked for (found or computed) while the block runs: what one served episode's
        update embedded, so that forgetting the episode can drop exactly those (`drop`)."""
        keys: set[str] = set()
        self._recording = keys
        try:
            yield keys
        finally:
            self._recording = None

    @contextmanager
    def transient(self) -> Iterator[None]:
        """What is computed while the block runs stays in this process's memory, never in the
        file: a served recall's question is no episode, and the file holds episodes only."""
        self._transient = True
        try:
            yield
        finally:
            self._transient = False

    def drop(self, keys: set[str] | list[str]) -> None:
        """Remove these entries, from memory and from the file (their bytes zeroed there)."""
        keys = list(keys)
        with self._lock:
            for key in keys:
                self._memory.pop(key, None)
                self._matrices.pop(key, None)
            if self._conn is not None and keys:
                with self._conn:
                    for start in range(0, len(keys), 500):
                        chunk = keys[start : start + 500]
                        marks = ",".join("?" * len(chunk))
                        self._conn.execute(f"delete from embeddings where key in ({marks})", chunk)
                        self._conn.execute(f"delete from token_embeddings where key in ({marks})", chunk)

    def stored_keys(self) -> set[str]:
        """Every key the file holds."""
        if self._conn is None:
            return set()
        with self._lock:
            return {k for (k,) in self._conn.execute("select key from embeddings union select key from token_embeddings")}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _asked(self, keys: list[str]) -> None:
        if self._recording is not None:
            self._recording.update(keys)

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        self._asked(keys)
        with self._lock:
            for key in keys:
                if key in self._memory:
                    found[key] = self._memory[key]
            missing = [k for k in keys if k not in found]
            for key, dim, blob in self._stored("select key, dim, vector from embeddings", missing):
                vector = np.frombuffer(blob, dtype=np.float32, count=dim).copy()
                self._memory[key] = found[key] = vector
            self.hits += len(found)
            self.misses += len(set(keys) - set(found))
        return found

    def _stored(self, select: str, keys: list[str]) -> Iterator[tuple]:
        """The file's rows of `select ... where key in keys`, asked in chunks (sqlite caps bound
        parameters); nothing without a file."""
        if self._conn is None:
            return
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            yield from self._conn.execute(f"{select} where key in ({','.join('?' * len(chunk))})", chunk)

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._lock:
            for key, vector in items.items():
                self._memory[key] = np.asarray(vector, dtype=np.float32)
            if self._conn is not None and not self._transient:
                with self._conn:
                    self._conn.executemany(
                        "insert or replace into embeddings values (?, ?, ?)",
                        [(k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
                    )

    def get_matrices(self, keys: list[str]) -> dict[str, np.ndarray]:
        """Token matrices (rows x dim, float16) stored under `keys`, as `get_many` for vectors."""
        found: dict[str, np.ndarray] = {}
        self._asked(keys)
        with self._lock:
            for key in keys:
                if key in self._matrices:
                    found[key] = self._matrices[key]
            missing = [k for k in keys if k not in found]
            for key, rows, dim, blob in self._stored("select key, rows, dim, matrix from token_embeddings", missing):
                matrix = np.frombuffer(blob, dtype=np.float16, count=rows * dim).reshape(rows, dim).copy()
                self._matrices[key] = found[key] = matrix
            self.hits += len(found)
            self.misses += len(set(keys) - set(found))
        return found

    def put_matrices(self, items: dict[str, np.ndarray]) -> None:
        """Store token matrices as float16: half the bytes of float32, and MaxSim's ranking does
        not move at that precision."""
        with self._lock:
            stored = {k: np.asarray(m, dtype=np.float16) for k, m in items.items()}
            self._matrices.update(stored)
            if self._conn is not None and not self._transient:
                with self._conn:
                    self._conn.executemany(
                        "insert or replace into token_embeddings values (?, ?, ?, ?)",
                        [(k, int(m.shape[0]), int(m.shape[1]), m.tobytes()) for k, m in stored.items()],
                    )

    def __len__(self) -> int:
        with self._lock:
            return len(self._memory)
