"""One namespace's memory: its own program state in its own sandbox session, its own log,
images and embedding cache. Isolation is by construction: a recall runs in a program that only
ever saw this namespace's episodes (and, with `serve --shared-experience`, the shipped base),
whatever the program's code does with `metadata.user`.

Opening starts from the newest usable state and replays only what came after it:
1. this namespace's snapshot, plus the log's tail after the snapshot's sequence number;
2. else the base snapshot (the program empty, or after the shipped episodes), plus the whole log;
3. else (a program without snapshot support) the program empty or replaying the shipped
   episodes, plus the whole log.
Forgotten episodes (tombstones) are never replayed. Opening also finishes what a kill cut short:
a forget whose log rewrite did not happen, images stored for a remember that was never logged.
Every method runs on one thread at a time (`memory_pool.UserMemoryPool` sees to that). Without a
`Program` (the `automemo memory` commands on a state folder) a namespace is read, forgotten from
and added to on disk only; a server replays what was added when the namespace opens."""

from __future__ import annotations

import contextlib
import hashlib
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from automemo.contract import TIME_KEY, USER_KEY, EpisodeRecorder, ImageRef, MemoryPayload, PartialRecorder
from automemo.deploy import DeployError, DeployedMemory, default_services, load_memory, read_manifest
from automemo.episode_store import EpisodeStore
from automemo.errors import AutomemoError
from automemo.sandbox.base import ProgramError, SandboxError
from automemo.serve.storage.episode_draft import EpisodeDraft
from automemo.serve.storage.episode_log import EpisodeLog, LogEntry, fsync_file, live_episodes
from automemo.serve.storage.namespace_files import episode_images
from automemo.serve.storage.recall_log import RECALLS, LoggedRecall, RecallLog, episode_item_ids
from automemo.serve.storage.state_folder import LOG, STORE, SnapshotMeta, StateFolder, incarnation
from automemo.serve.storage.trials import TrialPointer
from automemo.serve.storage.versions import SHIPPED, NamespaceVersions, retire_derived
from automemo.serve.trial_memory import TrialSide, open_trial
from automemo.toolkit.embedding_cache import EmbeddingCache


class NamespaceDead(AutomemoError, RuntimeError):
    """The namespace's program stopped (timeout, crash); `kind` says how. Reopening replays."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class QuotaExceeded(AutomemoError, RuntimeError):
    """A remember would take the namespace past its quota; `status` is 429 (episodes) or 413
    (bytes), the message says which and what to do. Nothing was stored."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Quota:
    episodes: int   # live episodes of one namespace
    bytes: int      # its log and its own images


@dataclass(frozen=True)
class Program:
    """What every namespace of one served export shares."""

    folder: Path                     # the exported folder
    program_sha256: str
    benchmark: str
    open_args: dict[str, Any]        # load_memory's sandbox / unsafe / services
    base_snapshot: Path | None       # every namespace's starting state, when the program supports snapshots
    snapshot_every: int              # a namespace snapshots after this many new log entries
    shared_experience: bool = False  # namespaces start from the shipped episodes (else empty)
    shipped_images: frozenset[str] = frozenset()  # the shipped episodes' image paths, when shared
    quota: Quota | None = None       # None: unbounded
    # each namespace's host services over its own store (its own embedding cache); None: the
    # export's own configuration (`deploy.default_services`). Unused when open_args has services.
    services_for: Callable[[Path], Any] | None = None
    # an adapted version of one namespace (`serve.storage.versions`): it snapshots into its own folder,
    # and has no shared base snapshot (the base is the served export's program's state)
    versioned: bool = False

    @property
    def snapshots(self) -> bool:
        """Whether namespaces save this program's state (the served export's: when its base
        snapshot could be made; an adapted version's: always tried)."""
        return self.base_snapshot is not None or self.versioned


