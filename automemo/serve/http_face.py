"""The HTTP server: the REST API (/v1/recall, /v1/remember, /v1/manifest, /healthz,
/openapi.json) and MCP's streamable HTTP at /mcp in one Starlette app, behind the guard
(`serve.guard`: Host and Origin, CORS, token, rate limit, body size) that runs before anything is
parsed. Image file paths are never read here, loopback included: only data URLs."""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any, Awaitable, Callable

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from automemo.serve.access import NamespaceRefused, TokenTable, namespace_for, principal_of
from automemo.serve.guard import build_guard
from automemo.serve.http_policy import HttpPolicy
from automemo.serve.mcp_face import build_mcp
from automemo.serve.openapi import openapi_schema
from automemo.serve.requests import BadRequest, RequestLimits, recall_request, remember_episode
from automemo.serve.service import MemoryService, ServiceError

log = logging.getLogger("automemo.serve")


def build_app(service: MemoryService, *, limits: RequestLimits, policy: HttpPolicy = HttpPolicy(),
              tokens: TokenTable = TokenTable()) -> Any:
    mcp = build_mcp(service, limits, allow_paths=False)

    def route(path: str, methods: list[str]):
        def wrap(handler: Callable[[Request], Awaitable[Any]]):
            async def endpoint(request: Request) -> Response:
                try:
                    return JSONResponse(await handler(request))
                except BadRequest as exc:
                    return _error(str(exc), getattr(exc, "status", 400))
                except NamespaceRefused as exc:
                    return _error(str(exc), exc.status)
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
        user_for = partial(namespace_for, principal_of(request.scope))
        return await service.recall(recall_request(body, limits, allow_paths=False, user_for=user_for))

    @route("/v1/remember", ["POST"])
    async def remember(request: Request) -> Any:
        body = await _json_body(request, limits)
        user_for = partial(namespace_for, principal_of(request.scope))
        return await service.remember(remember_episode(body, limits, service.benchmark, service.store_image,
                                                       allow_paths=False, user_for=user_for))

    @route("/v1/manifest", ["GET"])
    async def manifest(request: Request) -> Any:
        return service.public_manifest()

    @route("/openapi.json", ["GET"])
    async def openapi(request: Request) -> Any:
        return openapi_schema(_version(), tokens.required)

    @mcp.custom_route("/healthz", methods=["GET"])
    async def healthz(request: Request) -> Response:
        health = service.health()
        return JSONResponse(health, status_code=200 if health["ok"] else 503)

    # Stateless, JSON-answered MCP: every call is one POST answered with one JSON body, which is
    # what a plain JSON-RPC client (a benchmark harness's generic adapter) can drive; the server
    # pushes nothing to clients, so sessions would buy nothing. The SDK's own Host/Origin check is
    # off because the guard makes the same check, with --allowed-host and --cors-origin, on every route.
    app = mcp.streamable_http_app(
        host=policy.bind_host, max_request_body_size=limits.max_body_bytes, stateless_http=True,
        json_response=True, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return build_guard(app, policy, tokens, limits.max_body_bytes)


async def _json_body(request: Request, limits: RequestLimits) -> Any:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        # also keeps a web page from posting to a local server: a JSON post needs a CORS preflight
        raise _Status("send the body as JSON with the header `Content-Type: application/json`", 415)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.max_body_bytes:
            raise _Status(f"the request body is over the limit of {limits.max_body_bytes} bytes", 413)
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
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
