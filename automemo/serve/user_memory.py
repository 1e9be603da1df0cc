"""One namespace's memory: its own program state in its own sandbox session, its own log,
images and embedding cache. Isolation is by construction: a recall runs in a program that only
ever saw this namespace's episodes (and the shipped base), whatever the program's code does with
`metadata.user`.

Opening starts from the newest usable state and replays only what came after it:
1. this namespace's snapshot, plus the log's tail after the snapshot's sequence number;
2. else the shared base's snapshot (the shipped episodes), plus the whole log;
3. else (a program without snapshot support) the shipped episodes, plus the whole log.
Forgotten episodes (tombstones) are never replayed. Every method runs on one thread at a time
(`namespaces.NamespacePool` sees to that). Without a `Program` (the `automemo memory` commands on
a state folder) a namespace is read, forgotten from and added to on disk only; a server replays
what was added when the namespace opens."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.assembly import EMBEDDING_CACHE
from automemo.contract import TIME_KEY, USER_KEY, EpisodeRecorder, ImageRef, MemoryPayload, PartialRecorder, retrieve_metadata
from automemo.deploy import DeployError, DeployedMemory, load_memory
from automemo.episode_store import EpisodeStore
from automemo.errors import AutomemoError
from automemo.sandbox.base import ProgramError, SandboxError
from automemo.serve.episode_log import EpisodeLog, LogEntry, fsync_file, live_episodes
from automemo.serve.state_folder import LOG, STORE, SnapshotMeta, StateFolder


class NamespaceDead(AutomemoError, RuntimeError):
    """The namespace's program stopped (timeout, crash); `kind` says how. Reopening replays."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True)
class Program:
    """What every namespace of one served export shares."""

    folder: Path                     # the exported folder
    program_sha256: str
    benchmark: str
    open_args: dict[str, Any]        # load_memory's sandbox / unsafe / services
    base_snapshot: Path | None       # the shipped episodes' state, when the program supports snapshots
    snapshot_every: int              # a namespace snapshots after this many new log entries


