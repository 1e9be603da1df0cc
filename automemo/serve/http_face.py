"""The HTTP server: the REST API (/v1/recall, /v1/remember, /v1/forget, /v1/export,
/v1/import, /v1/manifest, /healthz, /openapi.json) and MCP's streamable HTTP at /mcp in one
Starlette app, behind a guard that checks the bearer token and the request size before anything
is parsed."""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from automemo.serve.mcp_face import build_mcp
from automemo.serve.openapi import openapi_schema
from automemo.serve.requests import (BadRequest, RequestLimits, forget_request, recall_request, remember_episode,
                                     remember_user)
from automemo.serve.service import MemoryService, ServiceError
from automemo.serve.transfer import read_lines

log = logging.getLogger("automemo.serve")
OPEN_PATHS = ("/healthz",)
NDJSON = "application/x-ndjson"


def build_app(service: MemoryService, *, host: str, token: str | None, limits: RequestLimits,
              allow_paths: bool) -> Any:
    mcp = build_mcp(service, limits, allow_paths=allow_paths)

    def route(path: str, methods: list[str]):
        def wrap(handler: Callable[[Request], Awaitable[Any]]):
            async def endpoint(request: Request) -> Response:
                try:
                    answer = await handler(request)
                    return answer if isinstance(answer, Response) else JSONResponse(answer)
                except BadRequest as exc:
                    return _error(str(exc), getattr(exc, "status", 400))
                except ServiceError as exc:
                    return _error(str(exc), exc.status)
                except Exception:  # the client gets a sentence, the operator the traceback
                    log.exception("%s failed", path)
                    return _error("the request failed inside the server; see the server's log", 500)
            mcp.custom_route(path, methods=methods)(endpoint)
            return handler
        return wrap

    @route("/v1/recall", ["POST"])
    async def recall(request: Request) -> Any:
        body = await _json_body(request, limits)
        return await service.recall(recall_request(body, limits, allow_paths=allow_paths))

    @route("/v1/remember", ["POST"])
    async def remember(request: Request) -> Any:
        body = await _json_body(request, limits)
        user = remember_user(body)
        episode = remember_episode(body, limits, service.benchmark, service.store_image_for(user),
                                   allow_paths=allow_paths)
        return await service.remember(user, episode)

    @route("/v1/forget", ["POST"])
    async def forget(request: Request) -> Any:
        user, task_id = forget_request(await _json_body(request, limits))
        return await service.forget(user, task_id)

    @route("/v1/export", ["GET"])
    async def export(request: Request) -> Response:
        lines = await service.export(request.query_params.get("user", ""))
        return Response("".join(line + "\n" for line in lines), media_type=NDJSON)

    @route("/v1/import", ["POST"])
    async def import_(request: Request) -> Any:
        user = request.query_params.get("user", "")
        text = (await _body(request, limits, (NDJSON, "application/json"))).decode("utf-8", "replace")
        episodes = read_lines(text, limits, service.benchmark, service.store_image_for(user))
        return await service.import_episodes(user, episodes)

    @route("/v1/manifest", ["GET"])
    async def manifest(request: Request) -> Any:
        return service.public_manifest()

    @route("/openapi.json", ["GET"])
    async def openapi(request: Request) -> Any:
        return openapi_schema(_version(), token is not None)

    @mcp.custom_route("/healthz", methods=["GET"])
    async def healthz(request: Request) -> Response:
        health = service.health()
        return JSONResponse(health, status_code=200 if health["ok"] else 503)

    app = mcp.streamable_http_app(host=host, max_request_body_size=limits.max_body_bytes)
    return Guard(app, token=token, max_body_bytes=limits.max_body_bytes)


class Guard:
    """ASGI middleware: bearer token on every path but /healthz; a declared body over the limit is
    refused before it is read (the REST handlers also count what they read)."""

    def __init__(self, app: Any, *, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        if self.token is not None and scope["path"] not in OPEN_PATHS:
            given = headers.get(b"authorization", b"")
            if not (given.startswith(b"Bearer ") and hmac.compare_digest(given[7:].strip(), self.token)):
                return await _error("missing or wrong token: send the header `Authorization: Bearer <token>`",
                                    401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                return await _error("the Content-Length header is not a number", 400)(scope, receive, send)
            if int(length) > self.max_body_bytes:
                return await _error(f"the request body is {int(length)} bytes; the limit is {self.max_body_bytes}",
                                    413)(scope, receive, send)
        return await self.app(scope, receive, send)


async def _body(request: Request, limits: RequestLimits, kinds: tuple[str, ...]) -> bytes:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in kinds:
        # also keeps a web page from posting to a local server: such a post needs a CORS preflight
        raise _Status(f"send the body with the header `Content-Type: {kinds[0]}`", 415)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.max_body_bytes:
            raise _Status(f"the request body is over the limit of {limits.max_body_bytes} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request, limits: RequestLimits) -> Any:
    body = await _body(request, limits, ("application/json",))
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"the body is not valid JSON ({exc.__class__.__name__} at position "
                         f"{getattr(exc, 'pos', getattr(exc, 'start', 0))})") from None


class _Status(BadRequest):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("automemo")
    except PackageNotFoundError:
        return "0"
