"""The memory replicas of `automemo serve --engine ray`: a Ray Serve deployment whose replicas
hold users' memories, one namespace per multiplexed model id (`model_id(user)`).

Ray Serve's model multiplexing does the routing and the keeping: the ingress sends a user's calls
with that user's model id, Ray routes them to the replica that has the id loaded (it pushes its
loaded ids to the routers), and a replica keeps at most `max_open` namespaces, evicting the least
recently used (`LeasedUserMemory.close`: snapshot, then the lease goes). Loading a namespace takes
its lease; a replica that cannot (another has the memory open) answers `retry`, and the ingress
sends the call again, which Ray routes to the replica that has it.

A replica answers with a `Reply` rather than raising, so the ingress maps it to the same status and
sentence the single-process server gives."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable

from ray import serve

from automemo.serve.cluster.leased_memory import LeasedUserMemory, LeasedUserMemoryPool, NotOwner
from automemo.serve.requests import BadRequest, RecallRequest
from automemo.serve.service import MemoryService, ServedExport, ServiceError
from automemo.serve.storage.episode_draft import EpisodeDraft
from automemo.serve.user_memory import Program

log = logging.getLogger("automemo.serve")
# Ray refuses an empty model id. A call that names no user is the default user's (never ""), but
# the prefix stays so that no user id, whatever a caller sends, makes an empty or special one.
MODEL_PREFIX = "u/"


def model_id(user: str) -> str:
    return MODEL_PREFIX + user


@dataclass(frozen=True)
class ReplicaConfig:
    state_root: Path
    served: ServedExport     # the export as the driver prepared it (its manifest, start, choices)
    program: Program
    max_open: int            # namespaces a replica keeps open (each a sandboxed guest)
    lease_wait_seconds: float


@dataclass(frozen=True)
class Reply:
    kind: str                    # "ok", "error" (status + message) or "retry" (another replica holds it)
    value: Any = None
    status: int = 500
    message: str | None = None   # None: an unexpected failure, logged by the replica
    replica: str = ""
    open_namespaces: int = 0
    versions: dict[str, int] = field(default_factory=dict)  # its open namespaces' versions, by folder digest


@serve.deployment(name="memory")
class MemoryReplica:
    def __init__(self, config: ReplicaConfig) -> None:
        context = serve.get_replica_context()
        self.holder = f"replica {context.replica_id.unique_id} (pid {os.getpid()})"
        self._config = config
        self._threads = ThreadPoolExecutor(max_workers=max(2, min(config.max_open, 8)),
                                           thread_name_prefix="automemo-memory")
        self._namespaces: dict[str, LeasedUserMemory] = {}

        async def open_namespace(model: str) -> LeasedUserMemory:
            user = model[len(MODEL_PREFIX):]
            namespace = await asyncio.get_running_loop().run_in_executor(
                self._threads, lambda: LeasedUserMemory(user, config.state_root, config.program, self.holder,
                                                       notice=_notice, wait_seconds=config.lease_wait_seconds))
            self._namespaces[user] = namespace
            return namespace

        # Wired here rather than on the class: the number of namespaces a replica keeps is a flag.
        self.load_namespace = serve.multiplexed(max_num_models_per_replica=config.max_open)(open_namespace)
        # MemoryService's own calls over the leased namespaces: the single-process server's answers
        self.service = MemoryService.over(
            config.served, LeasedUserMemoryPool(lambda user: self.load_namespace(model_id(user)), self._threads))

    async def recall(self, request: RecallRequest) -> Reply:
        return await self._answer(request.scope, self.service.recall(request))

    async def remember(self, user: str, episode: EpisodeDraft) -> Reply:
        """The draft's images are stored in the namespace's turn, under its lease."""
        return await self._answer(user, self.service.remember(user, episode))

    async def feedback(self, user: str, recall_id: str, used: tuple[str, ...], not_used: tuple[str, ...]) -> Reply:
        return await self._answer(user, self.service.feedback(user, recall_id, used, not_used))

    async def forget(self, user: str, task_id: str | None, all: bool) -> Reply:
        return await self._answer(user, self.service.forget(user, task_id, all=all))

    async def export(self, user: str) -> Reply:
        return await self._answer(user, self.service.export(user))

    async def import_episodes(self, user: str, episodes: list[EpisodeDraft], recalls: list[dict[str, Any]] = ()) -> Reply:
        return await self._answer(user, self.service.import_episodes(user, episodes, list(recalls)))

    async def _answer(self, user: str, call: Awaitable[Any]) -> Reply:
        routed = serve.get_multiplexed_model_id()
        if routed != model_id(user):
            call.close()
            log.error("a call for one namespace arrived with the model id of another")
            return self._reply("error")
        try:
            return self._reply("ok", value=await call)
        except (ServiceError, BadRequest) as exc:
            return self._reply("error", status=exc.status, message=str(exc))
        except NotOwner as exc:
            return self._reply("retry", message=str(exc))
        except Exception:  # the client gets the server's sentence, the operator the traceback
            log.exception("a memory call failed in %s", self.holder)
            return self._reply("error")

    def _reply(self, kind: str, **fields: Any) -> Reply:
        for user in [u for u, ns in self._namespaces.items() if not ns.is_open and not ns.lease.held]:
            del self._namespaces[user]  # evicted (closed and let go): forget the object
        open_now = [ns for ns in self._namespaces.values() if ns.is_open]
        return Reply(kind=kind, replica=self.holder, open_namespaces=len(open_now),
                     versions={ns.memory.folder.name: ns.memory.version for ns in open_now}, **fields)

    def __del__(self) -> None:
        for namespace in list(self._namespaces.values()):
            namespace.close()


def _notice(message: str) -> None:
    print(f"automemo serve (replica): {message}", file=sys.stderr, flush=True)
