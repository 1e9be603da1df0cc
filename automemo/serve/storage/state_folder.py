"""The state folder of a served memory, and everything about where its files live.

    STATE/
      program.json            which exported program this memory belongs to (and where it was served from)
      .lock                   held by the one process using the folder
      base/                   every namespace's starting state, made once: the program empty, or after
        store/                  the shipped episodes with `serve --shared-experience` (its working
        snapshot.bin|.json      store: shipped images, embedding cache; the program's state)
      namespace-secret        the key of the names below (`serve.storage.namespace_keys`)
      users/<key>/            one namespace (a `user`): its own memory, isolated by construction
        user.json               {"user": "ana", "incarnation": "..."}: the name <key> stands for, and
                                which life of that namespace this folder is (made anew after a forget all)
        episodes.jsonl          its remembers and tombstones (`EpisodeLog`)
        store/                  its images and embedding cache (the shipped ones hard-linked)
        snapshot.bin|.json      its program state up to a log sequence number
      leases/                 one writer per namespace when replicas share the folder (`serve.cluster.lease`)

A folder from before namespaces held one `episodes.jsonl` and one `store/` at its root: they are
adopted into the namespaces on start, then deleted.

A namespace's folder name is a digest of its user id keyed with the folder's secret, so a user id
is never a path and a name cannot be tested against a guessed id. Snapshots are
written to a temporary name, fsynced and renamed: a kill leaves the old snapshot or the new one."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automemo.contract import EpisodeRecorder
from automemo.episode_store import EpisodeStore, atomic_write
from automemo.errors import DataError
from automemo.serve.defaults import DEFAULT_USER
from automemo.serve.storage.episode_log import EpisodeLog, fsync_file, live_episodes
from automemo.serve.storage.namespace_files import NamespaceFiles
from automemo.serve.storage.namespace_keys import bare_key, keyed, read_or_make_secret
from automemo.serve.storage.versions import WORK, NamespaceVersions, retire_derived

IDENTITY = "program.json"
BASE = "base"
USERS = "users"
LOG = "episodes.jsonl"
STORE = "store"
SNAPSHOT = "snapshot.bin"
SNAPSHOT_META = "snapshot.json"
USER_FILE = "user.json"
LEGACY_LOG = "episodes.jsonl"  # one log for every user, before namespaces (its images: the root's STORE)
LEGACY_ADOPTED = LEGACY_LOG + ".adopted"  # where an earlier adoption kept that log
TRASH_PREFIX = ".forgotten-"


class StateError(DataError, RuntimeError):
    """The state folder cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class SnapshotMeta:
    seq: int               # the namespace's log entries up to this one are in the snapshot
    sha256: str
    bytes: int
    program_sha256: str    # the program that made it (a snapshot of another program is ignored)
    seconds: float         # how long saving it took


def incarnation(user_dir: Path) -> str | None:
    """Which life of its namespace the folder is (written at `claim`); None when it has no
    namespace (never claimed, or forgotten whole); "" for a folder claimed before incarnations.
    A namespace forgotten whole and used again restarts its log's sequence numbers at 1: only
    the incarnation tells its new episode 1 from the forgotten one."""
    try:
        return str(json.loads((Path(user_dir) / USER_FILE).read_text()).get("incarnation") or "")
    except (OSError, ValueError, AttributeError):
        return None


