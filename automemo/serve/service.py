"""One exported memo program, served to many users: what every face of the server calls.

Isolation, forgetting and durability belong to the service, never to the evolved program. Each
user (namespace) is its own memory, in its own sandbox session (`user_memory.UserMemory`), so no
recall can return another user's episodes whatever the program's code says; at most `max_open`
are open at once (`memory_pool.UserMemoryPool`). Every namespace starts empty; with
`shared_experience` (`serve --shared-experience`) it starts from the shipped episodes (the
search's update episodes: for conversation data, other people's conversations). Either starting
state is made once, snapshotted (`state/base/`), and loaded by each namespace as it opens, so no
start replays the shipped episodes twice. A `remember` is acknowledged after its episode is
applied and fsynced into the namespace's log; `forget` is durable once its tombstone is; restart
loads each namespace's newest snapshot and replays only the log's tail."""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.contract import EpisodeRecorder
from automemo.deploy import DeployError, load_memory, manifest_question_time_keys, read_manifest
from automemo.errors import AutomemoError
from automemo.export import EXPERIENCE
from automemo.sandbox.base import ProgramError, SandboxError
from automemo.serve import defaults
from automemo.serve.defaults import DEFAULT_USER, MAX_OPEN_NAMESPACES, SNAPSHOT_EVERY
from automemo.serve.memory_pool import UserMemoryPool
from automemo.serve.requests import RecallRequest, check_forget_target
from automemo.serve.storage.episode_draft import EpisodeDraft
from automemo.serve.storage.namespace_files import IMAGES
from automemo.serve.storage.recall_log import FeedbackRefused, RecallLog
from automemo.serve.storage.state_folder import STORE, SnapshotMeta, StateError, StateFolder
from automemo.serve.transfer import data_url, episode_lines
from automemo.serve.user_memory import NamespaceDead, Program, Quota, QuotaExceeded, UserMemory



