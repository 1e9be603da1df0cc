"""The MCP face: tools `recall`, `remember`, `feedback` and `forget`, the manifest as the resource
`automemo://manifest`, on the official SDK's MCPServer (stdio or streamable HTTP).

The tools take the argument names other memory services use as optional aliases (`query`,
`content`, `user_id`...), so a harness's generic MCP adapter, which picks tools by name and fills
the first argument it recognises, drives them unchanged. Over HTTP a tool acts for the caller the
guard authenticated (its principal rides on the Starlette request in the tool's context); over
stdio there is no request and the face is built with the caller (the local user, `LOCAL`). A tool
call with neither is refused: access never falls back to every namespace."""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any, Awaitable, Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ImageContent, TextContent

from automemo.serve import request_model as model
from automemo.serve.access import NamespaceRefused, Principal, namespace_for, principal_of
from automemo.serve.parsing_workers import ParsingWorkers, WorkerLost
from automemo.serve.requests import (BadRequest, RequestLimits, UserFor, feedback_request, forget_request,
                                     recall_request, remember_request)
from automemo.serve.service import MemoryService, ServiceError

MANIFEST_URI = "automemo://manifest"
log = logging.getLogger("automemo.serve")


def build_mcp(service: MemoryService, limits: RequestLimits, *, allow_paths: bool,
              caller: Principal | None = None, parsing: ParsingWorkers | None = None) -> MCPServer:
    """The MCP server over `service`. `caller` is who calls when no HTTP request carries a
    principal (stdio: `LOCAL`); None (HTTP) refuses such calls."""

    def user_for(ctx: Context | None) -> UserFor:
        return _user_for(ctx, caller)

    parsing = parsing or ParsingWorkers()  # images decode in its workers, never on the event loop

    node = (service.manifest.get("node") or {}).get("id")
    server = MCPServer(
        name="automemo",
        instructions=(
            "A learned memory. Call `recall` with the task or question before acting to get what "
            "past experience says about it; call `remember` with what happened afterwards."
        ),
        description=f"AutoMMemo memory program (node {node})",
        log_level="WARNING",
    )

    @server.tool(description=model.RECALL.tool_doc(
        "What memory holds for a task: text to put in your prompt, images, and ranked evidence ids."))
    @_shaped(model.RECALL)
    async def recall(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        body = _given(**arguments)
        if not any(k in body for k in model.INSTRUCTION.names):
            body["instruction"] = ""  # the sentence for a missing instruction comes from the check

        async def find() -> dict[str, Any]:
            asked = await parsing.run(partial(recall_request, body, limits, allow_paths=allow_paths,
                                              user_for=user_for(ctx), question_time_keys=service.question_time_keys))
            return await service.recall(asked)
        answer = await _answered("recall", find)
        if isinstance(answer, CallToolResult):
            return answer
        content: list[Any] = [TextContent(type="text", text=answer["text"] or "(memory holds nothing for this task)")]
        for image in answer["images"]:
            head, data = image["data_url"].split(",", 1)
            content.append(ImageContent(type="image", data=data, mime_type=head[5:].split(";")[0]))
        if answer["evidence"]:
            content.append(TextContent(type="text", text="evidence: " + ", ".join(answer["evidence"])))
        structured = {k: v for k, v in answer.items() if k != "images"}
        structured["images"] = [{"caption": i["caption"], "sha256": i["sha256"]} for i in answer["images"]]
        return CallToolResult(content=content, structured_content=structured)

    @server.tool(description=model.REMEMBER_TOOL.tool_doc(
        "Store an experience in memory: exactly one of `episode`, `messages` or `content`; the call's "
        "user goes with an `episode` too."))
    @_shaped(model.REMEMBER_TOOL)
    async def remember(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        body = _given(**arguments)
        forms = [name for name in ("episode", "messages", *model.CONTENT.names) if name in body]
        if len(forms) != 1 and set(forms) != set(model.CONTENT.names):
            return _error("pass exactly one of `episode` (an episode object), `messages` (a conversation) or "
                          "`content` (one message)" + (f"; got {', '.join(forms)}" if forms else ""))

        async def store() -> dict[str, Any]:
            asked = await parsing.run(partial(remember_request, body, limits, service.benchmark,
                                              allow_paths=allow_paths, user_for=user_for(ctx)))
            return await service.remember(asked.user, asked.draft)
        return _as_result(await _answered("remember", store))

    @server.tool(description=model.FEEDBACK.tool_doc(
        "Say which items of a recall you used (cited, or acted on): the memory learns from it which "
        "items serve you. Once per recall, naming only evidence ids that recall returned."))
    @_shaped(model.FEEDBACK)
    async def feedback(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        async def tell() -> dict[str, Any]:
            asked = feedback_request(_given(**arguments), limits, user_for=user_for(ctx))
            return await service.feedback(asked.user, asked.recall_id, asked.used, asked.not_used)
        return _as_result(await _answered("feedback", tell))

    @server.tool(description=model.FORGET.tool_doc(
        "Forget, for good: nothing forgotten is recalled again, after a restart included."))
    @_shaped(model.FORGET)
    async def forget(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        async def erase() -> dict[str, Any]:
            asked = forget_request(_given(**arguments), limits, user_for=user_for(ctx))
            return await service.forget(asked.user, asked.task_id, all=asked.all)
        return _as_result(await _answered("forget", erase))

    @server.resource(MANIFEST_URI, name="manifest", mime_type="application/json",
                     description="The exported program's manifest: scores, lineage, budget, models")
    def manifest() -> str:
        return json.dumps(service.public_manifest(), indent=2)

    return server


async def _answered(what: str, call: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any] | CallToolResult:
    """The answer of `call()`, or the tool error the client reads: the sentence of a refusal, or,
    for anything unexpected, a sentence for the client and the traceback for the operator."""
    try:
        return await call()
    except (BadRequest, NamespaceRefused, ServiceError, WorkerLost) as exc:
        return _error(str(exc))
    except Exception:
        log.exception("%s failed", what)
        return _error(f"the {what} failed inside the server; see the server's log")


def _as_result(answer: dict[str, Any] | CallToolResult) -> CallToolResult:
    if isinstance(answer, CallToolResult):
        return answer
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(answer))], structured_content=answer)


def _user_for(ctx: Context | None, caller: Principal | None) -> UserFor:
    """The namespace check for the caller of this tool call: the principal the guard left on its
    HTTP request, else the face's own caller (stdio), else none (refused)."""
    try:
        request = ctx.request_context.request if ctx is not None else None
    except ValueError:  # no request in flight: not over HTTP
        request = None
    scope = getattr(request, "scope", None)
    return partial(namespace_for, principal_of(scope) if scope is not None or caller is None else caller)


def _shaped(form: model.Form) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A tool whose arguments are `form`'s fields: its signature (which the SDK turns into the
    tool's input schema) is the request model's, not written out again here."""
    def shape(tool: Callable[..., Any]) -> Callable[..., Any]:
        tool.__signature__ = form.signature(Context)
        tool.__annotations__ = {**{p.name: p.annotation for p in tool.__signature__.parameters.values()},
                                "return": CallToolResult}
        return tool
    return shape


def _given(**arguments: Any) -> dict[str, Any]:
    """The tool arguments the client set: unset optional ones are not sent on as fields."""
    return {k: v for k, v in arguments.items() if v not in (None, "")}


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
