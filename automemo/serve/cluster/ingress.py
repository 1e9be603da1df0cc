"""The ingress of `automemo serve --engine ray`: the single-process server's HTTP app (REST, MCP at
/mcp, /openapi.json, /healthz, behind the same guard), built by `http_face.build_app` over a
`RoutedService`, which sends each call to the memory replicas with its user's model id.

A call another replica holds (`Reply.kind == "retry"`) is sent again with a growing wait: Ray
routes it to the replica that has the namespace loaded. A call whose replica died is sent again
when it only reads (recall, export); a remember, forget or import is answered 503, since it may
or may not have been applied before the replica died (only what was acknowledged is promised)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ray import serve
from ray.exceptions import ActorUnavailableError, RayActorError

from automemo.serve.access import TokenTable
from automemo.serve.cluster.replica import Reply, model_id
from automemo.serve.defaults import ROUTE_ATTEMPTS, ROUTE_BACKOFF_SECONDS
from automemo.serve.http.app import build_app
from automemo.serve.http.policy import HttpPolicy
from automemo.serve.requests import RecallRequest, RequestLimits
from automemo.serve.service import MemoryService, ServedExport, ServiceError, version_counts
from automemo.serve.storage.episode_draft import EpisodeDraft
from automemo.serve.storage.versions import read_adapt_status

REPLICA_DIED = (RayActorError, ActorUnavailableError)


@dataclass(frozen=True)
class IngressConfig:
    served: ServedExport     # the export as the driver prepared it
    max_open: int            # per replica
    replicas: int
    limits: RequestLimits
    policy: HttpPolicy
    tokens: TokenTable
    adapting: Path | None = None  # `--adapt`: the state folder where the driver's adaptation says how its rounds go


class RoutedService(MemoryService):
    """`MemoryService`'s face for `build_app` and `build_mcp` (the manifest, the served choices,
    the health); every memory call goes to a replica, a remember's images still in its draft (the
    replica stores them in the namespace's turn, under its lease). Made by `routed`, not by
    MemoryService's constructor: the memories live in the replicas."""

    _memory: Any                         # the memory deployment's handle
    _max_open: int
    _open_by_replica: dict[str, int]
    _versions_by_replica: dict[str, tuple[float, dict[str, int]]]  # replica -> (when it replied, its versions)
    _adapting: Path | None

    @classmethod
    def routed(cls, memory: Any, config: IngressConfig) -> RoutedService:
        service = cls.over(config.served, pool=None)
        service._memory = memory
        service._max_open = config.max_open * config.replicas
        service._open_by_replica = {}
        service._versions_by_replica = {}
        service._adapting = config.adapting
        return service

    async def recall(self, request: RecallRequest) -> dict[str, Any]:
        return await self._route(request.scope, "recall", request, reads_only=True)

    async def remember(self, user: str, episode: EpisodeDraft) -> dict[str, Any]:
        return await self._route(user, "remember", user, episode)

    async def feedback(self, user: str, recall_id: str, used: tuple[str, ...],
                       not_used: tuple[str, ...] = ()) -> dict[str, Any]:
        return await self._route(user, "feedback", user, recall_id, used, not_used)

    async def forget(self, user: str, task_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        return await self._route(user, "forget", user, task_id, all)

    async def export(self, user: str) -> list[str]:
        return await self._route(user, "export", user, reads_only=True)

    async def import_episodes(self, user: str, episodes: list[EpisodeDraft],
                              recalls: list[dict[str, Any]] = ()) -> dict[str, Any]:
        return await self._route(user, "import_episodes", user, episodes, list(recalls))

    async def _route(self, user: str, method: str, *args: Any, reads_only: bool = False) -> Any:
        handle = getattr(self._memory.options(multiplexed_model_id=model_id(user)), method)
        wait = ROUTE_BACKOFF_SECONDS
        for _ in range(ROUTE_ATTEMPTS):
            try:
                reply: Reply = await handle.remote(*args)
            except REPLICA_DIED:
                if not reads_only:
                    raise ServiceError(f"the replica holding this memory stopped during this {_call_name(method)}; it "
                                       f"may not have been applied (nothing acknowledged is lost). The memory reopens "
                                       f"on another replica: check with a recall or an export, or send it again",
                                       503) from None
            else:
                self._open_by_replica[reply.replica] = reply.open_namespaces
                self._versions_by_replica[reply.replica] = (time.monotonic(), reply.versions)
                if reply.kind == "ok":
                    return reply.value
                if reply.kind == "error":
                    if reply.message is None:
                        raise RuntimeError("a replica failed on this call; see its log")  # answered as the server's 500
                    raise ServiceError(reply.message, reply.status)
            await asyncio.sleep(wait)
            wait = min(wait * 2, 1.0)
        raise ServiceError(f"this memory is held by a replica that did not take the {_call_name(method)} in time; "
                           f"nothing was changed, send it again", 503)

    def health(self) -> dict[str, Any]:
        """As the single-process server's, from what the replicas said in their last replies (a
        namespace's version as its replica last served it) and the driver's adaptation file."""
        versions: dict[str, int] = {}
        for _, replica in sorted(self._versions_by_replica.values(), key=lambda r: r[0]):
            versions.update(replica)  # a namespace that moved: its newest replica's word
        health = {"ok": True, "open_namespaces": sum(self._open_by_replica.values()), "max_open": self._max_open,
                  "snapshots": self.start.snapshots, "start_seconds": round(self.start.seconds, 3),
                  "versions": version_counts(versions)}   # counts only: /healthz needs no token
        if self._adapting is not None:  # the file is written as the adaptation starts
            health["adapt"] = read_adapt_status(self._adapting) or {"running": 0, "rounds_started": 0}
        return health


def _call_name(method: str) -> str:
    return "import" if method == "import_episodes" else method


@serve.deployment(name="ingress")
@serve.ingress()
class MemoryIngress:
    def __init__(self, memory: Any, config: IngressConfig) -> None:
        self._app = build_app(RoutedService.routed(memory, config), limits=config.limits, policy=config.policy,
                              tokens=config.tokens)

    def __serve_build_asgi_app__(self) -> Any:
        return self._app
