"""What one namespace keeps on disk, and the rule that nothing outlives the episode it belongs to:
every image in its store is an image of a logged, unforgotten episode (or of the shared base),
and every entry of its embedding cache was asked for by such an episode's update.

A log entry carries the cache keys its episode's update asked for (`LogEntry.keys`), so
forgetting an episode drops exactly the entries no remaining episode shares, and the rest of the
cache (the expensive part of reopening) stays."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Iterable

from automemo.assembly import EMBEDDING_CACHE
from automemo.contract import EpisodeRecorder
from automemo.serve.storage.episode_log import LogEntry
from automemo.toolkit.embedding_cache import EmbeddingCache

IMAGES = "images"  # the store's image folder (`EpisodeStore.put_image`)


def episode_images(episode: dict) -> list[str]:
    """The store paths of an episode's images (its JSON as logged)."""
    return [ref.path for ref in EpisodeRecorder.from_dict(episode).images()]


class NamespaceFiles:
    """The images and cache entries of one namespace's store, counted by the live episodes that
    use them. `shipped` are the shared base's image paths (never removed here)."""

    def __init__(self, store: Path, shipped: frozenset[str] = frozenset()) -> None:
        self.store = store
        self.shipped = shipped
        self.images: Counter[str] = Counter()
        self.keys: Counter[str] = Counter()

    def count(self, live: Iterable[LogEntry]) -> None:
        self.images.clear()
        self.keys.clear()
        for entry in live:
            self.add(entry)

    def add(self, entry: LogEntry) -> None:
        self.images.update(episode_images(entry.episode))
        self.keys.update(entry.keys or ())

    def kept(self, path: str) -> bool:
        return path in self.shipped or self.images[path] > 0

    def drop_images(self, paths: Iterable[str]) -> int:
        """Remove the files among `paths` no live episode (nor the shared base) uses."""
        dropped = 0
        for path in set(paths):
            if not self.kept(path):
                dropped += _unlink(self.store / path)
        return dropped

    def sweep(self) -> int:
        """Remove every image file no live episode uses: what a kill left between storing a
        remember's images and logging it, a recall's images, a half-written temporary file.
        (`sweep_keys` does the same for the embedding cache.)"""
        folder = self.store / IMAGES
        if not folder.is_dir():
            return 0
        dropped = 0
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not self.kept(str(path.relative_to(self.store))):
                dropped += _unlink(path)
        return dropped

    def drop_keys(self, forgotten: Iterable[LogEntry], cache: EmbeddingCache | None = None) -> None:
        """Remove the cache entries the `forgotten` episodes' updates asked for that no live
        episode did; `cache` is the open memory's cache, else the file is opened here. An
        episode whose keys were not recorded costs the whole cache (it is rebuilt by use)."""
        forgotten = list(forgotten)
        path = self.store / EMBEDDING_CACHE
        if any(e.keys is None for e in forgotten):
            path.unlink(missing_ok=True)
            return
        doomed = {k for e in forgotten for k in e.keys if self.keys[k] <= 0}
        if not doomed:
            return
        if cache is not None:
            cache.drop(doomed)
            return
        if path.is_file():
            closed = EmbeddingCache(path)
            try:
                closed.drop(doomed)
            finally:
                closed.close()

    def sweep_keys(self, live: list[LogEntry]) -> int:
        """Remove the cache entries no live episode asked for: what a kill left between an
        update's embedding and its log line. Only when every live episode's keys were recorded
        (a log from before they were cannot tell its entries from strays)."""
        if any(e.keys is None for e in live) or not (self.store / EMBEDDING_CACHE).is_file():
            return 0
        stray = self.stray_keys()
        if stray:
            cache = EmbeddingCache(self.store / EMBEDDING_CACHE)
            try:
                cache.drop(stray)
            finally:
                cache.close()
        return len(stray)

    def stray_keys(self) -> set[str]:
        """Cache entries on disk that no live episode asked for."""
        path = self.store / EMBEDDING_CACHE
        if not path.is_file():
            return set()
        cache = EmbeddingCache(path)
        try:
            return {k for k in cache.stored_keys() if self.keys[k] <= 0}
        finally:
            cache.close()

    def bytes_used(self, log: Path) -> int:
        """The namespace's log and its own images, in bytes (what its quota counts)."""
        total = log.stat().st_size if log.is_file() else 0
        for path in self.images:
            try:
                total += (self.store / path).stat().st_size
            except OSError:
                pass
        return total


def _unlink(path: Path) -> int:
    try:
        os.unlink(path)
        return 1
    except FileNotFoundError:
        return 0
