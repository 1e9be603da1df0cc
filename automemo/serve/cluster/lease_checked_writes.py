"""A namespace's writes, each checked against its lease first (`lease.NamespaceLease.check`): the
log's appends (with the cache keys each episode's update used) and rewrites, its snapshots, its
user file, dropping its folder, storing an image (a remember's or a recall's question), removing
images and cache entries (a forget, a recall's cleanup, the sweeps on open), and the program's
update (which fills the embedding cache). A writer whose lease moved gets `LeaseLost` before a
byte is written; a log line carries the writer's token, and a line written while the lease moved
(between the check and the write) raises `LeaseLost` after it, unacknowledged, and is dropped by
readers once the new holder has written. Same files, same formats as the single-process server.

A writer that loses its lease in the middle of a remember may leave an image it stored before
the loss: it must not remove it (the new owner may hold the same content-addressed file), and
the next owner's open sweeps every file no logged episode uses."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

from automemo.contract import ImageRef
from automemo.episode_store import EpisodeStore
from automemo.serve.cluster.lease import NamespaceLease
from automemo.serve.storage.episode_log import EpisodeLog, LogEntry
from automemo.serve.storage.namespace_files import NamespaceFiles
from automemo.serve.storage.state_folder import SnapshotMeta, StateFolder
from automemo.toolkit.embedding_cache import EmbeddingCache


class LeaseCheckedEpisodeLog(EpisodeLog):
    """Each line it appends carries its lease's token (readers drop a line whose token is older
    than one before it: `episode_log.current_writers`)."""

    def __init__(self, path: Path, lease: NamespaceLease) -> None:
        super().__init__(path)
        self.lease = lease
        self.appended = 0   # entries this writer appended (each checked against the lease)

    def _append(self, entry: LogEntry) -> LogEntry:
        self.lease.check()
        if self.newest_token is not None and self.newest_token > self.lease.token:
            self.lease.advance(self.newest_token)  # or every line of this holder would be dropped
        written = super()._append(replace(entry, token=self.lease.token))
        self.appended += 1
        # The lease may have moved between the check and the write: then a reader drops this line
        # once the new holder has written, so it must not be acknowledged.
        self.lease.check()
        return written

    def rewrite(self, entries: Iterable[LogEntry]) -> None:
        self.lease.check()
        super().rewrite(entries)


class LeaseCheckedNamespaceFiles(NamespaceFiles):
    def __init__(self, store: Path, shipped: frozenset[str], lease: NamespaceLease) -> None:
        super().__init__(store, shipped)
        self.lease = lease

    def drop_images(self, paths: Iterable[str]) -> int:
        self.lease.check()
        return super().drop_images(paths)

    def sweep(self) -> int:
        self.lease.check()
        return super().sweep()

    def drop_keys(self, forgotten: Iterable[LogEntry], cache: EmbeddingCache | None = None) -> None:
        self.lease.check()
        super().drop_keys(forgotten, cache)

    def sweep_keys(self, live: list[LogEntry]) -> int:
        self.lease.check()
        return super().sweep_keys(live)


class LeaseCheckedEpisodeStore(EpisodeStore):
    def __init__(self, root: Path, lease: NamespaceLease) -> None:
        super().__init__(root)
        self.lease = lease

    def put_image(self, image: Any, caption: str | None = None) -> ImageRef:
        self.lease.check()
        return super().put_image(image, caption)


class LeaseCheckedStateFolder(StateFolder):
    """The state folder as one leased namespace writes it."""

    def __init__(self, root: Path, lease: NamespaceLease) -> None:
        super().__init__(root)
        self.lease = lease

    def episode_log(self, path: Path) -> LeaseCheckedEpisodeLog:
        return LeaseCheckedEpisodeLog(path, self.lease)

    def namespace_files(self, store: Path, shipped: frozenset[str]) -> LeaseCheckedNamespaceFiles:
        return LeaseCheckedNamespaceFiles(store, shipped, self.lease)

    def episode_store(self, root: Path) -> LeaseCheckedEpisodeStore:
        return LeaseCheckedEpisodeStore(root, self.lease)

    def fence(self) -> None:
        self.lease.check()

    def claim(self, user: str) -> Path:
        self.lease.check()
        return super().claim(user)

    def write_snapshot(self, folder: Path, data: bytes, meta: SnapshotMeta) -> None:
        self.lease.check()
        StateFolder.write_snapshot(folder, data, meta)

    def remove_snapshot(self, folder: Path) -> None:
        self.lease.check()
        StateFolder.remove_snapshot(folder)

    def drop(self, user: str) -> bool:
        self.lease.check()
        return super().drop(user)