class UserMemory:
    def __init__(self, user: str, state: StateFolder, program: Program | None,
                 notice: Callable[[str], None] = lambda message: None) -> None:
        if not user:
            raise ValueError("a namespace needs a non-empty user id (calls that name none use DEFAULT_USER)")
        self.user = user
        self.state = state
        self.program = program
        self.folder = state.user_dir(user)
        # every write goes through the state folder's writers (a leased namespace's check its lease)
        self.log = state.episode_log(self.folder / LOG)
        self.files = state.namespace_files(self.folder / STORE, program.shipped_images if program else frozenset())
        self.versions = NamespaceVersions(self.folder)
        self.recalls = RecallLog(self.folder / RECALLS)  # its recalls and the agent's feedback on them
        self.version = SHIPPED       # the version the open program is (`serve.storage.versions`)
        self.active = program        # its Program: the served export's, or an adapted version's
        self._stamp: tuple[int, int] | None = None  # the version pointer as it was when opened
        self.memory: DeployedMemory | None = None
        self.cache: EmbeddingCache | None = None  # the open program's embedding cache, when the service owns it
        self.unsnapshotted = 0       # log entries since the last snapshot
        self.trial: TrialSide | None = None   # the program on trial beside this one (`serve.storage.trials`)
        self._trial_stamp: tuple[int, int] | None = None
        self._services: Any = None   # the open program's host services, which a trial program shares
        self.live_count = 0          # remembered, not forgotten
        self.bytes_used = 0          # the log and this namespace's own images
        self._notice = notice

    @property
    def is_open(self) -> bool:
        return self.memory is not None

    @property
    def store(self) -> EpisodeStore:
        return self.state.episode_store(self.folder / STORE)

    # --- opening and closing -------------------------------------------------------------

    def open(self) -> None:
        if self.memory is not None:
            if self.versions.stamp() == self._stamp:
                self._follow_trial()
                return
            # another version serves now (an adaptation swapped it in, an operator rolled back):
            # its snapshot was written before the pointer moved, so this costs a load and the tail
            self.close(snapshot=False)
        self.state.claim(self.user)
        self._stamp = self.versions.stamp()
        self.version, self.active = self._serving()
        entries = self._settled(self.log.read())
        live = live_episodes(entries)
        self.files.count(live)
        self.files.sweep()
        if self.program.base_snapshot is not None or not self.program.shared_experience:
            # (a namespace that replays the shipped episodes itself caches their vectors too)
            self.files.sweep_keys(live)
        self.live_count, self.bytes_used = len(live), self.files.bytes_used(self.log.path)
        own = self.state.read_snapshot(self.versions.folder(self.version), self.active.program_sha256)
        memory = None
        if own is not None:
            start, tail = own[1], [e for e in live if e.seq > own[0].seq]
            try:
                memory = self._load(snapshot=start)
            except DeployError as exc:  # a damaged snapshot costs a replay, never the memory
                self._notice(f"a user's snapshot did not load ({exc}); rebuilding that memory from its log")
                self.state.remove_snapshot(self.versions.folder(self.version))
        if memory is None:
            tail = live
            memory = self._load(snapshot=self.active.base_snapshot)
        recorded: dict[int, tuple[str, ...]] = {}
        try:
            if tail:
                self.state.fence()  # the replay fills the embedding cache
            for entry in tail:
                keys = self._replay(memory, entry)
                if keys is not None:
                    recorded[entry.seq] = keys
        except SandboxError as exc:
            self.memory = memory
            self._shut()
            raise DeployError(f"replaying the memory of one user stopped the program ({exc.kind}); the log "
                              f"is kept, nothing was lost") from None
        self.memory = memory
        if recorded:
            # episodes logged without their cache keys (an offline import) now have them, so
            # forgetting one drops its own entries, not the whole cache
            entries = [replace(e, keys=recorded[e.seq]) if e.seq in recorded else e for e in entries]
            self.log.rewrite(entries)
            self.files.count(live_episodes(entries))
        self.unsnapshotted = len(tail)
        if self.unsnapshotted >= self.program.snapshot_every:
            self.snapshot()
        self._follow_trial(live)

    def _serving(self) -> tuple[int, Program]:
        """The version this namespace serves and its Program (the served export's when the
        pointer names a version that is gone or unreadable: never no memory)."""
        version = self.versions.current()
        if version == SHIPPED or self.program is None:
            return SHIPPED, self.program
        record = self.versions.record(version)
        if record is None or record.retired:
            self._notice(f"a user's memory names version {version}, which is "
                         f"{'retired' if record else 'missing'}; serving the exported program")
            return SHIPPED, self.program
        return version, replace(self.program, folder=self.versions.program_folder(version),
                                program_sha256=record.program_sha256, base_snapshot=None, versioned=True)

    def _replay(self, memory: DeployedMemory, entry: LogEntry) -> tuple[str, ...] | None:
        """Apply a logged episode again; returns the cache keys its update asked for when the log
        did not record them and this memory's cache can (None otherwise)."""
        with self._recording(entry.keys is None) as keys:
            try:
                memory.update(self._owned(entry.episode), checked=True)  # logged from a checked episode
            except ProgramError:
                pass  # it raised when it was remembered too: the same skip, the same state
        return None if keys is None else tuple(sorted(keys))

    def _recording(self, wanted: bool = True) -> Any:
        """A block yielding the set of cache keys the program asks for inside it, when `wanted`
        and this memory's cache is the service's own; else a block yielding None."""
        return self.cache.recording() if wanted and self.cache is not None else contextlib.nullcontext()

    def _load(self, snapshot: Path | None) -> DeployedMemory:
        """The program in a new sandbox session over this namespace's store. Its embedding
        cache is the service's own (when no services were given), so that what an update asks
        for is recorded and what a recall asks for stays out of the file."""
        args = dict(self.program.open_args)
        self.cache = None
        if args.get("services") is None:
            store = self.folder / STORE
            store.mkdir(parents=True, exist_ok=True)
            make = self.program.services_for or (lambda root: default_services(read_manifest(self.active.folder), root))
            args["services"] = make(store)
            self._services = args["services"]
            encoders = getattr(args["services"], "encoders", None)
            self.cache = getattr(getattr(encoders, "text", None), "cache", None)
        try:
            return load_memory(self.active.folder, store_dir=self.folder / STORE, snapshot=snapshot,
                               experience=self.program.shared_experience, **args)
        except BaseException:
            self._shut()
            raise

    def close(self, *, snapshot: bool = True) -> None:
        if self.memory is None:
            return
        try:
            if snapshot and self.unsnapshotted:
                self.snapshot()
        finally:
            self._shut()
            self.log.close()

    def _shut(self) -> None:
        self._close_trial()
        if self.memory is not None:
            self.memory.close()
            self.memory = None
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def snapshot(self) -> bool:
        """Save the program's state with the log position it covers; False when the program
        cannot (it is then restarted by replay)."""
        if self.memory is None or not self.active.snapshots:
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
                            program_sha256=self.active.program_sha256,
                            seconds=round(time.perf_counter() - started, 3))
        self.state.write_snapshot(self.versions.folder(self.version), data, meta)
        self.unsnapshotted = 0
        return True

    # --- the calls -----------------------------------------------------------------------

    def recall(self, instruction: str, images: tuple[bytes, ...], time_: str,
               metadata: dict[str, Any] | None = None, *, recall_id: str = "") -> tuple[MemoryPayload, dict[str, bytes]]:
        """The program's payload and the bytes of its images by store path. The question's images
        are in the store only while it is answered; what the question made the encoder compute
        stays out of the cache file. With `recall_id`, the recall is logged (its text and the
        evidence it returned) for the agent's feedback on it."""
        self.open()
        store = self.store
        refs = tuple(store.put_image(data) for data in images)
        # The scope, the time and the question-time keys the request carried (the request
        # refused any other); the deployed memory hands the program the harness's view of it.
        named = {k: v for k, v in ((USER_KEY, self.user), (TIME_KEY, time_)) if v}
        metadata = {**(metadata or {}), **named}
        task = PartialRecorder(task_id=f"recall-{uuid.uuid4().hex[:12]}", benchmark=self.program.benchmark,
                               instruction=instruction, task_images=refs, metadata=metadata)
        try:
            with self.cache.transient() if self.cache is not None else contextlib.nullcontext():
                payload = self.memory.retrieve(task)
                trial_payload = self._trial_call(lambda side: side.retrieve(task))
            teams: tuple[str, ...] = ()
            if trial_payload is not None and self.trial is not None:
                payload, drafted = self.trial.answer(payload, trial_payload, recall_id or task.task_id,
                                                     self.memory.budget)
                teams = drafted.teams
            if recall_id:
                evidence = payload.metadata.get("evidence")
                shown = [str(e) for e in evidence] if isinstance(evidence, list) else []
                self.recalls.record(recall_id, instruction, shown, date=time_, teams=teams,
                                    trial=self.trial.pointer.trial if teams and self.trial else "")
            return payload, {ref.path: self.image_bytes(ref) for ref in payload.images}
        except ProgramError:
            raise  # the program's own error: the memory lives on
        except SandboxError as exc:
            self._died(exc)
        finally:
            self.files.drop_images(ref.path for ref in refs)

    def remember(self, draft: EpisodeDraft | EpisodeRecorder) -> tuple[LogEntry, bool]:
        """Store the episode's images, apply it, then log it (fsynced) before answering; `applied`
        is False when the program raised on it (logged all the same: a replay raises again and
        skips it again). Refused with `QuotaExceeded` before anything is stored."""
        self.open()
        draft = draft if isinstance(draft, EpisodeDraft) else EpisodeDraft.of(draft)
        self._check_quota(draft)
        episode = draft.build(self.store.put_image)
        episode = EpisodeRecorder.from_dict(self._owned(episode.to_dict()))
        new_images = [ref.path for ref in episode.images() if not self.files.kept(ref.path)]
        for path in dict.fromkeys(new_images):  # the log line must never point at an image a crash lost
            fsync_file(self.folder / STORE / path)
            fsync_file((self.folder / STORE / path).parent)
        applied = True
        self.state.fence()  # the update fills the embedding cache
        try:
            with self._recording() as keys:
                self.memory.update(episode)
        except ProgramError:
            applied = False
        except SandboxError as exc:
            self.files.drop_images(new_images)  # never logged: nothing may point at them
            self._died(exc)
        entry = self.log.append_episode(episode.to_dict(), received=time.time(), keys=keys)
        self._trial_call(lambda side: side.update(episode.to_dict(), self.cache), refusal_ends=False)
        self.files.add(entry)
        self.live_count += 1
        self.bytes_used += draft.size
        self.unsnapshotted += 1
        if self.unsnapshotted >= self.program.snapshot_every:
            self.snapshot()
        return entry, applied

    def feedback(self, recall_id: str, used: tuple[str, ...], not_used: tuple[str, ...] = ()) -> LoggedRecall:
        """The agent's feedback on one of this user's recalls, checked against it and logged
        (`recall_log.FeedbackRefused` says why not, and nothing changes)."""
        return self.recalls.feedback(recall_id, used, not_used)

    def check_room(self, drafts: list[EpisodeDraft]) -> None:
        """Raise `QuotaExceeded` unless all of `drafts` fit the namespace's quota (an import is
        refused whole rather than cut at the quota)."""
        self.open()
        self._check_quota(*drafts)

    def _check_quota(self, *drafts: EpisodeDraft) -> None:
        quota = self.program.quota if self.program else None
        if quota is None:
            return
        size = sum(d.size for d in drafts)
        if self.live_count + len(drafts) > quota.episodes:
            raise QuotaExceeded(f"this user's memory holds {self.live_count} episodes and its quota is "
                                f"{quota.episodes}; forget some (forget with task_id) before remembering more", 429)
        if self.bytes_used + size > quota.bytes:
            raise QuotaExceeded(f"this would take this user's memory ({self.bytes_used} bytes used) past its quota "
                                f"of {quota.bytes} bytes by {self.bytes_used + size - quota.bytes}; forget some first",
                                413)

    def forget(self, task_id: str) -> int:
        """Forget the episodes with this task_id: a tombstone first (durable from here on), then
        their text, images and embeddings leave the disk, and an open program is rebuilt without
        them. Returns how many episodes were forgotten."""
        entries = self._entries()
        doomed = [e for e in live_episodes(entries) if e.task_id == task_id]
        if not doomed:
            return 0
        was_open = self.memory is not None
        self._shut()
        self.log.read()  # the append position, whether or not the namespace was open
        self.log.append_forget(task_id, received=time.time())
        self._settled(self.log.read())
        if was_open:
            self.open()
            self.snapshot()
        return len(doomed)

    def _settled(self, entries: list[LogEntry]) -> list[LogEntry]:
        """The log with every tombstone carried out: when an episode a tombstone forgot is still
        in the log (just forgotten, or a kill came between the tombstone and the rewrite), the
        snapshot that may hold it goes, the log is rewritten without it, and its images and cache
        entries leave the store. Returns the entries as they now are."""
        live = live_episodes(entries)
        # by the entry itself, not its sequence number: a former lease holder's late line can
        # carry the same number as the new holder's first (`episode_log.current_writers`), and
        # forgetting one of those twins must not keep its text for the other's sake
        kept = {id(e) for e in live}
        doomed = [e for e in entries if e.episode is not None and id(e) not in kept]
        if not doomed:
            return entries
        self.state.remove_snapshot(self.folder)
        # what was derived from them goes too: every version's state, the versions whose fit or
        # evidence read them (here, or pooled in other namespaces), an adaptation's work
        self.versions.remove_snapshots()
        self.versions.remove_work()
        self.versions.sweep_staging(every=True)  # a version being built holds a snapshot of this memory
        retire_derived(self.folder.parent, self.folder.name, [e.seq for e in doomed],
                       "its fit or evidence read an episode that was forgotten", tag=self.state.tag)
        # the recalls that showed a forgotten episode's items go with it (their query is about it)
        self.recalls.drop_showing({i for e in doomed for i in episode_item_ids(e.episode)})
        entries = [e for e in entries if e.episode is None or id(e) in kept]
        self.log.rewrite(entries)
        self.files.count(live)
        self.files.drop_images(path for e in doomed for path in episode_images(e.episode))
        self.files.drop_keys(doomed)
        self.live_count, self.bytes_used = len(live), self.files.bytes_used(self.log.path)
        return entries

    def add_logged(self, drafts: list[EpisodeDraft | EpisodeRecorder]) -> None:
        """Store and log episodes without applying them (a closed namespace replays them when it
        opens)."""
        self.state.claim(self.user)
        self.log.read()
        for draft in drafts:
            draft = draft if isinstance(draft, EpisodeDraft) else EpisodeDraft.of(draft)
            episode = draft.build(self.store.put_image)
            self.log.append_episode(self._owned(episode.to_dict()), received=time.time())
        self.log.close()

    def episodes(self) -> list[EpisodeRecorder]:
        """This namespace's remembered episodes, forgotten ones left out, in the order remembered."""
        entries = self._entries()
        return [EpisodeRecorder.from_dict(e.episode) for e in live_episodes(entries)]

    def image_bytes(self, ref: ImageRef) -> bytes:
        return self.store.image_bytes(ref)

    # --- a trial beside the live program (`serve.storage.trials`, `serve.trial_memory`) ----------

    def _follow_trial(self, live: list[LogEntry] | None = None) -> None:
        """Open, keep or close the trial program as the namespace's trial pointer says (one stat
        per call when nothing changed)."""
        stamp = TrialPointer.stamp(self.versions.root)
        if stamp == self._trial_stamp:
            return
        self._close_trial()
        self._trial_stamp = stamp
        pointer = TrialPointer.read(self.versions.root) if stamp is not None and self.program is not None else None
        record = self.versions.record(pointer.version) if pointer is not None else None
        if pointer is None or record is None or record.retired or pointer.version == self.version \
                or pointer.incarnation != incarnation(self.folder):
            return  # no trial, or one of another life of this namespace
        trial = replace(self.program, folder=self.versions.program_folder(pointer.version),
                        program_sha256=record.program_sha256, base_snapshot=None, versioned=True)
        args = {**self.program.open_args, "services": self.program.open_args.get("services") or self._services}
        try:
            self.trial = open_trial(
                pointer, lambda snapshot: load_memory(trial.folder, store_dir=self.folder / STORE, snapshot=snapshot,
                                                      experience=self.program.shared_experience, **args),
                self.state.read_snapshot(self.versions.folder(pointer.version), record.program_sha256),
                live if live is not None else live_episodes(self._entries()), self._owned, self.cache)
        except (DeployError, SandboxError, ProgramError, OSError) as exc:
            self._end_trial(pointer, f"the program on trial did not open ({exc})")

    def _trial_call(self, call: Callable[[TrialSide], Any], *, refusal_ends: bool = True) -> Any:
        """`call` on the trial program, or None when there is none or it failed, which ends the
        trial (a trial program's failure never fails the call); with `refusal_ends` False, its
        refusal of one episode is skipped, as the live program's is."""
        if self.trial is None:
            return None
        try:
            return call(self.trial)
        except ProgramError as exc:
            if refusal_ends:
                self._end_trial(self.trial.pointer, f"the program on trial raised ({exc.detail})")
        except SandboxError as exc:
            self._end_trial(self.trial.pointer, f"the program on trial stopped ({exc.kind})")
        return None

    def _end_trial(self, pointer: TrialPointer, reason: str) -> None:
        self._close_trial()
        self._notice(f"a user's trial of version {pointer.version} ended: {reason}")
        self.versions.retire(lambda r: r.version == pointer.version, reason)  # the pointer goes with it
        if TrialPointer.read(self.versions.root) == pointer:  # a version with no record: the pointer alone
            TrialPointer.remove(self.versions.root)
        self._trial_stamp = TrialPointer.stamp(self.versions.root)

    def _close_trial(self) -> None:
        if self.trial is not None:
            trial, self.trial = self.trial, None
            self._trial_stamp = None
            trial.close()

    # --- helpers -------------------------------------------------------------------------

    def _owned(self, episode: dict[str, Any]) -> dict[str, Any]:
        """The episode as this namespace holds it: its `metadata.user` is this namespace's."""
        metadata = episode.get("metadata") or {}
        if metadata.get(USER_KEY) == self.user:
            return episode
        return {**episode, "metadata": {**metadata, USER_KEY: self.user}}

    def _entries(self) -> list[LogEntry]:
        """The whole log, read without disturbing the append handle."""
        return EpisodeLog(self.log.path).read()

    def _died(self, exc: SandboxError) -> None:
        self._shut()
        self.log.close()
        raise NamespaceDead(exc.kind) from None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