class UserMemory:
    def __init__(self, user: str, state: StateFolder, program: Program | None,
                 notice: Callable[[str], None] = lambda message: None) -> None:
        self.user = user
        self.state = state
        self.program = program
        self.folder = state.user_dir(user)
        self.log = EpisodeLog(self.folder / LOG)
        self.memory: DeployedMemory | None = None
        self.unsnapshotted = 0       # log entries since the last snapshot
        self.live_count = 0          # remembered, not forgotten
        self._notice = notice

    @property
    def is_open(self) -> bool:
        return self.memory is not None

    @property
    def store(self) -> EpisodeStore:
        return EpisodeStore(self.folder / STORE)

    # --- opening and closing -------------------------------------------------------------

    def open(self) -> None:
        if self.memory is not None:
            return
        self.state.claim(self.user)
        entries = self.log.read()
        live = live_episodes(entries)
        self.live_count = len(live)
        last_forget = max((e.seq for e in entries if e.forget is not None), default=0)
        own = self.state.read_snapshot(self.folder, self.program.program_sha256)
        memory = None
        if own is not None and own[0].seq >= last_forget:
            start, tail = own[1], [e for e in live if e.seq > own[0].seq]
            try:
                memory = load_memory(self.program.folder, store_dir=self.folder / STORE, snapshot=start,
                                     **self.program.open_args)
            except DeployError as exc:  # a damaged snapshot costs a replay, never the memory
                self._notice(f"a user's snapshot did not load ({exc}); rebuilding that memory from its log")
                self.state.remove_snapshot(self.folder)
        if memory is None:
            tail = live
            memory = load_memory(self.program.folder, store_dir=self.folder / STORE,
                                 snapshot=self.program.base_snapshot, **self.program.open_args)
        try:
            for entry in tail:
                try:
                    memory.update(entry.episode, checked=True)  # logged from a checked episode
                except ProgramError:
                    pass  # it raised when it was remembered too: the same skip, the same state
        except SandboxError as exc:
            memory.close()
            raise DeployError(f"replaying the memory of one user stopped the program ({exc.kind}); the log "
                              f"is kept, nothing was lost") from None
        self.memory = memory
        self.unsnapshotted = len(tail)
        if self.unsnapshotted >= self.program.snapshot_every:
            self.snapshot()

    def close(self, *, snapshot: bool = True) -> None:
        if self.memory is None:
            return
        try:
            if snapshot and self.unsnapshotted:
                self.snapshot()
        finally:
            self.memory.close()
            self.memory = None
            self.log.close()

    def snapshot(self) -> bool:
        """Save the program's state with the log position it covers; False when the program
        cannot (it is then restarted by replay)."""
        if self.memory is None or self.program.base_snapshot is None:
            return False
        started = time.perf_counter()
        try:
            data = self.memory.snapshot()
        except ProgramError as exc:
            self._notice(f"the program could not save a snapshot ({exc.detail}); this memory restarts by replay")
            return False
        except SandboxError as exc:
            self._died(exc)
        meta = SnapshotMeta(seq=self.log.last_seq, sha256=_sha256(data), bytes=len(data),
                            program_sha256=self.program.program_sha256,
                            seconds=round(time.perf_counter() - started, 3))
        self.state.write_snapshot(self.folder, data, meta)
        self.unsnapshotted = 0
        return True

    # --- the calls -----------------------------------------------------------------------

    def recall(self, instruction: str, images: tuple[bytes, ...], time_: str) -> MemoryPayload:
        self.open()
        refs = tuple(self.memory.put_image(data) for data in images)
        # What the contract lets a retrieve task carry and a recall request names: the scope and the time.
        metadata = retrieve_metadata({k: v for k, v in ((USER_KEY, self.user), (TIME_KEY, time_)) if v})[0]
        task = PartialRecorder(task_id=f"recall-{uuid.uuid4().hex[:12]}", benchmark=self.program.benchmark,
                               instruction=instruction, task_images=refs, metadata=metadata)
        try:
            return self.memory.retrieve(task)
        except ProgramError:
            raise  # the program's own error: the memory lives on
        except SandboxError as exc:
            self._died(exc)

    def remember(self, episode: EpisodeRecorder) -> tuple[LogEntry, bool]:
        """Apply, then log (fsynced) before answering; `applied` is False when the program raised
        on it (logged all the same: a replay raises again and skips it again)."""
        self.open()
        for ref in episode.images():  # the log line must never point at an image a crash lost
            fsync_file(self.folder / STORE / ref.path)
            fsync_file((self.folder / STORE / ref.path).parent)
        applied = True
        try:
            self.memory.update(episode)
        except ProgramError:
            applied = False
        except SandboxError as exc:
            self._died(exc)
        entry = self.log.append_episode(episode.to_dict(), received=time.time())
        self.live_count += 1
        self.unsnapshotted += 1
        if self.unsnapshotted >= self.program.snapshot_every:
            self.snapshot()
        return entry, applied

    def forget(self, task_id: str) -> int:
        """Forget the episodes with this task_id: a tombstone first (durable from here on), then
        their text, images and embeddings leave the disk, and an open program is rebuilt without
        them. Returns how many episodes were forgotten."""
        entries = self._entries()
        doomed = [e for e in live_episodes(entries) if e.task_id == task_id]
        if not doomed:
            return 0
        was_open = self.memory is not None
        if was_open:
            self.memory.close()
            self.memory = None
        self.log.read()  # the append position, whether or not the namespace was open
        self.log.append_forget(task_id, received=time.time())
        self.state.remove_snapshot(self.folder)  # it holds the forgotten episodes
        # The embedding cache holds vectors of the forgotten text: it is rebuilt from what remains.
        (self.folder / STORE / EMBEDDING_CACHE).unlink(missing_ok=True)
        entries = self.log.read()
        live = live_episodes(entries)
        kept = {e.seq for e in live}
        self.log.rewrite([e for e in entries if e.episode is None or e.seq in kept])
        self._drop_images(doomed, live)
        if was_open:
            self.open()
            self.snapshot()
        return len(doomed)

    def add_logged(self, episodes: list[EpisodeRecorder]) -> None:
        """Log episodes without applying them (a closed namespace replays them when it opens)."""
        self.state.claim(self.user)
        self.log.read()
        for episode in episodes:
            self.log.append_episode(episode.to_dict(), received=time.time())
        self.log.close()

    def episodes(self) -> list[EpisodeRecorder]:
        """This namespace's remembered episodes, forgotten ones left out, in the order remembered."""
        entries = self._entries()
        return [EpisodeRecorder.from_dict(e.episode) for e in live_episodes(entries)]

    def image_bytes(self, ref: ImageRef) -> bytes:
        return self.store.image_bytes(ref)

    # --- helpers -------------------------------------------------------------------------

    def _entries(self) -> list[LogEntry]:
        """The whole log, read without disturbing the append handle."""
        return EpisodeLog(self.log.path).read()

    def _drop_images(self, doomed: list[LogEntry], live: list[LogEntry]) -> None:
        """Images only forgotten episodes used. (A shipped image is linked in again when the
        namespace opens.)"""
        kept = {ref.path for e in live for ref in EpisodeRecorder.from_dict(e.episode).images()}
        for entry in doomed:
            for ref in EpisodeRecorder.from_dict(entry.episode).images():
                if ref.path not in kept:
                    (self.folder / STORE / ref.path).unlink(missing_ok=True)

    def _died(self, exc: SandboxError) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
        self.log.close()
        raise NamespaceDead(exc.kind) from None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