class StateFolder:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._secret: bytes | None = None

    def key(self, user: str) -> str:
        """The namespace's folder name (and lease name): keyed with this folder's secret."""
        if self._secret is None:
            self._secret = read_or_make_secret(self.root)
        return keyed(self._secret, user)

    def tag(self, text: str) -> str:
        """A keyed digest of `text` (what a pooled record keeps in place of another namespace's
        key and sequence numbers)."""
        return self.key("tag:" + text)

    # --- ownership ------------------------------------------------------------------------

    def lock(self, manifest: dict[str, Any] | None, *, shared_experience: bool = False,
             export: Path | None = None) -> Any:
        """Hold the folder for this process, and refuse a folder that belongs to another
        program (its logs would replay into the wrong memory) or that was served with the other
        choice of `--shared-experience` (its snapshots hold, or lack, the shipped episodes).
        Returns the held file. Without a manifest (`automemo memory ...`), the folder must
        already be a server's state folder."""
        if manifest is None and not (self.root / IDENTITY).is_file():
            raise StateError(f"{self.root} is not the state folder of `automemo serve` (no {IDENTITY}); pass "
                             f"the folder given as --state (default: the export's folder name + '-state')")
        self.root.mkdir(parents=True, exist_ok=True)
        fh = open(self.root / ".lock", "w")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise StateError(f"another process (`automemo serve` or `automemo memory`) is using the state "
                             f"folder {self.root}; stop it or pass another --state") from None
        path = self.root / IDENTITY
        if manifest is None:
            self._settle_namespaces()
            return fh
        identity = {"program_sha256": manifest["files"]["program.py"], "node": manifest.get("node"),
                    "benchmark": (manifest.get("benchmark") or {}).get("name"),
                    "shared_experience": shared_experience}
        if path.is_file():
            held = json.loads(path.read_text())
            if held.get("program_sha256") != identity["program_sha256"]:
                fh.close()
                raise StateError(f"the state folder {self.root} holds the memory of another program (node "
                                 f"{(held.get('node') or {}).get('id')}); pass a new --state for this export")
            # a folder from before the choice existed started every user from the shipped episodes
            held_shared = bool(held.get("shared_experience", True))
            if held_shared != shared_experience:
                fh.close()
                raise StateError(
                    f"the state folder {self.root} was served {'with' if held_shared else 'without'} "
                    f"--shared-experience, so its users' memories {'hold' if held_shared else 'lack'} the "
                    f"shipped episodes; start again {'with' if held_shared else 'without'} the flag, or pass "
                    f"a new --state")
            if export is not None and held.get("export") != str(export):
                # where the served export is now: what `automemo memory adapt` adapts from
                atomic_write(path, json.dumps({**held, "export": str(export)}).encode(), durable=True)
        else:
            atomic_write(path, json.dumps({**identity, **({"export": str(export)} if export else {})}).encode(),
                         durable=True)
        self._settle_namespaces()
        return fh

    def _settle_namespaces(self) -> None:
        """What a start finds and finishes, every step safe to repeat after a kill: names keyed,
        an old layout adopted, and what no live process owns swept (the trash of a forget all,
        a folder a kill left without its user, a version a killed round half built)."""
        self._rekey_namespaces()
        self._adopt_legacy_log()
        self._adopt_empty_user()
        self._empty_trash()

    def identity(self) -> dict[str, Any]:
        """What `program.json` says: the served program's sha256, node, benchmark, whether users
        share the shipped experience, and where the export was when last served."""
        try:
            return json.loads((self.root / IDENTITY).read_text())
        except (OSError, ValueError):
            return {}

    def benchmark(self) -> str:
        """The served benchmark's name, which episodes without one are filed under."""
        try:
            return json.loads((self.root / IDENTITY).read_text()).get("benchmark") or "serve"
        except (OSError, ValueError):
            return "serve"

    # --- namespaces -----------------------------------------------------------------------

    def base(self) -> Path:
        return self.root / BASE

    def user_dir(self, user: str) -> Path:
        return self.root / USERS / self.key(user)

    def users(self) -> list[str]:
        """Every namespace with a folder, by user id, sorted."""
        found = []
        for folder in sorted((self.root / USERS).glob("*")):
            try:
                found.append(json.loads((folder / USER_FILE).read_text())["user"])
            except (OSError, ValueError, KeyError):
                continue  # a namespace whose creation a kill cut short holds nothing acknowledged
        return sorted(found)

    def claim(self, user: str) -> Path:
        """The namespace's folder, created (with its user id, durably) on first use."""
        folder = self.user_dir(user)
        if not (folder / USER_FILE).is_file():
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write(folder / USER_FILE, json.dumps({"user": user, "incarnation": uuid.uuid4().hex}).encode(),
                         durable=True)
            fsync_file(folder.parent)
        return folder

    def drop(self, user: str) -> bool:
        """Forget a whole namespace: its folder leaves by one durable rename, then is deleted."""
        folder = self.user_dir(user)
        if not folder.exists():
            return False
        # The folder leaves first: from this rename on, a round that read it finds no incarnation
        # and installs nothing (`adapt.history.still_live`), so no pooled version can slip in
        # between the retiring below and the deletion.
        trash = folder.with_name(TRASH_PREFIX + folder.name)
        shutil.rmtree(trash, ignore_errors=True)
        os.replace(folder, trash)
        fsync_file(folder.parent)
        # what pooled adaptation derived from it in other namespaces, and a pooled round's work
        shutil.rmtree(self.root / WORK, ignore_errors=True)
        retire_derived(self.root / USERS, folder.name, None, "its fit or evidence read a user that was forgotten",
                       tag=self.tag)
        shutil.rmtree(trash, ignore_errors=True)
        return True

    def _empty_trash(self) -> None:
        """A kill between a namespace's rename and its deletion leaves it in the trash; a round
        running when its user was forgotten can leave a folder with no user in it (a version it
        was staging); a killed round leaves a half-built version (`.staging-*`, which holds a
        snapshot of the memory). No process owns any of them once the folder is locked."""
        for folder in (self.root / USERS).glob("*"):
            if folder.name.startswith(TRASH_PREFIX) or (folder.is_dir() and not (folder / USER_FILE).is_file()):
                shutil.rmtree(folder, ignore_errors=True)
            elif folder.is_dir():
                NamespaceVersions(folder).sweep_staging(every=True)

    def _rekey_namespaces(self) -> None:
        """Folders named by a bare hash of their user id (before names were keyed) take their
        keyed names, and their leases with them; one rename each, so a kill leaves every folder
        under one name or the other and the next start finishes."""
        users, leases = self.root / USERS, self.root / "leases"
        for folder in sorted(users.glob("*")):
            try:
                user = json.loads((folder / USER_FILE).read_text())["user"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if folder.name != bare_key(user):
                continue
            new = self.key(user)
            if folder.name == new or (users / new).exists():
                continue
            for suffix in (".lock", ".json"):
                if (leases / f"{folder.name}{suffix}").exists():
                    os.replace(leases / f"{folder.name}{suffix}", leases / f"{new}{suffix}")
            os.replace(folder, users / new)
            fsync_file(users)

    def _adopt_empty_user(self) -> None:
        """Calls that named no user once acted on the user "": that memory becomes the default
        namespace's (unless one exists already, which then wins and "" stays as it is)."""
        if not any((self.root / USERS).glob("*")):
            return  # no namespace yet (and no need of the secret that names them)
        old, new = self.user_dir(""), self.user_dir(DEFAULT_USER)
        if not (old / USER_FILE).is_file() or new.exists():
            return
        atomic_write(old / USER_FILE, json.dumps({"user": DEFAULT_USER}).encode(), durable=True)
        os.replace(old, new)
        fsync_file(new.parent)

    def _adopt_legacy_log(self) -> None:
        """A state folder written before namespaces holds one log for every user and one image
        store: each episode moves to its user's namespace (by `metadata.user`), its images linked
        into that user's store; then the old log and store are deleted, since a copy kept there
        would outlive every forget of what it holds."""
        legacy = self.root / LEGACY_LOG
        if not legacy.is_file():
            self._remove_legacy_copies()
            return
        by_user: dict[str, list[dict[str, Any]]] = {}
        for entry in live_episodes(EpisodeLog(legacy).read()):
            user = str((entry.episode.get("metadata") or {}).get("user") or DEFAULT_USER)
            by_user.setdefault(user, []).append(entry.episode)
        for user, episodes in by_user.items():
            folder = self.claim(user)
            log = EpisodeLog(folder / LOG)
            # A kill after some episodes moved and before the old log went: they are in the
            # user's log already, and moving them again would log them twice.
            adopted = [json.dumps(e.episode, sort_keys=True) for e in live_episodes(log.read()) if e.received == 0.0]
            for episode in episodes:
                text = json.dumps(episode, sort_keys=True)
                if text in adopted:
                    adopted.remove(text)
                    continue
                for ref in EpisodeRecorder.from_dict(episode).images():  # from the one old store
                    _link(self.root / STORE / ref.path, folder / STORE / ref.path)
                log.append_episode(episode, received=0.0)
            log.close()
        legacy.unlink()
        fsync_file(self.root)
        self._remove_legacy_copies()

    def _remove_legacy_copies(self) -> None:
        """What the adopted layout leaves at the root: its image store (each image now linked
        from its user's store; its embedding cache holds every user's vectors) and, from an
        adoption made before this one deleted it, the old log renamed. Checked at every start, so
        a kill in the middle of the deletion, or a folder adopted before, ends clean."""
        (self.root / LEGACY_ADOPTED).unlink(missing_ok=True)
        if (self.root / STORE).exists():
            shutil.rmtree(self.root / STORE)

    # --- a namespace's writers ----------------------------------------------------------
    # `UserMemory` writes only through these. Here they are plain: the folder's lock keeps every
    # other process out. A leased namespace's folder (`serve.cluster.lease_checked_writes`, the Ray engine) returns
    # writers that check its lease before each write.

    def episode_log(self, path: Path) -> EpisodeLog:
        return EpisodeLog(path)

    def namespace_files(self, store: Path, shipped: frozenset[str]) -> NamespaceFiles:
        return NamespaceFiles(store, shipped)

    def episode_store(self, root: Path) -> EpisodeStore:
        return EpisodeStore(root)

    def fence(self) -> None:
        """Before a write none of the writers above makes: the program's update, which fills the
        namespace's embedding cache. Nothing to check for the one process holding the folder."""

    # --- snapshots ------------------------------------------------------------------------

    @staticmethod
    def read_snapshot(folder: Path, program_sha256: str) -> tuple[SnapshotMeta, Path] | None:
        meta_path, data_path = folder / SNAPSHOT_META, folder / SNAPSHOT
        try:
            meta = SnapshotMeta(**json.loads(meta_path.read_text()))
        except (OSError, ValueError, TypeError):
            return None
        if meta.program_sha256 != program_sha256 or not data_path.is_file() \
                or data_path.stat().st_size != meta.bytes:
            return None
        return meta, data_path

    @staticmethod
    def write_snapshot(folder: Path, data: bytes, meta: SnapshotMeta) -> None:
        """The data first, then the meta that vouches for it: a kill between the two leaves a
        meta whose size no longer matches, which reads as no snapshot."""
        atomic_write(folder / SNAPSHOT, data, durable=True)
        atomic_write(folder / SNAPSHOT_META, json.dumps(meta.__dict__).encode(), durable=True)

    @staticmethod
    def remove_snapshot(folder: Path) -> None:
        for name in (SNAPSHOT_META, SNAPSHOT):
            (folder / name).unlink(missing_ok=True)
        if folder.is_dir():
            fsync_file(folder)


def _link(source: Path, target: Path) -> None:
    if source.is_file() and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(source, target)
