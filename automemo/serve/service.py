"""One exported memo program, served to many users: what every face of the server calls.

Isolation, forgetting and durability belong to the service, never to the evolved program. Each
user (namespace) is its own memory, in its own sandbox session (`user_memory.UserMemory`), so no
recall can return another user's episodes whatever the program's code says; at most `max_open`
are open at once (`namespaces.NamespacePool`). The shipped episodes are the shared base every
namespace starts from: replayed once, snapshotted (`state/base/`), and loaded by each namespace
as it opens. A `remember` is acknowledged after its episode is applied and fsynced into the
namespace's log; `forget` is durable once its tombstone is; restart loads each namespace's newest
snapshot and replays only the log's tail."""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.contract import EpisodeRecorder, ImageRef
from automemo.deploy import DeployError, load_memory, read_manifest
from automemo.episode_store import EpisodeStore
from automemo.errors import AutomemoError
from automemo.sandbox.base import ProgramError, SandboxError
from automemo.serve.requests import RecallRequest
from automemo.serve.state_folder import STORE, SnapshotMeta, StateError, StateFolder
from automemo.serve.defaults import DEFAULT_USER, MAX_OPEN_NAMESPACES, SNAPSHOT_EVERY
from automemo.serve.namespaces import NamespacePool
from automemo.serve.transfer import data_url, episode_lines
from automemo.serve.user_memory import NamespaceDead, Program, UserMemory



