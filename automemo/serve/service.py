"""One exported memo program, live and durable, behind every face of the server.

All calls into the program go through one worker thread, in arrival order: the sandbox session is
one guest process, `remember` calls are applied one after another, and a `recall` runs between
two updates, never during one. A `remember` is acknowledged only after its episode is applied and
fsynced into the state folder's episode log; the log is replayed on start (after the shipped
experience), with the working episode store (images, embedding cache) kept in the state folder so
a replay re-embeds nothing."""

from __future__ import annotations

import asyncio
import base64
import fcntl
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder
from automemo.deploy import DeployError, DeployedMemory, load_memory, read_manifest
from automemo.sandbox.base import ProgramError, SandboxError
from automemo.serve.episode_log import EpisodeLog, fsync_file
from automemo.serve.requests import RecallRequest

LOG = "episodes.jsonl"
STORE = "store"
IDENTITY = "program.json"


class ServiceError(RuntimeError):
    """A call could not be served; `status` is the HTTP status, the message is safe to show."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class StartReport:
    shipped_episodes: int
    logged_episodes: int
    seconds: float


class MemoryService:
    def __init__(self, folder: Path, state_dir: Path, *, sandbox: str = "auto", unsafe: bool = False,
                 services: Any = None, progress: bool = False) -> None:
        self.folder = Path(folder).resolve()
        self.state_dir = Path(state_dir).resolve()
        self._open_args = {"sandbox": sandbox, "unsafe": unsafe, "services": services}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="automemo-memory")
        self.manifest = read_manifest(self.folder)
        self.benchmark = str((self.manifest.get("benchmark") or {}).get("name") or "serve")
        self._lock_fh = _lock_state(self.state_dir, self.manifest)
        self.log = EpisodeLog(self.state_dir / LOG)
        started = time.perf_counter()
        try:
            self.memory = self._open(progress)
        except BaseException:
            self._lock_fh.close()
            raise
        self.start = StartReport(
            shipped_episodes=len(self.manifest.get("experience", {}).get("episodes", [])),
            logged_episodes=self.log.count,
            seconds=time.perf_counter() - started,
        )
        self.healthy = True

    def _open(self, progress: bool) -> DeployedMemory:
        memory = load_memory(self.folder, progress=progress, store_dir=self.state_dir / STORE, **self._open_args)
        try:
            for entry in self.log.read():
                try:
                    memory.update(entry["episode"], checked=True)  # written from a checked episode
                except ProgramError:
                    pass  # it raised when it was remembered too: the same skip, the same state
                except SandboxError as exc:
                    raise DeployError(
                        f"replaying logged episode {entry.get('seq')} stopped the program ({exc.kind}); "
                        f"the log is kept, nothing was lost"
                    ) from None
        except BaseException:
            memory.close()
            raise
        return memory

    # --- the calls, each on the worker thread ---------------------------------------------------

    async def recall(self, request: RecallRequest) -> dict[str, Any]:
        return await asyncio.get_running_loop().run_in_executor(
            self._worker, self.recall_now, request, time.perf_counter())

    async def remember(self, episode: EpisodeRecorder) -> dict[str, Any]:
        return await asyncio.get_running_loop().run_in_executor(self._worker, self.remember_now, episode)

    def recall_now(self, request: RecallRequest, submitted: float | None = None) -> dict[str, Any]:
        """`submitted`: when the call was queued for the worker (the answer reports the wait)."""
        queued_ms = (time.perf_counter() - submitted) * 1000 if submitted is not None else 0.0
        self._check_alive()
        images = tuple(self.memory.put_image(data) for data in request.images)
        task = PartialRecorder(
            task_id=f"recall-{uuid.uuid4().hex[:12]}", benchmark=self.benchmark,
            instruction=request.instruction, task_images=images,
            metadata={k: v for k, v in (("user", request.scope), ("time", request.time)) if v},
        )
        started = time.perf_counter()
        try:
            payload = self.memory.retrieve(task)
        except ProgramError:
            raise ServiceError("the memory program raised an error on this recall; nothing was changed", 500) from None
        except SandboxError as exc:
            self._died(exc)
        retrieve_ms = (time.perf_counter() - started) * 1000
        evidence = payload.metadata.get("evidence")
        return {
            "text": payload.text,
            "images": [self._image(ref) for ref in payload.images],
            "evidence": [str(e) for e in evidence] if isinstance(evidence, list) else [],
            "metadata": dict(payload.metadata),
            "retrieve_ms": round(retrieve_ms, 3),
            "queued_ms": round(queued_ms, 3),
        }

    def store_image(self, data: bytes) -> ImageRef:
        """Put image bytes where the program reads them (a remember's images become durable
        with its log entry)."""
        return self.memory.put_image(data)

    def remember_now(self, episode: EpisodeRecorder) -> dict[str, Any]:
        self._check_alive()
        for ref in episode.images():  # the log line must never point at an image a crash lost
            fsync_file(self.memory.store.root / ref.path)
            fsync_file((self.memory.store.root / ref.path).parent)
        applied = True
        try:
            self.memory.update(episode)
        except ProgramError:
            applied = False  # logged all the same: a replay raises on it again and skips it again
        except SandboxError as exc:
            self._died(exc)
        seq = self.log.append({"seq": self.log.count + 1, "received": time.time(), "episode": episode.to_dict()})
        return {"ok": True, "seq": seq, "task_id": episode.task_id, "applied": applied}

    def _image(self, ref: Any) -> dict[str, Any]:
        data = (self.memory.store.root / ref.path).read_bytes()
        kind = "jpeg" if data[:3] == b"\xff\xd8\xff" else "png"
        return {"data_url": f"data:image/{kind};base64,{base64.b64encode(data).decode()}",
                "caption": ref.caption, "sha256": ref.sha256}

    def _check_alive(self) -> None:
        if not self.healthy:
            raise ServiceError("the memory program stopped; restart `automemo serve` (acknowledged "
                               "episodes are kept and replayed)", 503)

    def _died(self, exc: SandboxError) -> None:
        self.healthy = False
        raise ServiceError(f"the memory program stopped ({exc.kind}); this call was not applied; restart "
                           f"`automemo serve` (acknowledged episodes are kept and replayed)", 503) from None

    # --- what a client may read -----------------------------------------------------------------

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
            "remembered": self.log.count,
        }

    def health(self) -> dict[str, Any]:
        return {"ok": self.healthy, "remembered": self.log.count,
                "start_seconds": round(self.start.seconds, 3)}

    def close(self) -> None:
        self._worker.shutdown(wait=True)
        self.memory.close()
        self.log.close()
        self._lock_fh.close()


def _lock_state(state_dir: Path, manifest: dict[str, Any]) -> Any:
    """Hold the state folder for this process, and refuse a folder that belongs to another
    program (its log would replay into the wrong memory)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fh = open(state_dir / ".lock", "w")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise DeployError(f"another `automemo serve` is using the state folder {state_dir}; stop it or pass "
                          f"another --state") from None
    identity = {"program_sha256": manifest["files"]["program.py"], "node": manifest.get("node")}
    path = state_dir / IDENTITY
    if path.is_file():
        held = json.loads(path.read_text())
        if held.get("program_sha256") != identity["program_sha256"]:
            fh.close()
            raise DeployError(f"the state folder {state_dir} holds the memory of another program (node "
                              f"{(held.get('node') or {}).get('id')}); pass a new --state for this export")
    else:
        path.write_text(json.dumps(identity))
        fsync_file(path)
    return fh
