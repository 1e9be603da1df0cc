"""A namespace's program versions: which memo program answers its calls, every one it ever ran,
and what each was derived from.

    users/<key>/versions/
      current.json          {"version": 2}: the version serving (absent: 0, the served export)
      .lock                 held while a version is installed, rolled back or retired
      .staging-<pid>-<n>/   a version being built (a killed round's is swept by every forget and start)
      1/                    an adapted version (`automemo.adapt`), written whole then renamed in
        version.json          its record (`VersionRecord`): program sha, parent, the race it won,
                              the log sequence numbers its fit and evidence read, per namespace
        program/              its exported folder: the served export with another program.py
        evidence.json         the search's and the race's evidence (pseudo-questions and their scores)
    users/<key>/adapt-work/ an adaptation's work in progress (its copy of the history, its search run)
        snapshot.bin|.json    its program state up to a log sequence number (as a namespace's own)

Version 0 is the served export itself: it has no folder here, and its snapshot is the
namespace's own (`users/<key>/snapshot.bin`), as before versions existed. A serving namespace
reads `current.json`'s stamp before every call and reopens on the new version when it changed;
the adaptation that installs a version writes its snapshot first, so that reopening costs a
snapshot load and the log's short tail, while the old program answered every call until then.

Forgetting is the service's: when an episode is forgotten, every version whose fit or evidence
read it, in this namespace or (pooled) in any other, is retired: its program, evidence and
snapshot leave the disk, its record stays with the reason, and a namespace it served falls back
to its parent. Every version's snapshot goes too (each may hold the episode)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from automemo.episode_store import atomic_write
from automemo.errors import DataError
from automemo.serve.storage.episode_log import fsync_file
from automemo.serve.storage.trials import TrialPointer

VERSIONS = "versions"
CURRENT = "current.json"
RECORD = "version.json"
PROGRAM_DIR = "program"
EVIDENCE = "evidence.json"
LOCK = ".lock"
STAGING_PREFIX = ".staging-"
SNAPSHOT_FILES = ("snapshot.bin", "snapshot.json")  # state_folder.SNAPSHOT, SNAPSHOT_META
WORK = "adapt-work"  # an adaptation's work in progress: users/<key>/adapt-work/, pooled: STATE/adapt-work/
SHIPPED = 0
ADAPT_STATUS = "adapt-status.json"  # STATE/adapt-status.json: a running `serve --adapt`'s rounds, as /healthz shows them


class VersionError(DataError, ValueError):
    """A version cannot be used (unknown, retired); the message says which exist."""


class NamespaceGone(VersionError):
    """The namespace a version was for was forgotten whole (its folder is gone)."""


@dataclass(frozen=True)
class VersionRecord:
    version: int
    created: str
    program_sha256: str
    source: str                     # "shipped", "per-user" or "pooled"
    parent: int | None = None       # the version it raced and replaced
    # per user: {namespace key: the log sequence numbers its fit and evidence read}; pooled:
    # {keyed tag of a namespace: keyed tags of those sequence numbers} (`pooled_used`), so that a
    # user's version names no other user and says nothing of their history, while a forget can
    # still find every version derived from what it forgets. A retired record keeps none.
    used: Mapping[str, tuple[int | str, ...]] = field(default_factory=dict)
    race: Mapping[str, Any] = field(default_factory=dict)     # the paired race it won
    search: Mapping[str, Any] = field(default_factory=dict)   # what the search that found it did
    retired: str | None = None      # why it no longer exists (its program and evidence are gone)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["used"] = {k: list(v) for k, v in self.used.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VersionRecord:
        return cls(**{**data, "used": {k: tuple(v) for k, v in (data.get("used") or {}).items()}})


def pooled_used(tag: Callable[[str], str], used: Mapping[str, Iterable[int]]) -> dict[str, tuple[str, ...]]:
    """A pooled version's `used`: each namespace and each sequence number it read as a keyed tag
    (`StateFolder.tag`)."""
    return {tag(key): tuple(sorted(tag(f"{key}/{seq}") for seq in seqs)) for key, seqs in used.items()}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class NamespaceVersions:
    """The versions of the namespace whose folder is `user_dir`."""

    def __init__(self, user_dir: Path) -> None:
        self.user_dir = Path(user_dir)
        self.root = self.user_dir / VERSIONS

    # --- reading ---------------------------------------------------------------------------

    def current(self) -> int:
        try:
            return int(json.loads((self.root / CURRENT).read_text())["version"])
        except (OSError, ValueError, KeyError, TypeError):
            return SHIPPED

    def stamp(self) -> tuple[int, int] | None:
        """What changes when `current.json` is replaced (it is always replaced whole): compared
        before every call, one stat."""
        try:
            st = (self.root / CURRENT).stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns

    def records(self) -> list[VersionRecord]:
        """Every adapted version's record, oldest first (retired ones included)."""
        out = []
        for folder in self.root.glob("[0-9]*"):
            record = self.record(int(folder.name))
            if record is not None:
                out.append(record)
        return sorted(out, key=lambda r: r.version)

    def record(self, version: int) -> VersionRecord | None:
        try:
            return VersionRecord.from_dict(json.loads((self.root / str(version) / RECORD).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def folder(self, version: int) -> Path:
        """Where version `version` keeps its files (its snapshot); the namespace's own for 0."""
        return self.user_dir if version == SHIPPED else self.root / str(version)

    def program_folder(self, version: int) -> Path:
        return self.root / str(version) / PROGRAM_DIR

    def evidence(self, version: int) -> dict[str, Any] | None:
        try:
            return json.loads((self.root / str(version) / EVIDENCE).read_text())
        except (OSError, ValueError):
            return None

    def next_version(self) -> int:
        return max([r.version for r in self.records()] + [SHIPPED]) + 1

    # --- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One writer of this namespace's versions at a time, across processes. Refused (with
        `NamespaceGone`) when the namespace has no folder: a round whose user was forgotten must
        not make it again."""
        self._make_root()
        with open(self.root / LOCK, "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def stage(self) -> Path:
        """A private folder to build a version in; `install` renames it into place."""
        self._make_root()
        folder = self.root / f"{STAGING_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
        folder.mkdir()
        return folder

    def _make_root(self) -> None:
        if not self.user_dir.is_dir():
            raise NamespaceGone(f"the namespace {self.user_dir.name} was forgotten; nothing of it is made again")
        self.root.mkdir(exist_ok=True)

    def install(self, staged: Path, record: VersionRecord, evidence: Mapping[str, Any], *, serve: bool = True) -> int:
        """Make the staged folder (its `program/`, and a snapshot when the program saves one)
        version `record.version`, with its record and evidence, and serve it (`serve=False`: the
        pointer does not move; a trial's version, which `serve.storage.trials` points at). Call it holding
        `locked()`. A kill before the rename leaves a staging folder (swept later), after it
        the version exists and the pointer names the old or the new one: one whole version
        serves either way."""
        atomic_write(staged / RECORD, json.dumps(record.to_dict(), indent=1).encode(), durable=True)
        atomic_write(staged / EVIDENCE, json.dumps(evidence, indent=1, default=str).encode(), durable=True)
        target = self.root / str(record.version)
        if target.exists():
            raise VersionError(f"version {record.version} exists already")
        os.replace(staged, target)
        fsync_file(self.root)
        if serve:
            self.set_current(record.version)
        return record.version

    def set_current(self, version: int) -> None:
        """Serve `version` (0: the served export). Refused for an unknown or retired one."""
        if version != SHIPPED:
            record = self.record(version)
            if record is None:
                known = ", ".join(str(r.version) for r in self.records() if not r.retired) or "none but 0"
                raise VersionError(f"this memory has no version {version}; versions: 0 (the served export), {known}")
            if record.retired:
                raise VersionError(f"version {version} was retired ({record.retired}); its program is gone")
        atomic_write(self.root / CURRENT, json.dumps({"version": version, "since": now()}).encode(), durable=True)

    def sweep_staging(self, *, every: bool = False) -> None:
        """Remove what a killed round left half-built (a staging folder whose process is gone),
        or, `every`, every staging folder: a forget's (a version being built holds a snapshot of
        the memory, which may hold what is forgotten; its round then installs nothing) and a
        start's (no round outlives the server that started it)."""
        for folder in self.root.glob(STAGING_PREFIX + "*"):
            pid = folder.name[len(STAGING_PREFIX):].partition("-")[0]
            if every or not (pid.isdigit() and Path(f"/proc/{pid}").exists()):
                shutil.rmtree(folder, ignore_errors=True)

    def remove_snapshots(self) -> None:
        """Every adapted version's snapshot (the namespace's own is the caller's)."""
        for folder in self.root.glob("[0-9]*"):
            for name in SNAPSHOT_FILES:
                (folder / name).unlink(missing_ok=True)

    def remove_work(self) -> None:
        """An adaptation's work in progress that may hold this namespace's episodes (its own, and
        a pooled one's): the round then finds its episodes gone and installs nothing."""
        for folder in (self.user_dir / WORK, self.user_dir.parent.parent / WORK):
            shutil.rmtree(folder, ignore_errors=True)

    def retire(self, matches: Any, reason: str) -> list[int]:
        """Retire every live version whose record `matches`: its folder keeps only its record,
        now saying why; a retired current version gives way to its nearest live ancestor.
        Returns the retired versions."""
        retired: list[int] = []
        with self.locked():
            records = {r.version: r for r in self.records()}
            for record in records.values():
                if record.retired or not matches(record):
                    continue
                folder = self.root / str(record.version)
                for child in list(folder.iterdir()):
                    if child.name != RECORD:
                        shutil.rmtree(child) if child.is_dir() else child.unlink()
                gone = replace(record, retired=reason, race={}, search={}, used={})
                atomic_write(folder / RECORD, json.dumps(gone.to_dict(), indent=1).encode(), durable=True)
                records[record.version] = gone
                retired.append(record.version)
            trial = TrialPointer.read(self.root)
            if trial is not None and trial.version in retired:
                TrialPointer.remove(self.root)  # a retired version's trial ends with it
            current = self.current()
            if current in retired:
                fallback = current
                while fallback != SHIPPED and (records.get(fallback) is None or records[fallback].retired):
                    fallback = (records[fallback].parent or SHIPPED) if fallback in records else SHIPPED
                self.set_current(fallback)
        return retired


def retire_derived(users_root: Path, namespace_key: str, seqs: Iterable[int] | None, reason: str, *,
                   tag: Callable[[str], str]) -> list[tuple[str, int]]:
    """Retire, in every namespace under `users_root`, the versions whose fit or evidence read the
    given log entries of namespace `namespace_key` (`seqs` None: any of its entries, for a
    namespace forgotten whole; `tag`: the state folder's keyed tags, which pooled records hold).
    Returns (namespace key, version) of each."""
    doomed = None if seqs is None else frozenset(seqs)
    doomed_tags = None if seqs is None else frozenset(tag(f"{namespace_key}/{s}") for s in doomed)
    namespace_tag = tag(namespace_key)

    def matches(record: VersionRecord) -> bool:
        if record.source == "pooled":
            used, wanted = record.used.get(namespace_tag), doomed_tags
        else:
            used, wanted = record.used.get(namespace_key), doomed
        return used is not None and (wanted is None or not wanted.isdisjoint(used))

    out = []
    for folder in sorted(Path(users_root).glob("*")):
        if (folder / VERSIONS).is_dir():
            out += [(folder.name, v) for v in NamespaceVersions(folder).retire(matches, reason)]
    return out


def read_adapt_status(state_root: Path) -> dict[str, Any] | None:
    """What the adaptation of a server says of its rounds (`adapt.supervisor.Adapter` writes it),
    for a process that does not run them (`serve --engine ray`'s ingress); None when unreadable."""
    try:
        return json.loads((Path(state_root) / ADAPT_STATUS).read_text())
    except (OSError, ValueError):
        return None