class ServiceError(AutomemoError, RuntimeError):
    """A call could not be served; `status` is the HTTP status, the message is safe to show."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class StartReport:
    shipped_episodes: int
    shared_experience: bool   # the shipped episodes are every namespace's base (else each starts empty)
    logged_episodes: int      # in the default namespace, opened before serving
    users: int                # namespaces with a folder
    snapshots: bool           # False: the program cannot snapshot, namespaces restart by replay
    seconds: float


@dataclass(frozen=True)
class ServedExport:
    """What every face reads of the served export, whichever process holds the memories (the
    single-process server, or each part of `serve --engine ray`)."""

    manifest: dict[str, Any]
    benchmark: str
    shared_experience: bool                # every namespace starts from the shipped episodes
    question_time_keys: frozenset[str]     # the retrieve metadata keys a recall may carry
    start: StartReport


class MemoryService:
    # what `/healthz` adds from outside the service (`serve --adapt`: its rounds)
    health_extras: Callable[[], dict[str, Any]] | None = None

    def __init__(self, folder: Path, state_dir: Path, *, sandbox: str = "auto", unsafe: bool = False,
                 services: Any = None, progress: bool = False, max_open: int = MAX_OPEN_NAMESPACES,
                 snapshot_every: int = SNAPSHOT_EVERY, notice: Callable[[str], None] | None = None,
                 shared_experience: bool = False,
                 quota: Quota = Quota(defaults.MAX_USER_EPISODES, defaults.MAX_USER_BYTES),
                 services_for: Callable[[Path], Any] | None = None) -> None:
        """`services` serves every namespace's toolkit calls from one object; `services_for(store)`
        makes each namespace its own over its store (its own embedding cache, which forgetting
        prunes entry by entry); neither: the export's own embedding configuration, per namespace."""
        self.folder = Path(folder).resolve()
        self.manifest = read_manifest(self.folder)
        self.benchmark = str((self.manifest.get("benchmark") or {}).get("name") or "serve")
        self.shared_experience = shared_experience
        self.question_time_keys = manifest_question_time_keys(self.manifest)
        self._services_for = services_for
        self._notice = notice or _stderr_notice
        self.state = StateFolder(state_dir)
        try:
            self._lock_fh = self.state.lock(self.manifest, shared_experience=shared_experience,
                                            export=self.folder)
        except StateError as exc:
            raise DeployError(str(exc)) from None
        started = time.perf_counter()
        try:
            open_args = {"sandbox": sandbox, "unsafe": unsafe, "services": services}
            program = Program(
                folder=self.folder, program_sha256=self.manifest["files"]["program.py"], benchmark=self.benchmark,
                open_args=open_args, base_snapshot=self._base_snapshot(open_args, progress),
                snapshot_every=snapshot_every, shared_experience=shared_experience,
                shipped_images=self._shipped_images() if shared_experience else frozenset(), quota=quota,
                services_for=services_for,
            )
            self.pool = UserMemoryPool(self.state, program, max_open=max_open, notice=self._notice)
            default = self.pool.open_now(DEFAULT_USER)
        except BaseException:
            self._lock_fh.close()
            raise
        self.start = StartReport(
            shipped_episodes=len(self.manifest.get("experience", {}).get("episodes", [])),
            shared_experience=shared_experience,
            logged_episodes=default.live_count, users=len(self.state.users()),
            snapshots=program.base_snapshot is not None, seconds=time.perf_counter() - started,
        )

    @classmethod
    def over(cls, served: ServedExport, pool: Any) -> MemoryService:
        """The calls of a service whose export was prepared elsewhere, over `pool` (what
        `UserMemoryPool` offers: `call`, `drop`), holding no state folder of its own: a replica of
        `serve --engine ray` over its leased namespaces (`serve.cluster.leased_memory`), or its ingress
        (whose calls go to the replicas; `pool` None). The same code, so the same answers."""
        service = cls.__new__(cls)
        service.manifest, service.benchmark = served.manifest, served.benchmark
        service.shared_experience, service.question_time_keys = served.shared_experience, served.question_time_keys
        service.start, service.pool, service._lock_fh = served.start, pool, None
        return service

    @property
    def served(self) -> ServedExport:
        return ServedExport(manifest=self.manifest, benchmark=self.benchmark, shared_experience=self.shared_experience,
                            question_time_keys=self.question_time_keys, start=self.start)

    def _base_snapshot(self, open_args: dict[str, Any], progress: bool) -> Path | None:
        """Every namespace's starting state (the program empty, or after the shipped episodes),
        made once per state folder; None when the program cannot snapshot (said once: every
        namespace then starts by replay)."""
        base = self.state.base()
        sha = self.manifest["files"]["program.py"]
        found = self.state.read_snapshot(base, sha)
        if found is not None:
            return found[1]
        if open_args.get("services") is None and self._services_for is not None:
            open_args = {**open_args, "services": self._services_for(base / STORE)}
        memory = load_memory(self.folder, progress=progress, store_dir=base / STORE,
                             experience=self.shared_experience, **open_args)
        try:
            started = time.perf_counter()
            data = memory.snapshot()
        except ProgramError as exc:
            self._notice(f"this program cannot save its state ({exc.detail}); each user's memory opens by "
                         f"replaying its remembered episodes"
                         + (" after the shipped ones" if self.shared_experience else ""))
            return None
        except SandboxError as exc:
            raise DeployError(f"snapshotting the shipped episodes stopped the program ({exc.kind})") from None
        finally:
            memory.close()
        self.state.write_snapshot(base, data, SnapshotMeta(
            seq=0, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), program_sha256=sha,
            seconds=round(time.perf_counter() - started, 3)))
        return self.state.read_snapshot(base, sha)[1]

    def _shipped_images(self) -> frozenset[str]:
        """The store paths of the shipped episodes' images: the shared base's, kept in every
        namespace's store. They are the export's image files (read from the folder, not from
        thousands of episode files: a start must not cost the size of the experience)."""
        shipped = self.folder / EXPERIENCE
        return frozenset(str(p.relative_to(shipped)) for p in (shipped / IMAGES).rglob("*") if p.is_file())

    # --- the calls ---------------------------------------------------------------------------

    async def recall(self, request: RecallRequest) -> dict[str, Any]:
        recall_id = RecallLog.new_id()

        def work(memory: UserMemory) -> dict[str, Any]:
            started = time.perf_counter()
            payload, pictures = memory.recall(request.instruction, request.images, request.time, request.metadata,
                                              recall_id=recall_id)
            retrieve_ms = (time.perf_counter() - started) * 1000
            evidence = payload.metadata.get("evidence")
            return {
                "text": payload.text,
                "images": [{"data_url": data_url(pictures[ref.path]), "caption": ref.caption, "sha256": ref.sha256}
                           for ref in payload.images],
                "evidence": [str(e) for e in evidence] if isinstance(evidence, list) else [],
                "metadata": dict(payload.metadata),
                "retrieve_ms": round(retrieve_ms, 3),
                "version": memory.version,   # which of this user's program versions answered
                "recall_id": recall_id,      # what the agent's feedback on this recall names
            }
        answer, waited_ms = await self._call(request.scope, work, "recall")
        return {**answer, "queued_ms": round(waited_ms, 3)}

    async def remember(self, user: str, episode: EpisodeDraft | EpisodeRecorder) -> dict[str, Any]:
        """Remember an episode in the user's memory. An `EpisodeDraft`'s images are stored in the
        namespace's turn; an `EpisodeRecorder`'s must already be in its store."""
        def work(memory: UserMemory) -> dict[str, Any]:
            entry, applied = memory.remember(episode)
            return {"ok": True, "user": user, "seq": entry.seq, "task_id": entry.task_id, "applied": applied,
                    "version": memory.version}
        return (await self._call(user, work, "remember"))[0]

    async def feedback(self, user: str, recall_id: str, used: tuple[str, ...],
                       not_used: tuple[str, ...] = ()) -> dict[str, Any]:
        """What the agent used of one of the user's recalls (`serve.storage.recall_log`): refused with the
        status the log gives (404 unknown, 400 not returned, 409 a second one), nothing changed."""
        def work(memory: UserMemory) -> dict[str, Any]:
            done = memory.feedback(recall_id, used, not_used)
            return {"ok": True, "user": user, "recall_id": recall_id, "used": len(done.used),
                    "not_used": len(done.not_used)}
        try:
            return (await self._call(user, work, "feedback"))[0]
        except FeedbackRefused as exc:
            raise ServiceError(f"{exc}; nothing was logged", exc.status) from None

    async def forget(self, user: str, task_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        """One episode (`task_id`), or the whole namespace (`all=True`); naming neither (or both) is
        refused with `BadRequest`, before anything is touched."""
        check_forget_target(task_id, all)
        if all:
            dropped = await self.pool.drop(user)
            return {"ok": True, "user": user, "forgotten": "namespace" if dropped else "nothing"}
        count = (await self._call(user, lambda memory: memory.forget(task_id), "forget"))[0]
        return {"ok": True, "user": user, "task_id": task_id, "forgotten": count}

    async def export(self, user: str) -> list[str]:
        """The namespace's episodes as JSON lines, images inline as data URLs."""
        return (await self._call(user, lambda memory: episode_lines(memory), "export"))[0]

    async def import_episodes(self, user: str, episodes: list[EpisodeDraft | EpisodeRecorder],
                              recalls: list[dict[str, Any]] = ()) -> dict[str, Any]:
        """Episodes every one of which was checked (`transfer.read_lines`), remembered in order,
        then the export's recall lines; refused whole when the episodes do not all fit the
        user's quota."""
        episodes = [e if isinstance(e, EpisodeDraft) else EpisodeDraft.of(e) for e in episodes]

        def work(memory: UserMemory) -> dict[str, Any]:
            memory.check_room(episodes)
            applied = sum(memory.remember(episode)[1] for episode in episodes)
            added = memory.recalls.add_lines(recalls) if recalls else 0
            return {"ok": True, "user": user, "imported": len(episodes), "applied": applied, "recalls": added}
        return (await self._call(user, work, "import"))[0]

    async def _call(self, user: str, work: Callable[[UserMemory], Any], what: str) -> tuple[Any, float]:
        try:
            return await self.pool.call(user, work)
        except ProgramError:
            raise ServiceError(f"the memory program raised an error on this {what}; nothing was changed", 500) from None
        except QuotaExceeded as exc:
            raise ServiceError(f"{exc}; this {what} stored nothing", exc.status) from None
        except NamespaceDead as exc:
            raise ServiceError(f"this memory's program stopped ({exc.kind}); this {what} was not applied. The "
                               f"next call reopens it from its snapshot and log (nothing acknowledged is lost)",
                               503) from None
        except DeployError as exc:
            raise ServiceError(f"this memory could not be opened: {exc}", 503) from None

    # --- what a client may read --------------------------------------------------------------

    def public_manifest(self) -> dict[str, Any]:
        """The manifest without server paths or the run's configuration."""
        m = self.manifest
        return {
            "format": m.get("format"), "interface_version": m.get("interface_version"),
            "created": m.get("created"), "node": m.get("node"), "scores": m.get("scores"),
            "lineage": m.get("lineage"), "budget": m.get("budget"), "limits": m.get("limits"),
            "benchmark": self.benchmark, "models": m.get("models"), "embeddings": m.get("embeddings"),
            "experience": {"episodes": self.start.shipped_episodes,
                           "n_images": (m.get("experience") or {}).get("n_images", 0)},
            "namespaces": "one memory per user, starting from the shipped episodes" if self.shared_experience
                          else "one memory per user, each starting empty",
        }

    def health(self) -> dict[str, Any]:
        stats = self.pool.stats()
        health = {"ok": True, "open_namespaces": stats["open"], "max_open": stats["max_open"],
                  "known_namespaces": stats["known"], "snapshots": self.start.snapshots,
                  "start_seconds": round(self.start.seconds, 3),
                  # how many open namespaces serve each program version: counts only, since
                  # /healthz answers without a token (a list by user, even by a digest of the
                  # user id, would tell anyone whether a given user is here and was adapted)
                  "versions": version_counts(stats.get("versions", {}))}
        if self.health_extras is not None:
            health.update(self.health_extras())
        return health

    def close(self) -> None:
        try:
            self.pool.close()
        finally:
            if self._lock_fh is not None:
                self._lock_fh.close()


def version_counts(by_namespace: dict[str, int]) -> dict[str, int]:
    """{version: how many open namespaces serve it} of {namespace: its version}."""
    counts: dict[str, int] = {}
    for version in by_namespace.values():
        counts[str(version)] = counts.get(str(version), 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: int(kv[0])))


def _stderr_notice(message: str) -> None:
    print(f"automemo serve: {message}", file=sys.stderr, flush=True)
