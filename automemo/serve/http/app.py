"""The HTTP server: the REST API (/v1/recall, /v1/remember, /v1/feedback, /v1/forget, /v1/export,
/v1/import, /v1/manifest, /healthz, /openapi.json) and MCP's streamable HTTP at /mcp in one
Starlette app, behind the guard (`serve.http.guard`: Host and Origin, CORS, token, rate limit, body
size) that runs before anything is parsed. Every handler that touches memory asks
`serve.access.namespace_for` which user's memory the caller may act on. Image file paths are never
read here, loopback included: only data URLs.

A request that reads or changes memory comes with a body a web page cannot send without asking
first (JSON or JSON lines: a CORS preflight), or with a token: a page's `<img src=".../v1/export">`
carries neither and is refused. Decoding a request's images runs on a worker thread, never on the
event loop: one tenant's large images do not stall another's calls."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Awaitable, Callable

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from automemo.serve.access import NamespaceRefused, TokenTable, namespace_for, principal_of
from automemo.serve.http.guard import build_guard
from automemo.serve.http.openapi import openapi_schema
from automemo.serve.http.policy import HttpPolicy
from automemo.serve.mcp_face import build_mcp
from automemo.serve.parsing_workers import ParsingWorkers, WorkerLost, json_of
from automemo.serve.requests import (BadRequest, RequestLimits, export_request, feedback_request, forget_request,
                                     recall_request, remember_request)
from automemo.serve.service import MemoryService, ServiceError
from automemo.serve.transfer import read_lines

log = logging.getLogger("automemo.serve")
NDJSON = "application/x-ndjson"


def build_app(service: MemoryService, *, limits: RequestLimits, policy: HttpPolicy = HttpPolicy(),
              tokens: TokenTable = TokenTable()) -> Any:
    parsing = ParsingWorkers()
    mcp = build_mcp(service, limits, allow_paths=False, parsing=parsing)

    def route(path: str, methods: list[str]):
        def wrap(handler: Callable[[Request], Awaitable[Any]]):
            async def endpoint(request: Request) -> Response:
                try:
                    answer = await handler(request)
                    return answer if isinstance(answer, Response) else JSONResponse(answer)
                except (BadRequest, NamespaceRefused, ServiceError, WorkerLost) as exc:
                    return _error(str(exc), exc.status)
                except Exception:  # the client gets a sentence, the operator the traceback
                    log.exception("%s failed", path)
                    return _error("the request failed inside the server; see the server's log", 500)
            mcp.custom_route(path, methods=methods)(endpoint)
            return handler
        return wrap

    @route("/v1/recall", ["POST"])
    async def recall(request: Request) -> Any:
        raw = await _body(request, limits, ("application/json",))
        user_for = partial(namespace_for, principal_of(request.scope))
        return await service.recall(await parsing.parse(
            raw, partial(recall_request, limits=limits, allow_paths=False, user_for=user_for,
                         question_time_keys=service.question_time_keys)))

    @route("/v1/remember", ["POST"])
    async def remember(request: Request) -> Any:
        raw = await _body(request, limits, ("application/json",))
        user_for = partial(namespace_for, principal_of(request.scope))
        asked = await parsing.parse(raw, partial(remember_request, limits=limits, benchmark=service.benchmark,
                                                 allow_paths=False, user_for=user_for))
        return await service.remember(asked.user, asked.draft)

    @route("/v1/feedback", ["POST"])
    async def feedback(request: Request) -> Any:
        user_for = partial(namespace_for, principal_of(request.scope))
        asked = feedback_request(await _json_body(request, limits), limits, user_for=user_for)
        return await service.feedback(asked.user, asked.recall_id, asked.used, asked.not_used)

    @route("/v1/forget", ["POST"])
    async def forget(request: Request) -> Any:
        user_for = partial(namespace_for, principal_of(request.scope))
        asked = forget_request(await _json_body(request, limits), limits, user_for=user_for)
        return await service.forget(asked.user, asked.task_id, all=asked.all)

    @route("/v1/export", ["GET", "POST"])
    async def export(request: Request) -> Response:
        user_for = partial(namespace_for, principal_of(request.scope))
        if request.method == "GET":
            if not tokens.required:
                # a GET without a token is what a page's <img> or <script> tag sends: it must not
                # carry a user's memory away
                raise BadRequest("on a server without tokens, export with POST and a JSON body {\"user\": ...}; "
                              "GET /v1/export is served only with a bearer token", 405)
            user = user_for(request.query_params.get("user", ""))
        else:
            user = export_request(await _json_body(request, limits), limits, user_for=user_for)
        lines = await service.export(user)
        return Response("".join(line + "\n" for line in lines), media_type=NDJSON)

    @route("/v1/import", ["POST"])
    async def import_(request: Request) -> Any:
        user = namespace_for(principal_of(request.scope), request.query_params.get("user", ""))
        text = (await _body(request, limits, (NDJSON, "application/json"))).decode("utf-8", "replace")
        imported = await parsing.run(partial(read_lines, text, limits, service.benchmark, user=user))
        return await service.import_episodes(user, imported.episodes, imported.recalls)

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


async def _body(request: Request, limits: RequestLimits, kinds: tuple[str, ...]) -> bytes:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in kinds:
        # also keeps a web page from posting to a local server: such a post needs a CORS preflight
        raise BadRequest(f"send the body with the header `Content-Type: {kinds[0]}`", 415)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.max_body_bytes:
            raise BadRequest(f"the request body is over the limit of {limits.max_body_bytes} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request, limits: RequestLimits) -> Any:
    return json_of(await _body(request, limits, ("application/json",)))


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("automemo")
    except PackageNotFoundError:
        return "0"