class ServiceError(AutomemoError, RuntimeError):
    """A call could not be served; `status` is the HTTP status, the message is safe to show."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class StartReport:
    shipped_episodes: int
    logged_episodes: int      # in the default namespace, opened before serving
    users: int                # namespaces with a folder
    snapshots: bool           # False: the program cannot snapshot, namespaces restart by replay
    seconds: float


class MemoryService:
    def __init__(self, folder: Path, state_dir: Path, *, sandbox: str = "auto", unsafe: bool = False,
                 services: Any = None, progress: bool = False, max_open: int = MAX_OPEN_NAMESPACES,
                 snapshot_every: int = SNAPSHOT_EVERY, notice: Callable[[str], None] | None = None) -> None:
        self.folder = Path(folder).resolve()
        self.manifest = read_manifest(self.folder)
        self.benchmark = str((self.manifest.get("benchmark") or {}).get("name") or "serve")
        self._notice = notice or _stderr_notice
        self.state = StateFolder(state_dir)
        try:
            self._lock_fh = self.state.lock(self.manifest)
        except StateError as exc:
            raise DeployError(str(exc)) from None
        started = time.perf_counter()
        try:
            open_args = {"sandbox": sandbox, "unsafe": unsafe, "services": services}
            program = Program(
                folder=self.folder, program_sha256=self.manifest["files"]["program.py"], benchmark=self.benchmark,
                open_args=open_args, base_snapshot=self._base_snapshot(open_args, progress),
                snapshot_every=snapshot_every,
            )
            self.pool = NamespacePool(self.state, program, max_open=max_open, notice=self._notice)
            default = self.pool.open_now(DEFAULT_USER)
        except BaseException:
            self._lock_fh.close()
            raise
        self.start = StartReport(
            shipped_episodes=len(self.manifest.get("experience", {}).get("episodes", [])),
            logged_episodes=default.live_count, users=len(self.state.users()),
            snapshots=program.base_snapshot is not None, seconds=time.perf_counter() - started,
        )

    def _base_snapshot(self, open_args: dict[str, Any], progress: bool) -> Path | None:
        """The shipped episodes' state, made once per state folder; None when the program
        cannot snapshot (said once: every namespace then replays the shipped episodes)."""
        base = self.state.base()
        sha = self.manifest["files"]["program.py"]
        found = self.state.read_snapshot(base, sha)
        if found is not None:
            return found[1]
        memory = load_memory(self.folder, progress=progress, store_dir=base / STORE, **open_args)
        try:
            started = time.perf_counter()
            data = memory.snapshot()
        except ProgramError as exc:
            self._notice(f"this program cannot save its state ({exc.detail}); each user's memory opens by "
                         f"replaying the shipped and remembered episodes")
            return None
        except SandboxError as exc:
            raise DeployError(f"snapshotting the shipped episodes stopped the program ({exc.kind})") from None
        finally:
            memory.close()
        self.state.write_snapshot(base, data, SnapshotMeta(
            seq=0, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), program_sha256=sha,
            seconds=round(time.perf_counter() - started, 3)))
        return self.state.read_snapshot(base, sha)[1]

    # --- the calls ---------------------------------------------------------------------------

    async def recall(self, request: RecallRequest) -> dict[str, Any]:
        def work(memory: UserMemory) -> dict[str, Any]:
            started = time.perf_counter()
            payload = memory.recall(request.instruction, request.images, request.time)
            retrieve_ms = (time.perf_counter() - started) * 1000
            evidence = payload.metadata.get("evidence")
            return {
                "text": payload.text,
                "images": [_image(memory, ref) for ref in payload.images],
                "evidence": [str(e) for e in evidence] if isinstance(evidence, list) else [],
                "metadata": dict(payload.metadata),
                "retrieve_ms": round(retrieve_ms, 3),
            }
        answer, waited_ms = await self._call(request.scope, work, "recall")
        return {**answer, "queued_ms": round(waited_ms, 3)}

    async def remember(self, user: str, episode: EpisodeRecorder) -> dict[str, Any]:
        def work(memory: UserMemory) -> dict[str, Any]:
            entry, applied = memory.remember(episode)
            return {"ok": True, "user": user, "seq": entry.seq, "task_id": episode.task_id, "applied": applied}
        return (await self._call(user, work, "remember"))[0]

    async def forget(self, user: str, task_id: str | None = None) -> dict[str, Any]:
        """One episode (`task_id`), or the whole namespace."""
        if task_id is None:
            dropped = await self.pool.drop(user)
            return {"ok": True, "user": user, "forgotten": "namespace" if dropped else "nothing"}
        count = (await self._call(user, lambda memory: memory.forget(task_id), "forget"))[0]
        return {"ok": True, "user": user, "task_id": task_id, "forgotten": count}

    async def export(self, user: str) -> list[str]:
        """The namespace's episodes as JSON lines, images inline as data URLs."""
        return (await self._call(user, lambda memory: episode_lines(memory), "export"))[0]

    async def import_episodes(self, user: str, episodes: list[EpisodeRecorder]) -> dict[str, Any]:
        def work(memory: UserMemory) -> dict[str, Any]:
            applied = sum(memory.remember(episode)[1] for episode in episodes)
            return {"ok": True, "user": user, "imported": len(episodes), "applied": applied}
        return (await self._call(user, work, "import"))[0]

    def store_image_for(self, user: str) -> Callable[[bytes], ImageRef]:
        """Where a remember's images go before its episode is applied: the user's own store."""
        def put(data: bytes) -> ImageRef:
            return EpisodeStore(self.state.claim(user) / STORE).put_image(data)
        return put

    async def _call(self, user: str, work: Callable[[UserMemory], Any], what: str) -> tuple[Any, float]:
        try:
            return await self.pool.call(user, work)
        except ProgramError:
            raise ServiceError(f"the memory program raised an error on this {what}; nothing was changed", 500) from None
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
            "namespaces": "one memory per user, starting from the shipped episodes",
        }

    def health(self) -> dict[str, Any]:
        return {"ok": True, "open_namespaces": self.pool.open_count(), "max_open": self.pool.max_open,
                "snapshots": self.start.snapshots, "start_seconds": round(self.start.seconds, 3)}

    def close(self) -> None:
        try:
            self.pool.close()
        finally:
            self._lock_fh.close()


def _image(memory: UserMemory, ref: ImageRef) -> dict[str, Any]:
    return {"data_url": data_url(memory.image_bytes(ref)), "caption": ref.caption, "sha256": ref.sha256}


def _stderr_notice(message: str) -> None:
    print(f"automemo serve: {message}", file=sys.stderr, flush=True)
